"""Votes: from each prompt's distribution over the rating scale to one reward per step.

1. **Calibration** (per prompt, over the whole dataset being labeled; no ground truth): a small judge prefers
   some ratings whatever it is shown (contextual bias). Following "calibrate before use" (Zhao et al., 2021),
   each prompt's distribution is divided by that prompt's mean distribution over all steps, then renormalised:
   ``p_cal(v) ∝ p(v) / mean_steps p(v)``. This is what COREN's contextual consistency aims at — a prompt's own
   bias should not decide the reward.
2. **Prompt vote**: the scale value with the highest calibrated probability; a tie goes to the value nearest 0,
   then to the lower one.
3. **Majority vote** over the voting prompts: the most frequent value. **Tie rule**: among the values with the
   top count, the one with the largest summed calibrated probability over the voting prompts; if still tied,
   the value nearest 0, then the lower one (a conservative reward).
4. **Filtered vote** (structural, temporal): the majority over the prompts that pass a check; when none passes,
   the fallback (the contextual reward) is used and counted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

EPS = 1e-9


def normalise(dist: Sequence[float]) -> np.ndarray:
    p = np.asarray(dist, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"not a distribution: {list(dist)}")
    s = p.sum()
    return p / s if s > 0 else np.full_like(p, 1.0 / p.size)


def calibration_prior(dists: np.ndarray) -> np.ndarray:
    """Mean distribution over steps, shape (K,), for ``dists`` of shape (steps, K)."""
    d = np.asarray(dists, dtype=np.float64)
    if d.ndim != 2 or d.shape[0] == 0:
        raise ValueError(f"expected (steps, K) distributions, got shape {d.shape}")
    return d.mean(axis=0)


def calibrate(dists: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """``p(v) / prior(v)`` renormalised per row; ``prior`` from :func:`calibration_prior`."""
    d = np.asarray(dists, dtype=np.float64) / np.maximum(np.asarray(prior, dtype=np.float64), EPS)
    return d / d.sum(axis=-1, keepdims=True)


def _tie_order(value: int) -> tuple[int, int]:
    return (abs(value), value)


def prompt_vote(dist: Sequence[float], values: Sequence[int]) -> int:
    """The scale value with the highest probability; ties: nearest 0, then lower."""
    p = normalise(dist)
    if len(p) != len(values):
        raise ValueError(f"{len(p)} probabilities for {len(values)} scale values")
    best = p.max()
    tied = [v for v, q in zip(values, p, strict=True) if q >= best - 1e-12]
    return min(tied, key=_tie_order)


def majority_vote(votes: Sequence[int], dists: Sequence[Sequence[float]] | None = None,
                  values: Sequence[int] | None = None) -> int:
    """Most frequent vote; ties by summed probability (when ``dists``/``values`` are given), then nearest 0,
    then lower. ``dists[i]`` is the (calibrated) distribution behind ``votes[i]``."""
    if not votes:
        raise ValueError("majority_vote needs at least one vote")
    counts: dict[int, int] = {}
    for v in votes:
        counts[v] = counts.get(v, 0) + 1
    top = max(counts.values())
    tied = [v for v, c in counts.items() if c == top]
    if len(tied) > 1 and dists is not None and values is not None:
        index = {v: i for i, v in enumerate(values)}
        mass = {v: sum(float(normalise(d)[index[v]]) for d in dists) for v in tied}
        best = max(mass.values())
        tied = [v for v in tied if mass[v] >= best - 1e-12]
    return min(tied, key=_tie_order)


def filtered_vote(votes: Sequence[int], passed: Sequence[bool], fallback: int,
                  dists: Sequence[Sequence[float]] | None = None,
                  values: Sequence[int] | None = None) -> tuple[int, bool]:
    """Majority vote over the prompts with ``passed[i]``; ``(fallback, True)`` when none passed."""
    if len(votes) != len(passed):
        raise ValueError(f"{len(votes)} votes but {len(passed)} pass flags")
    keep = [i for i, ok in enumerate(passed) if ok]
    if not keep:
        return fallback, True
    kept_dists = [dists[i] for i in keep] if dists is not None else None
    return majority_vote([votes[i] for i in keep], kept_dists, values), False
