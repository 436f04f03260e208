"""A trajectory's loop-erased path (:func:`models.world_paths.path_steps`) under the world key of the layout
it records, and whether a transition changed the world state.

``info`` is not read: the world state is computed from the state text
(:meth:`models.state_layout.StateLayout.world_key`, the one definition the labelers, the trainers and the
client's loop guard share).
"""

from __future__ import annotations

from collections.abc import Callable

from labeler.dataset import Trajectory
from models import world_paths
from models.state_layout import layout_of


def world_key(traj: Trajectory) -> Callable[[str], str]:
    """The world key of the state layout ``traj`` records, with its actions (see
    :meth:`models.state_layout.StateLayout.world_key`)."""
    layout, actions = layout_of(traj.meta), [s.action for s in traj.steps]
    return lambda text: layout.world_key(text, actions)


def path_steps(traj: Trajectory, key: Callable[[str], str] | None = None) -> list[int]:
    """Indices of ``traj``'s steps on its loop-erased path (``key``: by default :func:`world_key`)."""
    if not traj.steps:
        return []
    key = key or world_key(traj)
    return world_paths.path_steps([s.observation for s in traj.steps], traj.steps[-1].next_observation, key)


def changed(before: str, after: str, key: Callable[[str], str]) -> bool:
    """Whether a transition changed the world state."""
    return key(before) != key(after)
