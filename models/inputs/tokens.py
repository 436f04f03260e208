"""Token ids of the texts a token-reading policy reads (bundle format 3): state items and candidate actions.

The ids are the encoder's tokenizer's (``tokenizer.json``, shipped in every bundle and with every encoder),
without special tokens (no ``[CLS]``/``[SEP]``), the first ``length`` of them; 0 is padding. Training
(``policy.training.buffer``) and the runtime (``edge.runtime``) both tokenize here, with the same tokenizer
file, so a policy is served the ids it was trained on. Numpy and ``tokenizers`` only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

ITEM_TOKENS = 32
"""Tokens of a state item a policy reads (longer items are truncated)."""
CANDIDATE_TOKENS = 12
"""Tokens of a candidate action a policy reads."""


class TokenIds:
    """``ids(text)``: the tokenizer's ids of ``text`` without special tokens, the first ``length``, cached
    per text (at most ``capacity`` texts; the cache is emptied when full)."""

    def __init__(self, tokenizer_json: str | os.PathLike[str], length: int, capacity: int = 1 << 16):
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.length = int(length)
        self.capacity = capacity
        self._cache: dict[str, list[int]] = {}

    def ids(self, text: str) -> list[int]:
        got = self._cache.get(text)
        if got is None:
            if len(self._cache) >= self.capacity:
                self._cache.clear()
            got = self._cache[text] = self.tokenizer.encode(text, add_special_tokens=False).ids[: self.length]
        return got


def pad_ids(rows: Sequence[Sequence[int]], length: int | None = None) -> np.ndarray:
    """int64 [N, length] (default: the longest row, at least 1), 0-padded."""
    n = max(1, max((len(r) for r in rows), default=0)) if length is None else length
    out = np.zeros((len(rows), n), dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r[:n]
    return out


def id_grid(ids: TokenIds, texts: Sequence[Sequence[str]], cap: int) -> np.ndarray:
    """int64 [B, N, L]: the ids of each group's texts (a state's items in the order of its
    ``models.inputs.arrays`` items, or a request's candidates), the first ``cap`` of each, padded to the most
    texts (at least 1) and the longest ids present (at least 1): a format-3 bundle's ``item_tokens`` or
    ``candidate_tokens``."""
    rows = [[ids.ids(t)[:cap] for t in group] for group in texts]
    n = max(1, max((len(g) for g in rows), default=0))
    length = max(1, max((len(r) for g in rows for r in g), default=0))
    out = np.zeros((len(rows), n, length), dtype=np.int64)
    for i, group in enumerate(rows):
        for j, r in enumerate(group):
            out[i, j, : len(r)] = r
    return out
