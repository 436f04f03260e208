"""Token-level reading of the state for each candidate: which item a candidate is about, and what that item
says beyond the candidate's own words.

A sentence vector averages its words, so "roast the red potato" and "fry the red potato" differ by a sliver
dominated by the object, and nothing relates ``oven`` in a candidate to ``roast`` in a recipe line. This
module reads token ids instead, over a frozen pretrained token table (the static encoder's rows: what the
base sentence encoder says each token means, :mod:`policy.encoders.static`) with a trainable projection and a
learned weight per token:

- **exact match.** For a candidate ``k`` and an item ``t``, the tokens they share (same id) say what the item
  is about relative to the candidate: ``rel`` is the weighted share of the candidate's tokens found in the
  item, ``cov`` the weighted share of the item's tokens found in the candidate. They depend on ids only, so
  an ingredient or object never seen in training matches like any other ("the white onion" against "take
  yellow onion" and "take white onion").
- **relation residuals.** The item's *other* tokens (``roast the``) and the candidate's other tokens (``cook
  in oven``), each pooled with the learned weights: the entity words both share are masked out of both
  sides, so what is learned is the relation between the recipe's verb and the appliance, whatever is being
  cooked. Items and candidates project tokens each their own way, so the element-wise product of the two
  residuals is a learned bilinear form between them (``roast`` against ``oven``); with their sum, the two
  shares and the item's kind it forms the pair's vector. Everything per (candidate, item) pair is
  element-wise: no matrix product of pairs x width x width, which keeps the graph near the cost of pooling.
- **pooling.** Each candidate attends over the items with logits from its pair vectors and ``rel``; the
  pooled vector, and per item kind the best ``rel`` and ``cov``, go to the scorer
  (:mod:`policy.scorer.model`).

Two ways to compute the same function: :meth:`TokenReader.dense` from id tensors (the exported graph; the
token table is baked with its projection into one ``[V, R+1]`` table per side first, stored as int4 rows
with a scale each by default, :meth:`TokenReader.bake`), and
:meth:`TokenReader.rows` in training, where a batch's (candidate text, item text) pairs repeat many times and
each distinct pair is computed once.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

EPS = 1e-6
TABLE_BITS = (32, 8, 4)
"""How the baked token tables may be stored: float32, or int8 / int4 with a scale per row."""
DEFAULT_BITS = 4
"""How they are stored unless a scorer's config says otherwise (:class:`policy.scorer.model.ScorerConfig`)."""


NIBBLES = torch.tensor([[b & 15, b >> 4] for b in range(256)], dtype=torch.float32) - 8.0
"""The two int4 values [256, 2] (low nibble first) of each byte of a packed table: unpacking is a gather
(the graph has one small table, no bit operations)."""


