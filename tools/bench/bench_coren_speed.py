"""COREN labeling speed, one process, one thread: the one-query-at-a-time path against the batched path in one
run, on the first trajectories of the held-out TWC dev set, with where the time goes.

* **simple**: every structural answer generated on its own (``Judge.generate``, one decode per token), what
  the labeler did before batching;
* **batched**: every prompt's answer to a QA entry generated together as parallel sequences
  (``Judge.generate_many``).

The step queries (rating + multiple choice per step and prompt, one ``score_many`` per trajectory) and the
backward checks are the same calls in both. Each mode opens a fresh judge without a label cache; the two run
one after the other in this process. Time is the labeler's ``label`` call (judge and embeddings; the
orchestrator and file I/O are not included), wall and CPU seconds, per phase. Label quality (AUROC) comes from
``edgejudge label quality`` on full runs; ``--quality A.jsonl.gz --quality B.jsonl.gz`` adds those files'
channel AUROCs to the result.

    python -m tools.bench.bench_coren_speed --trajectories 4 \\
        --json-out tools/results/bench_coren_speed.json
"""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict

import click

from labeler.quality import measure
from models.trajectory import read_trajectories
from tools.bench.benchlib import HELDOUT_DEV_COLLECT, ROOT, edgejudge, write_results


class OneAtATime:
    """The simple path: no parallel generation; backward checks scored one by one, step queries unchanged."""

    def __init__(self, judge):
        self.j = judge
        self.stats = judge.stats
        self.model_sha256 = judge.model_sha256
        self.n_ctx = judge.n_ctx

    def count_tokens(self, text):
        return self.j.count_tokens(text)

    def score_many(self, queries, *, template, version, **kw):
        if not all(tuple(c) == (" Yes", " No") for _, c in queries):
            return self.j.score_many(queries, template=template, version=version, **kw)
        ts = [template] * len(queries) if isinstance(template, str) else template
        vs = [version] * len(queries) if isinstance(version, int) else version
        return [
            self.j.score(p, c, template=t, version=v) for (p, c), t, v in zip(queries, ts, vs, strict=True)
        ]

    def generate(self, prompt, **kw):
        return self.j.generate(prompt, **kw)

    def prime(self, prefix):  # the same fixed state before each unit of work
        self.j.prime(prefix)


def _timed(obj, name, phase, acc):
    f = getattr(obj, name)

    def g(*a, **k):
        w, c = time.perf_counter(), time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[phase]["wall_s"] += time.perf_counter() - w
            acc[phase]["cpu_s"] += time.process_time() - c

    setattr(obj, name, g)


def run_mode(mode: str, trajs, prompts: int, encoder) -> dict:
    from labeler.coren.pipeline import CorenConfig, CorenLabeler
    from labeler.coren.prompts import load_prompts, load_templates
    from labeler.judge import open_judge

    acc: dict = defaultdict(Counter)
    with open_judge("gemma3-270m", n_threads=1, n_threads_batch=1, n_ctx=2048, cache=None) as judge:
        jj = judge if mode == "batched" else OneAtATime(judge)
        lab = CorenLabeler(jj, encoder, load_prompts(prompts), load_templates(), CorenConfig())
        for name, phase in (
            ("rate_trajectory", "step queries"),
            ("answer", "structural answers"),
            ("answer_many", "structural answers"),
            ("backward", "backward checks"),
        ):
            _timed(lab.calls, name, phase, acc)
        _timed(lab, "embed", "embeddings", acc)
        w, c = time.perf_counter(), time.process_time()
        res = lab.label(trajs)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        stats = dict(judge.stats)
    steps = sum(len(t.steps) for t in trajs)
    return {
        "mode": mode,
        "steps": steps,
        "wall_s": wall,
        "cpu_s": cpu,
        "steps_per_s": steps / wall,
        "steps_per_cpu_s": steps / cpu,
        "phases": {k: dict(v) for k, v in acc.items()},
        "queries": dict(lab.report.queries),
        "judge_stats": stats,
        "channels": res.channels.tolist(),
        "p_yes": res.p_yes.tolist(),
        "qa_pass_rate": lab.report.qa_pass_rate,
    }


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--dev", default="runs/dev30.jsonl.gz", show_default=True, help="Made by the collect command if absent."
)
@click.option(
    "--trajectories", default=4, show_default=True, type=click.IntRange(1), help="First N of the set."
)
@click.option("--prompts", default=4, show_default=True, type=click.IntRange(1, 5))
@click.option("--quality", "quality_files", multiple=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--json-out", default="tools/results/bench_coren_speed.json", show_default=True)
def main(dev: str, trajectories: int, prompts: int, quality_files: tuple[str, ...], json_out: str) -> None:
    """COREN steps/s, simple vs batched path, in one run."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from models.encoder import load_sentence_encoder, resolve_encoder

    dev_path = ROOT / dev
    if not dev_path.exists():
        dev_path.parent.mkdir(parents=True, exist_ok=True)
        edgejudge(*HELDOUT_DEV_COLLECT, "--out", str(dev_path))
    trajs = read_trajectories(dev_path)[:trajectories]
    encoder = load_sentence_encoder(resolve_encoder())
    runs = [run_mode(m, trajs, prompts, encoder) for m in ("simple", "batched")]
    s, b = runs
    out = {
        "dev_command": "edgejudge " + " ".join(HELDOUT_DEV_COLLECT),
        "trajectories": trajectories,
        "prompts": prompts,
        "runs": runs,
        "speedup_wall": s["wall_s"] / b["wall_s"],
        "speedup_cpu": s["cpu_s"] / b["cpu_s"],
        "same_channels": s["channels"] == b["channels"],
        "max_p_yes_difference": max(
            abs(x - y)
            for rs, rb in zip(s["p_yes"], b["p_yes"], strict=True)
            for x, y in zip(rs, rb, strict=True)
        ),
        "quality": [measure(read_trajectories(f), f).to_dict() for f in quality_files],
    }
    write_results(ROOT / json_out, out)
    for r in runs:
        ph = ", ".join(f"{k} {v['cpu_s']:.1f}" for k, v in r["phases"].items())
        print(
            f"{r['mode']:8s} {r['steps']} steps: {r['steps_per_s']:.2f} steps/s wall, "
            f"{r['steps_per_cpu_s']:.2f} per CPU-s (CPU s: {ph})"
        )
    print(
        f"speedup {out['speedup_wall']:.2f}x wall, {out['speedup_cpu']:.2f}x CPU; "
        f"same channels: {out['same_channels']}"
    )


if __name__ == "__main__":
    main()
