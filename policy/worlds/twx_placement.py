"""An opt-in task strategy of the TextWorld adapter: per-episode placement search for put-away tasks, on the
client side, ranked by the policy's own scores (``--strategy placement-search``). It reads TextWorld's command
grammar, so the TextWorld adapter names it among its strategies (:mod:`policy.worlds.adapters.twx`); it wraps
the client's loop guard, so it lives with the policies, outside the world package. It is never part of a
headline result: the generic client is the loop guard alone.

In a put-away task ("pick up objects, then place them in their usual locations") the decision that matters is
where each object goes, and the environment says nothing when a place is wrong: the episode just does not
end. A greedy policy puts an object in its best-scored place, and when that place is wrong it has no way to
know which object to move or where to try next; it cycles (take it back, put it in the same place). And the
right place is often a closed container ("put used Q-tip in wastepaper basket" is not an admissible action
until the basket is opened), so the policy never sees that candidate at all.

The search keeps the episode's bookkeeping and leaves the knowledge to the policy:

1. **Objects** are what could be taken at the episode's first step, plus anything held later.
2. **Places** for an object are the targets of its admissible ``put`` actions *and* every closed container
   (an admissible ``open`` action). When an object is first held, the policy scores one hypothetical ``put
   OBJECT in PLACE`` candidate per place, in that state; a softmax turns the scores into the object's place
   distribution. Closed containers are ranked with everything else, and opened when chosen.
3. **Assignments.** The search follows the best joint assignment (sum of the objects' log-probabilities) not
   yet ruled out: it takes every loose object, opens a closed target when needed and puts each object in its
   assigned place. When every object has been placed, nothing is held and the episode goes on, that joint
   assignment was wrong: it is ruled out, and the search moves the objects whose place differs in the next
   best one (best-first, so one object at a time in the usual case).

Where it has no opinion (no objects, no place to try, every assignment ruled out) it defers to the
:class:`edge.loop_guard.LoopGuard` it wraps, which also sees every step the search takes. The episode's end is
the only success signal it uses, as on a robot whose task reports completion. Commands are ``verb object
[preposition target]`` (:func:`models.actions.parse_action`, the words' case kept); the verbs are constructor
arguments. No model code: the standard library, :mod:`edge` and :mod:`models`. :class:`PlacementSearchPolicy`
is the strategy as a policy wrapper (:mod:`edge.policies`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence

from edge.loop_guard import LoopGuard, WorldKey
from edge.policies import Memory, Policy, PolicyWrapper
from models.actions import parse_action

Scorer = Callable[[str, str, Sequence[str]], Sequence[float]]
"""``score(instruction, observation, candidates) -> one score per candidate`` (any candidate texts)."""


def log_softmax(scores: Sequence[float]) -> list[float]:
    m = max(scores)
    z = m + math.log(sum(math.exp(s - m) for s in scores))
    return [s - z for s in scores]


def best_untried(
    ranked: dict[str, list[tuple[str, float]]], tried: set[frozenset[tuple[str, str]]]
) -> dict[str, str] | None:
    """The highest-scoring joint assignment object -> place not in ``tried``, or None when all are.

    ``ranked[obj]`` lists ``(place, log-probability)`` best first; a joint assignment's score is the sum.
    Best-first over index tuples (each step moves one object one place down its list), so only as many
    assignments are looked at as are ruled out."""
    objects = [o for o in ranked if ranked[o]]
    if not objects:
        return None

    def total(idx: tuple[int, ...]) -> float:
        return sum(ranked[o][i][1] for o, i in zip(objects, idx, strict=True))

    start = (0,) * len(objects)
    heap, seen = [(-total(start), start)], {start}
    while heap:
        _, idx = heapq.heappop(heap)
        assignment = {o: ranked[o][i][0] for o, i in zip(objects, idx, strict=True)}
        if frozenset(assignment.items()) not in tried:
            return assignment
        for k in range(len(objects)):
            if idx[k] + 1 < len(ranked[objects[k]]):
                nxt = idx[:k] + (idx[k] + 1,) + idx[k + 1 :]
                if nxt not in seen:
                    seen.add(nxt)
                    heapq.heappush(heap, (-total(nxt), nxt))
    return None


class PlacementSearch:
    """Per episode: ``reset()``, then ``choose(instruction, observation, candidates, scores)`` at every step.

    ``score`` scores hypothetical candidates (the policy, a bundle or the daemon's ``act``); ``scores`` passed
    to ``choose`` are the policy's scores of the admissible ``candidates``, for the guard."""

    def __init__(
        self,
        score: Scorer,
        *,
        key: WorldKey | None = None,
        take: str = "take",
        put: str = "put",
        open_: str = "open",
    ) -> None:
        self.score = score
        self.guard = LoopGuard(key)
        self.verbs = {"take": take, "put": put, "open": open_}
        self.searches = 0
        """Joint assignments ruled out over every episode (``reset`` keeps it)."""
        self.reset()

    def reset(self) -> None:
        self.guard.reset()
        self.objects: list[str] = []
        self.ranked: dict[str, list[tuple[str, float]]] = {}
        self.where: dict[str, str | None] = {}  # object -> place it was put in (None: held or loose)
        self.tried: set[frozenset[tuple[str, str]]] = set()
        self.plan: dict[str, str] | None = None
        self._last: tuple[str, str, str] | None = None  # (verb, object, target) of the previous step
        self._started = False

    # -------------------------------------------------------------------------------------------- parsing

    def _parse(self, candidates: Sequence[str]) -> tuple[dict, dict, dict]:
        """(takeable object -> index, held object -> {open place -> put index}, closed container -> index)"""
        takes: dict[str, int] = {}
        puts: dict[str, dict[str, int]] = {}
        opens: dict[str, int] = {}
        for i, c in enumerate(candidates):
            a = parse_action(c, keep_case=True)
            verb, obj, target = a.verb, a.object, a.target
            if not obj:
                continue
            if verb == self.verbs["take"] and not target:
                takes[obj] = i
            elif verb == self.verbs["put"] and target:
                puts.setdefault(obj, {})[target] = i
            elif verb == self.verbs["open"] and not target:
                opens[obj] = i
        return takes, puts, opens

    def _rank(
        self, instruction: str, observation: str, candidates: Sequence[str], obj: str, places: list[str]
    ) -> None:
        """The policy's place distribution for ``obj``: one hypothetical put per place, in this state."""
        texts = [self._put_text(candidates, obj, p) for p in places]
        logp = log_softmax([float(s) for s in self.score(instruction, observation, texts)])
        self.ranked[obj] = sorted(zip(places, logp, strict=True), key=lambda x: -x[1])

    def _put_text(self, candidates: Sequence[str], obj: str, place: str) -> str:
        """``put OBJECT in PLACE`` worded as an admissible put of ``obj`` (its verb and preposition)."""
        for c in candidates:
            a = parse_action(c, keep_case=True)
            o, t = a.object, a.target
            if o == obj and t and c.startswith(self.verbs["put"] + " ") and c.endswith(t):
                return c[: len(c) - len(t)] + place
        return f"{self.verbs['put']} {obj} in {place}"

    # -------------------------------------------------------------------------------------------- choosing

    def choose(
        self, instruction: str, observation: str, candidates: Sequence[str], scores: Sequence[float]
    ) -> int:
        if len(candidates) != len(scores) or not candidates:
            raise ValueError(f"{len(candidates)} candidates but {len(scores)} scores")
        takes, puts, opens = self._parse(candidates)
        self._observe(takes, puts)
        for obj, open_places in puts.items():
            if obj not in self.objects:
                self.objects.append(obj)
            if obj not in self.ranked:
                places = list(dict.fromkeys([*open_places, *opens]))
                self._rank(instruction, observation, candidates, obj, places)
                self.plan = None  # a new object: the best joint assignment changes
        pick = self._decide(takes, puts, opens)
        if pick is None:
            pick = self.guard.choose(observation, candidates, scores)
        else:
            self.guard.record(observation, candidates[pick])
        a = parse_action(candidates[pick], keep_case=True)
        self._last = (a.verb, a.object, a.target)
        return pick

    def _observe(self, takes: dict[str, int], puts: dict[str, dict[str, int]]) -> None:
        """Update where objects are from the previous action and what is admissible now."""
        if not self._started:
            self._started = True
            self.objects = list(takes)
        if self._last is None:
            return
        verb, obj, target = self._last
        if verb == self.verbs["put"] and obj not in puts:
            self.where[obj] = target  # the put happened: the object is no longer held
        elif verb == self.verbs["put"] and obj in self.ranked:
            # still held: this place did not take the object, so it is not one of its places
            self.ranked[obj] = [(p, s) for p, s in self.ranked[obj] if p != target]
            self.plan = None
        for o in puts:
            self.where[o] = None

    def _decide(
        self, takes: dict[str, int], puts: dict[str, dict[str, int]], opens: dict[str, int]
    ) -> int | None:
        if not self.objects:
            return None
        settled = all(self.where.get(o) for o in self.objects) and not puts
        if settled and self.plan is not None and all(self.where[o] == self.plan.get(o) for o in self.plan):
            # everything is where the plan says and the episode goes on: this assignment is wrong
            self.tried.add(frozenset(self.plan.items()))
            self.searches += 1
            self.plan = None
        if self.plan is None and self.ranked:
            self.plan = best_untried(self.ranked, self.tried)
            if self.plan is None:
                return None
        plan = self.plan or {}
        for obj in puts:  # held: put it where the plan says, opening the place first if it is closed
            place = plan.get(obj)
            if place in puts[obj]:
                return puts[obj][place]
            if place in opens:
                return opens[place]
        for obj in self.objects:  # not held: take what is loose or in the wrong place
            if obj in puts:
                continue
            if self.where.get(obj) is None or (obj in plan and self.where[obj] != plan[obj]):
                if obj in takes:
                    return takes[obj]
                if self.where.get(obj) in opens:
                    return opens[self.where[obj]]
        return None


class PlacementSearchPolicy(PolicyWrapper):
    """The inner policy inside a :class:`PlacementSearch` (which wraps the loop guard): in put-away tasks its
    scores of hypothetical ``put`` actions rank each object's places; elsewhere it is the guarded policy."""

    suffix = "search"

    def __init__(self, inner: Policy, world_key: WorldKey | None = None):
        super().__init__(inner)
        self.search = PlacementSearch(inner.scores, key=world_key)
        self.guard = self.search.guard

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        scores = self.inner.scores(instruction, state, candidates, memory)
        return self.search.choose(instruction, state, candidates, scores)

    @property
    def overrides(self) -> int:
        return self.guard.total_overrides

    @property
    def searches(self) -> int:
        """Joint placements ruled out (the episode went on after them), over all episodes."""
        return self.search.searches

    def reset(self) -> None:
        self.search.reset()
        self.inner.reset()
