"""The loop's report (``edgejudge matrix --rounds``): success per round per learner beside the fixed
baselines, what the deployed policy's own episodes did, and per verb where the rounds moved the decisions;
its PNG, one panel per world.

Round 0 of a learner is its matrix row (the training file alone); round ``r`` its policy trained on that file
and the episodes rounds 1..r deployed. Fixed beside them: BC on as many expert episodes as the training file
of the first policy on labels had successes at that round (:func:`policy.matrix.rounds.matched_experts`), and
the imitation ceiling (BC on the most expert episodes).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from policy.matrix.groups import (
    HEADLINE,
    ROW_NAMES,
    color,
    expert_sizes,
    find,
    find_expert,
    pct,
    plan_worlds,
    table,
    world_ceiling,
)
from policy.matrix.recipes import SOURCES


def loops(plan: Sequence[dict[str, Any]]) -> dict[str, list[tuple[str, str, int]]]:
    """Per world, the looped policies (algo, source, training episodes) in plan order."""
    out: dict[str, list[tuple[str, str, int]]] = {}
    for r in plan:
        if "round" in r:
            key = (r["algo"], r["source"], r["train_episodes"])
            mine = out.setdefault(r["world"], [])
            if key not in mine:
                mine.append(key)
    return out


def _learner(plan: Sequence[dict[str, Any]], world: str, algo: str, src: str) -> str:
    """A looped policy's row name, with what its rounds changed: training settings (``--round-set``), the
    rubric extended each round (``--round-rubric extend``)."""
    row = next(
        (r for r in plan if "round" in r and (r["world"], r["algo"], r["source"]) == (world, algo, src)),
        {},
    )
    changes = [*row.get("round_set", ())]
    if row.get("round_rubric") == "extend":
        changes.append("rubric extended each round")
    name = ROW_NAMES[(algo, src)]
    return f"{name} (from round 1: {', '.join(changes)})" if changes else name


def last_round(plan: Sequence[dict[str, Any]]) -> int:
    return max((r["round"] for r in plan if "round" in r), default=0)


def _deployed(g: dict[str, Any] | None) -> str:
    """The deployed policy's own success over the round's logs (seeds pooled)."""
    if g is None:
        return ""
    got = [r["deployed"] for r in g["rows"] if r.get("deployed")]
    if not got:
        return ""
    succ, n = sum(d["successes"] for d in got), sum(d["episodes"] for d in got)
    return f"{pct(succ / n)}"


def _cell(g: dict[str, Any] | None, deployed: str = "") -> str:
    if g is None:
        return ""
    lo, hi = g["ci95"]
    return f"{pct(g['mean'])} [{100 * lo:.0f}, {100 * hi:.0f}]" + (f" ({deployed})" if deployed else "")


def _matched(agg, world: str, g: dict[str, Any] | None) -> tuple[int, dict[str, Any]] | None:
    """BC on as many expert episodes as ``g``'s training file had successes, and that number."""
    if g is None:
        return None
    n = next((r["train_successes"] for r in g["rows"] if r.get("train_successes")), None)
    found = find_expert(agg, world, n) if n else None
    return (n, found) if found else None


def _ceiling(agg, world: str, matched: set[int]) -> tuple[int, dict[str, Any]] | None:
    """The imitation ceiling: BC on the most expert episodes of a size no round's baseline matched (else the
    world's largest)."""
    for n in expert_sizes(agg, world):
        g = find_expert(agg, world, n) if n not in matched else None
        if g is not None:
            return n, g
    return world_ceiling(agg, world)


def _matched_sizes(agg, plan: Sequence[dict[str, Any]], world: str) -> set[int]:
    """The expert-episode counts of a world's matched baselines (every round of every looped policy, every
    seed's)."""
    out = set()
    for algo, src, n in loops(plan).get(world, []):
        for r in range(last_round(plan) + 1):
            g = find(agg, world, algo, src, n, *HEADLINE, r)
            out |= {row["train_successes"] for row in (g or {}).get("rows", ()) if row.get("train_successes")}
    return out


def _verbs(g: dict[str, Any] | None) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for r in g["rows"] if g else []:
        for verb, v in ((r.get("gold_decisions") or {}).get("verbs") or {}).items():
            acc = out.setdefault(verb, [0, 0])
            acc[0] += v["right"]
            acc[1] += v["decisions"]
    return out


