"""TRCA benchmark: labeled steps/s and label quality on the held-out TWC dev set, in one run.

    .venv/bin/python -m tools.bench.bench_trca --json tools/results/bench_trca.json

The dev set is made by exactly the command the COREN benchmark uses (made here if missing):

    edgejudge collect --env twx:twc --split dev --episodes 30 --behaviour gold-noise --noise 0.4 --seed 1 \\
        --out ...

Rubric variants (``judge-built`` and ``+dev places`` built here by the embedded judge, 1 thread, fresh cache):

* ``judge-built``: ``rubrics build`` on the dev set itself (unsupervised: no ground truth is read), unedited;
* ``embedded``: ``labeler/rubrics/twc.toml`` (built from 100 train episodes, hand-reviewed; its placement
  table knows no dev object: TWC's dev split has unseen objects);
* ``embedded+dev places``: ``rubrics build --base labeler/rubrics/twc.toml`` on the dev set (reviewed items,
  the judge's places for the dev objects).

Label quality comes from :func:`labeler.quality.measure` (the ``label quality`` command): per-step AUROC of
r^F, r^B, r against score progress, and trajectory-return AUROC against success; the return here is the
discounted dense return sum_t gamma^t r_t *without* the terminal success reward (with it AUROC is trivial).

Speed: the dev set replicated to >= 10k steps, labeled in-process, best of 3; baselines in the same run are
(a) reading and writing the same file without labeling and (b) asking the judge once per step (the per-step
judge that rubrics replace), measured on 20 uncached steps.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import click

from labeler.auroc import auroc
from labeler.quality import measure
from labeler.trca.pipeline import RubricSet, TRCAConfig, label_file
from models.trajectory import TrajectoryWriter, iter_trajectories, read_trajectories, write_trajectories
from tools.bench.benchlib import HELDOUT_DEV_COLLECT as DEV_CMD
from tools.bench.benchlib import ROOT, write_results
from tools.bench.benchlib import edgejudge as _edgejudge


def edgejudge(*args: str) -> str:
    return _edgejudge(*args, timeout=600)


def quality(labeled: Path, gamma: float) -> dict:
    trajs = read_trajectories(labeled)
    rep = measure(trajs, str(labeled))
    by = {c.channel: c for c in rep.channels}
    out = {}
    for name in ("foundational", "breakthrough", "total"):
        c = by[f"trca.{name}"]
        dense = [sum(gamma**t * s.labels["trca"][name] for t, s in enumerate(tr.steps)) for tr in trajs]
        out[name] = {
            "auroc_progress": c.auroc_progress,
            "auroc_gold": c.auroc_gold,
            "auroc_success_sum": c.auroc_success,
            "auroc_success_discounted": auroc(dense, [tr.success for tr in trajs]),
        }
    base = by["env.reward"]
    out["env.reward"] = {"auroc_progress": base.auroc_progress, "auroc_gold": base.auroc_gold}
    out["steps"], out["trajectories"] = rep.steps, rep.trajectories
    out["steps_with_progress"] = rep.progress_steps
    return out


def best_of(n: int, fn) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def judge_per_step_rate(dev: Path, n: int) -> dict:
    """Steps/s of asking the judge about each transition (the 4-tag prompt of the builder), uncached."""
    from labeler.judge import open_judge
    from labeler.trca.build import TAG_PROMPT, TAGS

    steps = [(t.instruction, s, t.view.layout) for t in read_trajectories(dev) for s in t.steps][:n]
    with open_judge("gemma3-270m", n_threads=1) as judge:
        judge.score("warm up", [" yes"], template="bench", version=1)
        t0 = time.perf_counter()
        for instr, s, layout in steps:
            fb = layout.response(s.observation, s.next_observation) or "(nothing new)"
            judge.score(
                TAG_PROMPT.format(instruction=instr, action=s.action, response=fb),
                [f" {t}" for t in TAGS],
                template="bench",
                version=1,
            )
        dt = time.perf_counter() - t0
    return {"steps": len(steps), "seconds": dt, "steps_per_s": len(steps) / dt}


@click.command()
@click.option(
    "--work",
    default=None,
    type=click.Path(file_okay=False),
    help="Folder for datasets, rubrics and labeled files (default: a temporary folder).",
)
@click.option("--json", "json_out", default=None, type=click.Path(dir_okay=False), help="Write results here.")
@click.option(
    "--judge-steps",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="Steps timed for the per-step judge baseline.",
)
@click.option(
    "--min-steps",
    default=10_000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Replicate the dev set to at least this many steps for the speed measurement.",
)
def main(work, json_out, judge_steps, min_steps) -> None:
    """Measure TRCA on the TWC dev set (and CookingWorld dev as an extra row); print a Markdown table."""
    tmp = None
    if work is None:
        tmp = tempfile.TemporaryDirectory()
        work = tmp.name
    w = Path(work)
    w.mkdir(parents=True, exist_ok=True)
    dev = w / "twc-dev.jsonl.gz"
    if not dev.exists():
        edgejudge(*DEV_CMD, "--out", str(dev), "--no-progress")
    cw_dev = w / "cw-dev.jsonl.gz"
    if not cw_dev.exists():
        edgejudge(
            *[("twx:cookingworld" if a == "twx:twc" else a) for a in DEV_CMD],
            "--out",
            str(cw_dev),
            "--no-progress",
        )
    results: dict = {
        "date": time.strftime("%Y-%m-%d"),
        "dev_command": "edgejudge " + " ".join(DEV_CMD),
    }

    # --- rubrics, built by the judge from fresh caches (timed)
    builds = {}
    for name, task, data, extra in [
        ("judge-built", "twc", dev, []),
        ("embedded+dev places", "twc", dev, ["--base", "labeler/rubrics/twc.toml"]),
        ("cw judge-built", "cookingworld", cw_dev, []),
    ]:
        out = w / f"{name.replace(' ', '_').replace('+', '_')}.toml"
        cache = Path(f"{out}.cache.sqlite")
        for p in (cache, Path(f"{cache}-wal"), Path(f"{cache}-shm")):
            p.unlink(missing_ok=True)
        t0 = time.perf_counter()
        msg = edgejudge(
            "rubrics",
            "build",
            "--dataset",
            str(data),
            "--task-type",
            task,
            "--out",
            str(out),
            "--cache",
            str(cache),
            "--no-progress",
            *extra,
        )
        builds[name] = {"file": str(out), "seconds": time.perf_counter() - t0, "message": msg.strip()}
    results["builds"] = {k: {"seconds": v["seconds"], "message": v["message"]} for k, v in builds.items()}

    variants = [
        ("judge-built", dev, builds["judge-built"]["file"]),
        ("embedded", dev, str(ROOT / "labeler/rubrics/twc.toml")),
        ("embedded+dev places", dev, builds["embedded+dev places"]["file"]),
        ("cw embedded", cw_dev, str(ROOT / "labeler/rubrics/cookingworld.toml")),
        ("cw judge-built", cw_dev, builds["cw judge-built"]["file"]),
    ]
    cfg = TRCAConfig()
    results["quality"] = {}
    for name, data, rub in variants:
        out = w / f"labeled-{name.replace(' ', '_').replace('+', '_')}.jsonl.gz"
        label_file(data, out, RubricSet([rub]), cfg)
        results["quality"][name] = quality(out, cfg.gamma)
    # lambda sweep on the best TWC variant
    results["lambda_sweep"] = {}
    for lam in (0.0, 0.5, 0.8, 1.0):
        out = w / f"labeled-lambda-{lam}.jsonl.gz"
        label_file(dev, out, RubricSet([builds["embedded+dev places"]["file"]]), TRCAConfig(lam=lam))
        results["lambda_sweep"][str(lam)] = quality(out, cfg.gamma)["total"]

    # --- speed
    base = read_trajectories(dev)
    big = w / "twc-dev-big.jsonl.gz"
    reps = -(-min_steps // sum(len(t.steps) for t in base))
    trajs = []
    for r in range(reps):
        for t in read_trajectories(dev):
            t.id = f"{t.id}-x{r}"
            trajs.append(t)
    write_trajectories(big, trajs)
    n_steps = sum(len(t.steps) for t in trajs)
    rubrics = RubricSet([builds["embedded+dev places"]["file"]])

    def copy_only() -> None:
        with TrajectoryWriter(w / "copy.jsonl.gz") as wr:
            for t in iter_trajectories(big):
                wr.write(t)

    t_copy = best_of(3, copy_only)
    t_label = best_of(3, lambda: label_file(big, w / "big-labeled.jsonl.gz", rubrics, cfg))
    t_compute = best_of(3, lambda: label_file(big, None, rubrics, cfg))
    judge = judge_per_step_rate(dev, judge_steps)
    results["speed"] = {
        "steps": n_steps,
        "read_write_baseline_steps_per_s": n_steps / t_copy,
        "label_trca_steps_per_s": n_steps / t_label,
        "label_trca_compute_only_steps_per_s": n_steps / t_compute,
        "judge_per_step": judge,
        "ratio_label_vs_read_write": t_copy / t_label,
        "ratio_label_vs_judge_per_step": (n_steps / t_label) / judge["steps_per_s"],
    }
    if json_out:
        write_results(json_out, results)
    print_markdown(results)
    if tmp is not None:
        tmp.cleanup()


def _f(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def print_markdown(r: dict) -> None:
    print("| rubric | data | AUROC progress r^F | r^B | r | AUROC gold r | traj. AUROC success (disc. r) |")
    print("|---|---|---|---|---|---|---|")
    for name, q in r["quality"].items():
        data = "CookingWorld dev" if name.startswith("cw") else "TWC dev"
        print(
            f"| {name} | {data} | {_f(q['foundational']['auroc_progress'])} | "
            f"{_f(q['breakthrough']['auroc_progress'])} | {_f(q['total']['auroc_progress'])} | "
            f"{_f(q['total']['auroc_gold'])} | {_f(q['total']['auroc_success_discounted'])} |"
        )
    for name, q in r["quality"].items():
        print(f"baseline env.reward on {name}: progress {_f(q['env.reward']['auroc_progress'])}")
    print(
        "\nlambda sweep (embedded+dev places, r):",
        {k: _f(v["auroc_progress"]) for k, v in r["lambda_sweep"].items()},
    )
    s = r["speed"]
    print(
        f"\nspeed on {s['steps']} steps: read+write {s['read_write_baseline_steps_per_s']:,.0f} steps/s, "
        f"label trca {s['label_trca_steps_per_s']:,.0f} steps/s (compute only "
        f"{s['label_trca_compute_only_steps_per_s']:,.0f}), judge per step "
        f"{s['judge_per_step']['steps_per_s']:.2f} steps/s; ratios: label/read-write "
        f"{s['ratio_label_vs_read_write']:.2f}, label/judge {s['ratio_label_vs_judge_per_step']:,.0f}x"
    )
    for k, v in r["builds"].items():
        print(f"build {k}: {v['seconds']:.1f} s: {v['message']}")


if __name__ == "__main__":
    main()
