"""Candidate features: how a candidate action's text becomes the scorer's per-candidate input.

Three kinds, recorded in a bundle's manifest (``candidate_features``) and a checkpoint's scorer config:

- ``action``: the sentence embedding of the whole action text, ``[D]`` per candidate.
- ``action+arguments``: the sentence embedding of the action, of its object and of its target, ``[3D]`` per
  candidate (zeros where the action has no such argument). Text commands are ``verb object [preposition
  target]`` ("put dirty plate in dishwasher", "take apple", "open fridge"); embedding the object and the
  target apart lets the scorer learn *which object goes with which target* from pretrained word knowledge,
  so it transfers to objects it never saw in training. A single sentence embedding blurs the two together.
- ``action+arguments+location``: the same ``[3D]``, but an action without a target ("take notebook", "examine
  cookbook") gets, as its target, *where the observation says its object is* (:func:`locate`: "a desk that has
  a notebook on it" -> "desk"). The object-target affinity then also scores taking an object from where it
  belongs, which a policy should not do, and taking it from where it does not belong, which it should: a
  sentence embedding of a 150-token room text does not say where each object lies.

This module is the single place both sides (training in ``policy/``, serving in ``edge/``) split actions and
assemble the features, so they cannot drift apart. The kinds themselves are defined in
``models.candidates``. Stdlib, numpy and ``models`` only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from models.candidates import (  # noqa: F401  (the kinds live in models; re-exported here)
    CANDIDATE_FEATURES,
    DEFAULT_CANDIDATE_FEATURES,
    LOCATION_FEATURES,
    parts_of,
)

# Prepositions that separate the object from the target in TextWorld-style commands. "of" is absent on
# purpose: it is part of object names ("box of cereal", "pair of socks").
PREPOSITIONS = ("in", "into", "on", "onto", "from", "with", "to", "at", "under")


def split_action(action: str) -> tuple[str, str]:
    """``(object, target)`` of a ``verb object [preposition target]`` command; ``""`` where absent.

    The first word is the verb; the object runs to the first preposition that is followed by more words.
    """
    words = action.split()
    if len(words) < 2:
        return "", ""
    rest = words[1:]
    for i in range(1, len(rest) - 1):
        if rest[i] in PREPOSITIONS:
            return " ".join(rest[:i]), " ".join(rest[i + 1 :])
    return " ".join(rest), ""


# "a desk that has a notebook, and a pen on it", "An open fridge, that contains a pie": TextWorld's room text.
_RECEPTACLE = re.compile(r"^(?P<before>.*?),?\s+that\s+(?:has|contains)\s+(?P<contents>.+)$", re.IGNORECASE)
_ARTICLES = frozenset({"a", "an", "the"})
_STATES = frozenset({"open", "closed"})


def receptacles(observation: str) -> list[tuple[str, str]]:
    """``(receptacle, contents)`` of every sentence of the form "... a RECEPTACLE[,] that has|contains
    CONTENTS" (TextWorld's room descriptions); the receptacle without its article or an open/closed word."""
    out = []
    for sentence in re.split(r"[.\n]", observation):
        m = _RECEPTACLE.match(sentence.strip())
        if m is None:
            continue
        words = m.group("before").split()
        starts = [i for i, w in enumerate(words) if w.lower() in _ARTICLES]
        if not starts:
            continue
        holder = words[starts[-1] + 1 :]
        if holder and holder[0].lower() in _STATES:
            holder = holder[1:]
        out.append((" ".join(holder), m.group("contents")))
    return out


def locate(obj: str, observation: str | list[tuple[str, str]]) -> str:
    """Where ``observation`` (or its :func:`receptacles`) says ``obj`` is: the first receptacle whose contents
    name it; ``""`` when none does (an object on the floor, an unknown text format)."""
    if not obj:
        return ""
    named = re.compile(r"(?<![\w-])" + re.escape(obj) + r"(?![\w-])", re.IGNORECASE)
    found = receptacles(observation) if isinstance(observation, str) else observation
    return next((holder for holder, contents in found if named.search(contents)), "")


def candidate_texts(kind: str, candidates: Sequence[str], observation: str = "") -> list[str]:
    """The texts to embed for these candidates, ``parts_of(kind)`` per candidate in order (``""`` = none).

    ``observation`` is the state text the candidates were offered in; only ``action+arguments+location``
    reads it."""
    p = parts_of(kind)
    if p == 1:
        return list(candidates)
    found = receptacles(observation) if kind == LOCATION_FEATURES else None
    out: list[str] = []
    for c in candidates:
        obj, target = split_action(c)
        if found is not None and not target:
            target = locate(obj, found)
        out.extend((c, obj, target))
    return out


def assemble(texts: Sequence[str], present: np.ndarray, parts: int, dim: int) -> np.ndarray:
    """float32 ``[K, parts*dim]`` from :func:`candidate_texts`' output and the vectors of its non-empty texts,
    in order (``present`` [number of non-empty texts, dim]); empty parts are zero vectors."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    out[[i for i, t in enumerate(texts) if t]] = present
    return out.reshape(len(texts) // parts, parts * dim)


def candidate_matrix(
    kind: str,
    candidates: Sequence[str],
    embed: Callable[[list[str]], np.ndarray],
    dim: int,
    observation: str = "",
) -> np.ndarray:
    """float32 ``[K, parts*dim]`` features of ``candidates`` (offered in ``observation``); ``embed(texts) ->
    [N, dim]`` is called once with the distinct non-empty texts. Empty parts are zero vectors."""
    texts = candidate_texts(kind, candidates, observation)
    unique = list(dict.fromkeys(t for t in texts if t))
    present = np.zeros((0, dim), dtype=np.float32)
    if unique:
        vecs = embed(unique)
        row = {t: i for i, t in enumerate(unique)}
        present = vecs[[row[t] for t in texts if t]]
    return assemble(texts, present, parts_of(kind), dim)
