"""Which wrong decisions cost the episode: ``edgejudge decisions --replay`` on the learner benchmark's
checkpoints, per world, learner and verb.

The checkpoints and gold paths are those ``bench_learners`` left under ``--work-dir`` (``learners/WORLD-nN-
LEARNER-sSEED`` and ``WORLD-*/test-gold-n50.jsonl.gz``). One JSON report per checkpoint is kept in
``--cache`` (a second run asks only for the missing ones); the table pools the seeds.

    python -m tools.bench.bench_replay --world twc-easy --learner bc-expert --learner credit-trca \\
        --seed 0 --seed 1 --seed 2 --out tools/results/bench_replay.json
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import click

from tools.bench.benchlib import edgejudge, publish

KEY_VERBS = 4
"""Verbs per world in the table (the most frequent on the gold paths)."""


def report(world: str, learner: str, seed: int, work: Path, cache: Path, n: int, max_steps: int) -> dict:
    out = cache / f"{world}-{learner}-s{seed}.json"
    if not out.exists():
        ckpt = work / "learners" / f"{world}-n{n}-{learner}-s{seed}"
        gold = sorted(work.glob(f"{world}-*/test-gold-n50.jsonl.gz"))
        if not ckpt.is_dir() or not gold:
            raise click.ClickException(f"no checkpoint {ckpt} or gold paths of {world} under {work}")
        text = edgejudge(
            "decisions", str(ckpt), str(gold[0]), "--replay", "--max-steps", str(max_steps), "--json"
        )
        cache.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return json.loads(out.read_text())


def pooled(reports: list[dict]) -> dict[str, dict[str, int]]:
    """Per verb over the reports: decisions, right, and the misses' outcomes."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in reports:
        for verb, v in r["verbs"].items():
            out[verb]["decisions"] += v["decisions"]
            out[verb]["right"] += v["right"]
        for verb, o in r.get("replay", {}).items():
            for k in ("misses", "recovered", "fatal", "not_replayed"):
                out[verb][k] += o[k]
    return {v: dict(d) for v, d in out.items()}


def markdown(rows: dict[str, dict[str, dict[str, dict[str, int]]]]) -> str:
    """Per world: a row per learner, per key verb 'right / right or recovered' (shares of its decisions)."""
    lines: list[str] = []
    for world, learners in rows.items():
        counts: dict[str, int] = defaultdict(int)
        for verbs in learners.values():
            for verb, d in verbs.items():
                counts[verb] += d["decisions"]
        verbs = sorted(counts, key=lambda v: -counts[v])[:KEY_VERBS]
        lines += [
            f"### {world}",
            "",
            "| learner | all: right / right or recovered | fatal misses | "
            + " | ".join(f"{v}: right / or recovered" for v in verbs)
            + " |",
            "|---|---|---|" + "---|" * len(verbs),
        ]
        for learner, d in learners.items():
            total = {
                k: sum(x.get(k, 0) for x in d.values()) for k in ("decisions", "right", "recovered", "fatal")
            }
            cells = [_share(d.get(v, {})) for v in verbs]
            lines.append(
                f"| {learner} | {_share(total)} | {total['fatal']} of {total['decisions']} | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def _share(d: dict[str, int]) -> str:
    n = d.get("decisions", 0)
    if not n:
        return "n/a"
    return f"{d.get('right', 0) / n:.2f} / {(d.get('right', 0) + d.get('recovered', 0)) / n:.2f}"


@click.command()
@click.option("--world", "worlds", multiple=True, required=True, help="A learner-benchmark world (twc-easy).")
@click.option("--learner", "learners", multiple=True, required=True, help="A learner-benchmark row name.")
@click.option("--seed", "seeds", multiple=True, type=int, default=(0,), show_default=True)
@click.option("--train-episodes", default=120, show_default=True)
@click.option("--max-steps", default=40, show_default=True, help="Step limit of a replayed episode.")
@click.option("--work-dir", type=click.Path(path_type=Path), default=Path("runs/matrix"), show_default=True)
@click.option(
    "--cache", type=click.Path(path_type=Path), default=Path("tools/results/replay"), show_default=True
)
@click.option("--out", type=click.Path(path_type=Path), help="Results JSON (and .md beside it).")
def main(worlds, learners, seeds, train_episodes, max_steps, work_dir, cache, out) -> None:
    """Replay every wrong decision of the learner benchmark's checkpoints and pool the outcomes per verb."""
    rows: dict[str, Any] = {}
    for world in worlds:
        for learner in learners:
            reps = [report(world, learner, s, work_dir, cache, train_episodes, max_steps) for s in seeds]
            rows.setdefault(world, {})[learner] = pooled(reps)
    md = markdown(rows)
    publish({"seeds": list(seeds), "max_steps": max_steps, "rows": rows}, md, out,
            out.with_suffix(".md") if out else None)  # fmt: skip


if __name__ == "__main__":
    main()
