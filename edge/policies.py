"""The one policy interface, and the episode wrappers composed over it.

A policy is anything with::

    name: str
    scores(instruction, state, candidates, memory=()) -> list[float]   # one per candidate, higher is better
    act(instruction, state, candidates, memory=()) -> int               # the index it picks
    reset() -> None                                                     # a new episode starts
    close() -> None                                                     # release what it holds

``state`` is the policy's state text as the environment adapter composed it; ``memory`` is the episode so
far, one ``(action, state it led to)`` pair per earlier step, oldest first (:class:`EpisodeMemory` keeps
it). Whoever runs the episode keeps the memory and passes it in: a policy holds no episode state of its own
(a memoryful bundle reads it; the others ignore it). The bundle runner, a training
checkpoint, the LLM-as-agent baseline, the uniform random baseline and :class:`edge.agent.EdgeAgent` (the
daemon, through the client) are policies; so are the wrappers, which keep an episode's memory on the client
side and pick from the inner policy's scores:

- :class:`Guarded`: the generic loop guard (:class:`edge.loop_guard.LoopGuard`), keyed by the world key the
  client gets from its environment adapter;
- task strategies of an adapter (e.g. the TextWorld put-away placement search in ``policy.envs``), opt-in.

Evaluation, ``tools/drive_edge.py`` and a robot's own client compose them the same way, e.g.
``Guarded(EdgeAgent(client), world_key)``. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from edge.loop_guard import LoopGuard

Memory = Sequence[tuple[str, str]]
"""The episode so far: ``(action, state it led to)`` per earlier step, oldest first."""


class EpisodeMemory(list):
    """The memory of one episode, as a list of ``(action, state it led to)`` pairs.

    Per episode: ``clear()`` at the start, pass it to every ``act``, then ``record(action, next_state)``
    after each step."""

    def record(self, action: str, next_state: str) -> None:
        self.append((action, next_state))


@runtime_checkable
class Policy(Protocol):
    name: str

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> Sequence[float]: ...

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int: ...

    def reset(self) -> None: ...

    def close(self) -> None: ...


def argmax(scores: Sequence[float]) -> int:
    """The first index of the highest score."""
    if len(scores) == 0:
        raise ValueError("no candidates to choose from")
    return max(range(len(scores)), key=lambda i: float(scores[i]))


class ScoringPolicy:
    """Base of a policy defined by its scores: ``act`` is their argmax; ``reset`` and ``close`` do nothing."""

    name = "policy"

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> Sequence[float]:
        raise NotImplementedError

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        return argmax(self.scores(instruction, state, candidates, memory))

    def reset(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PolicyWrapper(ScoringPolicy):
    """A policy over another one: scores, reset and close go to ``inner``; subclasses choose in ``act``."""

    suffix = "wrapped"

    def __init__(self, inner: Policy):
        self.inner = inner
        self.name = f"{inner.name}+{self.suffix}"

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> Sequence[float]:
        return self.inner.scores(instruction, state, candidates, memory)

    def reset(self) -> None:
        self.inner.reset()

    def close(self) -> None:
        self.inner.close()


class Guarded(PolicyWrapper):
    """The inner policy's best-scored candidate that the loop guard allows (see :mod:`edge.loop_guard`).

    ``world_key`` maps a state text to its world state; it comes from the environment adapter (the whole text
    when None)."""

    suffix = "guard"

    def __init__(self, inner: Policy, world_key: Callable[[str], str] | None = None):
        super().__init__(inner)
        self.guard = LoopGuard(world_key)

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        return self.guard.choose(state, candidates, self.inner.scores(instruction, state, candidates, memory))

    @property
    def overrides(self) -> int:
        """Actions the guard chose over the argmax, over all episodes."""
        return self.guard.total_overrides

    def reset(self) -> None:
        self.guard.reset()
        self.inner.reset()
