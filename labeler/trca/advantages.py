"""Completion-aware returns and TRCA's two relative advantages.

* Completion-aware return ``G_t = r_t + gamma G_{t+1}``, with the terminal success reward added at the last
  step (``G_{T-1} = r_{T-1} + R_success`` for a successful episode).
* Episode-relative advantage ``A_E``: an episode's return ``G_0`` standardised against the other episodes of
  the same group (same instruction, or same task type).
* Step-relative advantage ``A_S``: a step's ``G_t`` standardised against the steps taken from the same
  decision context (same instruction and normalised state, see :func:`labeler.trca.checks.context_key`).
* A group with fewer than 2 members, or whose values are all equal, gives 0. ``A = A_E + A_S``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence

EPS = 1e-9


def check_gamma(gamma: float) -> float:
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    return gamma


def completion_aware_returns(
    rewards: Sequence[float], success: bool, gamma: float = 0.95, success_reward: float = 1.0
) -> list[float]:
    check_gamma(gamma)
    out = [0.0] * len(rewards)
    g = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        terminal = success_reward if (success and t == len(rewards) - 1) else 0.0
        g = rewards[t] + terminal + gamma * g
        out[t] = g
    return out


def group_standardise(values: Sequence[float], keys: Sequence[Hashable]) -> list[float]:
    """``(v - mean_g) / std_g`` within each key's group (population std); 0 for singletons and flat groups."""
    if len(values) != len(keys):
        raise ValueError(f"{len(values)} values but {len(keys)} keys")
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i, k in enumerate(keys):
        groups[k].append(i)
    out = [0.0] * len(values)
    for idx in groups.values():
        if len(idx) < 2:
            continue
        vals = [values[i] for i in idx]
        mean = sum(vals) / len(vals)
        std = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))
        if std < EPS:
            continue
        for i in idx:
            out[i] = (values[i] - mean) / std
    return out
