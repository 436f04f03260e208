"""ScienceWorld action lists: the candidate cap, and matching a gold action to the valid-action wording.

Pure functions over the simulator's data (standard library only), so that they are tested without a JVM.

**Candidates.** ScienceWorld lists every valid action-object combination: 100 to 4,600 per step (a kitchen
has ~1,000, most of them two-object actions such as ``dunk cup containing water in sink``). A policy scores
every candidate, so :func:`cap_candidates` keeps at most ``cap`` of them, filled tier by tier:

0. the expected gold action, when collecting along a gold path (so a gold step is always admissible);
1. actions without an object (``look around``, ``inventory``, ``wait``, ``wait1``, ``task``);
2. moving: ``go to X`` / ``teleport to X``;
3. actions on two objects the agent holds or the task names (every word of an object's name is in the
   inventory line or the task description): ``move baby wolf to yellow box`` with the wolf held and the box
   named;
4. the simulator's answer and carrying verbs on every object: ``focus on X``, ``pick up X``;
5. actions on one object the agent holds or the task names;
6. the other one-object actions (``open X``, ``look at X``, ``mix X``, ...);
7. the other two-object actions (``move X to Y``, ``pour X into Y``, ``use X on Y``, ``connect X to Y``).

The tier that does not fit is sampled uniformly with a generator seeded by the caller (the adapter seeds it
with the episode, the step number and the room text, so the same state always gets the same candidates); the
result is sorted. ``reset task`` is never a candidate (it restarts the episode). Tiers 3 to 5 exist because
a plain cap of 64 by tiers 1, 2, one-object, two-object left a needed action out at test time (no gold
action to keep) on 24-30 % of the gold steps of find-animal and find-plant, in every one of ten test
episodes: the closing ``move X to Y`` always, often the ``focus on`` the answer. With them and a cap of 128
every gold action the simulator lists is offered on ten test episodes each of find-animal, find-plant and
lifespan-longest-lived. Families with crowded rooms (a kitchen of ~1,000 actions: chemistry-mix,
test-conductivity) still miss a fifth to a third of their gold actions at 128: set ``candidates=0`` there.

**Gold actions.** The simulator's gold path names objects by whatever referent its author chose (``move egg
common toad in inventory to orange box``), where the valid list uses each visible object's one unique
referent (``move common toad to orange box``); it also uses verb aliases (``examine``, ``drop``), opens doors
that the ``openDoors`` simplification already opened, and answers the parser's ambiguity prompts with digits.
:func:`match_gold` maps a gold action onto the valid list by the objects it names: it finds the action
template, splits the slots at the template's separators, resolves each slot to object ids through the
objects' referents (a trailing qualifier ``in X`` / ``on X`` / ``to X`` is allowed: ``door to kitchen``), and
returns the valid action with the same template and objects.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

NEVER = frozenset({"reset task"})
NO_OBJECT = frozenset({"look around", "inventory", "wait", "wait1", "task"})
MOVING = ("go to ", "teleport to ")
TWO_OBJECT = ("move ", "pour ", "dunk ", "use ", "connect ")
SEPARATORS = (" to ", " into ", " in ", " on ")
FOCUS = "focus on "
CORE = (FOCUS, "pick up ")
"""The answer and carrying verbs: every object keeps them under the cap (tier 4)."""
VERB_PREFIXES = (*CORE, "look at ", "look in ", "put down ")
_NOT_NAMES = frozenset(
    "a an the of in on to into called substance containing your you see inventory task first then".split()
)
# verb aliases the simulator's parser accepts and the valid list never uses
ALIASES = (("examine ", "look at "), ("drop ", "put down "))


def tier(action: str) -> int:
    """1 no object, 2 moving, 3 one object, 4 two objects (the kinds of action; :func:`cap_candidates` orders
    them with what the agent holds and the task names)."""
    if action in NO_OBJECT:
        return 1
    if action.startswith(MOVING):
        return 2
    if action.startswith(TWO_OBJECT) and any(sep in action for sep in SEPARATORS):
        return 4
    return 3


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """The naming words of ``text`` (cached: a room's object names recur in hundreds of actions)."""
    return frozenset(re.findall(r"[a-z0-9]+", text.lower())) - _NOT_NAMES


def object_names(action: str, kind: int | None = None) -> list[str]:
    """The object names of an action: ``move baby wolf to yellow box`` -> ``baby wolf``, ``yellow box``;
    ``pick up axe`` -> ``axe``; none for actions without an object. ``kind``: its :func:`tier`, if known."""
    kind = tier(action) if kind is None else kind
    if kind in (1, 2):
        return []
    body = action.split(" ", 1)[1] if " " in action else ""
    cuts = [(i, sep) for sep in SEPARATORS if (i := body.find(sep)) > 0] if kind == 4 else []
    if cuts:
        i, sep = min(cuts)
        return [body[:i], body[i + len(sep) :]]
    prefix = next((p for p in VERB_PREFIXES if action.startswith(p)), None)
    return [action[len(prefix) :] if prefix else body]


def relevance(action: str, known: frozenset[str], kind: int | None = None) -> int:
    """How many of ``action``'s objects are named by ``known`` words (every word of the name among them)."""
    return sum(1 for name in object_names(action, kind) if (w := _words(name)) and w <= known)


def cap_candidates(
    valid: Iterable[str],
    cap: int,
    rng: random.Random,
    keep: Sequence[str] = (),
    *,
    held: str = "",
    task: str = "",
) -> list[str]:
    """At most ``cap`` of ``valid`` (all of them when ``cap <= 0``), always including ``keep``; sorted and
    deduplicated. ``held`` (the inventory line) and ``task`` (the task description) name the objects whose
    actions come first (module docstring). Deterministic for a given ``rng`` state."""
    pool = sorted(set(valid) - NEVER)
    kept = [k for k in dict.fromkeys(keep) if k]
    if cap <= 0 or len(pool) + len(kept) <= cap:
        return sorted(set(pool) | set(kept))
    known = _words(held) | _words(task)
    kind = {a: tier(a) for a in pool}
    rel = {a: relevance(a, known, kind[a]) for a in pool}
    groups = [
        [a for a in pool if kind[a] == 1],
        [a for a in pool if kind[a] == 2],
        [a for a in pool if rel[a] >= 2],
        [a for a in pool if kind[a] == 3 and a.startswith(CORE)],
        [a for a in pool if rel[a] == 1],
        [a for a in pool if kind[a] == 3],
        pool,
    ]
    out = set(kept)
    for group in groups:
        room = cap - len(out)
        if room <= 0:
            break
        group = [a for a in group if a not in out]
        out.update(group if len(group) <= room else rng.sample(group, room))
    return sorted(out)


def without_focus(candidates: Sequence[str]) -> list[str]:
    """The candidates a random step may take: ``focus on X`` commits the episode to an answer (a wrong one
    ends it in failure), so random exploration never focuses."""
    return [c for c in candidates if not c.startswith(FOCUS)]


# ----------------------------------------------------------------------------------------------- gold actions


@dataclass(frozen=True)
class ValidAction:
    """One entry of the simulator's valid list with its template and the ids of the objects it names."""

    action: str
    template_id: int
    obj_ids: tuple[int, ...]


@dataclass(frozen=True)
class Template:
    """An action template such as ``move OBJ to OBJ`` (template ids are shared by ``go`` and ``teleport``, so
    the verb text is part of the identity)."""

    template_id: int
    text: str

    @property
    def pattern(self) -> re.Pattern[str]:
        words = [re.escape(w) if w != "OBJ" else "(.+)" for w in self.text.split(" ")]
        return re.compile("^" + " ".join(words) + "$")

    @property
    def prefix(self) -> str:
        return self.text.split("OBJ", 1)[0]

    @property
    def slots(self) -> int:
        return self.text.split(" ").count("OBJ")


def canonical(action: str) -> str:
    """``action`` with the parser's verb aliases replaced by the verbs the valid list uses."""
    for alias, verb in ALIASES:
        if action.startswith(alias):
            return verb + action[len(alias) :]
    return action


def _slot_splits(template: Template, text: str) -> list[tuple[str, ...]]:
    """Every way to read ``text`` as ``template``'s slots (a separator word may also occur inside a name)."""
    if template.slots == 0:
        return [()] if text == template.text else []
    if not text.startswith(template.prefix):
        return []
    if template.slots == 1:
        body = text[len(template.prefix) :]
        rest = template.text[len(template.prefix) + 3 :]
        if rest:
            if not body.endswith(rest):
                return []
            body = body[: -len(rest)]
        return [(body,)] if body else []
    sep = template.text.split("OBJ")[1]  # e.g. " to "
    body = text[len(template.prefix) :]
    out = []
    start = 0
    while (i := body.find(sep, start)) > 0:
        a, b = body[:i], body[i + len(sep) :]
        if a and b:
            out.append((a, b))
        start = i + 1
    return out


def _objects_named(slot: str, referents: Mapping[int, Sequence[str]]) -> dict[int, int]:
    """Ids of the objects ``slot`` names, each with how well: 2 for a referent, 1 for a referent followed by
    a qualifier (``in X``, ``on X``, ``to X``)."""
    out: dict[int, int] = {}
    for oid, names in referents.items():
        for name in names:
            if slot == name:
                out[oid] = 2
                break
            if slot.startswith((name + " in ", name + " on ", name + " to ")):
                out[oid] = max(out.get(oid, 0), 1)
    return out


@dataclass(frozen=True)
class GoldMatch:
    """How a gold action reads on the valid list: ``action`` (None when nothing matched), ``kind`` one of
    ``literal`` (already valid), ``alias`` (valid after the verb alias), ``referent`` (same template and
    objects, other wording), ``noop`` (an ``open``/``close`` that the valid list does not offer: the object
    already is open or closed, e.g. a door under ``openDoors``), ``unmatched``."""

    action: str | None
    kind: str


def match_gold(
    gold: str,
    valid: Sequence[ValidAction],
    templates: Sequence[Template],
    referents: Mapping[int, Sequence[str]],
) -> GoldMatch:
    """Map one gold action onto the valid list (see the module docstring)."""
    texts = {v.action for v in valid}
    if gold in texts:
        return GoldMatch(gold, "literal")
    text = canonical(gold)
    if text in texts:
        return GoldMatch(text, "alias")
    best: tuple[int, int, str] | None = None  # (-how well the objects are named, length, action)
    noop = False
    for tpl in templates:
        for slots in _slot_splits(tpl, text):
            named = [_objects_named(s, referents) for s in slots]
            if not all(named):
                continue
            found = False
            for v in valid:
                if (
                    v.template_id == tpl.template_id
                    and v.action.startswith(tpl.prefix)
                    and len(v.obj_ids) == len(named)
                    and all(o in n for o, n in zip(v.obj_ids, named, strict=True))
                ):
                    found = True
                    quality = sum(n[o] for o, n in zip(v.obj_ids, named, strict=True))
                    key = (-quality, len(v.action), v.action)
                    best = key if best is None or key < best else best
            if not found and tpl.text in ("open OBJ", "close OBJ"):
                noop = True
    if best is not None:
        return GoldMatch(best[2], "referent")
    if noop:
        return GoldMatch(None, "noop")
    return GoldMatch(None, "unmatched")
