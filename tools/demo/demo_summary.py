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


def _short(r: dict) -> str:
    lo, hi = r["ci95"]
    return f"{r['success_rate']:.0%} [{lo:.0%}, {hi:.0%}]"


def _maybe(path: Path) -> dict | None:
    return _load(path) if path.exists() else None


def verdict(stats: dict, served: list[tuple[str, str, dict | None]]) -> list[str]:
    """The summary's sentences: the labeled policy (role ``labeled``) against the sparse baselines, the
    teacher with as many expert episodes as the file has successes and the ceiling, in points (one seed: a
    100-episode row is about +-10 points)."""
    by_role: dict[str, list[tuple[str, dict]]] = {}
    for name, role, r in served:
        if r is not None:
            by_role.setdefault(role, []).append((name.strip(), r))
    d = by_role["labeled"][0][1]
    lines = []
    if "sparse" in by_role:
        best_name, best = max(by_role["sparse"], key=lambda nr: nr[1]["success_rate"])
        gain = 100 * (d["success_rate"] - best["success_rate"])
        lines.append(
            f"dense labels: same {stats['trajectories']} episodes ({stats['success_rate']:.0%} successful), "
            f"through edge-serve: {d['success_rate']:.0%} trained on TRCA labels, "
            f"{best['success_rate']:.0%} for the best sparse baseline ({best_name.split(',')[0]}): "
            f"{gain:+.0f} points over {d['episodes']} test episodes, one seed"
        )
    if "teacher" in by_role:
        same = by_role["teacher"][0][1]
        gain = 100 * (d["success_rate"] - same["success_rate"])
        lines.append(
            f"what the failed episodes are worth: BC on {stats['successes']} expert episodes (as many as the "
            f"file's successes) {same['success_rate']:.0%}; the labeled policy {gain:+.0f} points against it"
        )
    if "ceiling" in by_role:
        ceiling = by_role["ceiling"][0][1]
        lines.append(
            f"imitation ceiling: the same policy class cloning all the expert episodes reaches "
            f"{ceiling['success_rate']:.0%} through edge-serve; from the success-scarce logs the labeled "
            f"policy gets {d['success_rate']:.0%}"
        )
    return lines


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
    served = [
        ("credit on TRCA via edge-serve" + (" + loop guard" if d.get("loop_guard") else ""), "labeled", d),
        ("  BC on the successes, same way", "sparse", _maybe(out / "drive.bc.json")),
        ("  IQL on the success flag, same way", "sparse", _maybe(out / "drive.sparse.json")),
        ("teacher: BC on as many expert episodes", "teacher", _maybe(out / "drive.expert-same.json")),
        ("ceiling: BC on all expert episodes", "ceiling", _maybe(out / "drive.expert.json")),
    ]
    for name, _, r in served:
        if r is not None:
            print(f"{name:44s} {_rate(r):22s} {r['latency']['round_trip_ms_p50']:14.2f}")
    rows = [
        ("  same bundle in-process, argmax", out / "eval.bundle.json"),
        ("  same bundle in-process + loop guard", out / "eval.bundle.guard.json"),
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
    for line in verdict(stats, served):
        print(line)
    print(f"artifacts in {out}/: datasets, checkpoints (curves.png), bundle/ (manifest.json), *.json results")


def _deployed(log: Path) -> str:
    """How the deployed bundle's own episodes went (the robot's log of the round)."""
    flags = [json.loads(line)["success"] for line in log.read_text().splitlines() if line.strip()]
    return f"{sum(flags)} of {len(flags)} succeeded"


def loop_main(out_dir: str) -> None:
    """The round table of `make demo-loop`: each learner at round 0 (the demo) and round 1 (retrained on its
    own deployed episodes too), through edge-serve on the same test games, beside the fixed teachers."""
    out = Path(out_dir)
    loops = [
        ("credit on TRCA (the recipe)", "drive.json", "credit"),
        ("BC on every success so far (self-imitation)", "drive.bc.json", "bc"),
    ]
    first = _load(out / "round-1.drive.credit.json")
    print(f"the loop, one round: {first['episodes']} {first['env']} test games through edge-serve, one seed")
    print(f"{'learner':50s} {'round 0':18s} {'round 1':18s} {'its deployed episodes (round 1)'}")
    rates = {}
    for name, before, who in loops:
        r0, r1 = _load(out / before), _load(out / f"round-1.drive.{who}.json")
        rates[who] = (r0["success_rate"], r1["success_rate"])
        print(f"{name:50s} {_short(r0):18s} {_short(r1):18s} {_deployed(out / f'round-1.{who}.jsonl')}")
    for name, path in (
        ("teacher: BC on as many expert episodes (round 0)", "drive.expert-same.json"),
        ("ceiling: BC on all expert episodes", "drive.expert.json"),
    ):
        r = _maybe(out / path)
        if r is not None:
            print(f"{name:50s} {_rate(r)}")
    (c0, c1), (b0, b1) = rates["credit"], rates["bc"]
    print(
        f"round 1: the recipe {100 * (c1 - c0):+.0f} points on its own episodes, self-imitation "
        f"{100 * (b1 - b0):+.0f}; the recipe {100 * (c1 - b1):+.0f} points over self-imitation (one seed: "
        "about +-10 points on 100 games)"
    )


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--loop"]:
        loop_main(args[1] if len(args) > 1 else "demo-out")
    else:
        main(args[0] if args else "demo-out")
