"""The structured policy's view of a state: the state text's parts as items, and the episode so far as memory.

A state text is read through its :class:`models.state_layout.StateLayout` (recorded with every dataset and
bundle), never through knowledge of a world:

- every ``Label: value`` line of a layout part gives items of that part's *kind* (its position in the layout,
  from 1): a list-like part (``Part.items``, e.g. an inventory or the recent actions) one item per
  comma-separated entry, any other part one item per *piece*: a sentence, or, for a sentence that is a
  heading with a list (``Ingredients: red apple, flour.``), one piece per entry (``Ingredients: red apple``);
- a line that belongs to no part gives pieces of the kind after the layout's parts (so a plain text, with no
  labelled line at all, is read as pieces of that one kind);
- *facts*: the distinct pieces of the responses earlier in the episode that the state no longer shows, most
  recent first, are items of the kind after that (what a recipe read ten steps ago asks for);
- kind 0 is padding.

The memory is the episode so far: for each earlier step the action taken and the *response* it got, which
is the ``feedback`` part of the state it led to (the whole state text when the layout has no such part or
the text does not show it), most recent first. Both sides (training in ``policy/``, serving in ``edge/``)
build a policy's inputs here, so they cannot drift apart. Stdlib only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from models.state_layout import StateLayout

FEEDBACK_PART = "feedback"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_HEADED_LIST = re.compile(r"^(?P<head>[^:.!?]{1,60}):\s*(?P<body>.+,.+)$")


@dataclass(frozen=True)
class StateEncoding:
    """How many items and memory steps a policy reads; recorded in its checkpoint and bundle."""

    max_items: int = 48
    """Items of the current state kept (in text order; the rest are dropped)."""
    memory: int = 32
    """Earlier steps of the episode kept (the most recent ones)."""
    facts: int = 32
    """Distinct pieces of earlier responses kept as items (the most recent ones; 0: none)."""

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> StateEncoding:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ValueError(f"unknown state encoding key(s): {', '.join(unknown)}")
        enc = cls(**{k: int(v) for k, v in raw.items()})
        if enc.max_items < 1 or enc.memory < 0 or enc.facts < 0:
            raise ValueError(f"state encoding needs max_items >= 1, memory >= 0 and facts >= 0, got {enc}")
        return enc

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def kinds_of(layout: StateLayout) -> int:
    """The number of item kinds a layout gives, padding included (parts, unlabelled lines, facts, padding)."""
    return len(layout.parts) + 3


def fact_kind(layout: StateLayout) -> int:
    return len(layout.parts) + 2


def sentences(text: str) -> list[str]:
    """``text`` cut after every ``.``, ``!`` or ``?`` followed by white space; empty pieces dropped."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s]


def list_items(text: str) -> list[str]:
    """The comma-separated entries of ``text`` (white space trimmed, empty entries dropped)."""
    return [s for s in (p.strip() for p in text.split(",")) if s]


def pieces(text: str) -> list[str]:
    """The sentences of ``text``; a sentence ``Heading: a, b, c.`` as ``Heading: a``, ``Heading: b``, ..."""
    out: list[str] = []
    for sentence in sentences(text):
        m = _HEADED_LIST.match(sentence)
        if m is None:
            out.append(sentence)
            continue
        head = m["head"].strip()
        out.extend(f"{head}: {e}" for e in list_items(m["body"].rstrip(".!?")))
    return out


def state_items(
    layout: StateLayout, text: str, max_items: int = StateEncoding.max_items
) -> list[tuple[int, str]]:
    """``(kind, text)`` items of a state text, in text order, at most ``max_items`` (see the module
    docstring)."""
    other = len(layout.parts) + 1
    out: list[tuple[int, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        kind, value, listed = other, line, False
        for i, p in enumerate(layout.parts, start=1):
            if line.startswith(p.prefix) or line == p.label + ":":
                kind, value, listed = i, line[len(p.prefix) :].strip(), p.items
                break
        found = list_items(value) if listed else pieces(value)
        out.extend((kind, piece) for piece in found)
        if len(out) >= max_items:
            return out[:max_items]
    return out


def memory_facts(
    layout: StateLayout, memory: Sequence[tuple[str, str]], shown: Sequence[tuple[int, str]], size: int
) -> list[tuple[int, str]]:
    """``(fact kind, piece)`` for the distinct pieces of the responses in ``memory`` (``(action, observation
    it led to)`` pairs, oldest first) that the current state's items ``shown`` do not hold, most recent
    first, at most ``size``."""
    if size <= 0:
        return []
    kind = fact_kind(layout)
    seen = {t for _k, t in shown}
    out: list[tuple[int, str]] = []
    for _action, observation in reversed(list(memory)):
        for piece in _response_pieces(layout, observation):
            if piece not in seen:
                seen.add(piece)
                out.append((kind, piece))
                if len(out) >= size:
                    return out
    return out


@functools.lru_cache(maxsize=4096)
def response_of(layout: StateLayout, observation: str) -> str:
    """What a state text says in response to the action that led to it: its ``feedback`` part, else the whole
    text (a layout without that part, or a text that does not show it). Cached: a memory's observations are
    read again at every later step of the episode."""
    if FEEDBACK_PART in layout.names:
        found = layout.parse(observation).get(FEEDBACK_PART)
        if found is not None:
            return found
        if layout.is_structured(observation):
            return ""  # a structured state without a response line: the action drew no new text
    return " ".join(observation.split())


@functools.lru_cache(maxsize=4096)
def _response_pieces(layout: StateLayout, observation: str) -> tuple[str, ...]:
    return tuple(pieces(response_of(layout, observation)))


def memory_items(
    layout: StateLayout, memory: Sequence[tuple[str, str]], size: int = StateEncoding.memory
) -> list[tuple[str, str]]:
    """``(action, response)`` of the last ``size`` steps of ``memory`` (``(action, observation it led to)``
    pairs, oldest first), most recent first."""
    if size <= 0:
        return []
    return [(a, response_of(layout, o)) for a, o in reversed(list(memory)[-size:])]
