"""Loop erasure over world states: which steps of an episode were undone later.

An episode that returns the world to a state it was in before (opens a box and closes it, takes an object and
puts it back) has walked a *loop*; erasing loops in order, as in a loop-erased random walk, leaves the path of
steps whose effect lasted. The labelers read it to tell lasting transitions from detours, the policy's
trainers to clone only lasting steps. ``info`` is not read: the world state is a key computed from the state
text (:func:`world_key`).
"""

from __future__ import annotations

from collections.abc import Callable

from labeler.dataset import Trajectory
from labeler.trca.checks import StateView
from models.state_layout import LEGACY_LAYOUT, StateLayout, layout_of


def loop_erased_steps(keys: list[str]) -> list[int]:
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


def world_key(text: str, layout: StateLayout = LEGACY_LAYOUT) -> str:
    """The world state of a state text: the layout's world parts in its order, one line each -- the
    ``inventory`` as the set of items held, another ``unordered`` part as its sorted words, the rest as
    written -- else (a plain text) the whole text, whitespace-normalised."""
    found = layout.parse(text)
    world = [p for p in layout.parts if p.world]
    if not any(p.name in found for p in world):
        return " ".join(text.split())
    lines = []
    for p in world:
        value = found.get(p.name, "")
        if p.name == "inventory":
            value = "|".join(sorted(StateView.parse(text, layout).inventory_items))
        elif p.unordered:
            value = " ".join(sorted(value.split()))
        lines.append(value)
    return "\n".join(lines)


def path_steps(traj: Trajectory, key: Callable[[str], str] | None = None) -> list[int]:
    """Indices of ``traj``'s steps on its loop-erased path (``key``: by default the world key of the state
    layout ``traj`` records)."""
    if not traj.steps:
        return []
    if key is None:
        layout = layout_of(traj.meta)
        key = lambda text: world_key(text, layout)  # noqa: E731
    keys = [key(s.observation) for s in traj.steps] + [key(traj.steps[-1].next_observation)]
    return loop_erased_steps(keys)


def changed(before: str, after: str, key: Callable[[str], str] = world_key) -> bool:
    """Whether a transition changed the world state."""
    return key(before) != key(after)
