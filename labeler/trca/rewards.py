"""TRCA step rewards from item judgments.

* Foundational ``r^F_t = sum_j q_{t,j}``, with ``q_{t,j} = +1/M_c`` when a positive item j of category c
  (evidence, execution) holds at step t, ``-1/M_c`` when an invalidity item holds, else 0. ``M_c`` is the
  number of the rubric's items in category c that apply to the trajectory's instruction.
* Breakthrough ``r^B_t = Phi_t - Phi_{t-1}``, with ``Phi_t`` the cumulative coverage of positive items: an
  item adds ``1/M_c`` to Phi at the first step where it holds with a binding not met before in the trajectory
  (a binding is what the item is about, e.g. which object was taken; see :mod:`labeler.trca.rubric`).
* Total ``r_t = (1 - lambda) r^F_t + lambda r^B_t``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from labeler.trca.rubric import CATEGORIES, SIGN

Hits = Sequence[tuple[int, frozenset[str]]]  # (item index, bindings) of the items that hold at one step


@dataclass(frozen=True)
class StepReward:
    foundational: float
    breakthrough: float
    total: float


def check_lambda(lam: float) -> float:
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lambda must be in [0, 1], got {lam}")
    return lam


def category_sizes(categories: Sequence[str], active: Sequence[int]) -> dict[str, int]:
    sizes = dict.fromkeys(CATEGORIES, 0)
    for i in active:
        sizes[categories[i]] += 1
    return sizes


def trajectory_rewards(
    hits_per_step: Sequence[Hits], categories: Sequence[str], active: Sequence[int], lam: float = 0.8
) -> list[StepReward]:
    """Rewards of one trajectory's steps.

    ``hits_per_step[t]`` lists (item index, bindings) of the items that hold at step t; ``categories[i]`` is
    item i's category; ``active`` are the items that apply to the trajectory's instruction (they set M_c).
    """
    check_lambda(lam)
    sizes = category_sizes(categories, active)
    covered: set[tuple[int, str]] = set()
    out: list[StepReward] = []
    for hits in hits_per_step:
        r_f = r_b = 0.0
        for i, bindings in hits:
            cat = categories[i]
            weight = 1.0 / sizes[cat]
            r_f += SIGN[cat] * weight
            if SIGN[cat] > 0:
                new = {(i, b) for b in bindings} - covered
                if new:
                    covered |= new
                    r_b += weight
        out.append(StepReward(r_f, r_b, (1.0 - lam) * r_f + lam * r_b))
    return out
