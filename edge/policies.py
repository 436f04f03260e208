"""The one policy interface, its base class, and the wrappers composed over it.

A policy is anything with::

    name: str
    scores(instruction, state, candidates, memory=()) -> list[float]   # one per candidate, higher is better
    act(instruction, state, candidates, memory=()) -> int               # the index it picks
    reset() -> None                                                     # a new episode starts
    close() -> None                                                     # release what it holds

``state`` is the policy's state text as the environment adapter composed it; ``memory`` is the episode so
far, one ``(action, state it led to)`` pair per earlier step, oldest first (:class:`EpisodeMemory` keeps
it). Whoever runs the episode keeps the memory and passes it in: a policy holds no episode state of its own
(a memoryful bundle reads it; the others ignore it).

Every policy of the package subclasses :class:`ScoringPolicy` and defines ``scores`` alone: ``act`` is their
argmax, and a policy that holds something (an onnxruntime session, a judge) releases it in the
:meth:`ScoringPolicy.on_close` hook. They are the bundle (:class:`edge.bundle_policy.BundlePolicy`), the
daemon through the client (:class:`edge.edge_policy.EdgePolicy`), a training checkpoint
(``policy.evaluation.torch_policy.TorchPolicy``), the LLM-as-agent baseline
(``policy.evaluation.llm_policy.LLMPolicy``) and the uniform random baseline
(``policy.evaluation.evaluate.RandomPolicy``). The wrappers (:class:`PolicyWrapper`) are policies over another
one, and compose:

- :class:`Guarded`: the generic loop guard (:class:`edge.loop_guard.LoopGuard`), keyed by the world key the
  client gets from its environment adapter, called with the episode's actions so far;
- :class:`Sampled`: a draw from softmax(scores / T) instead of the argmax (an evaluation option);
- :class:`EpsilonGreedy`: a uniform draw with probability epsilon (exploration when collecting);
- :class:`Timed`: the wall time of every call, e.g. the client round trip of every request to the daemon;
- task strategies of an adapter, opt-in (e.g. the TextWorld put-away placement search,
  ``policy.worlds.twx_placement``; ``policy.worlds.episode_policy`` composes them).

Evaluation (``edgejudge eval``, in process or through edge-serve) and a robot's own client compose them the
same way, e.g. ``Guarded(EdgePolicy(client), world_key)``. Stdlib only.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from edge.loop_guard import LoopGuard, WorldKey
from models.inputs.state import Memory


class EpisodeMemory(list):
    """The memory of one episode, as a list of ``(action, state it led to)`` pairs.

    Per episode: ``clear()`` at the start, pass it to every ``act``, then ``record(action, next_state)``
    after each step."""

    def record(self, action: str, next_state: str) -> None:
        self.append((action, next_state))


@runtime_checkable
class Policy(Protocol):
    """What evaluation and the wrappers call. The package's policies get it from :class:`ScoringPolicy`; a
    robot's or a test's own object may provide it directly."""

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
    """Base of every policy: a subclass defines ``scores``; ``act`` is their argmax.

    ``reset`` and ``close`` are the base's own; a policy that keeps something per episode or holds a resource
    defines the hooks :meth:`on_reset` and :meth:`on_close` instead (``close`` runs ``on_close`` once). A
    policy is a context manager that closes it."""

    name = "policy"

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> Sequence[float]:
        raise NotImplementedError(f"{type(self).__name__} defines no scores")

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        return argmax(self.scores(instruction, state, candidates, memory))

    def reset(self) -> None:
        self.on_reset()

    def close(self) -> None:
        if not getattr(self, "_closed", False):
            self._closed = True
            self.on_close()

    def on_reset(self) -> None:
        """Hook: a new episode starts."""

    def on_close(self) -> None:
        """Hook: release what the policy holds (runs once)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PolicyWrapper(ScoringPolicy):
    """A policy over another one: ``scores`` are the inner policy's; ``reset`` and ``close`` run this
    wrapper's hooks, then reach ``inner``. Subclasses choose in ``act`` (the argmax by default)."""

    suffix = "wrapped"

    def __init__(self, inner: Policy):
        self.inner = inner
        self.name = f"{inner.name}+{self.suffix}" if self.suffix else inner.name

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> Sequence[float]:
        return self.inner.scores(instruction, state, candidates, memory)

    def reset(self) -> None:
        self.on_reset()
        self.inner.reset()

    def close(self) -> None:
        if not getattr(self, "_closed", False):
            self._closed = True
            self.on_close()
            self.inner.close()


