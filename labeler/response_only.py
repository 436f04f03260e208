"""Response-only and flattened logs: what many agent and robot loggers write, made from an adapter's log.

A raw agent log often records only what the agent was told at each step: **the response to its previous
action plus an inventory line**. The scene is described only when an action asks for it (e.g. a ``look
around``); ``next_observation`` is the bare response. :func:`response_only` rewrites a trajectory recorded
with a state layout into that shape from what the world itself returned:

- the response is the raw text the environment answered (``info["feedback"]`` when the adapter kept it,
  else the state's ``feedback`` part); the first state's is the scene the episode started in (the ``room``
  part, what the simulator's reset returns);
- the inventory line is the layout's own ``inventory`` line;
- the layout, state format, environment and parameters are removed from ``meta``; ``info`` keeps only the
  ground truth the quality measure reads (score, progress, gold).

Nothing the adapter composed (the room at every step, the recent actions, the focus line) is left. The
command is ``edgejudge data response-only``; the labelers and trainers read such a log as plain text.

:func:`flattened` keeps the whole state but drops its layout: every ``Label: value`` line of the recorded
layout becomes its bare value, and the layout, state format, environment and parameters leave ``meta`` (the
reader then infers the plain layout), as a log no adapter wrote records its full states.
"""

from __future__ import annotations

import copy

from models.state_layout import StateLayout
from models.trajectory import Trajectory

GROUND_TRUTH = ("score", "progress", "gold", "gold_index")
"""The ``info`` keys kept: what :func:`labeler.quality.measure` reads, never a labeler."""

ADAPTER_META = ("state_layout", "state_format", "env", "params")
"""What an adapter records in ``meta`` that a log from elsewhere does not."""


def _state(layout: StateLayout, response: str, inventory: str | None) -> str:
    if inventory is None:
        return response.strip()
    prefix = next(p.prefix for p in layout.parts if p.name == "inventory")
    return f"{response.strip()}\n{prefix}{inventory}"


def response_only(traj: Trajectory) -> Trajectory:
    """``traj`` as a response-only log records it (see the module docstring); ``traj`` is left as it was."""
    out = copy.deepcopy(traj)
    layout = traj.view.layout
    first = layout.parse(traj.steps[0].observation) if traj.steps else {}
    previous = first.get("feedback") or first.get("room") or ""
    for s in out.steps:
        after = layout.parse(s.next_observation)
        response = str(s.info.get("feedback") or after.get("feedback", ""))
        s.observation = _state(layout, previous, layout.parse(s.observation).get("inventory"))
        s.next_observation = response.strip()
        s.info = {k: v for k, v in s.info.items() if k in GROUND_TRUTH}
        previous = response
    for key in ADAPTER_META:
        out.meta.pop(key, None)
    return out


def flatten(text: str, labels: tuple[str, ...]) -> str:
    """``text`` with every ``Label: value`` line of ``labels`` reduced to its value (empty lines dropped)."""
    out = []
    for line in text.splitlines():
        for lb in labels:
            if line.startswith(lb + ":"):
                line = line[len(lb) + 1 :].strip()
                break
        if line.strip():
            out.append(line)
    return "\n".join(out)


def flattened(traj: Trajectory) -> Trajectory:
    """``traj`` as a log without a layout records it: flattened states, no layout, format or environment in
    ``meta`` (``info`` is kept: only the quality measure reads it); ``traj`` is left as it was."""
    out = copy.deepcopy(traj)
    labels = tuple(p.label for p in traj.view.layout.parts)
    for s in out.steps:
        s.observation = flatten(s.observation, labels)
        s.next_observation = flatten(s.next_observation, labels)
    for key in ADAPTER_META:
        out.meta.pop(key, None)
    return out
