"""What a step adds to what its episode knows: the features of the success-model potential.

A step is read from text alone, through the layout its trajectory records (:mod:`models.state_layout`):
the action, the world's response to it (:meth:`models.state_layout.StateLayout.response`, the one
definition), and the **episode so far** (the instruction, every state and response before the step). On a
log whose states show only the last response, the episode so far is what the agent knows; on a full-state
log it adds little. No world's words are written here.

Per step, a set of feature names:

- the action itself (``a:``), and with its response's template (``at:``): the response's first sentence
  with the words naming the action's arguments as ``{x}`` and digits as ``#``;
- the verb with the template (``vt:``) and the template alone (``t:``), shared by every argument;
- the verb with where its argument was named (``vn:``): in the instruction, earlier in the episode
  (something the episode has shown), or nowhere yet;
- the verb with whether the response is new to the episode (``vr:``): a response seen before reports
  nothing new.

Every name comes twice: shared by all task types (``*|``) and for the step's task type (``TASK|``), so a
model fit on a log of several task types pools what they share and keeps what is their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from models.actions import normalise, parse_action, text_words
from models.trajectory import Trajectory

_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
TEMPLATE_CHARS = 80
"""A template longer than this is cut: the start of a long description says what kind of answer it is."""


def template(response: str, words: tuple[str, ...] = ()) -> str:
    """A response's template: the action's argument ``words``
    (:attr:`models.actions.Action.argument_words`) as ``{x}``, digits as ``#``, its first
    sentence, at most :data:`TEMPLATE_CHARS` characters (``-`` for no response)."""
    t = normalise(response)
    if not t:
        return "-"
    t = _SENTENCE_END.split(t, maxsplit=1)[0]
    if words:
        t = re.sub(
            r"\b(?:" + "|".join(map(re.escape, sorted(set(words), key=len, reverse=True))) + r")\b", "{x}", t
        )
        t = re.sub(r"\{x\}(?: \{x\})+", "{x}", t)
    return _DIGITS.sub("#", t)[:TEMPLATE_CHARS]


def named(words: tuple[str, ...], text_words: set[str]) -> bool:
    """Whether every argument word appears among ``text_words``."""
    return bool(words) and all(w in text_words for w in words)


ONCE = ("a:", "at:")
"""Kinds of feature a prefix counts once (doing a thing, and doing it with that outcome: a repeat adds no
evidence); every other kind (the verb's template, where its argument was named, a repeated response) a prefix
counts each time it occurs."""


def counted_once(name: str) -> bool:
    """Whether a prefix counts the feature ``name`` (``SCOPE|KIND:...``) once (:data:`ONCE`)."""
    return name.partition("|")[2].startswith(ONCE)


def step_features(traj: Trajectory) -> Iterator[frozenset[str]]:
    """Each step's feature names (see the module docstring), oldest first."""
    task = traj.task_type or "-"
    instruction = set(text_words(traj.instruction))
    responses = traj.view.responses
    known = set(instruction)
    seen: set[str] = set()
    for s, response in zip(traj.steps, responses, strict=True):
        action = normalise(s.action)
        parsed = parse_action(action)
        verb, words = parsed.verb, parsed.argument_words
        tpl = template(response, words)
        known |= set(text_words(s.observation))
        where = (
            "instruction" if named(words, instruction) else "episode" if named(words, known) else "nowhere"
        )
        reply = normalise(response)
        names = (
            f"a:{action}",
            f"at:{action}|{tpl}",
            f"vt:{verb}|{tpl}",
            f"t:{tpl}",
            f"vn:{verb}|{where}",
            f"vr:{verb}|{'repeated' if reply in seen else 'new'}",
        )
        seen.add(reply)
        known |= set(text_words(reply))
        yield frozenset(f"{scope}|{n}" for n in names for scope in ("*", task))
