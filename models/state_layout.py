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

Parts marked ``world`` make the *world state* (what "the state changed" and the loop guard's episode memory
compare); an ``unordered`` world part is compared as a bag of words, commas ignored (items listed in the
order they were taken are the same world). A text with none of the world parts is read as plain text: its
whole text is the feedback and the world state. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_WORDS = re.compile(r"[\s,]+")
"""What separates the words of an unordered part (a comma-separated list reads as the same bag)."""


@dataclass(frozen=True)
class Part:
    name: str
    label: str
    world: bool = False
    unordered: bool = False
    items: bool = False
    """Its value is a comma-separated list (an inventory, the recent actions): the structured policy reads
    each entry as an item of its own (:mod:`models.state_items`)."""

    @property
    def prefix(self) -> str:
        return f"{self.label}: "


@dataclass(frozen=True)
class StateLayout:
    """An ordered list of :class:`Part`; see the module docstring."""

    parts: tuple[Part, ...]

    def __post_init__(self) -> None:
        names = [p.name for p in self.parts]
        if len(set(names)) != len(names) or len({p.label for p in self.parts}) != len(names):
            raise ValueError(f"state layout with repeated part names or labels: {names}")
        if not any(p.world for p in self.parts):
            raise ValueError("a state layout needs at least one world part")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parts)

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
            for p in self.parts:
                if line.startswith(p.prefix) or line == p.label + ":":
                    out.setdefault(p.name, line[len(p.prefix) :].strip())
                    break
        return out

    def is_structured(self, text: str) -> bool:
        """Whether ``text`` has at least one of the world parts."""
        found = self.parse(text)
        return any(p.world and p.name in found for p in self.parts)

    def world_key(self, text: str) -> str:
        """The world lines of ``text`` (in its order; unordered parts as sorted words), for telling whether
        two state texts show the same world state; the whole text if it has no world line."""
        lines = []
        for ln in text.splitlines():
            for p in self.parts:
                if not p.world or not ln.startswith(p.label + ":"):
                    continue
                if p.unordered:
                    ln = p.prefix + " ".join(sorted(w for w in _WORDS.split(ln[len(p.label) + 1 :]) if w))
                lines.append(ln)
                break
        return "\n".join(lines) if lines else text

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
    """The layout a trajectory (its ``meta``) or a bundle manifest records; :data:`LEGACY_LAYOUT` if none."""
    recorded = meta.get("state_layout")
    return StateLayout.from_dict(recorded) if recorded else LEGACY_LAYOUT


def state_format_of(meta: Mapping[str, Any]) -> str:
    """The state format a trajectory or manifest records; :data:`LEGACY_STATE_FORMAT` if none."""
    return str(meta.get("state_format") or LEGACY_STATE_FORMAT)
