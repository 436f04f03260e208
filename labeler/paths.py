"""A trajectory's loop-erased path (:func:`models.world_paths.path_steps`) under the world key of the layout
it records, and whether a transition changed the world state.

``info`` is not read: the world state is computed from the state text
(:meth:`models.state_layout.StateLayout.world_key`, the one definition the labelers, the trainers and the
client's loop guard share).

**Partial states.** Many raw logs record at each step only the response to the last action (plus, say, an
inventory line): the scene is shown only when an action asks for it. Such a state is not the world state;
what the agent knows is the episode so far. :func:`partial_states` tells these logs from full-state ones,
and on them:

- a state repeats only when the text repeats *and* the episode drew no response it had not drawn before in
  between (returning to the same answer having learned nothing is a loop; the same refusal in another room,
  after new answers, is not);
- a step changed the world when it drew a non-empty response that the same action had not drawn before in
  the episode (:func:`answered_anew`).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable

from labeler.dataset import Trajectory
from models import world_paths
from models.state_layout import layout_of

_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_FILLER = frozenset({"a", "an", "the", "some", "in", "on", "into", "onto", "with", "from", "to"})
PARTIAL_SHARE = 0.5
"""A trajectory's states are partial when, on average over its steps, less than this share of the words that
name an action's arguments appear in the state the action was taken in. A state that shows the scene names
what the agent acts on (0.56-0.88 per trajectory on ScienceWorld's flattened full states); a state that is
only the last response mostly does not (0.11-0.43 on the same episodes)."""


def partial_states(traj: Trajectory) -> bool:
    """Whether ``traj``'s states show only part of the scene: its layout declares no world part besides
    item lists (a plain text, or a response and an inventory), and its actions' arguments are mostly not
    named in the states they were taken in (:data:`PARTIAL_SHARE`). A layout with a place, a room or any
    other world part declares the world state itself."""
    if any(p.world and not p.items for p in layout_of(traj.meta).parts):
        return False
    shares = []
    for s in traj.steps:
        words = [w for w in _WORD.findall(s.action.lower())[1:] if w not in _FILLER]
        if words:
            shown = set(_WORD.findall(s.observation.lower()))
            shares.append(sum(w in shown for w in words) / len(words))
    return bool(shares) and statistics.mean(shares) < PARTIAL_SHARE


def _said(text: str) -> str:
    return " ".join(text.lower().split())


def answered_anew(action: str, response: str, earlier: Iterable[tuple[str, str]]) -> bool:
    """On partial states, whether a step changed the world: it drew a non-empty response that the same
    action had not drawn before (``earlier``: the episode's (action, response) pairs before it)."""
    reply = _said(response)
    return bool(reply) and (_said(action), reply) not in {(_said(a), _said(r)) for a, r in earlier}


def world_key(traj: Trajectory) -> Callable[[str], str]:
    """The world key of the state layout ``traj`` records, with its actions (see
    :meth:`models.state_layout.StateLayout.world_key`)."""
    layout, actions = layout_of(traj.meta), [s.action for s in traj.steps]
    return lambda text: layout.world_key(text, actions)


def episode_keys(traj: Trajectory) -> list[str]:
    """The world state before each step and, last, after the final step: the layout's world key of each
    state, and on partial states also the responses the episode had drawn so far (module docstring)."""
    key = world_key(traj)
    texts = [s.observation for s in traj.steps] + [traj.steps[-1].next_observation]
    keys = [key(t) for t in texts]
    if not partial_states(traj):
        return keys
    drawn: set[str] = set()
    out = []
    for k, response in zip(keys, ["", *traj.responses()], strict=True):
        drawn.add(_said(response))
        out.append(k + "\n\x00" + "\x01".join(sorted(drawn)))
    return out


def path_steps(traj: Trajectory, key: Callable[[str], str] | None = None) -> list[int]:
    """Indices of ``traj``'s steps on its loop-erased path: under :func:`episode_keys`, or under ``key``
    (a state text's world state) when given."""
    if not traj.steps:
        return []
    if key is None:
        return world_paths.loop_erased_steps(episode_keys(traj))
    return world_paths.path_steps([s.observation for s in traj.steps], traj.steps[-1].next_observation, key)


def changed(before: str, after: str, key: Callable[[str], str]) -> bool:
    """Whether a transition changed the world state."""
    return key(before) != key(after)


def changed_steps(traj: Trajectory) -> list[bool]:
    """Whether each step changed the world state: its world key, or on partial states
    :func:`answered_anew`."""
    if not partial_states(traj):
        key = world_key(traj)
        return [changed(s.observation, s.next_observation, key) for s in traj.steps]
    pairs: list[tuple[str, str]] = []
    out = []
    for s, response in zip(traj.steps, traj.responses(), strict=True):
        out.append(answered_anew(s.action, response, pairs))
        pairs.append((s.action, response))
    return out
