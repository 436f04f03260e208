"""Candidate features: how a candidate action's text becomes the scorer's per-candidate input.

Two kinds, recorded in a bundle's manifest (``candidate_features``) and a checkpoint's scorer config:

- ``action``: the sentence embedding of the whole action text, ``[D]`` per candidate.
- ``action+arguments``: the sentence embedding of the action, of its object and of its target, ``[3D]`` per
  candidate (zeros where the action has no such argument). Text commands are ``verb object [preposition
  target]`` ("put dirty plate in dishwasher", "take apple", "open fridge"); embedding the object and the
  target apart lets the scorer learn *which object goes with which target* from pretrained word knowledge,
  so it transfers to objects it never saw in training. A single sentence embedding blurs the two together.

No kind reads the state text: the features of a candidate depend on its own text only, so the runtime needs
to know nothing about the world it serves. (A former kind, ``action+arguments+location``, read objects' places
from TextWorld's room text; it was retired, and bundles that use it are refused with that reason.)

This module is the single place both sides (training in ``policy/``, serving in ``edge/``) name the kinds and
assemble the features, so they cannot drift apart; the object and the target are those of the one action
parser (:func:`models.actions.parse_action`, with the words' case kept). Stdlib and numpy only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from models.actions import parse_action

CANDIDATE_FEATURES: dict[str, int] = {"action": 1, "action+arguments": 3}
"""Known kinds and how many D-sized parts each candidate vector has."""
DEFAULT_CANDIDATE_FEATURES = "action"
"""What a bundle or checkpoint that does not say uses (the format before argument features)."""
RETIRED: dict[str, str] = {
    "action+arguments+location": "it read objects' places from TextWorld's room text, and the runtime reads "
    "no world's text; retrain with candidate_features=action+arguments",
}
"""Kinds that are no longer served, and why."""


def parts_of(kind: str) -> int:
    """How many D-sized parts a candidate vector of this kind has; ValueError for an unknown kind."""
    if kind in RETIRED:
        raise ValueError(f"candidate features {kind!r} are retired: {RETIRED[kind]}")
    try:
        return CANDIDATE_FEATURES[kind]
    except KeyError:
        raise ValueError(
            f"unknown candidate features {kind!r}: expected one of {', '.join(CANDIDATE_FEATURES)}"
        ) from None


def candidate_texts(kind: str, candidates: Sequence[str]) -> list[str]:
    """The texts to embed for these candidates, ``parts_of(kind)`` per candidate in order (``""`` = none).

    Nothing else goes in: no kind depends on the state text the candidates were offered in."""
    p = parts_of(kind)
    if p == 1:
        return list(candidates)
    out: list[str] = []
    for c in candidates:
        a = parse_action(c, keep_case=True)
        out.extend((c, a.object, a.target))
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
) -> np.ndarray:
    """float32 ``[K, parts*dim]`` features of ``candidates``; ``embed(texts) -> [N, dim]`` is called once with
    the distinct non-empty texts. Empty parts are zero vectors."""
    texts = candidate_texts(kind, candidates)
    unique = list(dict.fromkeys(t for t in texts if t))
    present = np.zeros((0, dim), dtype=np.float32)
    if unique:
        vecs = embed(unique)
        row = {t: i for i, t in enumerate(unique)}
        present = vecs[[row[t] for t in texts if t]]
    return assemble(texts, present, parts_of(kind), dim)
