"""Loop erasure over world states: which steps of an episode were undone later.

An episode that returns the world to a state it was in before (opens a box and closes it, takes an object and
puts it back) has walked a *loop*; erasing loops in order, as in a loop-erased random walk, leaves the path of
steps whose effect lasted. The labelers read it to tell lasting transitions from detours, the trainers to
clone only lasting steps and to penalise detours. The world state of a text is the layout's
:meth:`models.state_layout.StateLayout.world_key`. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def loop_erased_steps(keys: Sequence[str]) -> list[int]:
    """Indices of the steps on the loop-erased path. ``keys`` are the world states before each step and,
    last, after the final step (``len(keys) == steps + 1``)."""
    kept: list[int] = []
    pos: dict[str, int] = {}
    for t, k in enumerate(keys):
        if k in pos:  # back in a state already on the path: everything since is a loop
            p = pos[k]
            for u in kept[p:]:
                del pos[keys[u]]
            kept = kept[:p]
        if t < len(keys) - 1:
            pos[k] = len(kept)
            kept.append(t)
    return kept


def path_steps(states: Sequence[str], final: str, key: Callable[[str], str]) -> list[int]:
    """Indices of the steps on the loop-erased path of an episode whose steps start in ``states`` and whose
    last step leads to ``final``; ``key`` maps a state text to its world state."""
    if not states:
        return []
    return loop_erased_steps([key(s) for s in states] + [key(final)])
