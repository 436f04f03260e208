"""What a trajectory's texts say, read once: its layout, responses, partial-or-not, world keys, loop-erased
path and which steps changed the world. :attr:`models.trajectory.Trajectory.view` builds it once per
trajectory; TRCA's transitions, COREN's queries and examples, the rubric builder, the potential's features and
the trainers' loop erasure and detour penalty all read that one view.

It lives beside the trajectory format because every reader of a logged trajectory stands at or above
``labeler`` (``policy`` imports ``labeler``); ``models`` keeps what training and serving share (the layout and
its world key, :mod:`models.state_layout`; the loop erasure, :mod:`models.world_paths`), which the view
reads. ``info`` is never read.

**Partial states.** Many raw logs record at each step only the response to the last action (plus, say, an
inventory line): the scene is shown only when an action asks for it. Such a state is not the world state;
what the agent knows is the episode so far. :attr:`TrajectoryView.partial` tells these logs from full-state
ones, and on them:

- a state repeats only when the text repeats *and* the episode drew no response it had not drawn before in
  between (returning to the same answer having learned nothing is a loop; the same refusal in another room,
  after new answers, is not): :attr:`TrajectoryView.episode_keys`;
- a step changed the world when it drew a non-empty response that the same action had not drawn before in
  the episode (:func:`answered_anew`): :attr:`TrajectoryView.changed`.

On full states a step changed the world when the layout's world key of its state differs from that of the
state it led to, and a state repeats when its world key does.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from models import world_paths
from models.actions import normalise, parse_action, text_words
from models.state_layout import StateLayout, layout_of

PARTIAL_SHARE = 0.5
"""A trajectory's states are partial when, on average over its steps, less than this share of the words that
name an action's arguments appear in the state the action was taken in. A state that shows the scene names
what the agent acts on (0.56-0.88 per trajectory on ScienceWorld's flattened full states); a state that is
only the last response mostly does not (0.11-0.43 on the same episodes)."""


class StepTexts(Protocol):
    """What the view reads of a step (:class:`models.trajectory.Step`)."""

    observation: str
    action: str
    next_observation: str


def answered_anew(action: str, response: str, earlier: Iterable[tuple[str, str]]) -> bool:
    """On partial states, whether a step changed the world: it drew a non-empty response that the same
    action had not drawn before (``earlier``: the episode's (action, response) pairs before it)."""
    reply = normalise(response)
    return bool(reply) and (normalise(action), reply) not in {
        (normalise(a), normalise(r)) for a, r in earlier
    }


def _recorded(meta: Mapping[str, Any]) -> tuple[Any, Any]:
    """What of ``meta`` the layout is read from (:func:`models.state_layout.layout_of`)."""
    return meta.get("state_layout"), meta.get("state_format")


@dataclass(frozen=True)
class TrajectoryView:
    """One trajectory's texts and what they say (see the module docstring); each fact is computed on first
    read and kept."""

    layout: StateLayout
    observations: tuple[str, ...]
    actions: tuple[str, ...]
    next_observations: tuple[str, ...]
    recorded: tuple[Any, Any] = (None, None)
    """The meta entries the layout was read from: :meth:`describes` compares them."""

    @classmethod
    def of(cls, meta: Mapping[str, Any], steps: Sequence[StepTexts]) -> TrajectoryView:
        return cls(
            layout_of(meta),
            tuple(s.observation for s in steps),
            tuple(s.action for s in steps),
            tuple(s.next_observation for s in steps),
            _recorded(meta),
        )

    def describes(self, meta: Mapping[str, Any], steps: Sequence[StepTexts]) -> bool:
        """Whether this view is still the view of a trajectory with this ``meta`` and ``steps`` (same layout
        entries, same texts)."""
        return (
            _recorded(meta) == self.recorded
            and len(steps) == len(self.actions)
            and all(
                s.observation == o and s.action == a and s.next_observation == n
                for s, o, a, n in zip(
                    steps, self.observations, self.actions, self.next_observations, strict=True
                )
            )
        )

    @cached_property
    def responses(self) -> tuple[str, ...]:
        """The world's response to each step (:meth:`models.state_layout.StateLayout.responses`: the one
        definition the policy shares)."""
        if not self.actions:
            return ()
        pairs = zip(self.actions, self.next_observations, strict=True)
        return tuple(self.layout.responses(pairs, before=self.observations[0]))

    @cached_property
    def partial(self) -> bool:
        """Whether the states show only part of the scene: the layout declares no world part besides item
        lists (a plain text, or a response and an inventory), and the actions' argument words
        (:attr:`models.actions.Action.argument_words`) are mostly not named in the states they were taken in
        (:data:`PARTIAL_SHARE`). A layout with a place, a room or any other world part declares the world
        state itself."""
        if any(p.world and not p.items for p in self.layout.parts):
            return False
        shares = []
        for observation, action in zip(self.observations, self.actions, strict=True):
            words = parse_action(action).argument_words
            if words:
                shown = set(text_words(observation))
                shares.append(sum(w in shown for w in words) / len(words))
        return bool(shares) and statistics.mean(shares) < PARTIAL_SHARE

    def world_key(self, text: str) -> str:
        """The world state of a state text under the layout, with the episode's actions
        (:meth:`models.state_layout.StateLayout.world_key`)."""
        return self.layout.world_key(text, self.actions)

    @cached_property
    def _keys(self) -> dict[str, str]:
        """The world key of every state text of the trajectory, each computed once."""
        texts = dict.fromkeys((*self.observations, *self.next_observations))
        return {t: self.world_key(t) for t in texts}

    @cached_property
    def episode_keys(self) -> tuple[str, ...]:
        """The world state before each step and, last, after the final step: the world key of each state,
        and on partial states also the responses the episode had drawn so far (module docstring)."""
        if not self.actions:
            return ()
        keys = [self._keys[t] for t in (*self.observations, self.next_observations[-1])]
        if not self.partial:
            return tuple(keys)
        drawn: set[str] = set()
        out = []
        for k, response in zip(keys, ["", *self.responses], strict=True):
            drawn.add(normalise(response))
            out.append(k + "\n\x00" + "\x01".join(sorted(drawn)))
        return tuple(out)

    @cached_property
    def path(self) -> tuple[int, ...]:
        """Indices of the steps on the loop-erased path under :attr:`episode_keys`
        (:func:`models.world_paths.loop_erased_steps`)."""
        return tuple(world_paths.loop_erased_steps(self.episode_keys)) if self.actions else ()

    @cached_property
    def changed(self) -> tuple[bool, ...]:
        """Whether each step changed the world state: its world key, or on partial states
        :func:`answered_anew`."""
        if not self.partial:
            k = self._keys
            return tuple(k[o] != k[n] for o, n in zip(self.observations, self.next_observations, strict=True))
        pairs: list[tuple[str, str]] = []
        out = []
        for action, response in zip(self.actions, self.responses, strict=True):
            out.append(answered_anew(action, response, pairs))
            pairs.append((action, response))
        return tuple(out)
