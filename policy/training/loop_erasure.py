"""Hindsight loop erasure: the loop-free path inside a successful episode, for behaviour cloning.

A successful but noisy episode (a scripted policy with noise, a teleoperator's hesitations, a random walk that
happened to succeed) wanders: it looks around, opens and closes things, takes an object and puts it back.
Cloning it teaches the wandering. Every such detour returns the world to a state it was in before, so it is a
*loop* in the sequence of world states: erasing loops in order (as in a loop-erased random walk) leaves a path
from the start to the goal in which no world state repeats, made only of actions the episode really took.

The world state is the part of the composed state text that describes the world: the world parts of the
state layout the dataset records (:meth:`models.state_layout.StateLayout.world_key`; e.g. TextWorld's
inventory and room lines, without the feedback and the recent-action list, which differ on every visit).
Texts without those parts are compared whole; on partial states the episode so far counts too.

The kept steps keep their own observations (history included), so consecutive kept steps need not chain
exactly: this is for BC, not for temporal-difference learning. The path and whether each step changed the
world are the trajectory's view (:class:`models.trajectory_view.TrajectoryView`: ``path``, ``changed``,
computed once per trajectory); this module adds the trajectory cut to it and its detours.
"""

from __future__ import annotations

import dataclasses

from models.trajectory import Trajectory


def loop_erase(traj: Trajectory) -> Trajectory:
    """A copy of ``traj`` with only the steps of its loop-erased path (see the module docstring)."""
    if not traj.steps:
        return traj
    steps = [traj.steps[i] for i in traj.view.path]
    return dataclasses.replace(traj, steps=steps, meta={**traj.meta, "loop_erased_from": len(traj.steps)})


def detour_steps(traj: Trajectory) -> list[int]:
    """Indices of the steps whose effect was undone later: off the loop-erased path, and changing the world
    state. A step that changes no world part (reading a recipe, examining, looking around) is off the path
    too, but nothing of it was undone: it may be what found the information the next steps need."""
    view = traj.view
    kept = set(view.path)
    return [i for i, c in enumerate(view.changed) if i not in kept and c]