def _verb_moves(first: dict[str, Any] | None, last: dict[str, Any] | None, top: int = 3) -> str:
    """The verbs whose gold-path accuracy moved most from ``first`` to ``last`` (at least 10 decisions)."""
    a, b = _verbs(first), _verbs(last)
    moves = [
        (b[v][0] / b[v][1] - a[v][0] / a[v][1], v) for v in a.keys() & b.keys() if min(a[v][1], b[v][1]) >= 10
    ]
    moves.sort(key=lambda m: -abs(m[0]))
    return ", ".join(
        f"{v} {a[v][0] / a[v][1]:.2f} → {b[v][0] / b[v][1]:.2f}" for _d, v in moves[:top] if abs(_d) >= 0.02
    )


def rounds_markdown(agg, plan: Sequence[dict[str, Any]]) -> list[str]:
    """The loop's tables, or nothing when the plan has no round."""
    last = last_round(plan)
    if not last:
        return []
    body, verbs = [], []
    for w in plan_worlds(plan):
        world = w["world"]
        looped = loops(plan).get(world, [])
        first_dense = next(((a, s, n) for a, s, n in looped if SOURCES[s].dense), None)
        for algo, src, n in looped:
            groups = [find(agg, world, algo, src, n, *HEADLINE, r) for r in range(last + 1)]
            if not any(groups[1:]):
                continue  # a policy of the plan that no loop ran
            cells = [_cell(g, _deployed(g) if r else "") for r, g in enumerate(groups)]
            name = _learner(plan, world, algo, src)
            body.append([world, name, *cells])
            moved = _verb_moves(groups[0], groups[-1])
            if moved:
                verbs.append([world, name, moved])
        if first_dense is not None:
            algo, src, n = first_dense
            cells = []
            for r in range(last + 1):
                m = _matched(agg, world, find(agg, world, algo, src, n, *HEADLINE, r))
                cells.append(f"{_cell(m[1])}, {m[0]} episodes" if m else "")
            body.append(
                [world, "BC on as many expert episodes as the first labeled file has successes", *cells]
            )
        ceil = _ceiling(agg, world, _matched_sizes(agg, plan, world))
        if ceil:
            body.append([world, f"imitation ceiling (BC on {ceil[0]} expert episodes)", _cell(ceil[1])])
    lines = [
        "",
        f"### The loop: {last} round" + ("s" if last > 1 else ""),
        "",
        "Success on the test split through edge-serve with the loop guard [Wilson 95 %], round 0 the "
        "training file alone, each later round trained on it and every episode the earlier rounds' policies "
        "played on the train split (their own success in parentheses: what the robot saw).",
        "",
        *table(["world", "learner", *(f"round {r}" for r in range(last + 1))], body),
    ]
    if verbs:
        lines += [
            "",
            f"Where the rounds moved the decisions (`edgejudge decisions` on the test gold paths, round 0 → "
            f"round {last}; verbs with at least 10 decisions, the three that moved most):",
            "",
            *table(["world", "learner", "verbs"], verbs),
        ]
    return lines


def rounds_plot(agg, plan: Sequence[dict[str, Any]]) -> bytes | None:
    """Success per round per learner, one panel per world, the fixed baselines as lines; PNG bytes (None
    without rounds)."""
    last = last_round(plan)
    if not last:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    worlds = [w["world"] for w in plan_worlds(plan) if loops(plan).get(w["world"])]
    fig, axes = plt.subplots(1, len(worlds), figsize=(1 + 4.5 * len(worlds), 4), squeeze=False)
    xs = list(range(last + 1))
    for ax, world in zip(axes[0], worlds, strict=True):
        for algo, src, n in loops(plan)[world]:
            pts = [(r, find(agg, world, algo, src, n, *HEADLINE, r)) for r in xs]
            pts = [(r, g) for r, g in pts if g is not None]
            if not pts:
                continue
            line = ax.plot(
                [r for r, _ in pts],
                [g["mean"] for _, g in pts],
                marker="o",
                label=ROW_NAMES[(algo, src)],
                color=color(algo, src),
            )
            ax.fill_between(
                [r for r, _ in pts],
                [g["ci95"][0] for _, g in pts],
                [g["ci95"][1] for _, g in pts],
                color=line[0].get_color(),
                alpha=0.12,
            )
        ceil = _ceiling(agg, world, _matched_sizes(agg, plan, world))
        if ceil:
            ax.axhline(
                ceil[1]["mean"], color="black", linestyle="--", label=f"BC on {ceil[0]} expert episodes"
            )
        ax.set_xticks(xs)
        ax.set_ylim(0, 1)
        ax.set_xlabel("round")
        ax.set_ylabel("success (edge-serve + loop guard)")
        ax.set_title(world)
        ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
