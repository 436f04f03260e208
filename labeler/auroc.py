"""AUROC by ranks (the Mann-Whitney U statistic): how well scores rank positives above negatives, ties counted
one half. The label checks share it: against the ground truth (:mod:`labeler.quality`), against the success
flags alone (:mod:`labeler.label_check`), and COREN's orchestrator. Stdlib only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks of ``values``; tied values share the average of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        avg = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            ranks[order[k]] = avg
        i = j + 1
    return ranks


def auroc(scores: Sequence[float], positives: Sequence[bool]) -> float | None:
    """Probability that a random positive scores above a random negative (ties count one half).

    ``None`` when either class is empty. Scores must be finite.
    """
    if len(scores) != len(positives):
        raise ValueError(f"auroc: {len(scores)} scores but {len(positives)} labels")
    for s in scores:
        if not math.isfinite(s):
            raise ValueError(f"auroc: score {s} is not finite")
    n_pos = sum(1 for p in positives if p)
    n_neg = len(positives) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = average_ranks(scores)
    rank_sum = sum(r for r, p in zip(ranks, positives, strict=True) if p)
    u = rank_sum - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)
