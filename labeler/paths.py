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
    """The world part of a state text (inventory as a set of items, and the other world parts of the
    layout), else the whole text."""
    v = StateView.parse(text, layout)
    if v.inventory is None and v.world == " ".join(text.split()):
        return v.world
    return "|".join(sorted(v.inventory_items)) + "\n" + v.world.split("\n", 1)[-1]


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
