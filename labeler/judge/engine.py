"""The KV-prefix engine: one llama.cpp context whose KV cache is kept between queries, and the decodes that
score choices with as few evaluated tokens as possible.

The engine remembers the tokens its KV cache holds (``kv``, sequence 0) and the next-token distributions it
has read (``rows``: position -> log-softmax row). A query evaluates only the tokens after the longest common
prefix with ``kv`` (the cache is truncated there). Multi-token choices branch off the prefix: each distinct
branch runs as its own sequence in the same batch as the prefix's new tokens (:meth:`KVEngine.decode_tree`);
queries with single-token choices after a shared trunk run their tails as parallel sequences
(:meth:`KVEngine.score_tails`, planned by :mod:`labeler.judge.tails`). Branch and tail sequences copy the
prefix's KV cells (``llama_memory_seq_cp`` over a unified cache) and are removed after the decode, so sequence
0 always ends up holding exactly ``kv``.

The context is created with ``swa_full=True``: Gemma 3's sliding-window cache would otherwise keep only the
last window of positions, and truncating it and continuing would not be exact.

Counters go to the ``stats`` dict the engine is given (``evaluated_tokens``, ``reused_tokens``).

:meth:`KVEngine.prime` restores one fixed state (a prefix evaluated alone, from a snapshot) before a unit of
work, so the unit's results do not depend on what the engine evaluated before.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from labeler.judge.config import JudgeConfig
from labeler.judge.errors import JudgeError, JudgeLoadError
from labeler.judge.tails import Prepared, lcp
from labeler.llama_log import route_llama_logs

N_SEQ = 32  # sequences in the llama.cpp context: 0 holds the prefix, the others branches and tails
MAX_ROWS = 48  # cached next-token distributions kept between queries (1 MB each for a 262k vocabulary)


@dataclass
class Row:
    """One next-token distribution: the logits and their log-sum-exp."""

    logits: np.ndarray
    lse: float

    def logprob(self, token: int) -> float:
        return float(self.logits[token]) - self.lse


class KVEngine:
    """A llama.cpp context with prefix reuse. ``n_seq`` is the number of sequences decodes may use (1: branch
    by branch, no parallel tails)."""

    def __init__(self, path: Path, config: JudgeConfig, stats: dict[str, float]):
        import llama_cpp  # heavy: imported only when a judge is opened

        route_llama_logs()  # load logs to $EDGEJUDGE_CACHE/logs/llama.log; real errors still on stderr
        self.config = config
        self.stats = stats
        self.lc = llama_cpp
        try:
            self.llm = llama_cpp.Llama(
                str(path),
                n_ctx=config.n_ctx,
                n_batch=config.n_batch,
                n_ubatch=config.n_batch,
                n_threads=config.n_threads,
                n_threads_batch=config.n_threads_batch,
                n_gpu_layers=config.n_gpu_layers,
                seed=config.seed,
                logits_all=False,
                swa_full=True,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as e:
            raise JudgeLoadError(
                f"{path}: llama.cpp failed to load this GGUF ({e}); "
                "is it a complete model file for a supported architecture?"
            ) from None
        try:
            self.n_vocab = self.llm.n_vocab()
            self.n_seq = self._enable_sequences(N_SEQ)
        except BaseException:
            self.llm.close()
            raise
        self.kv: list[int] = []  # tokens currently in the KV cache (sequence 0)
        self.rows: dict[int, Row] = {}  # position -> next-token distribution after kv[: position + 1]
        self.anchor: tuple[list[int], Any] | None = None  # prime(): the tokens and their KV state

    @property
    def n_ctx(self) -> int:
        return int(self.llm.n_ctx())

    def _enable_sequences(self, n_seq: int) -> int:
        """Recreate the context with ``n_seq`` sequences over one unified KV cache, so that branches and tails
        are decoded in the same batch as the prefix. llama-cpp-python 0.3.36's ``Llama`` does not expose
        ``n_seq_max``; on any failure the engine keeps its context and scores branch by branch."""
        from llama_cpp import _internals

        llm = self.llm
        params = llm.context_params
        params.n_seq_max = n_seq
        params.kv_unified = True
        try:
            ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        except (ValueError, RuntimeError):
            params.n_seq_max = 1
            return 1
        old = llm._ctx
        llm._ctx = llm._stack.enter_context(contextlib.closing(ctx))
        old.close()
        return n_seq

    # ------------------------------------------------------------------------------------------ primitives

    def row(self, batch_index: int) -> Row:
        ptr = self.llm._ctx.get_logits_ith(batch_index)
        logits = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).astype(np.float32, copy=True)
        m = float(logits.max())
        return Row(logits, m + math.log(float(np.exp(logits - m).sum())))

    def decode(self) -> None:
        try:
            self.llm._ctx.decode(self.llm._batch)
        except RuntimeError as e:  # the KV cache is in an unknown state now: start from scratch next time
            self.reset()
            raise JudgeError(f"llama.cpp could not evaluate the batch ({e})") from None

    def truncate(self, n: int) -> None:
        if n >= len(self.kv):
            return
        if not self.llm._ctx.kv_cache_seq_rm(0, n, -1):
            # cannot drop a tail of this cache: start over
            self.llm._ctx.kv_cache_seq_rm(0, 0, -1)
            n = 0
        del self.kv[n:]
        for p in [p for p in self.rows if p >= n]:
            del self.rows[p]

    def trim_rows(self, keep: Sequence[int]) -> None:
        if len(self.rows) > MAX_ROWS:
            keep_set = set(keep)
            for p in [p for p in self.rows if p not in keep_set]:
                del self.rows[p]

    def forget_rows_from(self, n: int) -> None:
        for p in [p for p in self.rows if p >= n]:
            del self.rows[p]

    def reset(self) -> None:
        """Forget the KV cache (the next query is evaluated from scratch)."""
        self.llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        self.kv.clear()
        self.rows.clear()
        self.llm.reset()

    def prime(self, toks: list[int]) -> None:
        """Hold exactly ``toks`` in the KV cache, in one fixed state: the first call for these tokens
        evaluates them from an empty cache (in ``n_batch`` chunks) and keeps a copy of sequence 0's KV state;
        every call then clears the cache and restores that copy (a memory copy, no evaluation)."""
        lc = self.lc
        ctx = self.llm._ctx.ctx
        if self.anchor is None or self.anchor[0] != toks:
            self.reset()
            state = None
            if toks:
                self.ensure(list(toks), [])
                size = lc.llama_state_seq_get_size(ctx, 0)
                state = (ctypes.c_uint8 * size)()
                if lc.llama_state_seq_get_data(ctx, state, size, 0) != size:
                    raise JudgeError("llama.cpp could not copy the KV state of the primed prefix")
            self.anchor = (list(toks), state)
        toks, state = self.anchor
        self.reset()
        if state is not None:
            if lc.llama_state_seq_set_data(ctx, state, len(state), 0) == 0:
                self.anchor = None
                raise JudgeError("llama.cpp could not restore the KV state of the primed prefix")
            self.kv = list(toks)

    def close(self) -> None:
        self.llm.close()

    # ------------------------------------------------------------------------------------------ decodes

    def ensure(self, seq: list[int], need: Sequence[int]) -> None:
        """Make ``seq`` the head of the KV cache and the next-token distributions at ``need`` available."""
        n_lcp = lcp(self.kv, seq)
        start = n_lcp
        for p in need:
            if p >= n_lcp or p not in self.rows:
                start = min(start, p)
        if start >= len(seq):
            return
        self.truncate(start)
        start = len(self.kv)  # the truncation may have had to reset
        need_set = set(need)
        batch = self.llm._batch.batch
        for i in range(start, len(seq), self.config.n_batch):
            chunk = seq[i : i + self.config.n_batch]
            batch.n_tokens = len(chunk)
            outputs = []
            for j, tok in enumerate(chunk):
                batch.token[j] = tok
                batch.pos[j] = i + j
                batch.seq_id[j][0] = 0
                batch.n_seq_id[j] = 1
                want = (i + j) in need_set
                batch.logits[j] = want
                if want:
                    outputs.append(j)
            self.decode()
            for j in outputs:
                self.rows[i + j] = self.row(j)
            self.kv.extend(chunk)
        self.stats["evaluated_tokens"] += len(seq) - start

    def _put_shared(self, inc: Sequence[int], start: int, nb: int, logit_at: int) -> tuple[int, int]:
        """Put the prefix's new tokens into the batch for sequence 0 and ``nb`` more sequences; returns the
        number of batch entries and the entry whose logits were asked for (position ``logit_at``), or -1."""
        batch = self.llm._batch.batch
        out = -1
        for i, tok in enumerate(inc):
            batch.token[i] = tok
            batch.pos[i] = start + i
            batch.n_seq_id[i] = nb + 1
            for sq in range(nb + 1):
                batch.seq_id[i][sq] = sq
            batch.logits[i] = start + i == logit_at
            if start + i == logit_at:
                out = i
        return len(inc), out

    def _decode_with_sequences(self, n: int, nb: int) -> None:
        """Decode ``n`` batch entries after copying sequence 0 into sequences 1..nb; the extra sequences are
        removed afterwards whatever happens (the caller reads the logits inside ``read``)."""
        mem = self.lc.llama_get_memory(self.llm._ctx.ctx)
        self.llm._batch.batch.n_tokens = n
        for k in range(nb):
            self.lc.llama_memory_seq_cp(mem, 0, k + 1, -1, -1)
        self.decode()

    def _drop_sequences(self, nb: int) -> None:
        mem = self.lc.llama_get_memory(self.llm._ctx.ctx)
        for k in range(nb):
            self.lc.llama_memory_seq_rm(mem, k + 1, -1, -1)

    def decode_tree(self, ptoks: list[int], branches: list[tuple[int, ...]]) -> tuple[Row, list[list[Row]]]:
        """One decode for the prefix's new tokens and every branch (a multi-token choice without its last
        token). Branch ``k`` runs in sequence ``k + 1``, sharing the prefix's KV cells (unified cache), and
        is removed afterwards; sequence 0 ends up holding exactly the prefix."""
        n_p = len(ptoks)
        n_lcp = lcp(self.kv, ptoks)
        start = n_p if n_lcp >= n_p and (n_p - 1) in self.rows else min(n_lcp, n_p - 1)
        self.truncate(start)
        start = len(self.kv)
        n_branch = sum(len(b) for b in branches)
        if n_p - start + n_branch > self.config.n_batch:
            self.ensure(ptoks, [n_p - 1])  # a long prefix goes first, in chunks
            start = n_p
        inc = ptoks[start:]
        nb = len(branches)
        batch = self.llm._batch.batch
        n, prefix_out = self._put_shared(inc, start, nb, n_p - 1)
        outs: list[list[int]] = []
        for k, br in enumerate(branches):
            idx = []
            for i, tok in enumerate(br):
                batch.token[n] = tok
                batch.pos[n] = n_p + i
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = k + 1
                batch.logits[n] = True
                idx.append(n)
                n += 1
            outs.append(idx)
        try:
            self._decode_with_sequences(n, nb)
            if prefix_out >= 0:
                self.rows[n_p - 1] = self.row(prefix_out)
            rows = [[self.row(i) for i in idx] for idx in outs]
        finally:
            self._drop_sequences(nb)
        self.kv.extend(inc)
        self.stats["evaluated_tokens"] += len(inc) + n_branch
        return self.rows[n_p - 1], rows

    def score_tails(self, run: Sequence[Prepared]) -> list[dict[str, Any]]:
        """Queries with single-token choices that share a trunk: the trunk's new tokens (in sequence 0 and
        every tail's sequence) and every tail (in its own sequence, logits only at its last token) go to
        llama.cpp in one decode; sequence 0 ends up holding the trunk."""
        first = run[0][0]
        n_t = min(min(lcp(first, p), len(p) - 1) for p, _ in run)
        trunk = first[:n_t]
        self.truncate(lcp(self.kv, trunk))
        start = len(self.kv)
        tails = [p[n_t:] for p, _ in run]
        n_tail = sum(map(len, tails))
        before = self.stats["evaluated_tokens"]
        if n_t - start + n_tail > self.config.n_batch:
            self.ensure(trunk, [])  # a long trunk goes first, in chunks
            start = n_t
        inc = trunk[start:]
        nb = len(tails)
        batch = self.llm._batch.batch
        n, _ = self._put_shared(inc, start, nb, -1)
        outs = []
        for k, tail in enumerate(tails):
            for i, tok in enumerate(tail):
                batch.token[n] = tok
                batch.pos[n] = n_t + i
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = k + 1
                batch.logits[n] = i == len(tail) - 1
                n += 1
            outs.append(n - 1)
        try:
            self._decode_with_sequences(n, nb)
            rows = [self.row(i) for i in outs]
        finally:
            self._drop_sequences(nb)
        self.kv.extend(inc)
        self.stats["evaluated_tokens"] += len(inc) + n_tail
        evaluated = self.stats["evaluated_tokens"] - before
        logical = sum(len(p) for p, _ in run)
        self.stats["reused_tokens"] += max(logical - evaluated, 0)
        return [
            {"logprobs": [row.logprob(t[0]) for t in ctoks], "ntokens": [1] * len(ctoks)}
            for row, (_, ctoks) in zip(rows, run, strict=True)
        ]

    def score_tokens(self, ptoks: list[int], ctoks: list[list[int]]) -> dict[str, Any]:
        """One query: each choice's summed log-prob given the prefix (branches decoded in parallel when the
        context has several sequences, otherwise one after another sharing common tokens)."""
        n_p = len(ptoks)
        logprobs = [0.0] * len(ctoks)
        before = self.stats["evaluated_tokens"]
        branches = sorted({tuple(t[:-1]) for t in ctoks if len(t) > 1})
        if branches and self.n_seq > 1 and max(map(len, branches)) < self.config.n_batch // 2:
            # groups of at most n_seq - 1 branches and half a batch of tokens; the first group travels with
            # the prefix's new tokens, later ones (many long choices) in their own decodes
            groups: list[list[tuple[int, ...]]] = [[]]
            size = 0
            for b in branches:
                if groups[-1] and (
                    len(groups[-1]) >= self.n_seq - 1 or size + len(b) > self.config.n_batch // 2
                ):
                    groups.append([])
                    size = 0
                groups[-1].append(b)
                size += len(b)
            brows: dict[tuple[int, ...], list[Row]] = {}
            for g in groups:
                prow, rows = self.decode_tree(ptoks, g)
                brows.update(zip(g, rows, strict=True))
            for k, t in enumerate(ctoks):
                logprobs[k] = prow.logprob(t[0])
                if len(t) > 1:
                    br = brows[tuple(t[:-1])]
                    logprobs[k] += sum(br[i - 1].logprob(t[i]) for i in range(1, len(t)))
        else:
            # one sequence: choices sharing leading tokens run one after another, so their common tokens
            # are evaluated once; single-token choices all read the prefix's last logits
            for k in sorted(range(len(ctoks)), key=lambda k: ctoks[k]):
                t = ctoks[k]
                need = [n_p - 1 + i for i in range(len(t))]
                self.ensure(ptoks + t[:-1], need)
                logprobs[k] = sum(self.rows[n_p - 1 + i].logprob(tok) for i, tok in enumerate(t))
        self.trim_rows([n_p - 1])
        # the query's own tokens (prefix once, each choice's tokens but its last); not evaluated = reused
        logical = n_p + sum(len(t) - 1 for t in ctoks)
        self.stats["reused_tokens"] += max(logical - (self.stats["evaluated_tokens"] - before), 0)
        return {"logprobs": logprobs, "ntokens": [len(t) for t in ctoks]}
