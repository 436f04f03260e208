"""The success-scarce subset of a log: ``n`` episodes of which at most a share succeed, the first ones of each
kind in file order.

Real logs hold few successes, so the benchmarks train on such cuts of a larger collected pool. The rule is
deterministic and nested: the subset of ``n`` episodes is inside the subset of any larger ``n`` from the same
file, so a curve over data sizes adds episodes and never swaps them (``edgejudge data subset``,
``edgejudge matrix``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar


class _Episode(Protocol):
    success: bool


T = TypeVar("T", bound=_Episode)


class SubsetError(ValueError):
    """The file cannot give the subset asked for (too few failed episodes)."""


def successes_allowed(n: int, max_rate: float) -> int:
    """The most successful episodes ``n`` episodes may hold: ``floor(max_rate * n)``."""
    return int(max_rate * n + 1e-9)


def scarce_subset(trajs: Sequence[T], n: int, max_rate: float) -> list[T]:
    """``n`` episodes of ``trajs`` of which at most ``max_rate`` succeed: the first
    :func:`successes_allowed` successful ones (all of them when there are fewer) and the first failed ones
    to fill up to ``n``, in file order. :class:`SubsetError` when there are too few failed episodes."""
    succ = [i for i, t in enumerate(trajs) if t.success]
    fail = [i for i, t in enumerate(trajs) if not t.success]
    k = min(len(succ), successes_allowed(n, max_rate))
    if len(fail) < n - k:
        raise SubsetError(
            f"{n} episodes with at most {max_rate:.0%} successful need {n - k} failed episodes "
            f"(and {k} successful); the file holds {len(fail)} failed and {len(succ)} successful"
        )
    keep = set(succ[:k]) | set(fail[: n - k])
    return [t for i, t in enumerate(trajs) if i in keep]


def most_episodes(trajs: Sequence[_Episode], max_rate: float) -> int:
    """The largest subset :func:`scarce_subset` can cut from ``trajs`` at ``max_rate``: every failed episode
    and as many successful ones as keep the share at most ``max_rate``."""
    succ = sum(1 for t in trajs if t.success)
    fail = len(trajs) - succ
    allowed = succ if max_rate >= 1 else min(succ, int(max_rate * fail / (1 - max_rate)))
    return fail + allowed


def pool_is_enough(trajs: Sequence[_Episode], n: int, max_rate: float) -> bool:
    """Whether ``trajs`` hold enough failed episodes for :func:`scarce_subset` of ``n`` and its full share of
    successful ones (a collector grows its pool until this holds)."""
    k = successes_allowed(n, max_rate)
    succ = sum(1 for t in trajs if t.success)
    return succ >= k and len(trajs) - succ >= n - k
