"""Temporal consistency: each prompt's high-value actions along a trajectory and their backward verification.

For prompt n and trajectory tau, H_n(tau) holds, at every observation, the candidate action that prompt n
rates highest. Every candidate is scored by one observation-level query per step and prompt: a multiple choice
over the candidates (letters A, B, ...; single tokens, so one forward pass scores them all), the prompt's
probability that each candidate is the most useful action. A small model prefers some letters whatever they
stand for, so the probabilities are calibrated by the prompt's mean probability per letter position over the
dataset (as the ratings are, see :mod:`labeler.coren.voting`); ties go to the first candidate. One backward
query per trajectory and prompt asks whether that sequence can achieve the instruction, scored as P(Yes) vs
P(No) (normalised over the two). The 270M judge says Yes to nearly every plan (P(Yes) >= 0.5 for all 30 dev
trajectories), so the answer is calibrated like the ratings: a plan passes when its calibrated P(Yes), i.e.
``P(Yes)/mean P(Yes)`` against ``P(No)/mean P(No)`` over the prompt's plans in the dataset, is >= 0.5.

A prompt's rating of the taken action at step t is *violated* when that action is in H_n(tau) (it is the
prompt's own top choice there) and the backward check failed: the paper excludes such rewards. r^T is the
majority vote over the non-violated prompts (fallback: the contextual reward when all are violated).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

PASS_PROBABILITY = 0.5


def position_prior(dists: Sequence[np.ndarray], positions: int) -> np.ndarray:
    """Mean probability of each option position over all multiple-choice queries (absent positions count 0;
    each position is averaged over the queries that offered it)."""
    total = np.zeros(positions)
    seen = np.zeros(positions)
    for d in dists:
        total[: len(d)] += d
        seen[: len(d)] += 1
    return np.where(seen > 0, total / np.maximum(seen, 1), 1.0)


def high_value_index(dist: Sequence[float], prior: np.ndarray) -> int:
    """Index of the candidate with the highest calibrated probability ``p / prior``; ties: the first."""
    d = np.asarray(dist, dtype=np.float64)
    return int(np.argmax(d / np.maximum(prior[: len(d)], 1e-9)))


def backward_passes(p_yes: Sequence[float]) -> np.ndarray:
    """Pass flags of one prompt's backward checks over the dataset's trajectories: the calibrated P(Yes)
    (``P(Yes)/mean P(Yes)`` against ``P(No)/mean P(No)``, renormalised) is at least 0.5."""
    p = np.clip(np.asarray(p_yes, dtype=np.float64), 1e-9, 1 - 1e-9)
    yes, no = p / p.mean(), (1 - p) / (1 - p).mean()
    return yes / (yes + no) >= PASS_PROBABILITY


def violated(taken: str, high_value: str, passed: bool) -> bool:
    """The paper's violation: the taken action is the prompt's high-value action and the plan failed."""
    return taken == high_value and not passed
