"""A training batch's vectors as rows of one table, and the scorer's first operations on them (projection,
parts, similarities), which work alike on rows and on the dense tensors of the exported graph."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class Rows:
    """Embedding vectors given as rows of a table: ``table[index]`` with ``index`` [..., P] (P parts side by
    side, e.g. a candidate's action, object and target), shape ``[..., P*D]`` like the dense tensor.

    Training passes these instead of dense tensors: the scorer's first layers are linear in the vectors, so
    they are applied to the distinct rows of a batch only and gathered after (:meth:`project`); a batch
    repeats the same sentences and candidates many times. The exported graph takes dense tensors."""

    def __init__(self, table: torch.Tensor, index: torch.Tensor, tokens: torch.Tensor | None = None):
        self.table, self.index = table, index
        self.tokens = tokens
        """Token ids of each row of ``table`` ([U, L], 0-padded), where the scorer reads tokens."""
        self.parts = index.shape[-1]
        self.shape = (*index.shape[:-1], self.parts * table.shape[1])
        self.cache: dict[Any, Any] = {}
        """What depends on the rows alone (distinct rows, match features, the token reader's pairs), kept
        while the batch lives: every network of an update reads the same rows."""

    def unique(self, p: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The distinct rows of part ``p`` and where each entry is among them."""
        key = ("unique", p)
        if key not in self.cache:
            self.cache[key] = torch.unique(self.index[..., p], return_inverse=True)
        return self.cache[key]

    def part(self, p: int) -> torch.Tensor:
        """The dense vectors of part ``p`` [..., D]."""
        return self.table[self.index[..., p]]

    def dense(self) -> torch.Tensor:
        return self.table[self.index].flatten(-2)

    def project(self, layer: nn.Linear) -> torch.Tensor:
        """``layer(self.dense())``, computed on the distinct rows of each part."""
        d = self.table.shape[1]
        out = None
        for p in range(self.parts):
            uniq, inv = self.unique(p)
            y = nn.functional.linear(self.table[uniq], layer.weight[:, p * d : (p + 1) * d])[inv]
            out = y if out is None else out + y
        assert out is not None
        return out if layer.bias is None else out + layer.bias


def similarity(a: torch.Tensor | Rows, b: torch.Tensor | Rows, parts: int, d: int) -> torch.Tensor:
    """Dot products [B,N,parts,S] of every part of ``a`` [B,N,parts*D] with every vector of ``b`` [B,S,D]
    (cosines: the encoders' vectors are unit length, absent ones zero). Rows of one table are multiplied on
    their distinct rows only."""
    if isinstance(a, Rows) and isinstance(b, Rows) and a.table is b.table:
        ua, ia = torch.unique(a.index, return_inverse=True)  # ia [B,N,P]
        ub, ib = torch.unique(b.index[..., 0], return_inverse=True)  # ib [B,S]
        sims = a.table[ua] @ a.table[ub].T
        return sims[ia.unsqueeze(-1), ib[:, None, None, :]]
    da = a.dense() if isinstance(a, Rows) else a
    db = b.dense() if isinstance(b, Rows) else b
    return torch.einsum("bnpd,bsd->bnps", da.unflatten(-1, (parts, d)), db)


def project(x: torch.Tensor | Rows, layer: nn.Linear) -> torch.Tensor:
    return x.project(layer) if isinstance(x, Rows) else layer(x)


def part(x: torch.Tensor | Rows, p: int, d: int) -> torch.Tensor:
    return x.part(p) if isinstance(x, Rows) else x[..., p * d : (p + 1) * d]
