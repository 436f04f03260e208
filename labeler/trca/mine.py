"""Mine candidate rubric checks from a dataset, without any model: what the builder asks the judge about.

* **Transition templates**: the environment's response to an action, with the action's own arguments and other
  known object names abstracted away, grouped per verb. ``take apple`` → ``You take the apple.`` and
  ``take pear`` → ``You take the pear.`` are one template ``take {object}`` → ``You take the {object}.``.
  A first sentence with more than ``max_variants`` continuations (a recipe's text) keeps only the first
  sentence; continuations seen fewer than ``min_count`` times beside frequent ones are dropped.
* **Objects and places**: the arguments of actions and candidate actions (``put {object} in {place}``: the
  object and the target of :func:`models.actions.parse_action`).

Everything comes from the instructions, actions, candidates and observations; ``info`` (ground truth) is
never read.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from labeler.trca.checks import transitions_of
from models.actions import parse_action
from models.trajectory import Trajectory

_OBJ, _PLACE, _THING, _REST = "\x01O\x01", "\x01P\x01", "\x01T\x01", "\x01R\x01"
_NP = r"(?:(?:(?:a|an|some|the) )(?:[a-z]+ ){0,2})?" + re.escape(_THING)  # "a fried diced {thing}"
_LIST = re.compile(_NP + r"(?:(?:,? and|,) " + _NP + ")*")
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s")


def _parts(action: str) -> tuple[str, str | None, str | None, str | None]:
    """``put red apple in fridge`` → (verb, object, preposition, place), None for a part it does not have."""
    a = parse_action(action)
    return a.verb, a.object or None, a.preposition or None, a.target or None


def _sub_all(text: str, terms: Iterable[str], token: str) -> str:
    terms = sorted({t for t in terms if t}, key=len, reverse=True)
    if not terms:
        return text
    return re.sub(r"\b(?:" + "|".join(re.escape(t) for t in terms) + r")\b", token, text, flags=re.IGNORECASE)


def abstract_feedback(feedback: str, obj: str | None, place: str | None, vocabulary: Iterable[str]) -> str:
    """The response with the action's arguments and known names replaced by placeholders (lists collapsed)."""
    t = feedback
    # the longer name first: "bed sheet" must not lose its "bed" to the place "bed"
    for name, token in sorted(((place, _PLACE), (obj, _OBJ)), key=lambda x: -len(x[0] or "")):
        if name:
            t = _sub_all(t, [name], token)
    t = _sub_all(t, vocabulary, _THING)
    return _LIST.sub(_THING, t)


def first_sentence(template: str) -> str:
    parts = _SENTENCE_END.split(template, maxsplit=1)
    return parts[0] + _REST if len(parts) > 1 else template


def template_regex(template: str, slots: tuple[str, ...] = ()) -> str:
    """Anchored regex of a template: ``{object}``/``{place}`` (filled from the action's captures when named
    in ``slots``) or any text; a generalised tail matches anything."""
    out = []
    for piece in re.split(
        "(" + "|".join(re.escape(x) for x in (_OBJ, _PLACE, _THING, _REST)) + ")", template
    ):
        if piece == _OBJ and "object" in slots:
            out.append("{object}")
        elif piece == _PLACE and "place" in slots:
            out.append("{place}")
        elif piece in (_OBJ, _PLACE, _THING):
            out.append(".+?")
        elif piece == _REST:
            out.append(r"\s.*")
        elif piece:
            out.append(re.escape(piece).replace(r"\ ", " "))
    return "^" + "".join(out) + "$"


def template_display(template: str) -> str:
    return (
        template.replace(_OBJ, "{object}")
        .replace(_PLACE, "{place}")
        .replace(_THING, "{thing}")
        .replace(_REST, " ...")
    )


