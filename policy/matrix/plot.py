"""The matrix's PNG: success per world and source with 95 % intervals, and per world the data-size curves
beside the imitation ceiling and random."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from policy.matrix.groups import (
    HEADLINE,
    ORDER,
    ROW_NAMES,
    TRAINED,
    color,
    find,
    plan_worlds,
    trained_sizes,
    with_ceiling,
    world_ceiling,
)
from policy.matrix.store import RowStore


def plot(store: RowStore, plan: Sequence[dict[str, Any]], ceiling: Sequence[dict[str, Any]] = ()) -> bytes:
    """Success per world and source (headline client, largest size) with 95 % intervals, and per world the
    data-size curves with the imitation ceiling and random as lines; PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agg = with_ceiling(store.select(plan), ceiling)
    worlds = [w["world"] for w in plan_worlds(plan)]
    sizes = trained_sizes(plan)
    top = max(sizes) if sizes else 0
    fig, axes = plt.subplots(1, 1 + len(worlds), figsize=(5 + 4 * len(worlds), 4), squeeze=False)
    ax = axes[0][0]

    def bar(world, algo, src):
        if algo == "random":
            return find(agg, world, algo, src, 0, "argmax", "in-process")
        if algo == "llm-agent":
            return find(agg, world, algo, src, 0, "guard", "in-process")
        return find(agg, world, algo, src, top, *HEADLINE)

    series = [k for k in ORDER if any(bar(w, *k) for w in worlds)]
    width = 0.8 / max(1, len(series))
    for i, (algo, src) in enumerate(series):
        xs, ys, lo, hi = [], [], [], []
        for j, world in enumerate(worlds):
            g = bar(world, algo, src)
            if g is None:
                continue
            xs.append(j + (i - (len(series) - 1) / 2) * width)
            ys.append(g["mean"])
            # the mean of the seeds' rates can fall outside the pooled interval
            lo.append(max(0.0, g["mean"] - g["ci95"][0]))
            hi.append(max(0.0, g["ci95"][1] - g["mean"]))
        if xs:
            label = ROW_NAMES[(algo, src)] + (" + guard" if algo == "llm-agent" else "")
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=label, color=color(algo, src))
    ax.set_xticks(range(len(worlds)), worlds, rotation=15)
    ax.set_ylim(0, 1)
    ax.set_ylabel("success")
    ax.set_title(f"bundle via edge-serve + loop guard, {top} episodes")
    ax.legend(fontsize=7)
    for j, world in enumerate(worlds):
        ax = axes[0][1 + j]
        for algo, src in TRAINED:
            pts = [(n, find(agg, world, algo, src, n, *HEADLINE)) for n in sizes]
            pts = [(n, g) for n, g in pts if g is not None]
            if not pts:
                continue
            ns = [n for n, _ in pts]
            ys = [g["mean"] for _, g in pts]
            line = ax.plot(ns, ys, marker="o", label=ROW_NAMES[(algo, src)], color=color(algo, src))
            ax.fill_between(
                ns,
                [g["ci95"][0] for _, g in pts],
                [g["ci95"][1] for _, g in pts],
                color=line[0].get_color(),
                alpha=0.15,
            )
        rnd = find(agg, world, "random", "-", 0, "argmax", "in-process")
        if rnd:
            ax.axhline(rnd["mean"], color="grey", linestyle=":", label="random")
        ceil = world_ceiling(agg, world)
        if ceil:
            ax.axhline(
                ceil[1]["mean"], color="black", linestyle="--", label=f"imitation ceiling ({ceil[0]} expert)"
            )
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.set_ylim(0, 1)
        ax.set_xlabel("training episodes")
        ax.set_title(f"{world}: edge-serve + loop guard")
        ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
