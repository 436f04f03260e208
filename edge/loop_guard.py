"""Per-episode loop breaking on the client side, from the policy's scores and the episode's own history.

A greedy (argmax) policy is deterministic, and so are most text environments and many robot skills: once it
returns to a world state it has seen, it takes the same action and repeats the same cycle until the step
limit (on TextWorld Commonsense: put an object where it belongs, take it back, put it there again, ...).
The guard keeps the episode's memory and, given the scores, returns the best-scored candidate that is not
ruled out by two rules:

1. **Loop-closing actions.** When an action leads back to a world state already visited this episode, it
   closed a loop; it is never taken again from the world state it was taken in. (A no-op such as "look
   around" closes a loop of length one.) The action that led *into* the loop stays allowed, so "put the
   cup where it belongs" is repeated if needed, "take it back" is not.
2. **Exact repeats.** An action is not taken twice in the very same state text (feedback and recent-action
   history included).

When every candidate is ruled out it falls back to rule 1 alone, then to the argmax. ``key(state, actions)``
maps a state text to its world state, given the actions this episode took before it (chosen or recorded by
the guard, oldest first): the environment adapter's world key, or a layout's
(``LoopGuard(key=layout.world_key)``, :meth:`models.state_layout.StateLayout.world_key`), which drops e.g.
the feedback and history lines and, in a plain text, the pieces that only list the episode's actions (an
echo of the recent actions), by the rule the labelers and trainers apply. By default the whole text is the
key.

It lives in the client because the daemon is stateless per request (one daemon serves many episodes and
clients); an episode's memory belongs to whoever runs the episode. Stdlib only. C++ clients have the same
rules in ``edge/cpp/include/edge/loop_guard.hpp`` (kept in step by a test that replays this guard's episodes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

WorldKey = Callable[[str, Sequence[str]], str]
"""``key(state, actions) -> world state``: a state text's world state, given the episode's actions so far."""


def whole_text(state: str, actions: Sequence[str] = ()) -> str:
    """The default world key: the whole state text (the actions change nothing)."""
    return state


class LoopGuard:
    """Usage per episode: ``reset()``, then ``choose(state, candidates, scores)`` at every step (``record``
    for a step something else chose). ``key`` is called as ``key(state, actions)``."""

    def __init__(self, key: WorldKey | None = None) -> None:
        self.key: WorldKey = key or whole_text
        self._actions: list[str] = []
        self._taken: set[tuple[str, str]] = set()
        self._closing: set[tuple[str, str]] = set()
        self._visited: set[str] = set()
        self._last: tuple[str, str] | None = None
        self.overrides = 0
        """How many times this episode the guard chose something other than the argmax."""
        self.total_overrides = 0
        """The same over every episode since the guard was made (``reset`` keeps it)."""

    @property
    def actions(self) -> tuple[str, ...]:
        """The actions this episode took so far (chosen or recorded), oldest first: what the key is given."""
        return tuple(self._actions)

    def reset(self) -> None:
        self._actions.clear()
        self._taken.clear()
        self._closing.clear()
        self._visited.clear()
        self._last = None
        self.overrides = 0

    def choose(self, state: str, candidates: Sequence[str], scores: Sequence[float]) -> int:
        if len(candidates) != len(scores) or not candidates:
            raise ValueError(f"{len(candidates)} candidates but {len(scores)} scores")
        world = self._enter(state)
        order = sorted(range(len(candidates)), key=lambda i: -float(scores[i]))
        allowed = [i for i in order if (world, candidates[i]) not in self._closing]
        fresh = [i for i in allowed if (state, candidates[i]) not in self._taken]
        pick = (fresh or allowed or order)[0]
        if pick != order[0]:
            self.overrides += 1
            self.total_overrides += 1
        self._taken.add((state, candidates[pick]))
        self._last = (world, candidates[pick])
        self._actions.append(candidates[pick])
        return pick

    def record(self, state: str, action: str) -> None:
        """Remember an action that something other than :meth:`choose` picked in this state (e.g.
        a task strategy), so the episode's memory stays whole."""
        world = self._enter(state)
        self._taken.add((state, action))
        self._last = (world, action)
        self._actions.append(action)

    def _enter(self, state: str) -> str:
        """The state text's world state (keyed with the actions taken before it); notes whether the previous
        action led back to a visited one."""
        world = self.key(state, self.actions)
        if self._last is not None and world in self._visited:
            self._closing.add(self._last)  # the previous action led back to a visited world state
        self._visited.add(world)
        return world
