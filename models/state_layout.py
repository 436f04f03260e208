"""State layouts: a state text made of labelled lines, described by data so that any layer can read its parts.

An environment adapter composes the policy's state text from named parts, one line each, ``Label: value``, in
the layout's order. The layout is recorded with every dataset (a trajectory's ``meta["state_layout"]``) and
every bundle (its manifest), so the labeler and the client can read the parts back -- the response to the last
action, what the agent holds, the world state -- without knowing which world wrote them.

Part names with a meaning to the readers:

- ``feedback``: the world's response to the last action,
- ``inventory``: what the agent holds (a list of items, or "empty"),
- ``history``: the last actions, comma-separated ("none" when there are none).

A part marked ``items`` is a comma-separated list (its entries are the structured policy's items).

Parts marked ``world`` make the *world state*: :meth:`StateLayout.world_key` is the one definition of it,
read by the labelers (TRCA's "unchanged" checks, the rubric builder's grounding, COREN's examples), the
trainers (loop erasure, the detour penalty), the client's loop guard and the C++ ``edge::WorldKey``. An
``unordered`` world part is compared as a bag of words: case, commas and the articles
(:data:`models.actions.ARTICLES`) ignored, so an inventory listed in another order ("a cup, an apple" / "an
apple, a cup") is the same world; other world parts are compared as written, white space collapsed.

The **plain layout** (:data:`PLAIN_LAYOUT`, no parts) describes a log whose states are free text: the whole
text is the world state, and the response to an action is what the next state adds to the one before it
(:meth:`StateLayout.response`). A text with none of a layout's world parts is read the same way. Stdlib only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from models.actions import ARTICLES, normalise

_WORDS = re.compile(r"[\s,]+")
"""What separates the words of an unordered part (a comma-separated list reads as the same bag)."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LABELLED = re.compile(r"^(?P<label>[^:\r\n]+):(?:[ \t]+(?P<value>.*)|[ \t]*)$")
"""The one shape of a labelled line: ``Label:`` then white space and the value, or nothing."""


@dataclass(frozen=True)
class Part:
    name: str
    label: str
    world: bool = False
    unordered: bool = False
    items: bool = False
    """Its value is a comma-separated list (an inventory, the recent actions): the structured policy reads
    each entry as an item of its own (:mod:`models.inputs.state`)."""

    @property
    def prefix(self) -> str:
        """How :meth:`StateLayout.compose` starts its line."""
        return f"{self.label}: "


