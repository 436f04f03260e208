"""What the logs' success flags say about each candidate rubric check: statistics, no model.

For a candidate item (a mined transition template as :class:`labeler.trca.rubric.Item`), over a dataset:

* **lift** — how much more often the check holds in successful than in failed trajectories, per step:
  ``(hits_s + 1) / (steps_s + 2)`` over ``(hits_f + 1) / (steps_f + 2)`` (add-one smoothing, so an empty side
  gives a finite ratio). With no failed (or no successful) trajectory, lift is ``None``.
* **kept** — of its hits inside successful trajectories, the fraction on the loop-erased path
  (:attr:`models.trajectory_view.TrajectoryView.path`): transitions whose effect lasted to the end of an
  episode that succeeded, rather than being undone later (``None`` without hits in successes).
* **effect** — the fraction of its hits that change the world state.
* **novelty** — the fraction of its hits whose response contains a word the observation before did not.
* **verbs** — the distinct first words of the actions it holds for (a world's generic answer such as
  "nothing happens" or "no known action" follows many verbs).

Per binding (the ``object``/``place`` an item's regexes capture), :func:`kept_bindings` counts the bindings of
hits that were *final* in a successful trajectory: on its loop-erased path and the episode's last action on
that object (no later action names it). For a placement template these are the places successful episodes
left each object in. ``info`` is never read; everything comes from transitions and ``success``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from labeler.trca.checks import CompiledItem, Transition, transitions_of
from labeler.trca.rubric import Item
from models.actions import parse_action, verb_of
from models.trajectory import Trajectory

_WORD = re.compile(r"[a-z][a-z'-]+")


def lift(hits_s: int, steps_s: int, hits_f: int, steps_f: int) -> float | None:
    """Smoothed ratio of per-step hit rates in successful vs failed trajectories (None if a side is empty)."""
    if steps_s == 0 or steps_f == 0:
        return None
    return ((hits_s + 1) / (steps_s + 2)) / ((hits_f + 1) / (steps_f + 2))


def novel(tr: Transition) -> bool:
    """Whether the response to an action holds a word that the observation before it did not."""
    before = set(_WORD.findall(tr.observation.lower()))
    return any(w not in before for w in _WORD.findall(tr.response.lower()))


@dataclass
class Grounding:
    """Success-grounded statistics of one candidate check over a dataset (see the module docstring)."""

    hits: int = 0
    hits_success: int = 0
    hits_failure: int = 0
    steps_success: int = 0
    steps_failure: int = 0
    kept_success: int = 0
    effect_hits: int = 0
    novel_hits: int = 0
    verbs: Counter = field(default_factory=Counter)
    bindings: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    """binding -> Counter of 'kept' (on a successful path), 'final' (kept and the episode's last action on its
    object), 'success', 'failure' hits."""

    @property
    def lift(self) -> float | None:
        return lift(self.hits_success, self.steps_success, self.hits_failure, self.steps_failure)

    @property
    def kept(self) -> float | None:
        return self.kept_success / self.hits_success if self.hits_success else None

    @property
    def effect(self) -> float | None:
        return self.effect_hits / self.hits if self.hits else None

    @property
    def novelty(self) -> float | None:
        return self.novel_hits / self.hits if self.hits else None

    def summary(self) -> str:
        """One line for an item's note: the numbers a reviewer needs to see why the item is there."""

        def f(v: float | None) -> str:
            return "n/a" if v is None else f"{v:.2f}"

        return (
            f"{self.hits} hits ({self.hits_success} in successes, {self.hits_failure} in failures); "
            f"success lift {f(self.lift)}; kept on success paths {f(self.kept)}; changes the world "
            f"{f(self.effect)}; new words {f(self.novelty)}; after {len(self.verbs)} verb(s)"
        )


@dataclass
class Episode:
    """A trajectory prepared once for grounding: its transitions and which steps are on its path."""

    success: bool
    transitions: list[Transition]
    on_path: frozenset[int]
    effects: list[bool]
    last_on_object: list[bool]
    """Per step: no later action of the trajectory has the same object (first argument)."""


def prepare(trajectories: Sequence[Trajectory]) -> list[Episode]:
    out = []
    for t in trajectories:
        trs = transitions_of(t)
        objects = [parse_action(s.action).object or None for s in t.steps]
        last: list[bool] = []
        later: set[str | None] = set()
        for o in reversed(objects):
            last.append(o is None or o not in later)
            later.add(o)
        out.append(
            Episode(
                success=bool(t.success),
                transitions=trs,
                on_path=frozenset(t.view.path) if t.success else frozenset(),
                effects=[tr.world_changed for tr in trs],
                last_on_object=last[::-1],
            )
        )
    return out


