"""The attention the scorer is built of: multi-head attention written out in plain ops (the exported graph is
exactly this computation) and the pre-norm transformer block of the state encoder, with its training fast
path on the state's real tokens only (``CandidateScorer.fast`` in :mod:`policy.scorer.model`)."""

from __future__ import annotations

import math

import torch
from torch import nn

_NEG = -1.0e9


class Attention(nn.Module):
    """Multi-head attention of ``x`` [B,Q,H] over ``kv`` [B,S,H]; ``pad`` [B,S] True where a key is padding.
    Written out in plain ops so that the exported graph is exactly this computation."""

    def __init__(self, h: int, heads: int, dropout: float):
        super().__init__()
        self.heads, self.dh = heads, h // heads
        self.q = nn.Linear(h, h)
        self.kv = nn.Linear(h, 2 * h)
        self.out = nn.Linear(h, h)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, kv: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        q = self.q(x).unflatten(-1, (self.heads, self.dh)).transpose(1, 2)  # [B,h,Q,dh]
        k, v = self.kv(kv).chunk(2, dim=-1)
        k = k.unflatten(-1, (self.heads, self.dh)).transpose(1, 2)  # [B,h,S,dh]
        v = v.unflatten(-1, (self.heads, self.dh)).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.dh))  # [B,h,Q,S]
        att = att.masked_fill(pad[:, None, None, :], _NEG)
        w = self.drop(torch.softmax(att, dim=-1))
        return self.out(torch.matmul(w, v).transpose(1, 2).flatten(-2))  # [B,Q,H]


class Block(nn.Module):
    """A pre-norm transformer block: self-attention, then an MLP, each with a residual."""

    def __init__(self, h: int, heads: int, dropout: float):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.attn = Attention(h, heads, dropout)
        self.mlp = nn.Sequential(nn.Linear(h, 2 * h), nn.GELU(), nn.Dropout(dropout), nn.Linear(2 * h, h))

    def forward(self, x: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        y = self.ln1(x)
        x = x + self.attn(y, y, pad)
        return x + self.mlp(self.ln2(x))

    def packed(self, x: torch.Tensor, keep: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` on the state's real tokens only: ``x`` [N,H] are the rows ``keep`` of the
        flattened [B*S] tokens (``pad`` [B,S]); every token-wise layer runs on them, attention on the padded
        layout through ``scaled_dot_product_attention`` (padding as keys masked, as queries discarded)."""
        b, s = pad.shape
        a = self.attn
        y = self.ln1(x)
        qkv = torch.cat([a.q(y), a.kv(y)], dim=-1)  # [N,3H]
        full = qkv.new_zeros(b * s, qkv.shape[1]).index_copy(0, keep, qkv).view(b, s, 3, a.heads, a.dh)
        q, k, v = full.permute(2, 0, 3, 1, 4).unbind(0)  # [B,h,S,dh] each
        o = nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=~pad[:, None, None, :], dropout_p=a.drop.p if self.training else 0.0
        )
        o = o.transpose(1, 2).reshape(b * s, -1).index_select(0, keep)
        x = x + a.out(o)
        return x + self.mlp(self.ln2(x))
