"""A state layout for a log that records none, inferred from its state texts, with the reason in one line.

A user's own log need not say how its states are laid out. Reading it with a layout that does not fit it
(another world's labels) makes every check look for parts that are not there, so a file without a recorded
layout gets one that fits its text:

- **``Label: value`` lines**: labels that start a line in a good share of the states, at most once per state,
  and together cover most of their lines become the layout's parts, in the order the states show them. A
  part's role comes from its label: a response (``Feedback``, ``Response``, ``Result``, ``Message``,
  ``Outcome``, ``Event``) is the world's answer to the last action; an inventory (``Inventory``, ``Holding``,
  ``Carrying``, ``Gripper``, ``In hand``) is a world part read as a bag of items; recent actions
  (``Recent actions``, ``History``, ``Previous actions``, ``Last actions``) are listed actions, not world.
  Every other part is a world part; a comma list is read entry by entry.
- otherwise the **plain layout**: the whole text is the world state, and a step's response is what its next
  state adds to its state (:data:`models.state_layout.PLAIN_LAYOUT`).

The state format ``twx/1`` (recorded before layouts were) is never guessed: only a file that says so is read
with :data:`models.state_layout.LEGACY_LAYOUT`. Stdlib only.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable

from models.state_layout import PLAIN_LAYOUT, Part, StateLayout, labelled_line

_LABEL = re.compile(r"[A-Z][A-Za-z0-9 '()/_-]{0,39}")
"""What a label looks like to inference (on lines of the one labelled-line shape,
:func:`models.state_layout.labelled_line`): a capitalised short name, not the start of a sentence with a
colon."""
_ROLES = (
    ("feedback", re.compile(r"^(feedback|response|result|message|outcome|event)s?\b", re.IGNORECASE)),
    ("history", re.compile(r"^(recent actions|history|previous actions|last actions)\b", re.IGNORECASE)),
    ("inventory", re.compile(r"^(inventory|holding|carrying|carried|gripper|in hand)\b", re.IGNORECASE)),
)
MIN_SHARE = 0.2
"""A label must start a line in at least this share of the states."""
MIN_COVER = 0.6
"""The labelled lines must be at least this share of all non-empty lines."""


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_") or "part"


def _role(label: str) -> str | None:
    return next((role for role, rx in _ROLES if rx.match(label)), None)


def _listed(values: list[str]) -> bool:
    """Whether a part's values read as comma lists of short entries (not sentences with commas)."""
    lists = [v for v in values if "," in v and ". " not in v]
    if len(lists) < 0.5 * len(values):
        return False
    entries = [e for v in lists for e in v.split(",") if e.strip()]
    return sum(len(e.split()) for e in entries) <= 4 * len(entries)


def infer_layout(texts: Iterable[str]) -> tuple[StateLayout, str]:
    """The layout that fits ``texts`` (state texts of one log) and why, in one line."""
    states = [t for t in texts if t and t.strip()]
    if not states:
        return PLAIN_LAYOUT, "plain text (the log has no state text to read a layout from)"
    seen: Counter[str] = Counter()
    repeated: Counter[str] = Counter()
    positions: dict[str, list[int]] = defaultdict(list)
    values: dict[str, list[str]] = defaultdict(list)
    lines_total = 0
    for text in states:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        lines_total += len(lines)
        here: Counter[str] = Counter()
        for i, ln in enumerate(lines):
            found = labelled_line(ln)
            if found and _LABEL.fullmatch(found[0]):
                label, value = found
                here[label] += 1
                positions[label].append(i)
                values[label].append(value)
        seen.update(here.keys())
        repeated.update(k for k, v in here.items() if v > 1)
    labels = [lb for lb, n in seen.items() if n >= MIN_SHARE * len(states) and repeated[lb] <= 0.05 * n]
    covered = sum(len(values[lb]) for lb in labels)
    if not labels or covered < MIN_COVER * lines_total:
        why = (
            f"only {covered} of {lines_total} lines are 'Label: value' lines that repeat across states"
            if labels
            else "no 'Label: value' line repeats across its states"
        )
        return PLAIN_LAYOUT, (
            f"plain text ({why}): the whole state is the world state, a step's response is what its next "
            "state adds"
        )
    labels.sort(key=lambda lb: (statistics.median(positions[lb]), lb))
    parts: list[Part] = []
    used: set[str] = set()
    for lb in labels:
        role = _role(lb)
        name = role if role and role not in used else _slug(lb)
        while name in used:
            name += "_"
        used.add(name)
        listed = _listed(values[lb])
        if role == "feedback" and name == "feedback":
            parts.append(Part(name, lb))
        elif role == "history" and name == "history":
            parts.append(Part(name, lb, items=True))
        elif role == "inventory" and name == "inventory":
            parts.append(Part(name, lb, world=True, unordered=True, items=True))
        else:
            parts.append(Part(name, lb, world=True, items=listed))
    if not any(p.world for p in parts):
        return PLAIN_LAYOUT, (
            f"plain text (its labelled lines {', '.join(labels)} hold no world state): the whole state is "
            "the world state, a step's response is what its next state adds"
        )
    roles = {"feedback": "the response", "history": "recent actions", "inventory": "held items, a bag"}
    desc = ", ".join(
        f"{p.label} ({roles.get(p.name) or ('world, a list' if p.items else 'world')})" for p in parts
    )
    return StateLayout(tuple(parts)), f"read from its 'Label: value' lines: {desc}"