def quantise(rows: torch.Tensor, bits: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``rows`` [V, W] as the graph stores them: as they are (32 bits, no scale); int8 with an fp16 scale per
    row (max |value| / 127); or int4, the same with max |value| / 7, two values a byte ([V, ceil(W / 2)]
    uint8, each value + 8 in a nibble, the even column low)."""
    if bits == 32:
        return rows, None
    top = 127 if bits == 8 else 7
    scale = (rows.abs().amax(dim=1, keepdim=True) / top).clamp_min(1e-12).half()
    q = torch.round(rows / scale.float()).clamp(-top, top)
    if bits == 8:
        return q.to(torch.int8), scale
    q = nn.functional.pad(q + 8, (0, rows.shape[1] % 2)).to(torch.uint8)  # 1..15 (0 pads an odd width)
    return q[:, 0::2] + (q[:, 1::2] << 4), scale


def dequantise(stored: torch.Tensor, scale: torch.Tensor | None, width: int) -> torch.Tensor:
    """Gathered rows of :func:`quantise`'s table back to floats [..., width]."""
    if scale is None:
        return stored
    if stored.dtype == torch.uint8:  # int4: both nibbles of each byte from a table of the 256 bytes
        stored = NIBBLES[stored.long()].flatten(-2)[..., :width]
    return stored.float() * scale.float()


class TokenReader(nn.Module):
    def __init__(
        self, table: torch.Tensor, hidden: int, kinds: int, bits: int = DEFAULT_BITS, *, fast: bool = True
    ):
        super().__init__()
        self.fast = fast
        """Read training rows with matrix products over the batch's vocabulary (else the reference, by
        ``embedding_bag``)."""
        if bits not in TABLE_BITS:
            raise ValueError(f"token table bits {bits}: expected one of {TABLE_BITS}")
        self.register_buffer("table", table.float(), persistent=True)  # [V, E] frozen
        self.hidden, self.kinds = hidden, kinds
        self.bits = bits
        """How :meth:`bake` stores the tables (:func:`quantise`)."""
        h = hidden
        # Per token and side (item, candidate): a relation vector (h) and a weight logit (1).
        self.proj = nn.Linear(table.shape[1], 2 * (h + 1))
        self.kind = nn.Embedding(kinds, h)
        self.overlap = nn.Linear(2, h)
        self.att = nn.Linear(h, 1)
        self.att_rel = nn.Parameter(torch.tensor(4.0))
        self._baked: list[torch.Tensor] | None = None
        """Per side, the baked table as floats (what torch gathers from; the stored rows are buffers)."""

    @property
    def exact_dim(self) -> int:
        """Size of the exact-match features: best ``rel`` and ``cov`` per item kind."""
        return 2 * (self.kinds - 1)

    # -------------------------------------------------------------------------------------------- token rows

    def bake(self, *, bits: int | None = None) -> None:
        """Fold the frozen table into its projection, one [V, h+1] table per side (vectors, then the token's
        weight; 0 for the padding id): what the exported graph gathers from, stored as ``bits`` says (the
        reader's own by default; :func:`quantise`) and dequantised after the gather (:meth:`token_rows`).
        The two tables dominate the bundle (2 x 30,522 x 65 values: 15.9 MB as float32, 4.1 MB as int8,
        2.1 MB as int4). The baked reader is what the export's parity check compares the graph with, and
        what a checkpoint runs in torch."""
        with torch.no_grad():
            rows = self.proj(self.table)
            ids = torch.arange(len(rows))
            self._baked = []
            for side in (0, 1):
                vec, weight = self.split(rows, ids, side)
                stored, scale = quantise(torch.cat([vec, weight[:, None]], dim=1), bits or self.bits)
                # Buffers of the state dict, not plain tensors: the exporter stores them as initializers as
                # they are (anything else is a constant of the trace, and ops on constants are folded into
                # the file).
                self.register_buffer(f"baked_{side}", stored)
                self.register_buffer(f"baked_scale_{side}", scale)
                self._baked.append(dequantise(stored, scale, self.hidden + 1))

    def unbake(self) -> None:
        self._baked = None
        for side in (0, 1):
            for name in (f"baked_{side}", f"baked_scale_{side}"):
                if hasattr(self, name):
                    delattr(self, name)

    def split(self, rows: torch.Tensor, ids: torch.Tensor, side: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(relation vectors [..., h], weights [...]; 0 where ``ids`` is padding) of projected rows
        [..., 2(h+1)] for ``side`` 0 (item) or 1 (candidate)."""
        h = self.hidden
        part = rows[..., side * (h + 1) : (side + 1) * (h + 1)]
        return part[..., :h], nn.functional.softplus(part[..., h]) * (ids > 0).to(rows.dtype)

    def token_rows(self, ids: torch.Tensor, side: int) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`split` of token ids [...]."""
        if self._baked is not None:
            table = self._baked[side]
            if torch.onnx.is_in_onnx_export():
                # The whole table, from the stored rows: onnxruntime folds this into a float table once, at
                # load (the file keeps the small rows; each call gathers floats, nothing to unpack).
                stored, scale = getattr(self, f"baked_{side}"), getattr(self, f"baked_scale_{side}")
                table = dequantise(stored, scale, self.hidden + 1)
            part = table[ids]
            return part[..., : self.hidden], part[..., self.hidden]
        uniq, inv = torch.unique(ids, return_inverse=True)
        return self.split(self.proj(self.table[uniq])[inv], ids, side)

    # ---------------------------------------------------------------------------------------------- the pair

    def pair(
        self,
        c_ids: torch.Tensor,
        s_ids: torch.Tensor,
        c_w: torch.Tensor,
        s_w: torch.Tensor,
        pool_c: Callable[[torch.Tensor], torch.Tensor],
        pool_s: Callable[[torch.Tensor], torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """For candidate token ids ``c_ids`` [..., Lc] and item token ids ``s_ids`` [..., L] (leading dims
        broadcast) with their token weights: ``rel`` [...], ``cov`` [...] and the pair's vector [..., h]
        before the item's kind. ``pool_c(w)`` is the sum of the candidate's token vectors weighted by ``w``
        [..., Lc] (``pool_s`` the item's)."""
        # Padding (id 0) may match padding: both weigh 0, so it changes nothing.
        eq = c_ids.unsqueeze(-1) == s_ids.unsqueeze(-2)  # [..., Lc, L]
        if torch.onnx.is_in_onnx_export():  # a reduction over booleans, as ONNX has it
            eq = eq.to(c_w.dtype)
            c_shared, s_shared = eq.amax(-1), eq.amax(-2)  # [..., Lc], [..., L]
        else:
            c_shared, s_shared = eq.any(-1).to(c_w.dtype), eq.any(-2).to(c_w.dtype)
        rel = (c_shared * c_w).sum(-1) / (c_w.sum(-1) + EPS)
        cov = (s_shared * s_w).sum(-1) / (s_w.sum(-1) + EPS)
        c_rest = (1.0 - c_shared) * c_w
        s_rest = (1.0 - s_shared) * s_w
        c_res = pool_c(c_rest) / (c_rest.sum(-1, keepdim=True) + EPS)
        s_res = pool_s(s_rest) / (s_rest.sum(-1, keepdim=True) + EPS)
        vec = s_res + c_res + s_res * c_res + self.overlap(torch.stack([rel, cov], dim=-1))
        return rel, cov, vec

    # --------------------------------------------------------------------------------------------- two paths

    def dense(
        self, cand_ids: torch.Tensor, item_ids: torch.Tensor, item_kinds: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """From id tensors: candidates [B,K,Lc], items [B,T,L], kinds [B,T] (0: padding)."""
        if torch.onnx.is_in_onnx_export():  # ids compared as int32: half the bytes of the largest tensor
            cand_ids, item_ids = cand_ids.to(torch.int32), item_ids.to(torch.int32)
        c_vec, c_w = self.token_rows(cand_ids, 1)  # [B,K,Lc,h], [B,K,Lc]
        s_vec, s_w = self.token_rows(item_ids, 0)  # [B,T,L,h], [B,T,L]
        # Sums over tokens as batched matrix products: per candidate over its items' weights, per item over
        # its candidates' (not one small product per pair).
        rel, cov, vec = self.pair(
            cand_ids.unsqueeze(2),
            item_ids.unsqueeze(1),
            c_w.unsqueeze(2),
            s_w.unsqueeze(1),
            lambda w: torch.matmul(w, c_vec),  # [B,K,T,Lc] @ [B,K,Lc,h]
            lambda w: torch.matmul(w.transpose(1, 2), s_vec).transpose(1, 2),  # [B,T,K,L] @ [B,T,L,h]
        )  # [B,K,T], [B,K,T,h]
        vec, logit = self.with_kind(rel, vec, item_kinds.unsqueeze(1))
        w = self.attend(logit, item_kinds)
        pooled = torch.matmul(w.unsqueeze(-2), vec).squeeze(-2)  # [B,K,h]
        return pooled, self.exact(rel, cov, item_kinds)

    def rows(
        self,
        tokens: torch.Tensor,
        cand_rows: torch.Tensor,
        item_rows: torch.Tensor,
        item_kinds: torch.Tensor,
        *,
        candidate_tokens: int,
        item_tokens: int,
        cache: dict | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """From rows of a token table ``tokens`` [U, L] (one text per row, its ids, 0-padded): candidates'
        rows [B,K] (their first ``candidate_tokens`` ids read), items' rows [B,T] (``item_tokens``) and kinds
        [B,T]; each distinct (candidate, item, kind) is computed once. Sums are dense products over the
        batch's vocabulary (a batch reads a few hundred distinct tokens): each text is a row of token counts
        [Ut, Ub]; a pair that shares no token has its texts' whole sums as residuals, and only the pairs that
        share one are recounted (their counts where the other side lacks the token). Every token sum is a
        matrix product with the projected token vectors: no per-pair token comparison, no embedding_bag over
        tokens, and a residual with no token left is an exact 0 (the reference subtracts sums, and divides the
        rounding by EPS). What depends on the ids alone (:meth:`pairs`) is kept in ``cache``: every network of
        an update reads the same pairs."""
        if not self.fast:
            return self._rows_reference(
                tokens, cand_rows, item_rows, item_kinds, candidate_tokens, item_tokens
            )
        st = self.cached_pairs(tokens, cand_rows, item_rows, item_kinds, candidate_tokens, item_tokens, cache)
        rows = self.proj(self.table[st["vocab"]])  # [Ub, 2(h+1)]

        def side(which: int):
            vec, weight = self.split(rows, st["vocab"], which)  # [Ub, h], [Ub]
            wv = torch.cat([vec * weight.unsqueeze(1), weight.unsqueeze(1)], dim=1)  # [Ub, h+1]
            whole = (st["counts"][which] @ wv).index_select(0, st["text"][which])  # [P, h+1]
            rest = whole.index_copy(0, st["sharing"], st["rest"][which] @ wv)  # the tokens the other lacks
            total = whole[:, -1]
            share = (total - rest[:, -1]) / (total + EPS)
            return share, rest[:, :-1] / (rest[:, -1:] + EPS)

        rel, c_res = side(1)
        cov, s_res = side(0)
        vec_p = s_res + c_res + s_res * c_res + self.overlap(torch.stack([rel, cov], dim=-1))
        return self._pool_pairs(rel, cov, vec_p, st["kind"], st["inv"], item_kinds)

    def _pool_pairs(self, rel, cov, vec_p, kind, inv, item_kinds) -> tuple[torch.Tensor, torch.Tensor]:
        """From each distinct pair's relation (``rel``, ``cov`` [P], ``vec_p`` [P,h]) and kind, and where each
        (candidate, item) is among the pairs (``inv`` [B,K,T]): the attention-pooled [B,K,h] and the
        exact-match features."""
        vec_p, logit = self.with_kind(rel, vec_p, kind)
        w = self.attend(logit[inv], item_kinds)  # [B,K,T]
        b, k, t = w.shape
        pooled = nn.functional.embedding_bag(
            inv.reshape(b * k, t), vec_p, per_sample_weights=w.reshape(b * k, t), mode="sum"
        ).reshape(b, k, self.hidden)
        return pooled, self.exact(rel[inv], cov[inv], item_kinds)

    def _rows_reference(
        self, tokens, cand_rows, item_rows, item_kinds, candidate_tokens: int, item_tokens: int
    ):
        """:meth:`rows` computed the reference way (``fast`` off): each distinct (candidate, item, kind) once,
        token vectors summed and pairs pooled with ``embedding_bag`` (nothing of size pairs x tokens x width
        is made)."""
        u, nk = tokens.shape[0], self.kinds
        key = (cand_rows.unsqueeze(2) * u + item_rows.unsqueeze(1)) * nk + item_kinds.unsqueeze(1)  # [B,K,T]
        uniq, inv = torch.unique(key, return_inverse=True)
        kind, pair = uniq % nk, uniq // nk
        n = len(uniq)
        texts, text_of = torch.unique(torch.cat([pair // u, pair % u]), return_inverse=True)
        text_ids = tokens[texts]  # [Ut, L]
        longest = max(1, int((text_ids > 0).sum(1).max()))
        text_ids = text_ids[:, :longest]  # the batch's texts are shorter than the table's width
        vocab, remap = torch.unique(text_ids, return_inverse=True)  # remap [Ut, L]
        rows = self.proj(self.table[vocab])  # [Ub, 2(h+1)]
        sides = [self.split(rows, vocab, side) for side in (0, 1)]  # (vectors [Ub,h], weights [Ub]) each
        c_text, s_text = text_of[:n], text_of[n:]
        c_ids, s_ids = text_ids[c_text, :candidate_tokens], text_ids[s_text, :item_tokens]
        c_pos, s_pos = remap[c_text, :candidate_tokens], remap[s_text, :item_tokens]
        # Most pairs share no token: their residual sums are their texts' whole sums. So each text is summed
        # once, and only the pairs that share something subtract their shared tokens (about 1 in 5).
        sharing = torch.nonzero(
            ((c_ids.unsqueeze(-1) == s_ids.unsqueeze(-2)) & (c_ids > 0).unsqueeze(-1)).flatten(1).any(1)
        ).squeeze(1)

        def pool(pos: torch.Tensor, text: torch.Tensor, side: int) -> Callable[[torch.Tensor], torch.Tensor]:
            vec, weight = sides[side]
            whole_w = weight[pos]
            ids = remap[:, : pos.shape[1]]
            whole = nn.functional.embedding_bag(ids, vec, per_sample_weights=weight[ids], mode="sum")[text]

            def summed(rest: torch.Tensor) -> torch.Tensor:
                shared = (whole_w - rest)[sharing]  # zero on the pairs that share nothing
                cut = nn.functional.embedding_bag(pos[sharing], vec, per_sample_weights=shared, mode="sum")
                out = whole.index_add(0, sharing, cut, alpha=-1.0)
                # A side with every word shared has nothing left: exactly zero, as the graph's sum of
                # zero-weighted rows. The subtraction leaves its rounding, which the caller would divide by
                # the empty rest's weight (+ EPS), and train on (values and gradients far from the graph's).
                return out * (rest.sum(-1, keepdim=True) > 0).to(out.dtype)

            return summed

        rel, cov, vec_p = self.pair(
            c_ids,
            s_ids,
            sides[1][1][c_pos],
            sides[0][1][s_pos],
            pool(c_pos, c_text, 1),
            pool(s_pos, s_text, 0),
        )  # [P], [P], [P,h]
        return self._pool_pairs(rel, cov, vec_p, kind, inv, item_kinds)

    def cached_pairs(self, tokens, cand_rows, item_rows, item_kinds, candidate_tokens, item_tokens, cache):
        """:meth:`pairs`, kept in ``cache`` (a dict that lives with the batch) when one is given."""
        key = ("reader.pairs", candidate_tokens, item_tokens, self.kinds)
        if cache is not None and key in cache:
            return cache[key]
        st = self.pairs(tokens, cand_rows, item_rows, item_kinds, candidate_tokens, item_tokens)
        if cache is not None:
            cache[key] = st
        return st

    @torch.no_grad()
    def pairs(
        self,
        tokens: torch.Tensor,
        cand_rows: torch.Tensor,
        item_rows: torch.Tensor,
        item_kinds: torch.Tensor,
        candidate_tokens: int,
        item_tokens: int,
    ) -> dict:
        """The distinct (candidate, item, kind) pairs of a batch and their token counts (ids only)."""
        u, nk = tokens.shape[0], self.kinds
        key = (cand_rows.unsqueeze(2) * u + item_rows.unsqueeze(1)) * nk + item_kinds.unsqueeze(1)  # [B,K,T]
        uniq, inv = torch.unique(key, return_inverse=True)
        kind, pair = uniq % nk, uniq // nk
        n = len(uniq)
        texts, text_of = torch.unique(torch.cat([pair // u, pair % u]), return_inverse=True)
        text_ids = tokens[texts]  # [Ut, L]
        longest = max(1, int((text_ids > 0).sum(1).max()))
        text_ids = text_ids[:, :longest]
        vocab, remap = torch.unique(text_ids, return_inverse=True)  # remap [Ut, L]
        c_text, s_text = text_of[:n], text_of[n:]
        real = (vocab > 0).float()  # padding is no token (its weight is 0 too)

        def counts(length: int) -> torch.Tensor:  # [Ut, Ub]: each token in a text's first ``length`` ids
            pos = remap[:, :length]
            return torch.zeros(len(texts), len(vocab)).scatter_add_(1, pos, torch.ones(pos.shape)) * real

        cc, cs = counts(candidate_tokens), counts(item_tokens)
        overlap = (cc > 0).float() @ (cs > 0).float().T  # [Ut, Ut]: tokens both texts hold
        sharing = torch.nonzero(overlap[c_text, s_text] > 0).squeeze(1)
        c_sh, s_sh = c_text.index_select(0, sharing), s_text.index_select(0, sharing)
        c_cnt, s_cnt = cc.index_select(0, c_sh), cs.index_select(0, s_sh)
        return {
            "inv": inv,
            "kind": kind,
            "vocab": vocab,
            "text": (s_text, c_text),
            "counts": (cs, cc),
            "sharing": sharing,
            "rest": (s_cnt * (c_cnt == 0), c_cnt * (s_cnt == 0)),  # per side: the tokens the other lacks
        }

    # ------------------------------------------------------------------------------------------- pooling

    def with_kind(
        self, rel: torch.Tensor, vec: torch.Tensor, kinds: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The pair's vector with its item's kind (``kinds`` broadcast against ``rel``), and its attention
        logit."""
        vec = nn.functional.gelu(vec + self.kind(kinds))
        return vec, self.att(vec).squeeze(-1) + self.att_rel * rel

    def attend(self, logits: torch.Tensor, item_kinds: torch.Tensor) -> torch.Tensor:
        """Attention weights [B,K,T] of each candidate over the items (none on padding; all zero for a state
        with no item)."""
        pad = (item_kinds == 0).unsqueeze(1)  # [B,1,T]
        w = torch.softmax(logits.masked_fill(pad, -1.0e9), dim=-1)
        return w * (~pad).to(w.dtype)

    def exact(self, rel: torch.Tensor, cov: torch.Tensor, item_kinds: torch.Tensor) -> torch.Tensor:
        """Per item kind 1..kinds-1, the best ``rel`` and ``cov`` of each candidate [B,K,2*(kinds-1)] (-1: no
        item of that kind)."""
        if torch.onnx.is_in_onnx_export():  # no scatter with a max in the exported opset: a masked max
            kinds = torch.arange(1, self.kinds, device=rel.device)
            of_kind = (item_kinds.unsqueeze(-1) == kinds).unsqueeze(1)  # [B,1,T,kinds-1]
            best = [x.unsqueeze(-1).masked_fill(~of_kind, -1.0).amax(2) for x in (rel, cov)]
            return torch.cat(best, dim=-1)
        b, k, t = rel.shape
        index = item_kinds.unsqueeze(1).expand(b, k, t)
        best = [
            torch.full((b, k, self.kinds), -1.0, dtype=x.dtype).scatter_reduce(2, index, x, "amax")[..., 1:]
            for x in (rel, cov)
        ]
        return torch.cat(best, dim=-1)
