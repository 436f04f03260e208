"""What every table and the plot of the matrix share: the rows' display names and colours, rows grouped per
configuration with seeds pooled (:func:`aggregate`), a group found by its configuration, the imitation ceiling
of a world, and the cells and tables they are written in."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from policy.evaluation.evaluate import wilson_interval
from policy.matrix.recipes import row_names

ROW_NAMES = row_names()
"""Every row kind's display name (:func:`policy.matrix.recipes.row_names`), in table order."""
ORDER = list(ROW_NAMES)
TRAINED = [(a, src) for a, src in ORDER if src not in ("expert", "-")]
"""The rows trained on the success-scarce files (the curves against data size)."""


def color(algo: str, src: str) -> str:
    """One colour per row kind in every panel of the plot."""
    return f"C{ORDER.index((algo, src))}"


HEADLINE = ("guard", "edge-serve")
"""The client and runner of the row that counts."""


def group_key(r: dict[str, Any]) -> tuple:
    """(world, algo, source, episodes, client, runner, test episodes, round): a loop's round is a
    configuration of its own (round 0: the matrix's row)."""
    return (
        r["world"],
        r["algo"],
        r["source"],
        r["train_episodes"],
        r["client"],
        r["runner"],
        r["test_episodes"],
        r.get("round", 0),
    )


def aggregate(rows: Sequence[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """Finished rows pooled over seeds, by :func:`group_key`."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("status") == "ok":
            groups.setdefault(group_key(r), []).append(r)
    out = {}
    for key, rs in groups.items():
        rs = sorted(rs, key=lambda r: r["seed"])
        succ, n = sum(r["successes"] for r in rs), sum(r["episodes"] for r in rs)
        rates = [r["success_rate"] for r in rs]
        scores = [r["mean_score"] for r in rs if r.get("mean_score") is not None]
        out[key] = {
            "rates": rates,
            "seeds": [r["seed"] for r in rs],
            "mean": statistics.fmean(rates),
            "ci95": wilson_interval(succ, n),
            "episodes": n,
            "score": statistics.fmean(scores) if scores else None,
            "train_success_rate": rs[0].get("train_success_rate"),
            "rows": rs,
        }
    return out


def pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def cell(g: dict[str, Any] | None) -> str:
    if g is None:
        return ""
    lo, hi = g["ci95"]
    seeds = " / ".join(f"{100 * x:.0f}" for x in g["rates"])
    per = f" ({seeds})" if len(g["rates"]) > 1 else ""
    return f"{pct(g['mean'])}{per} [{100 * lo:.0f}, {100 * hi:.0f}]"


def plan_worlds(plan: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for r in plan:
        seen.setdefault(r["world"], r)
    return list(seen.values())


def find(agg, world, algo, source, n, client, runner, round_: int = 0):
    return next(
        (g for k, g in agg.items() if k[:6] == (world, algo, source, n, client, runner) and k[7] == round_),
        None,
    )


def table(header: list[str], body: list[list[str]]) -> list[str]:
    if not body:
        return []
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(r) + " |" for r in body),
    ]


def expert_sizes(agg, world: str) -> list[int]:
    """The numbers of expert episodes of a world's imitation-ceiling rows, largest first."""
    return sorted({k[3] for k in agg if k[0] == world and k[2] == "expert"}, reverse=True)


def world_ceiling(agg, world: str) -> tuple[int, dict[str, Any]] | None:
    """A world's imitation ceiling: its largest number of expert episodes and that row's group (the
    headline client, else the argmax)."""
    for m in expert_sizes(agg, world)[:1]:
        g = find_expert(agg, world, m)
        if g is not None:
            return m, g
    return None


def find_expert(agg, world: str, n: int) -> dict[str, Any] | None:
    """The group of BC on ``n`` expert episodes of ``world``: the headline client's, else the argmax's."""
    return find(agg, world, "bc", "expert", n, *HEADLINE) or find(
        agg, world, "bc", "expert", n, "argmax", "edge-serve"
    )


def with_ceiling(rows: Sequence[dict[str, Any]], ceiling: Sequence[dict[str, Any]]) -> dict[tuple, Any]:
    """``rows`` and the expert rows of ``ceiling`` (another results file), pooled over seeds."""
    return aggregate([*rows, *(r for r in ceiling if r.get("source") == "expert")])


def trained_sizes(plan: Sequence[dict[str, Any]]) -> list[int]:
    """The plan's sizes of success-scarce training files (not the expert ones)."""
    return sorted({r["train_episodes"] for r in plan if r["train_episodes"] and r["source"] != "expert"})
