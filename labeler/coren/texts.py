"""Text fitting for the judge's context window.

The transition ("result") text shown to the judge is the world's response to the action
(:meth:`models.trajectory.Trajectory.responses`, read through the trajectory's layout), or :data:`NOTHING_NEW`
when the action drew none.

**Truncation rule** (documented in the README): every field has a token budget; a field over its budget keeps
its *head* (the composed state puts feedback, inventory and recent actions first, the long room description
last) and ends with `` ...``. Budgets: the instruction gets at most a quarter of the space left after the
prompt header and the template; the result at most ``result_tokens``; an action at most 32 tokens; the
observation ``obs_tokens`` in rating and candidate queries (by design, counted as ``observation_head``) and
what remains of the context in structural questions. A plan (backward verification) that is too long keeps its
first and last actions and drops the middle. Every cut is counted and reported; nothing is rejected for its
length.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

ELLIPSIS = " ..."
NOTHING_NEW = "(nothing new)"
"""The result shown for an action that drew no response."""


@dataclass
class TruncationStats:
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def fit_head(text: str, max_tokens: int, count: Callable[[str], int]) -> tuple[str, bool]:
    """``text`` cut to at most ``max_tokens`` tokens, keeping the head; ``(text, was_cut)``."""
    if max_tokens <= 0:
        return "", bool(text)
    if len(text) <= max_tokens:  # a token is never shorter than one character
        return text, False
    n = count(text)
    if n <= max_tokens:
        return text, False
    budget = max_tokens - count(ELLIPSIS)
    keep = int(len(text) * budget / n)
    while keep > 0:
        cut = text[:keep].rstrip() + ELLIPSIS
        if count(cut) <= max_tokens:
            return cut, True
        keep = int(keep * 0.9)
    return "", True


def fit_plan(
    actions: list[str], max_tokens: int, count: Callable[[str], int], sep: str = "; "
) -> tuple[str, bool]:
    """Join actions; when too long, keep the first and last ones and drop the middle (marked by ``...``)."""
    text = sep.join(actions)
    if count(text) <= max_tokens:
        return text, False
    head, tail = actions[: len(actions) // 2], actions[len(actions) // 2 :]
    while head or tail:
        if len(head) >= len(tail) and head:
            head = head[:-1]
        else:
            tail = tail[1:]
        text = sep.join([*head, "...", *tail])
        if count(text) <= max_tokens:
            return text, True
    return fit_head(sep.join(actions), max_tokens, count)[0], True
