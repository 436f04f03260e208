"""Print the summary table of `make demo` from the JSON files its stages wrote into OUT."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def _rate(r: dict) -> str:
    lo, hi = r["ci95"]
    return f"{r['success_rate']:6.1%}  [{lo:.0%}, {hi:.0%}]"


def main(out_dir: str) -> None:
    out = Path(out_dir)
    stats = _load(out / "train.stats.json")
    quality = _load(out / "trca.quality.json")
    total = next((c for c in quality["channels"] if c["channel"] == "trca.total"), None)
    env = _load(out / "eval.bundle.json")["env"]
    print(
        f"data     {stats['trajectories']} {env} train episodes, {stats['steps']} steps, "
        f"success {stats['success_rate']:.1%}" + (" (success-scarce)" if stats["success_rate"] <= 0.3 else "")
    )
    if total is not None:
        print(
            f"labels   TRCA r per-step AUROC vs score progress {total['auroc_progress']} "
            f"(in-sample: the shipped rubric was reviewed on train data)"
        )
    coren = out / "coren.report.json"
    if coren.exists():
        c = _load(coren)
        queries = c["queries"] if isinstance(c["queries"], int) else sum(c["queries"].values())
        rate = c["steps"] / c["seconds"]
        print(
            f"COREN    {c['steps']} held-out steps labeled, {queries} judge queries "
            f"({c['cache_hits']} cached), {rate:.2f} steps/s"
        )
    print()
    print(f"{'policy (' + env + ' test split)':44s} {'success  [95% CI]':22s} {'ms/action p50':>14s}")
    d = _load(out / "drive.json")
    lat = d["latency"]
    via = "IQL-TRCA bundle via edge-serve" + (" + loop guard" if d.get("loop_guard") else "")
    print(f"{via:44s} {_rate(d):22s} {lat['round_trip_ms_p50']:14.2f}")
    kept_path = out / "drive.bc-labeled.json"
    kept = _load(kept_path) if kept_path.exists() else None
    if kept is not None:
        name = "  BC, label-kept steps, same way"
        print(f"{name:44s} {_rate(kept):22s} {kept['latency']['round_trip_ms_p50']:14.2f}")
    sparse_path = out / "drive.sparse.json"
    sparse = _load(sparse_path) if sparse_path.exists() else None
    if sparse is not None:
        name = "  IQL sparse, same episodes, same way"
        print(f"{name:44s} {_rate(sparse):22s} {sparse['latency']['round_trip_ms_p50']:14.2f}")
    expert_path = out / "drive.expert.json"
    expert = _load(expert_path) if expert_path.exists() else None
    if expert is not None:
        name = "ceiling: BC on expert episodes, same way"
        print(f"{name:44s} {_rate(expert):22s} {expert['latency']['round_trip_ms_p50']:14.2f}")
    rows = [
        ("  same bundle in-process, argmax", out / "eval.bundle.json"),
        ("  same bundle in-process + loop guard", out / "eval.bundle.guard.json"),
        ("BC on successes (sparse baseline) + guard", out / "eval.bc.json"),
        ("random admissible action", out / "eval.random.json"),
    ]
    for name, path in rows:
        r = _load(path)
        print(f"{name:44s} {_rate(r):22s} {r['latency_ms_p50']:14.2f}")
    print(
        "(in-process rows and edge-serve run the same runtime with an LRU of text embeddings: the state's\n"
        " items repeat from step to step, so a step encodes only its new sentences)"
    )
    print()
    print(
        f"edge-serve round trip p50 {lat['round_trip_ms_p50']:.2f} ms, "
        f"p99 {lat['round_trip_ms_p99']:.2f} ms; "
        f"in the daemon p50 {lat['server_ms_p50']:.2f} ms, p99 {lat['server_ms_p99']:.2f} ms"
    )
    if sparse is not None:
        gain = 100 * (d["success_rate"] - sparse["success_rate"])
        print(
            f"dense labels: same {stats['trajectories']} episodes ({stats['success_rate']:.0%} successful), "
            f"bundle behind edge-serve + generic loop guard: {d['success_rate']:.0%} trained on TRCA labels "
            f"vs {sparse['success_rate']:.0%} on the success flag alone ({gain:+.0f} points, "
            f"{d['episodes']} test episodes)"
            + (f"; BC on the label-kept steps {kept['success_rate']:.0%}" if kept is not None else "")
        )
    if expert is not None:
        print(
            f"imitation ceiling: the same policy class cloning expert episodes reaches "
            f"{expert['success_rate']:.0%} through edge-serve; from the success-scarce logs the labeled "
            f"policy gets {d['success_rate']:.0%}"
        )
    print(f"artifacts in {out}/: datasets, checkpoints (curves.png), bundle/ (manifest.json), *.json results")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "demo-out")