@dataclass
class Template:
    verb: str
    template: str
    count: int = 0
    with_object: int = 0
    with_place: int = 0
    preps: Counter = field(default_factory=Counter)
    examples: list[tuple[str, str]] = field(default_factory=list)  # (action, response)

    @property
    def display(self) -> str:
        return template_display(self.template)

    def slots(self) -> tuple[str, ...]:
        rx = self.action_regex()
        return tuple(g for g in ("object", "place") if f"(?P<{g}>" in rx)

    def response_regex(self) -> str:
        return template_regex(self.template, self.slots())

    def action_regex(self) -> str:
        v = re.escape(self.verb)
        if self.with_place and self.with_place == self.count:
            preps = "|".join(sorted(self.preps))
            return rf"^{v} (?P<object>.+?) (?:{preps}) (?P<place>.+)$"
        if self.with_object == self.count:
            return rf"^{v} (?P<object>.+)$"
        return rf"^{v}\b"


@dataclass
class Mined:
    instructions: Counter = field(default_factory=Counter)
    templates: list[Template] = field(default_factory=list)
    objects: Counter = field(default_factory=Counter)  # first arguments of actions and candidates
    places_for: dict[str, dict[str, set[str]]] = field(default_factory=dict)  # verb -> object -> places
    trajectories: int = 0
    steps: int = 0

    @property
    def instruction(self) -> str:
        return self.instructions.most_common(1)[0][0] if self.instructions else ""


def mine(
    trajectories: Iterable[Trajectory], min_count: int = 2, max_variants: int = 3, max_examples: int = 3
) -> Mined:
    trajs = list(trajectories)
    m = Mined()
    vocab: set[str] = set()
    places_for: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for t in trajs:
        m.trajectories += 1
        m.instructions[" ".join(t.instruction.split())] += 1
        for s in t.steps:
            m.steps += 1
            for a in {*s.candidates, s.action}:
                verb, obj, _prep, place = _parts(a)
                if obj:
                    vocab.add(obj)
                    m.objects[obj] += 1
                if place:
                    vocab.add(place)
                    if obj:
                        places_for[verb][obj].add(place)
    vocab.discard("around")
    m.places_for = {v: {o: set(ps) for o, ps in d.items()} for v, d in places_for.items()}

    raw: dict[tuple[str, str], list[tuple[str, str, str | None, str | None, str | None]]] = defaultdict(list)
    for t in trajs:
        for s, tr in zip(t.steps, transitions_of(t), strict=True):
            fb = tr.response
            if not fb:
                continue  # the response only repeated the room description: nothing to check against
            verb, obj, prep, place = _parts(s.action)
            raw[(verb, abstract_feedback(fb, obj, place, vocab))].append((s.action, fb, obj, prep, place))
    # Generalise: a first sentence with many variants (a recipe's text) keeps only the first sentence; rare
    # variants beside frequent ones are dropped (they would overlap them); rare ones alone are generalised.
    by_first: dict[tuple[str, str], list[str]] = defaultdict(list)
    for verb, tmpl in raw:
        by_first[(verb, first_sentence(tmpl))].append(tmpl)
    grouped: dict[tuple[str, str], list] = defaultdict(list)
    for (verb, s1), variants in by_first.items():
        frequent = [v for v in variants if len(raw[(verb, v)]) >= min_count]
        if len(variants) > max_variants or not frequent:
            for v in variants:
                grouped[(verb, s1)].extend(raw[(verb, v)])
        else:
            for v in frequent:
                grouped[(verb, v)].extend(raw[(verb, v)])
    for (verb, tmpl), rows in grouped.items():
        if len(rows) < min_count:
            continue
        tp = Template(verb=verb, template=tmpl, count=len(rows))
        for action, fb, obj, prep, place in rows:
            tp.with_object += obj is not None
            tp.with_place += place is not None
            if prep:
                tp.preps[prep] += 1
            if len(tp.examples) < max_examples and (action, fb) not in tp.examples:
                tp.examples.append((action, fb))
        m.templates.append(tp)
    m.templates.sort(key=lambda tp: (-tp.count, tp.verb, tp.template))
    return m
