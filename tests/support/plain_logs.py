"""States of a plain log (no layout) that echo the episode's recent actions, for the world key's cross-reader
tests: the layout's key with the episode's actions, the Python loop guard's and the C++ guard's
(tests/models/test_state_layout.py, tests/edge/test_loop_guard.py, tests/edge/test_cpp.py).

The texts mix sentences, pieces that happen to read as an action, echoes in any case and spacing, and every
line break and white space character Python's ``str.splitlines`` and ``str.split`` know (ASCII and not).
Letters are ASCII or lower-case: the C++ key folds the case of ASCII letters only (docs/cpp.md).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

ACTIONS = ("look around", "take cup", "open door", "put cup on table", "Wait", "go  north")
"""Candidate actions, some with upper case or doubled spaces (the key normalises both)."""

SENTENCES = (
    "You are in the kitchen.",
    "A table with a cup.",
    "The door is open!",
    "Is it dark?",
    "cup",
    "Nothing happens",
    "none.",
    "look around",
    "take cup, wait.",
    "café au lait...",
    "Hall: a bench.",
    ",",
)
"""Pieces of a state: sentences, and pieces that list actions only when the episode took them."""

SPACES = (" ", "  ", "\t", " \t ", "\xa0", "\u2003", "\u3000", "\x1f", "\u202f")
BREAKS = ("\n", "\r\n", "\r", "\n\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def echo(rng: random.Random, taken: Sequence[str]) -> str:
    """The last few of ``taken`` as a log lists them (comma-separated, any case and spacing), or "none"."""
    if not taken:
        return rng.choice(["none", "None", "NONE."])
    recent = list(taken)[-rng.randint(1, 3) :]
    cased = [rng.choice([a, a.upper(), a.title(), a.replace(" ", rng.choice(SPACES))]) for a in recent]
    return rng.choice([", ", ",", " , ", ","]).join(cased) + rng.choice(["", ".", "..", " "])


def plain_state(rng: random.Random, taken: Sequence[str]) -> str:
    """A state text after the actions ``taken``: a few sentences and echoes joined by white space or line
    breaks, with white space around them."""
    pieces = rng.sample(SENTENCES, rng.randint(0, 4))
    for _ in range(rng.choice([0, 1, 1, 2])):
        pieces.insert(rng.randint(0, len(pieces)), echo(rng, taken))
    text = ""
    for i, piece in enumerate(pieces):
        text += (rng.choice(SPACES + BREAKS) if i else rng.choice(("", *SPACES))) + piece
    return text + rng.choice(("", *SPACES, *BREAKS))
