"""Votes: from each prompt's answer distributions to one reward per step on the paper's scale -2..2.

1. **Calibration** (per prompt, over the dataset being labeled; no ground truth): a small judge prefers some
   answers whatever it is shown (contextual bias). Following "calibrate before use" (Zhao et al., 2021), each
   prompt's distribution is divided by that prompt's mean distribution over all steps and renormalised:
   ``p_cal(c) ∝ p(c) / mean_steps p(c)``. The prompt's **score** of a step is the expected template value
   under ``p_cal`` (for the Yes/No template: ``p_cal(Yes) - p_cal(No)``).
2. **Scale position**: a prompt's scores are ranked over the dataset (ties share the average rank) and mapped
   to ``u = (rank - 0.5) / steps`` in (0, 1), i.e. ``-2 + 4u`` on the scale. This puts every prompt on the
   same footing whatever its own range.
3. **Prompt vote**: the quintile of ``u`` on the scale: ``u < 0.2 -> -2``, ``< 0.4 -> -1``, ``< 0.6 -> 0``,
   ``< 0.8 -> 1``, else ``2``.
4. **Majority vote** over the voting prompts: the most frequent vote. **Tie rule**: among the values with the
   top count, the one nearest the voting prompts' mean scale position; if still tied, the value nearest 0,
   then the lower one (a conservative reward).
5. **Filtered vote** (structural, temporal): the majority over the prompts that pass a check; when none
   passes, the fallback (the contextual reward) is used and counted.

Steps 2-5 are the ``majority`` vote. The ``mean`` vote (the default, :data:`VOTES`) skips the ranking and
the quintiles: a prompt's reward is its calibrated score itself, put on the scale (``2 * score / max|value|``,
:func:`score_scale`), and a channel is the mean over its (passing) prompts (:func:`filtered_mean`). A rank
position throws away how sure a prompt is, a quintile vote most of the rest; the mean keeps both, so a prompt
whose calibrated answers are sharp counts for more than one that hovers around its prior (on the TWC dev
set: per-step AUROC vs score progress 0.875 for the mean of four prompts' scores, 0.851 for the mean of
their positions, 0.817 for the majority vote; BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SCALE = (-2, -1, 0, 1, 2)
EPS = 1e-9
VOTES = ("mean", "majority")
"""How prompts' ratings become a channel: the mean of their calibrated scores, or the majority of their
quintile votes."""


def calibration_prior(dists: np.ndarray) -> np.ndarray:
    """Mean distribution over steps, shape (K,), for ``dists`` of shape (steps, K)."""
    d = np.asarray(dists, dtype=np.float64)
    if d.ndim != 2 or d.shape[0] == 0:
        raise ValueError(f"expected (steps, K) distributions, got shape {d.shape}")
    return d.mean(axis=0)


def calibrate(dists: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """``p(c) / prior(c)`` renormalised per row; ``prior`` from :func:`calibration_prior`."""
    d = np.asarray(dists, dtype=np.float64) / np.maximum(np.asarray(prior, dtype=np.float64), EPS)
    return d / d.sum(axis=-1, keepdims=True)


def prompt_scores(dists: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """Calibrated expected value per step for one prompt's (steps, K) distributions."""
    d = np.asarray(dists, dtype=np.float64)
    if d.shape[1] != len(values):
        raise ValueError(f"{d.shape[1]} probabilities per step for {len(values)} values")
    return calibrate(d, calibration_prior(d)) @ np.asarray(values, dtype=np.float64)


def positions(scores: Sequence[float]) -> np.ndarray:
    """``(average rank - 0.5) / n`` of each score, in (0, 1)."""
    s = np.asarray(scores, dtype=np.float64)
    n = len(s)
    order = np.argsort(s, kind="stable")
    ranks = np.empty(n)
    i = 0
    while i < n:
        j = i
        while j + 1 < n and s[order[j + 1]] == s[order[i]]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return (ranks - 0.5) / max(n, 1)


def score_scale(scores: Sequence[float] | np.ndarray, values: Sequence[float]) -> np.ndarray:
    """Calibrated scores (expected template values) on the reward scale -2..2: ``2 * score / max|value|``."""
    top = max(abs(float(v)) for v in values)
    return 2.0 * np.asarray(scores, dtype=np.float64) / max(top, EPS)


def to_scale(u: np.ndarray | float) -> np.ndarray:
    """Continuous scale position ``-2 + 4u``."""
    return -2.0 + 4.0 * np.asarray(u, dtype=np.float64)


def quintile_votes(u: np.ndarray) -> np.ndarray:
    """The vote on -2..2 for positions ``u`` in (0, 1)."""
    bins = np.minimum((np.asarray(u, dtype=np.float64) * len(SCALE)).astype(int), len(SCALE) - 1)
    return np.asarray(SCALE)[bins]


def _tie_order(value: int) -> tuple[int, int]:
    return (abs(value), value)


def majority_vote(votes: Sequence[int], support: float | None = None) -> int:
    """Most frequent vote; ties: nearest ``support`` (the voters' mean scale position), then nearest 0,
    then lower."""
    if len(votes) == 0:
        raise ValueError("majority_vote needs at least one vote")
    counts: dict[int, int] = {}
    for v in votes:
        counts[int(v)] = counts.get(int(v), 0) + 1
    top = max(counts.values())
    tied = [v for v, c in counts.items() if c == top]
    if len(tied) > 1 and support is not None:
        best = min(abs(v - support) for v in tied)
        tied = [v for v in tied if abs(v - support) <= best + 1e-12]
    return min(tied, key=_tie_order)


def filtered_vote(
    votes: Sequence[int],
    passed: Sequence[bool],
    fallback: int,
    scale_positions: Sequence[float] | None = None,
) -> tuple[int, bool]:
    """Majority vote over the prompts with ``passed[i]``; ``(fallback, True)`` when none passed.
    ``scale_positions[i]``: prompt i's continuous position, for the tie rule."""
    if len(votes) != len(passed):
        raise ValueError(f"{len(votes)} votes but {len(passed)} pass flags")
    keep = [i for i, ok in enumerate(passed) if ok]
    if not keep:
        return fallback, True
    support = float(np.mean([scale_positions[i] for i in keep])) if scale_positions is not None else None
    return majority_vote([votes[i] for i in keep], support), False


def filtered_mean(rewards: Sequence[float], passed: Sequence[bool], fallback: float) -> tuple[float, bool]:
    """Mean of ``rewards[i]`` over the prompts with ``passed[i]``; ``(fallback, True)`` when none passed."""
    if len(rewards) != len(passed):
        raise ValueError(f"{len(rewards)} rewards but {len(passed)} pass flags")
    keep = [float(r) for r, ok in zip(rewards, passed, strict=True) if ok]
    if not keep:
        return float(fallback), True
    return float(np.mean(keep)), False
