"""Check that every ScienceWorld task family loads, collects and labels, and measure its gold paths.

For each task (all 30 by default):

1. **load**: open ``scienceworld:TASK`` (one JVM; its start time and resident memory are recorded), count the
   variations per split;
2. **gold**: on the first ``--variations`` test variations, read the simulator's gold path and replay it
   matched onto the valid-action wording (``reset(..., gold=True)``): how many gold actions are not literally
   in the valid list where they are due, how each was handled (alias, other referent, dropped ``open``,
   kept as the simulator's text), and whether the matched path reaches a score of 100;
3. **collect**: ``edgejudge collect`` (gold-noise) on the test split, step limit 1.5 x the longest gold path
   + 10, at most ``--max-steps`` (a long task then ends unsolved: the point is that it collects);
4. **label**: ``edgejudge rubrics build`` with the embedded judge on those episodes (one prompt order, no
   held-out check, to keep it short), ``edgejudge label trca`` with that rubric, and ``edgejudge label
   quality``.

``--gold-only`` stops after step 2 (e.g. to compare simplifications). Results: one JSON record per task and
a Markdown table.

    python -m tools.bench.check_scienceworld_tasks --variations 1 --max-steps 40 \\
        --rows runs/check_scienceworld.jsonl --json tools/results/check_scienceworld_tasks.json \\
        --md tools/results/check_scienceworld_tasks.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from policy.worlds.adapters import open_env, parse_env
from policy.worlds.adapters.scienceworld import TASKS
from tools.bench.benchlib import ROOT, load_average, portable_paths, write_results


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def _cli(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "models.cli", *args], env=env, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"edgejudge {' '.join(args[:2])} failed: {out.stderr.strip()[-400:]}")
    return out.stdout


def gold_check(task: str, simplifications: str, variations: int) -> dict:
    spec = parse_env(f"scienceworld:{task}", f"simplifications={simplifications}")
    t0 = time.perf_counter()
    env = open_env(spec, step_limit=10_000)
    try:
        start_s = time.perf_counter() - t0
        pid = env._env._gateway.java_process.pid  # the adapter's JVM
        splits = {s: len(env.episodes(s)) for s in env.splits}
        kinds: Counter[str] = Counter()
        raw = matched_ok = used_raw = 0
        lengths, steps, step_s = [], 0, 0.0
        for v in env.episodes("test")[:variations]:
            t1 = time.perf_counter()
            env.reset(v, "test", gold=True)
            step_s += time.perf_counter() - t1
            rep = env.gold_report
            kinds.update(rep["kinds"])
            raw += rep["raw"]
            steps += sum(rep["kinds"].get(k, 0) for k in ("literal", "alias", "referent", "unmatched"))
            matched_ok += rep["matched_score"] >= 100
            used_raw += rep["used"] == "raw"
            lengths.append(len(env.gold_path()))
        not_literal = raw - kinds.get("literal", 0)
        return {
            "task": task,
            "simplifications": simplifications,
            "splits": splits,
            "jvm_start_s": round(start_s, 2),
            "jvm_rss_mb": round(_rss_mb(pid), 1),
            "jvm_peak_rss_mb": round(_rss_mb(pid, "VmHWM"), 1),
            "gold_variations": variations,
            "gold_raw_actions": raw,
            "gold_not_literal": not_literal,
            "gold_not_literal_share": round(not_literal / raw, 4) if raw else None,
            "gold_kinds": dict(sorted(kinds.items())),
            "gold_lengths": lengths,
            "matched_path_succeeds": matched_ok,
            "raw_path_used": used_raw,
            # reset + replay time over the simulator steps it took (load and two resets included)
            "replay_steps_per_s": round(steps / step_s, 1) if step_s else None,
        }
    finally:
        env.close()


def collect_and_label(task: str, simplifications: str, episodes: int, max_steps: int, work: Path) -> dict:
    data, rubric, labeled = work / f"{task}.jsonl.gz", work / f"{task}.toml", work / f"{task}.trca.jsonl.gz"
    t0 = time.perf_counter()
    line = _cli(
        "collect", "--env", f"scienceworld:{task}", "--params", f"simplifications={simplifications}",
        "--split", "test", "--episodes", str(episodes), "--max-steps", str(max_steps), "--noise", "0.3",
        "--seed", "0", "--out", str(data), "--no-progress",
    )  # fmt: skip
    collect_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    _cli(
        "rubrics", "build", "--dataset", str(data), "--task-type", task, "--out", str(rubric),
        "--prompt-orders", "1", "--check-folds", "0", "--max-templates", "16", "--min-count", "1",
        "--no-progress",
    )  # fmt: skip
    build_s = time.perf_counter() - t0
    _cli("label", "trca", str(data), "--rubrics", str(rubric), "--out", str(labeled), "--no-progress")
    report = json.loads(_cli("label", "quality", str(labeled), "--json"))
    chans = {c["channel"]: c for c in report["channels"]}
    total = chans.get("trca.total", {})
    items = sum(1 for ln in rubric.read_text().splitlines() if ln.strip() == "[[items]]")
    return {
        "collect": line.strip(),
        "collect_s": round(collect_s, 1),
        "episodes": report["trajectories"],
        "steps": report["steps"],
        "successes": report["successes"],
        "progress_steps": report["progress_steps"],
        "rubric_items": items,
        "rubric_build_s": round(build_s, 1),
        "trca_auroc_progress": total.get("auroc_progress"),
        "labeled": "trca.total" in chans,
    }


def _pct(share: float | None) -> str:
    return "" if share is None else f"{100 * share:.0f} %"


def markdown(rows: list[dict]) -> str:
    head = (
        "| task | train/dev/test | JVM MB | gold len | not literal | handled as (alias / referent / open "
        "dropped / answer dropped / kept) | matched path ok | collect: steps, success | rubric items | "
        "TRCA AUROC vs progress |\n|---|---|---|---|---|---|---|---|---|---|\n"
    )
    out = []
    for r in rows:
        k = r["gold_kinds"]
        handled = "/".join(
            str(k.get(x, 0)) for x in ("alias", "referent", "noop", "answer-dropped", "unmatched")
        )
        sp = r["splits"]
        c = r.get("label", {})
        auroc = c.get("trca_auroc_progress")
        coll = f"{c['steps']}, {c['successes']}/{c['episodes']}" if c else ""
        out.append(
            f"| {r['task']} | {sp['train']}/{sp['dev']}/{sp['test']} | {r['jvm_peak_rss_mb']:.0f} | "
            f"{'-'.join(map(str, sorted({min(r['gold_lengths']), max(r['gold_lengths'])})))} | "
            f"{r['gold_not_literal']}/{r['gold_raw_actions']} ({_pct(r['gold_not_literal_share'])})"
            f" | {handled} | {r['matched_path_succeeds']}/{r['gold_variations']} | {coll} | "
            f"{c.get('rubric_items', '')} | {'' if auroc is None else f'{auroc:.3f}'} |"
        )
    raw = sum(r["gold_raw_actions"] for r in rows)
    nl = sum(r["gold_not_literal"] for r in rows)
    ok = sum(r["matched_path_succeeds"] for r in rows)
    n = sum(r["gold_variations"] for r in rows)
    labeled = sum(1 for r in rows if r.get("label", {}).get("labeled"))
    foot = (
        f"\nAll tasks: {nl} of {raw} gold actions ({100 * nl / raw:.1f} %) not literally in the valid list; "
        f"matched paths reach 100 on {ok} of {n} variations; {labeled} of {len(rows)} tasks collected and "
        "labeled.\n"
    )
    return head + "\n".join(out) + "\n" + foot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names (default: all 30)")
    ap.add_argument("--simplifications", default="easy", help="easy, none or a +-joined list")
    ap.add_argument("--variations", type=int, default=2, help="test variations whose gold path is checked")
    ap.add_argument("--episodes", type=int, default=1, help="episodes collected and labeled per task")
    ap.add_argument("--max-steps", type=int, default=60, help="cap on the collection step limit")
    ap.add_argument("--gold-only", action="store_true", help="load and gold checks only")
    ap.add_argument(
        "--rows", default=None, help="JSON Lines file of finished tasks: a rerun skips them (resume)"
    )
    ap.add_argument("--json", default=None, help="write the records here")
    ap.add_argument("--md", default=None, help="write the Markdown table here")
    args = ap.parse_args()
    done: dict[str, dict] = {}
    if args.rows and Path(args.rows).exists():
        for line in Path(args.rows).read_text().splitlines():
            r = json.loads(line)
            if r["simplifications"] == args.simplifications:
                done[r["task"]] = r
    rows = []
    with tempfile.TemporaryDirectory(prefix="swcheck.") as tmp:
        for task in args.tasks.split(","):
            if task in done:
                rows.append(done[task])
                continue
            t0, load0 = time.perf_counter(), load_average()[0]
            row = gold_check(task, args.simplifications, args.variations)
            if not args.gold_only:
                limit = min(int(1.5 * max(row["gold_lengths"])) + 10, args.max_steps)
                row["label"] = collect_and_label(task, args.simplifications, args.episodes, limit, Path(tmp))
            row["seconds"] = round(time.perf_counter() - t0, 1)
            row["load_avg_1min"] = [load0, load_average()[0]]
            row = portable_paths(row)
            rows.append(row)
            if args.rows:
                with open(args.rows, "a") as f:
                    f.write(json.dumps(row) + "\n")
            print(
                f"{task}: gold {row['gold_lengths']}, not literal {row['gold_not_literal']}/"
                f"{row['gold_raw_actions']}, matched ok {row['matched_path_succeeds']}/{args.variations}, "
                f"{row.get('label', {}).get('collect', 'gold only')} ({row['seconds']} s)",
                flush=True,
            )
    if args.json:
        write_results(args.json, {"simplifications": args.simplifications, "tasks": rows}, indent=1)
    if args.md:
        Path(args.md).write_text(markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
