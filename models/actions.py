"""Text actions: the one parser of ``verb object [preposition target]`` commands and the one set of word
lists.

A text command is read as words separated by white space: the first is the **verb**; the words after it are
its **arguments**. The arguments split into an **object** and a **target** at the first preposition that has
words before and after it (``put dirty plate in dishwasher`` -> ``dirty plate`` / ``in`` / ``dishwasher``;
``go to kitchen`` has the object ``to kitchen`` and no target; ``put in`` the object ``in``). ``of`` is not a
preposition here: it is part of object names (``box of cereal``, ``pair of socks``).

Every reader of an action takes what it needs from one :class:`Action`:

- the candidate features embed the object and the target apart (:mod:`models.inputs.candidates`);
- the rubric miner abstracts the object and the target out of responses (:mod:`labeler.trca.mine`);
- COREN's structural question set names the **phrases** an action acts on: the arguments cut at every
  preposition, a leading article dropped (``take the apple from the table`` -> ``apple``, ``table``);
- the success-model potential and the partial-state rule match the **argument words** against the words of
  a text: the arguments' :func:`text_words` without :data:`FILLERS` (``go to the kitchen`` -> ``kitchen``);
- the per-verb decision accuracy, the rubric grounding and COREN's examples group by the verb.

The parse is of lower-case text (:func:`normalise`: lower case, white space collapsed) unless the caller
keeps the case (``keep_case=True``: the candidate features embed the words as written; there only lower-case
prepositions split, as features have always been made, so a bundle's features do not change). Nothing here
knows a world: the word lists are English function words. Stdlib only.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

PREPOSITIONS = ("in", "into", "on", "onto", "from", "with", "to", "at", "under")
"""Words that separate an action's object from its target."""
ARTICLES = frozenset({"a", "an", "some", "the"})
"""Words that name no thing: dropped from the start of a phrase, from argument words, from an unordered state
part's bag of words (:func:`models.state_layout.bag_of_words`)."""
FILLERS = ARTICLES | frozenset(PREPOSITIONS) | {"of"}
"""Words that are no argument word (:attr:`Action.argument_words`)."""
WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
"""A word of a lower-case text, as the argument words are matched against texts."""


def normalise(text: str) -> str:
    """A text as actions and responses are compared: lower case, white space collapsed."""
    return " ".join(text.lower().split())


def text_words(text: str) -> list[str]:
    """The words of ``text`` (:data:`WORD`, lower case), in order."""
    return WORD.findall(text.lower())


@dataclass(frozen=True)
class Action:
    """A parsed action (see the module docstring); ``""`` for a part it does not have."""

    verb: str
    object: str
    preposition: str
    target: str
    arguments: tuple[str, ...]
    """The words after the verb, in order: ``" ".join((verb, *arguments))`` is the action."""

    @property
    def phrases(self) -> tuple[str, ...]:
        """The arguments cut at every preposition, each without a leading article when words follow it;
        empty pieces left out (``go to the kitchen`` -> ``kitchen``; ``look around`` -> ``around``)."""
        out: list[str] = []
        piece: list[str] = []
        for w in (*self.arguments, PREPOSITIONS[0]):
            if w not in PREPOSITIONS:
                piece.append(w)
                continue
            if len(piece) > 1 and piece[0] in ARTICLES:
                piece = piece[1:]
            if piece:
                out.append(" ".join(piece))
            piece = []
        return tuple(out)

    @property
    def argument_words(self) -> tuple[str, ...]:
        """The words that name the arguments: the arguments' :func:`text_words` without :data:`FILLERS`
        (``move egg to blue box`` -> ``egg``, ``blue``, ``box``)."""
        return tuple(w for w in text_words(" ".join(self.arguments)) if w not in FILLERS)


@functools.lru_cache(maxsize=65536)
def parse_action(action: str, *, keep_case: bool = False) -> Action:
    """The :class:`Action` of a text command: of its :func:`normalise`\\ d text, or with ``keep_case`` of its
    words as written (white space collapsed; only lower-case prepositions split). Cached: a log repeats its
    actions and candidates."""
    words = action.split() if keep_case else normalise(action).split()
    if not words:
        return Action("", "", "", "", ())
    rest = tuple(words[1:])
    for i in range(1, len(rest) - 1):
        if rest[i] in PREPOSITIONS:
            return Action(words[0], " ".join(rest[:i]), rest[i], " ".join(rest[i + 1 :]), rest)
    return Action(words[0], " ".join(rest), "", "", rest)


def verb_of(action: str) -> str:
    """The verb of an action, lower case (``""`` for an empty action)."""
    return parse_action(action).verb


def argument_words(action: str) -> tuple[str, ...]:
    """:attr:`Action.argument_words` of ``action``."""
    return parse_action(action).argument_words