@dataclass(frozen=True)
class StateLayout:
    """An ordered list of :class:`Part`; see the module docstring."""

    parts: tuple[Part, ...]

    def __post_init__(self) -> None:
        names = [p.name for p in self.parts]
        if len(set(names)) != len(names) or len({p.label for p in self.parts}) != len(names):
            raise ValueError(f"state layout with repeated part names or labels: {names}")
        bad = [p.label for p in self.parts if labelled_line(p.prefix) != (p.label, "")]
        if bad:
            raise ValueError(f"state layout labels must be one line without ':' and not blank, got {bad}")
        if self.parts and not any(p.world for p in self.parts):
            raise ValueError("a state layout needs at least one world part (or no parts: the plain layout)")

    @property
    def plain(self) -> bool:
        """No parts: every state text is free text (see the module docstring)."""
        return not self.parts

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parts)

    def part_of(self, line: str) -> tuple[Part, str] | None:
        """The part a line of a state text belongs to and its value (white space trimmed), or None: the one
        rule every reader applies (a line ``Label:`` followed by white space or by nothing, see
        :func:`labelled_line`)."""
        found = labelled_line(line)
        if found is None:
            return None
        part = self._by_label.get(found[0])
        return None if part is None else (part, found[1])

    @functools.cached_property
    def _by_label(self) -> dict[str, Part]:
        return {p.label: p for p in self.parts}

    def compose(self, values: Mapping[str, str | None]) -> str:
        """The state text: one ``Label: value`` line per part in order; parts whose value is None are left
        out. ValueError for a name the layout does not have, or a value that spans lines."""
        unknown = set(values) - set(self.names)
        if unknown:
            raise ValueError(f"unknown state parts {sorted(unknown)}: expected {', '.join(self.names)}")
        lines = []
        for p in self.parts:
            v = values.get(p.name)
            if v is None:
                continue
            if "\n" in v:
                raise ValueError(f"state part {p.name!r} spans lines: {v!r}")
            lines.append(p.prefix + v)
        return "\n".join(lines)

    def parse(self, text: str) -> dict[str, str]:
        """The parts found in ``text`` (the first line of each label); empty for a plain text."""
        out: dict[str, str] = {}
        for line in text.splitlines():
            found = self.part_of(line)
            if found is not None:
                out.setdefault(found[0].name, found[1])
        return out

    def is_structured(self, text: str) -> bool:
        """Whether ``text`` has at least one of the world parts."""
        found = self.parse(text)
        return any(p.world and p.name in found for p in self.parts)

    def world_key(self, text: str, actions: Iterable[str] = ()) -> str:
        """The world state of ``text``: its world lines in text order (an unordered part as its bag of words,
        other parts white-space collapsed), else -- a plain text -- the whole text, white-space collapsed,
        without the pieces that only list ``actions`` (the episode's actions: a plain log that echoes its
        recent actions shows the same world after a repeated no-op). Two state texts show the same world
        state exactly when their keys are equal."""
        lines = []
        for ln in text.splitlines():
            found = self.part_of(ln)
            if found is None or not found[0].world:
                continue
            p, value = found
            lines.append(p.prefix + (bag_of_words(value) if p.unordered else " ".join(value.split())))
        if lines:
            return "\n".join(lines)
        if not actions:
            return " ".join(text.split())
        known = {normalise(a) for a in actions}
        return " ".join(p for p in text_pieces(text) if not _lists_only(p, known))

    def response(self, observation: str | None, next_observation: str, actions: Iterable[str] = ()) -> str:
        """The world's response to the action taken between two state texts -- the one definition (TRCA's
        checks, COREN's "result", the policy's memory):

        - the ``feedback`` part of the next text, when the layout has that part and the next text shows a
          world part ("" when it does not show a feedback line: the action drew no new text);
        - otherwise the pieces (lines, sentences) of the next text that ``observation`` did not show, in
          order, joined by spaces (all of them when ``observation`` is None: the state before is not
          known), without pieces that only list ``actions`` (the episode's actions: an echo of them is not
          the world's answer)."""
        return self._response(observation, next_observation, {normalise(a) for a in actions})

    def responses(self, steps: Iterable[tuple[str, str]], before: str | None = None) -> list[str]:
        """:meth:`response` to each of ``steps`` (``(action, state text it led to)``, oldest first), each with
        the actions up to it; ``before`` is the state text before the first step (None: not known)."""
        out: list[str] = []
        known: set[str] = set()
        for action, observation in steps:
            known.add(normalise(action))
            out.append(self._response(before, observation, known))
            before = observation
        return out

    def _response(self, observation: str | None, next_observation: str, known: set[str]) -> str:
        """:meth:`response` with the actions already :func:`models.actions.normalise`."""
        found = _new_pieces(self, observation, next_observation)
        if isinstance(found, str):
            return found
        return " ".join(p for p in found if not _lists_only(p, known))

    def to_dict(self) -> dict[str, Any]:
        return {
            "parts": [
                {
                    "name": p.name,
                    "label": p.label,
                    "world": p.world,
                    "unordered": p.unordered,
                    "items": p.items,
                }
                for p in self.parts
            ]
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StateLayout:
        """The layout recorded by :meth:`to_dict`; ValueError naming what is wrong. Layouts recorded before
        ``items`` existed have list-like ``inventory`` and ``history`` parts (their documented meaning)."""
        try:
            parts = tuple(
                Part(
                    name=str(p["name"]),
                    label=str(p["label"]),
                    world=bool(p.get("world", False)),
                    unordered=bool(p.get("unordered", False)),
                    items=bool(p.get("items", str(p["name"]) in LIST_PART_NAMES)),
                )
                for p in d["parts"]
            )
        except (KeyError, TypeError) as e:
            raise ValueError(f"bad state layout {dict(d)!r}: {e}") from None
        return cls(parts)


@functools.lru_cache(maxsize=8192)
def _new_pieces(layout: StateLayout, observation: str | None, next_observation: str) -> str | tuple[str, ...]:
    """:meth:`StateLayout.response` before the echo filter: the feedback value (a str), or the new pieces.
    Cached: a policy's episode memory reads the same transitions again at every later step."""
    if "feedback" in layout.names:
        found = layout.parse(next_observation)
        if any(p.world and p.name in found for p in layout.parts):
            return found.get("feedback", "")
    before = set(text_pieces(observation)) if observation is not None else set()
    return tuple(p for p in text_pieces(next_observation) if p not in before)


def bag_of_words(value: str) -> str:
    """An unordered part's value as a bag: lower-case words, commas and articles dropped, sorted."""
    return " ".join(sorted(w for w in _WORDS.split(value.lower()) if w and w not in ARTICLES))


def _lists_only(piece: str, actions: set[str]) -> bool:
    """Whether ``piece`` is a comma list of known actions (or "none"): an echo of the agent's own actions."""
    if not actions:
        return False
    entries = [normalise(e) for e in piece.rstrip(".").split(",")]
    return all(e in actions or e == "none" for e in entries if e) and any(entries)


def labelled_line(line: str) -> tuple[str, str] | None:
    """``(label, value)`` of a line shaped ``Label: value`` (or ``Label:`` alone, value ""), white space
    around the line and the value trimmed; None for any other line. The one rule for "this line is part P"
    (every layout reader) and for the lines layout inference considers."""
    m = _LABELLED.match(line.strip())
    if m is None:
        return None
    return m["label"], (m["value"] or "").strip()


def sentences(text: str) -> list[str]:
    """``text`` cut after every ``.``, ``!`` or ``?`` followed by white space, each piece white-space
    collapsed; empty pieces dropped. The one sentence splitter (the policy's items, TRCA's and the world
    key's pieces)."""
    return [" ".join(p.split()) for p in _SENTENCE_END.split(text) if p and not p.isspace()]


def text_pieces(text: str) -> list[str]:
    """``text`` cut into lines, and the lines into :func:`sentences`."""
    return [piece for line in text.splitlines() for piece in sentences(line)]


PLAIN_LAYOUT = StateLayout(())
"""The layout of free-text states (see the module docstring)."""

LIST_PART_NAMES = ("inventory", "history")
"""Parts read as lists in layouts recorded without the ``items`` flag."""

LEGACY_LAYOUT = StateLayout(
    (
        Part("feedback", "Feedback"),
        Part("inventory", "Inventory", world=True, unordered=True, items=True),
        Part("history", "Recent actions", items=True),
        Part("room", "Room", world=True),
    )
)
"""The layout of state texts recorded before layouts were recorded (state format ``twx/1``): datasets and
bundles without a layout are read with it."""
LEGACY_STATE_FORMAT = "twx/1"


def layout_of(meta: Mapping[str, Any]) -> StateLayout:
    """The layout a trajectory (its ``meta``) or a bundle manifest records; :data:`LEGACY_LAYOUT` for the
    state format ``twx/1`` that predates recorded layouts; else :data:`PLAIN_LAYOUT` (a reader of a user's
    file infers a better one first: :mod:`models.layout_inference`)."""
    recorded = meta.get("state_layout")
    if recorded:
        return StateLayout.from_dict(recorded)
    return LEGACY_LAYOUT if meta.get("state_format") == LEGACY_STATE_FORMAT else PLAIN_LAYOUT


def policy_world(world: Mapping[str, Any]) -> dict[str, Any]:
    """The world a bundle or checkpoint records, with the state format ``twx/1`` where it records neither a
    layout nor a format (policies written before either was recorded)."""
    out = dict(world)
    if not out.get("state_layout") and not out.get("state_format"):
        out["state_format"] = LEGACY_STATE_FORMAT
    return out


def state_format_of(meta: Mapping[str, Any]) -> str:
    """The state format a trajectory or manifest records ("" if none: a user's own log)."""
    return str(meta.get("state_format") or "")
