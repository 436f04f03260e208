"""Entity-consistent augmentation from the log itself: copies of each episode with the names of
interchangeable things swapped for other such names, consistently in the instruction, every state, the
memory, the actions and the candidates.

A policy that saw "roast the carrot" followed by ``cook carrot in oven`` thirty times may learn the relation
of *carrot* and *oven* instead of the relation of *roast* and *oven*. Renaming the carrot to a purple potato
in one copy, a block of cheese in the next, keeps the relation the episode shows and takes the name out of it.
So a verb-appliance or object-place relation is learned once, not per entity.

Which names are interchangeable is read from the log, not from a world:

- **Slots.** A name is a phrase an action acts on (:attr:`models.actions.Action.phrases`); it fills the
  *object* slot of a verb (``cook carrot in oven``: ``carrot`` of ``cook``) or its *target* slot (``oven``).
  Names that fill the object slot of a same verb form a class (ingredients: objects of ``cook``, ``slice``,
  ``eat``).
- **Targets are never renamed.** A target is what a decision chooses between (which appliance, which place);
  renaming it would teach a wrong relation (``roast`` with a stove). A name that is also some verb's target
  is not renamed either.
- **Names that decide are never renamed.** Where the log's successful episodes always send an object of a
  verb to the same target (TextWorld Commonsense: the teapot always goes to the shelf; checked per verb over
  the objects seen with it in at least two episodes), the object's name *is* the knowledge the policy needs,
  and renaming it would erase that prior. A verb whose objects go to one target each in at least
  :data:`DECIDING_SHARE` of cases marks all its objects as deciding; so does a verb with no such evidence.
- **Fixtures are never renamed.** A name in the candidates of most episodes (:data:`FIXTURE_SHARE`: the
  knife, the cookbook) is part of every world; its identity is what the episodes share.
- **Classes.** Names that fill the object slots of the same *free* verbs (those whose objects end at varying
  targets) form a class, whatever else can be done with them: every cooked thing, the chicken leg that is
  never sliced with the carrot that is, since a name-to-target habit is what the copies must break (the
  training games grill every chicken and the test games fry it). A name no free verb acts on (a liquid that
  is only taken) is not renamed.

Copies keep the labels, rewards and success flag of their episode; their ids get ``~swapN``.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections import defaultdict
from collections.abc import Sequence

from models.actions import parse_action
from models.trajectory import Trajectory

DECIDING_SHARE = 0.5
"""Share of a verb's objects (seen in at least two successful episodes) that always end at the same target,
from which on the verb's objects are names that decide and are never renamed (TextWorld Commonsense: 13 of
17; CookingWorld's ``cook``: 1 of 7)."""
FIXTURE_SHARE = 0.5
"""Share of the episodes whose candidates name a thing, above which it is a fixture of the world (the knife,
the cookbook) and is never renamed: there is no variation across episodes to abstract away, and its
identity is what the episodes share."""


def _names(action: str) -> tuple[str, str]:
    """The (object, target) phrases of an action (``""`` where absent), without leading articles."""
    a = parse_action(action)
    p = a.phrases
    return (p[0] if p else ""), (p[-1] if a.target and len(p) > 1 else "")


def interchangeable(trajectories: Sequence[Trajectory]) -> list[frozenset[str]]:
    """Classes of names that may be swapped for one another (module docstring), each of at least two."""
    slots: dict[str, set[str]] = defaultdict(set)  # name -> verbs whose object slot it fills
    episodes: dict[str, int] = defaultdict(int)  # name -> episodes that name it
    targets: set[str] = set()
    final: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)  # (verb, object) -> episode -> target
    for t in trajectories:
        named: set[str] = set()
        for s in t.steps:
            for action in {s.action, *s.candidates}:
                obj, target = _names(action)
                if obj:
                    slots[obj].add(parse_action(action).verb)
                    named.add(obj)
                if target:
                    targets.add(target)
            obj, target = _names(s.action)
            if t.success and obj and target:
                final[(parse_action(s.action).verb, obj)][t.id] = target  # the last one stays
        for name in named:
            episodes[name] += 1
    verbs = {verb for verb, _ in final}
    free_verbs = set()
    for verb in verbs:
        repeated = [set(by.values()) for (v, _), by in final.items() if v == verb and len(by) >= 2]
        if repeated and sum(len(ts) == 1 for ts in repeated) < DECIDING_SHARE * len(repeated):
            free_verbs.add(verb)
    classes: dict[frozenset[str], set[str]] = defaultdict(set)
    for name, used in slots.items():
        fixture = episodes[name] > FIXTURE_SHARE * len(trajectories)
        if fixture or name in targets or not (used & free_verbs) or used & (verbs - free_verbs):
            continue
        classes[frozenset(used & free_verbs)].add(name)
    return sorted((frozenset(c) for c in classes.values() if len(c) >= 2), key=lambda c: sorted(c))


def _renamer(mapping: dict[str, str]):
    pattern = re.compile(
        r"\b(" + "|".join(re.escape(n) for n in sorted(mapping, key=len, reverse=True)) + r")\b",
        re.IGNORECASE,
    )
    return lambda text: pattern.sub(lambda m: mapping[m.group(0).lower()], text) if text else text


def swapped(traj: Trajectory, classes: Sequence[frozenset[str]], rng: random.Random, tag: str) -> Trajectory:
    """A copy of ``traj`` with each of its interchangeable names replaced by another name of its class that
    the episode does not mention (one mapping for the whole episode); ``traj`` itself when it mentions
    none."""
    text = " ".join([traj.instruction, *(x for s in traj.steps for x in (s.observation, s.action))]).lower()
    mapping: dict[str, str] = {}
    for cls in classes:
        present = [n for n in sorted(cls) if re.search(r"\b" + re.escape(n) + r"\b", text)]
        spare = [n for n in sorted(cls) if n not in present]
        rng.shuffle(spare)
        for name, new in zip(present, spare, strict=False):
            mapping[name] = new
    if not mapping:
        return traj
    rename = _renamer(mapping)
    steps = [
        dataclasses.replace(
            s,
            observation=rename(s.observation),
            action=rename(s.action),
            candidates=[rename(c) for c in s.candidates],
            next_observation=rename(s.next_observation),
        )
        for s in traj.steps
    ]
    return dataclasses.replace(traj, id=f"{traj.id}~{tag}", instruction=rename(traj.instruction), steps=steps)


def augment(trajectories: Sequence[Trajectory], copies: int, seed: int = 0) -> list[Trajectory]:
    """The episodes and ``copies`` renamed copies of each (fewer where an episode names nothing
    interchangeable), in order: each episode then its copies."""
    if copies < 0:
        raise ValueError(f"augmentation copies must be >= 0, got {copies}")
    classes = interchangeable(trajectories) if copies else []
    rng = random.Random(seed)
    out: list[Trajectory] = []
    for t in trajectories:
        out.append(t)
        seen = {t.id}
        for k in range(copies):
            c = swapped(t, classes, rng, f"swap{k + 1}")
            if c.id not in seen:
                seen.add(c.id)
                out.append(c)
    return out
