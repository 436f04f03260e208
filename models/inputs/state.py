"""The structured policy's view of a state: the state text's parts as items, and the episode so far as memory.

A state text is read through its :class:`models.state_layout.StateLayout` (recorded with every dataset and
bundle), never through knowledge of a world:

- every line of a layout part (:meth:`StateLayout.part_of`) gives items of that part's *kind* (its position in
  the layout, from 1): a list-like part (``Part.items``, e.g. an inventory or the recent actions) one item per
  comma-separated entry, any other part one item per *piece*: a sentence, or, for a sentence that is a
  heading with a list (``Ingredients: red apple, flour.``), one piece per entry (``Ingredients: red apple``);
- a line that belongs to no part gives pieces of the kind after the layout's parts (so a plain text, with no
  labelled line at all, is read as pieces of that one kind);
- *facts*: the distinct pieces of the responses in the memory window that the state no longer shows, most
  recent first, are items of the kind after that (what a recipe read ten steps ago asks for);
- kind 0 is padding.

The *memory window* is what the policy reads of the episode so far (``(action, observation it led to)`` pairs,
oldest first): the last :attr:`StateEncoding.horizon` pairs, which are the last ``memory`` steps and the pair
before them (its observation is the state the oldest step's response is measured against). Each step becomes
``(action, response)``, the response being :meth:`StateLayout.response` (the one definition, shared with the
labelers). Both the memory items and the facts come from this window and nothing older, so a client that keeps
only the last ``horizon`` pairs (the daemon's ``info`` reports it as ``memory``) gives the policy exactly the
inputs that the whole episode gives. Both sides (training in ``policy/``, serving in ``edge/``) build a
policy's inputs here, so they cannot drift apart. Stdlib only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, TypeVar

from models.state_layout import StateLayout, sentences

_HEADED_LIST = re.compile(r"^(?P<head>[^:.!?]{1,60}):\s*(?P<body>.+,.+)$")

Memory = Sequence[tuple[str, str]]
"""The episode so far: ``(action, observation it led to)`` per earlier step, oldest first."""

_Config = TypeVar("_Config")


def config_from_dict(cls: type[_Config], raw: dict[str, Any], what: str) -> _Config:
    """``cls(**raw)`` for a dataclass ``cls``; ValueError naming the unknown keys of ``what``."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"unknown {what} key(s): {', '.join(unknown)}")
    return cls(**raw)


@dataclass(frozen=True)
class StateEncoding:
    """How many items and memory steps a policy reads; recorded in its checkpoint and bundle."""

    max_items: int = 48
    """Items of the current state kept (in text order; the rest are dropped)."""
    memory: int = 32
    """Earlier steps of the episode kept (the most recent ones)."""
    facts: int = 32
    """Distinct pieces of the memory window's responses kept as items (the most recent ones; 0: none)."""

    def __post_init__(self) -> None:
        if self.max_items < 1 or self.memory < 0 or self.facts < 0:
            raise ValueError(f"state encoding needs max_items >= 1, memory >= 0 and facts >= 0, got {self}")

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> StateEncoding:
        return config_from_dict(cls, {k: int(v) for k, v in raw.items()}, "state encoding")

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @property
    def horizon(self) -> int:
        """The latest ``(action, observation)`` pairs of an episode the policy reads (see the module
        docstring): ``memory + 1``, or 0 when it reads no memory. Older pairs change nothing."""
        return self.memory + 1 if self.memory else 0


def kinds_of(layout: StateLayout) -> int:
    """The number of item kinds a layout gives, padding included (parts, unlabelled lines, facts, padding)."""
    return len(layout.parts) + 3


def fact_kind(layout: StateLayout) -> int:
    return len(layout.parts) + 2


def check_kinds(layout: StateLayout, kinds: int, where: str) -> None:
    """ValueError when a policy with ``kinds`` rows of item-kind embedding cannot read ``layout``'s items."""
    if kinds_of(layout) > kinds:
        raise ValueError(
            f"{where}: the state layout has {len(layout.parts)} parts, whose items need {kinds_of(layout)} "
            f"item kinds, and the policy has {kinds} (room for a layout of at most {kinds - 3} parts)"
        )


def list_items(text: str) -> list[str]:
    """The comma-separated entries of ``text`` (white space collapsed, empty entries dropped)."""
    return [s for s in (" ".join(p.split()) for p in text.split(",")) if s]


def pieces(text: str) -> list[str]:
    """The sentences of ``text``; a sentence ``Heading: a, b, c.`` as ``Heading: a``, ``Heading: b``, ..."""
    return list(_pieces(text))


@functools.lru_cache(maxsize=8192)
def _pieces(text: str) -> tuple[str, ...]:
    """:func:`pieces`, cached: the memory's responses are read again at every later step of an episode."""
    out: list[str] = []
    for sentence in sentences(text):
        m = _HEADED_LIST.match(sentence)
        if m is None:
            out.append(sentence)
            continue
        head = m["head"].strip()
        out.extend(f"{head}: {e}" for e in list_items(m["body"].rstrip(".!?")))
    return tuple(out)


def state_items(
    layout: StateLayout, text: str, max_items: int = StateEncoding.max_items
) -> list[tuple[int, str]]:
    """``(kind, text)`` items of a state text, in text order, at most ``max_items`` (see the module
    docstring)."""
    other = len(layout.parts) + 1
    kind_of = {p.name: i for i, p in enumerate(layout.parts, start=1)}
    out: list[tuple[int, str]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        found = layout.part_of(line)
        if found is None:
            kind, value, listed = other, line, False
        else:
            kind, value, listed = kind_of[found[0].name], found[1], found[0].items
        out.extend((kind, piece) for piece in (list_items(value) if listed else pieces(value)))
        if len(out) >= max_items:
            return out[:max_items]
    return out


def memory_window(layout: StateLayout, encoding: StateEncoding, memory: Memory) -> list[tuple[str, str]]:
    """``(action, response)`` of the steps the policy reads (the module docstring's window), oldest first."""
    if not encoding.horizon:
        return []
    window = list(memory)[-encoding.horizon :]
    answers = layout.responses(window)
    start = len(window) - encoding.memory if len(window) > encoding.memory else 0
    return [(a, r) for (a, _o), r in zip(window[start:], answers[start:], strict=True)]


def memory_facts(
    layout: StateLayout, steps: Sequence[tuple[str, str]], shown: Sequence[tuple[int, str]], size: int
) -> list[tuple[int, str]]:
    """``(fact kind, piece)`` for the distinct pieces of the responses of ``steps`` (``(action, response)``,
    oldest first) that the current state's items ``shown`` do not hold, most recent first, at most
    ``size``."""
    if size <= 0:
        return []
    kind = fact_kind(layout)
    seen = {t for _k, t in shown}
    out: list[tuple[int, str]] = []
    for _action, response in reversed(steps):
        for piece in _pieces(response):
            if piece not in seen:
                seen.add(piece)
                out.append((kind, piece))
                if len(out) >= size:
                    return out
    return out
