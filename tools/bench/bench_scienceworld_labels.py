"""Label quality on ScienceWorld: TRCA with judge-built rubrics and COREN, against score progress.

For each benchmark task family, on its TEST variations:

1. ``edgejudge collect`` (gold-noise, noise 0.4, seed 1, step limit 40);
2. ``edgejudge rubrics build`` with the embedded judge from those logs (unreviewed; success-grounded, as the
   command does by default, without its held-out check; ``info`` is never read);
3. ``edgejudge label trca`` with that rubric;
4. ``edgejudge label coren`` on the first ``--coren-episodes`` episodes of the TRCA-labeled file of each of
   the ``--coren-families`` (COREN asks the judge about every step and its candidates: under 1 step/s on one
   thread);
5. ``edgejudge label quality``: per-step AUROC of every channel against score progress, per family and
   pooled over the families.

Every stage writes its file under ``--work`` and is skipped when that file exists (a rerun resumes; the
judge cache makes an interrupted COREN run resume too). ``--families`` runs a subset, e.g. two processes
with two families each, then one run with all of them writes the tables.

    python -m tools.bench.bench_scienceworld_labels --json tools/results/bench_scienceworld_labels.json \\
        --md tools/results/bench_scienceworld_labels.md
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from labeler.dataset import read_trajectories
from labeler.quality import measure
from tools.bench.benchlib import ROOT, load_average, write_results

FAMILIES = ("find-living-thing", "find-non-living-thing", "find-plant", "chemistry-mix")
SHOWN = ("env.reward", "trca.foundational", "trca.breakthrough", "trca.total", "coren.contextual",
         "coren.structural", "coren.temporal", "coren.ensemble")  # fmt: skip


def _cli(*args: str) -> tuple[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "models.cli", *args], env=env, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"edgejudge {' '.join(args[:2])} failed: {out.stderr.strip()[-600:]}")
    return out.stdout + out.stderr, time.perf_counter() - t0


def _stage(path: Path, timings: dict, name: str, *args: str) -> None:
    if path.exists():
        return
    _, dt = _cli(*args)
    timings[name] = round(dt, 1)


def run_family(task: str, work: Path, episodes: int, coren_episodes: int, coren_prompts: int) -> dict:
    """Collect, build, label one family; ``coren_episodes`` 0 leaves COREN out."""
    data, rubric = work / f"{task}.test.jsonl.gz", work / f"{task}.toml"
    trca, coren = work / f"{task}.test.trca.jsonl.gz", work / f"{task}.test.coren.jsonl.gz"
    timings: dict[str, float] = {}
    _stage(data, timings, "collect_s", "collect", "--env", f"scienceworld:{task}", "--split", "test",
           "--episodes", str(episodes), "--behaviour", "gold-noise", "--noise", "0.4", "--seed", "1",
           "--max-steps", "40", "--out", str(data), "--no-progress")  # fmt: skip
    _stage(rubric, timings, "rubric_build_s", "rubrics", "build", "--dataset", str(data), "--task-type", task,
           "--out", str(rubric), "--check-folds", "0", "--no-progress")  # fmt: skip
    _stage(trca, timings, "trca_s", "label", "trca", str(data), "--rubrics", str(rubric), "--out", str(trca),
           "--no-progress")  # fmt: skip
    if coren_episodes:
        _stage(coren, timings, "coren_s", "label", "coren", str(trca), "--out", str(coren), "--limit",
               str(coren_episodes), "--prompts", str(coren_prompts), "--no-progress")  # fmt: skip
    items = sum(1 for ln in rubric.read_text().splitlines() if ln.strip() == "[[items]]")
    files = [str(trca)] + ([str(coren)] if coren_episodes else [])
    return {"task": task, "rubric_items": items, "timings": timings, "files": files}


def _row(label: str, trajs) -> dict:
    rep = measure(trajs, path=label).to_dict()
    return {
        "data": label,
        "trajectories": rep["trajectories"],
        "steps": rep["steps"],
        "progress_steps": rep["progress_steps"],
        "gold_steps": rep["gold_steps"],
        "successes": rep["successes"],
        "auroc_progress": {c["channel"]: c["auroc_progress"] for c in rep["channels"]},
        "auroc_gold": {c["channel"]: c["auroc_gold"] for c in rep["channels"]},
    }


def markdown(rows: list[dict]) -> str:
    def f(v):
        return "" if v is None else f"{v:.3f}"

    head = "| data | episodes | steps (progress) | successes | " + " | ".join(SHOWN) + " |\n"
    head += "|---" * (4 + len(SHOWN)) + "|\n"
    lines = [
        f"| {r['data']} | {r['trajectories']} | {r['steps']} ({r['progress_steps']}) | {r['successes']} | "
        + " | ".join(f(r["auroc_progress"].get(c)) for c in SHOWN)
        + " |"
        for r in rows
    ]
    return head + "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--episodes", type=int, default=15, help="test episodes collected per family")
    ap.add_argument("--coren-episodes", type=int, default=2, help="episodes per COREN family COREN labels")
    ap.add_argument("--coren-families", default="find-living-thing,find-non-living-thing",
                    help="the families COREN labels (comma-separated; empty: none)")  # fmt: skip
    ap.add_argument("--coren-prompts", type=int, default=4)
    ap.add_argument("--work", default="runs/scienceworld", help="where the data and labels go")
    ap.add_argument("--json", default=None)
    ap.add_argument("--md", default=None)
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    coren_families = {f for f in args.coren_families.split(",") if f}
    load_start = load_average()
    families = [
        run_family(
            t, work, args.episodes, args.coren_episodes if t in coren_families else 0, args.coren_prompts
        )
        for t in args.families.split(",")
    ]
    rows, pooled_trca, pooled_coren = [], [], []
    for fam in families:
        trca = read_trajectories(fam["files"][0])
        rows.append(_row(f"{fam['task']}, TRCA (all episodes)", trca))
        pooled_trca += trca
        if len(fam["files"]) > 1:
            coren = read_trajectories(fam["files"][1])
            rows.append(_row(f"{fam['task']}, TRCA + COREN (first {len(coren)} episodes)", coren))
            pooled_coren += coren
    rows.append(_row(f"pooled over {len(families)} families, TRCA (all episodes)", pooled_trca))
    if pooled_coren:
        rows.append(_row("pooled, TRCA + COREN (COREN-labeled episodes)", pooled_coren))
    out = {
        "families": families,
        "rows": rows,
        "episodes": args.episodes,
        "coren_episodes": args.coren_episodes,
        "coren_prompts": args.coren_prompts,
        "load_average_start": load_start,
    }
    if args.json:
        write_results(args.json, out, indent=1)
    table = markdown(rows)
    if args.md:
        Path(args.md).write_text(table)
    print(table)


if __name__ == "__main__":
    main()