def ground(item: Item, episodes: Sequence[Episode]) -> Grounding:
    """The statistics of ``item``'s check over prepared episodes."""
    check = CompiledItem(item)
    g = Grounding()
    for ep in episodes:
        n = len(ep.transitions)
        if ep.success:
            g.steps_success += n
        else:
            g.steps_failure += n
        for i, tr in enumerate(ep.transitions):
            bound = check.match(tr)
            if bound is None:
                continue
            g.hits += 1
            g.effect_hits += ep.effects[i]
            g.novel_hits += novel(tr)
            g.verbs[verb_of(tr.action)] += 1
            kept = ep.success and i in ep.on_path
            if ep.success:
                g.hits_success += 1
                g.kept_success += kept
            else:
                g.hits_failure += 1
            for b in bound:
                c = g.bindings[b]
                c["success" if ep.success else "failure"] += 1
                c["kept"] += kept
                c["final"] += kept and ep.last_on_object[i]
    return g


def kept_bindings(g: Grounding, min_final: int = 1) -> dict[str, dict[str, int]]:
    """object -> {place: final hits in successful trajectories} from ``object=...;place=...`` bindings."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for b, c in g.bindings.items():
        if c["final"] < min_final:
            continue
        parts = dict(p.split("=", 1) for p in b.split("|", 1)[0].split(";") if "=" in p)
        if "object" in parts and "place" in parts:
            out[parts["object"]][parts["place"]] = c["final"]
    return dict(out)


# ------------------------------------------------------------------------------------------------ verdicts

IDLE_EFFECT = 0.1
"""A check whose hits change the world at most this often is idle (it changes nothing)."""
KEPT_MIN = 0.5
"""A positive tag stands when at least this fraction of its hits in successes lasted (loop-erased path) ..."""
LIFT_MIN = 1.0
"""... and it is at least as frequent, per step, in successful as in failed trajectories."""
RESCUE_KEPT, RESCUE_LIFT = 0.75, 1.5
"""The data alone make a positive item when hits last this often and are this much more frequent in
successes, whatever the judge's tag."""
GENERIC_VERBS = 2
"""An idle response that follows at least this many verbs is the world's generic refusal."""


@dataclass(frozen=True)
class Verdict:
    category: str | None  # evidence | execution | invalidity, or None: no item
    reason: str


def verdict(tag: str, g: Grounding) -> Verdict:
    """The item a candidate check becomes, from the judge's tag and the success-grounded statistics.

    The judge's tag says what kind of item a check would be; the success flags say whether the data bear it
    out. Rules, in order:

    1. Without hits, or without any successful trajectory to compare with, the judge's tag decides.
    2. An idle check (changes the world in <= 10 % of its hits) is never paid: it is Invalidity when its
       response follows several verbs (the world's generic refusal) or the judge tags it failed; Evidence when
       the judge tags it found, its responses bring new words and it is not rarer in successes; else no item.
    3. A check that changes the world keeps the judge's positive tag when its hits in successes mostly lasted
       (kept >= 0.5) and it is not rarer in successes (lift >= 1); the data alone make it Execution when
       kept >= 0.75 and lift >= 1.5. A failed tag on a check that changes the world stands only when the data
       do not contradict it (kept < 0.5 and lift < 1).
    """
    positive = TAG_CATEGORY.get(tag) in ("evidence", "execution")
    if g.hits == 0 or g.kept is None:
        cat = TAG_CATEGORY.get(tag)
        why = "no hits" if g.hits == 0 else "no successful trajectory to ground it"
        return Verdict(cat, f"{why}: the judge's tag decides")
    lifted = g.lift is None or g.lift >= LIFT_MIN
    if (g.effect or 0.0) <= IDLE_EFFECT:
        if len(g.verbs) >= GENERIC_VERBS:
            return Verdict("invalidity", f"changes nothing and answers {len(g.verbs)} verbs alike")
        if tag == "failed":
            return Verdict("invalidity", "changes nothing and the judge tags it failed")
        if tag == "found" and (g.novelty or 0.0) >= 0.5 and lifted:
            return Verdict("evidence", "changes nothing but reveals new words, not rarer in successes")
        return Verdict(None, "changes nothing (idle): not paid")
    if positive:
        if (g.kept or 0.0) >= KEPT_MIN and lifted:
            return Verdict(TAG_CATEGORY[tag], "the judge's tag, borne out: lasts in successes")
        why = "undone in successes" if (g.kept or 0.0) < KEPT_MIN else "rarer in successes"
        return Verdict(None, f"the judge's tag {tag} is not borne out: {why}")
    if (g.kept or 0.0) >= RESCUE_KEPT and g.lift is not None and g.lift >= RESCUE_LIFT:
        return Verdict("execution", f"the data overrule the judge's tag {tag}: lasts and marks successes")
    if tag == "failed" and (g.kept or 0.0) < KEPT_MIN and not lifted:
        return Verdict("invalidity", "the judge's tag failed, not contradicted by the data")
    return Verdict(None, f"the judge's tag {tag}; the data do not make it an item")


TAG_CATEGORY = {"found": "evidence", "done": "execution", "failed": "invalidity"}