class Guarded(PolicyWrapper):
    """The inner policy's best-scored candidate that the loop guard allows (see :mod:`edge.loop_guard`).

    ``world_key(state, actions)`` maps a state text to its world state, given the actions the episode took
    before it (the guard passes its own); it comes from the environment adapter or the state layout, e.g.
    ``Guarded(policy, layout.world_key)`` (the whole text when None)."""

    suffix = "guard"

    def __init__(self, inner: Policy, world_key: WorldKey | None = None):
        super().__init__(inner)
        self.guard = LoopGuard(world_key)

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        return self.guard.choose(state, candidates, self.inner.scores(instruction, state, candidates, memory))

    @property
    def overrides(self) -> int:
        """Actions the guard chose over the argmax, over all episodes."""
        return self.guard.total_overrides

    def on_reset(self) -> None:
        self.guard.reset()


class Sampled(PolicyWrapper):
    """A draw from softmax(inner scores / ``temperature``) instead of the argmax.

    The bundle and the daemon return the argmax (the policy as specified); sampling is an evaluation option
    that shows how much of a deterministic policy's failures are repeated loops (a deterministic policy that
    puts an object in a wrong place keeps doing so)."""

    def __init__(self, inner: Policy, temperature: float, seed: int = 0):
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        super().__init__(inner)
        self.temperature = temperature
        self.name = f"{inner.name}~T{temperature:g}"
        self._rng = random.Random(seed)

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        s = [float(x) / self.temperature for x in self.inner.scores(instruction, state, candidates, memory)]
        m = max(s)
        w = [math.exp(x - m) for x in s]
        return self._rng.choices(range(len(candidates)), weights=w, k=1)[0]


class EpsilonGreedy(PolicyWrapper):
    """With probability ``epsilon`` a candidate drawn uniformly, else the inner policy's pick: exploration
    for collecting with a deployed policy (``edgejudge collect --policy --epsilon``)."""

    def __init__(self, inner: Policy, epsilon: float, seed: int = 0):
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        super().__init__(inner)
        self.epsilon = epsilon
        self.name = f"{inner.name}~eps{epsilon:g}"
        self._rng = random.Random(seed)

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        if candidates and self._rng.random() < self.epsilon:
            return self._rng.randrange(len(candidates))
        return self.inner.act(instruction, state, candidates, memory)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile of ``values`` (nearest rank); None for no values."""
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


class Timed(PolicyWrapper):
    """The inner policy, unchanged, with the wall time of every ``act`` and ``scores`` call kept in ``ms``
    (each is one call to ``inner``: over the daemon's policy, one request's client round trip). Keeps the
    inner policy's name: timing changes no choice."""

    suffix = ""

    def __init__(self, inner: Policy):
        super().__init__(inner)
        self.ms: list[float] = []

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        t0 = time.perf_counter()
        try:
            return self.inner.act(instruction, state, candidates, memory)
        finally:
            self.ms.append((time.perf_counter() - t0) * 1000)

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> Sequence[float]:
        t0 = time.perf_counter()
        try:
            return self.inner.scores(instruction, state, candidates, memory)
        finally:
            self.ms.append((time.perf_counter() - t0) * 1000)

    def percentile(self, q: float) -> float | None:
        """The ``q`` quantile of the call times in ms; None before any call."""
        return percentile(self.ms, q)
