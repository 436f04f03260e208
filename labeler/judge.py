"""The local LLM judge: choice scoring by log-probabilities and constrained generation over llama-cpp-python.

Usage::

    from labeler.judge import open_judge
    with open_judge("gemma3-270m", cache="labels.sqlite") as judge:
        s = judge.score("Q: Is the sky blue?\\nA:", [" Yes", " No"], template="demo", version=1)
        s.logprobs, s.probs, s.ntokens
        text = judge.generate("List two fruits:", json_schema={...}, max_tokens=32, template="demo")

Scoring (``score``) reads logits; it never samples. The prefix is tokenized with BOS, each choice without BOS
and appended as is (so a choice normally starts with its own leading space, `` Yes``). The log-prob of a
choice is the **sum** of its tokens' log-probs given the prefix and the choice's earlier tokens. ``probs`` is
a softmax over the choices of a normalised score: ``normalize="sum"`` (default) uses the summed log-prob, i.e.
the joint probability of each choice renormalised over the choices; ``normalize="mean"`` uses the mean
log-prob per token (length-normalised, for choices of very different lengths). Single-token choices are
identical under both.

Prefix reuse: the judge keeps llama.cpp's KV cache between queries and the token list it holds. A query
evaluates only the tokens after the longest common prefix with what is cached (the cache is truncated there).
Single-token choices need no extra evaluation at all: the prefix's last logits give them all. Multi-token
choices (``" -2"`` is ``" -"`` + ``"2"``) branch off the prefix: every distinct branch runs as its own
sequence in the same batch as the prefix's new tokens (one ``llama_decode`` per query), sharing the prefix's
KV cells. Gemma 3 uses sliding-window attention: llama.cpp's default SWA cache keeps only the last window of
positions, so truncating it and continuing is not always valid. The judge therefore creates its context with
``swa_full=True`` (a full-size SWA cache: a few MB more for a 270M model), which makes truncation exact; tests
compare reused against fresh evaluation.

Every query goes through the label cache (:mod:`labeler.cache`) when one is given, so reruns and resumed runs
cost nothing. ``score_many`` answers a list of queries: it deduplicates, serves cache hits, orders the rest so
that queries sharing a prefix run one after another, and writes each result as soon as it is computed.

Threads: ``n_threads`` / ``n_threads_batch`` default to ``$EDGEJUDGE_THREADS`` (default 1: llama.cpp slows
down badly with more threads than free cores on a shared box).
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from labeler.cache import LabelCache, make_key
from models.registry import DEFAULT_JUDGE, ModelError, ResolvedModel, resolve_judge

NORMALIZATIONS = ("sum", "mean")
# results are written as soon as they are computed (a WAL commit costs ~0.1 ms, a query >= 20 ms), so a killed
# run loses at most the query in flight
_WRITE_BATCH = 1
# sequences in the llama.cpp context: 0 holds the prefix, the others the branches of multi-token choices
_N_SEQ = 32
_MAX_ROWS = 48  # cached next-token distributions kept between queries (1 MB each for a 262k vocabulary)
_MAX_TAIL = 64  # longest query tail (tokens after the shared trunk) decoded in a parallel run


class JudgeError(ValueError):
    """A query the judge cannot answer as asked (too long for the context, empty choice, bad option)."""


class JudgeLoadError(ModelError):
    """llama.cpp could not load the model file."""


def default_threads() -> int:
    """``$EDGEJUDGE_THREADS`` (default 1)."""
    raw = os.environ.get("EDGEJUDGE_THREADS", "1")
    try:
        n = int(raw)
    except ValueError:
        raise JudgeError(f"EDGEJUDGE_THREADS={raw!r}: expected a positive integer") from None
    if n < 1:
        raise JudgeError(f"EDGEJUDGE_THREADS={raw!r}: expected a positive integer")
    return n


@dataclass(frozen=True)
class ChoiceScores:
    """Scores of the choices of one query, in the order they were given."""

    choices: tuple[str, ...]
    logprobs: list[float]  # sum of token log-probs of each choice given the prefix
    ntokens: list[int]  # tokens per choice
    normalize: str = "sum"
    cached: bool = False

    @property
    def scores(self) -> list[float]:
        """The normalised scores the softmax runs over (see the module docstring)."""
        if self.normalize == "mean":
            return [lp / max(n, 1) for lp, n in zip(self.logprobs, self.ntokens, strict=False)]
        return list(self.logprobs)

    @property
    def probs(self) -> list[float]:
        s = np.asarray(self.scores, dtype=np.float64)
        e = np.exp(s - s.max())
        return (e / e.sum()).tolist()

    @property
    def best(self) -> int:
        return int(np.argmax(self.scores))

    def margin(self, a: int = 0, b: int = 1) -> float:
        """``logprobs[a] - logprobs[b]``: e.g. log P(" Yes") − log P(" No")."""
        return self.logprobs[a] - self.logprobs[b]


@dataclass
class _Row:
    logits: np.ndarray
    lse: float

    def logprob(self, token: int) -> float:
        return float(self.logits[token]) - self.lse


@dataclass
class JudgeConfig:
    n_ctx: int = 2048
    n_batch: int = 512
    n_threads: int = 1
    n_threads_batch: int = 1
    n_gpu_layers: int = 0
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class Judge:
    """A loaded GGUF judge. Create with :func:`open_judge`; close with :meth:`close` or a ``with`` block.

    ``stats``: ``queries`` (answered, including cache hits and duplicates), ``cache_hits`` (answered without
    the model), ``evaluated_tokens`` (tokens llama.cpp decoded for prompts and choices), ``reused_tokens`` (a
    query's tokens that came from the KV cache instead), ``generated_tokens``, ``seconds`` (wall time inside
    the judge), ``truncated_texts`` (texts shortened by :func:`labeler.prompting.fit_text`).
    """

    def __init__(self, model: ResolvedModel, config: JudgeConfig, cache: LabelCache | None, own_cache: bool):
        import llama_cpp  # heavy: imported only when a judge is opened

        self.model = model
        self.config = config
        self._cache = cache
        self._own_cache = own_cache
        self._llama_cpp = llama_cpp
        try:
            self._llm = llama_cpp.Llama(
                str(model.path),
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
                f"{model.path}: llama.cpp failed to load this GGUF ({e}); "
                "is it a complete model file for a supported architecture?"
            ) from None
        try:
            self._n_vocab = self._llm.n_vocab()
            self._n_seq = self._enable_branches(_N_SEQ)
        except BaseException:
            self._llm.close()
            raise
        self._kv: list[int] = []  # tokens currently in the KV cache (sequence 0)
        self._rows: dict[int, _Row] = {}  # position -> next-token distribution after kv[: position + 1]
        self._anchor: tuple[list[int], Any] | None = None  # prime(): the prefix's tokens and KV state
        self.stats: dict[str, float] = {
            "queries": 0,
            "cache_hits": 0,
            "evaluated_tokens": 0,
            "reused_tokens": 0,
            "generated_tokens": 0,
            "seconds": 0.0,
            "truncated_texts": 0,
        }

    # -------------------------------------------------------------------------------------------- identity

    @property
    def model_sha256(self) -> str:
        return self.model.sha256

    @property
    def n_ctx(self) -> int:
        return int(self._llm.n_ctx())

    @property
    def chat_template(self) -> str | None:
        """The GGUF's chat template, or None for a base model (use plain completion prompts then)."""
        return self.model.info.chat_template if self.model.info else None

    def provenance(self) -> dict[str, Any]:
        return {
            **self.model.provenance(),
            "n_ctx": self.n_ctx,
            "backend": "llama-cpp-python",
            "backend_version": getattr(self._llama_cpp, "__version__", "?"),
        }

    # -------------------------------------------------------------------------------------------- tokens

    def tokenize(self, text: str, *, bos: bool = False) -> list[int]:
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=bos, special=False))

    def detokenize(self, tokens: Sequence[int]) -> str:
        return self._llm.detokenize(list(tokens)).decode("utf-8", errors="replace")

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` without BOS."""
        return len(self.tokenize(text))

    # -------------------------------------------------------------------------------------------- engine

    def _enable_branches(self, n_seq: int) -> int:
        """Recreate the context with ``n_seq`` sequences over one unified KV cache, so that the branches of
        multi-token choices are decoded in the same batch as the prefix. llama-cpp-python 0.3.36's ``Llama``
        does not expose ``n_seq_max``; on any failure the judge keeps its context and scores branch by branch.
        """
        import contextlib

        from llama_cpp import _internals

        llm = self._llm
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

    @staticmethod
    def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
        n = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            n += 1
        return n

    def _row(self, batch_index: int) -> _Row:
        ptr = self._llm._ctx.get_logits_ith(batch_index)
        logits = np.ctypeslib.as_array(ptr, shape=(self._n_vocab,)).astype(np.float32, copy=True)
        m = float(logits.max())
        return _Row(logits, m + math.log(float(np.exp(logits - m).sum())))

    def _decode_tree(
        self, ptoks: list[int], branches: list[tuple[int, ...]]
    ) -> tuple[_Row, list[list[_Row]]]:
        """One decode for the prefix's new tokens and every branch (a multi-token choice without its last
        token). Branch ``k`` runs in sequence ``k + 1``, sharing the prefix's KV cells (unified cache), and
        is removed afterwards; sequence 0 ends up holding exactly the prefix."""
        n_p = len(ptoks)
        lcp = self._lcp(self._kv, ptoks)
        start = n_p if lcp >= n_p and (n_p - 1) in self._rows else min(lcp, n_p - 1)
        self._truncate(start)
        start = len(self._kv)
        n_branch = sum(len(b) for b in branches)
        if n_p - start + n_branch > self.config.n_batch:
            self._ensure(ptoks, [n_p - 1])  # a long prefix goes first, in chunks
            start = n_p
        inc = ptoks[start:]
        ctx = self._llm._ctx
        mem = self._llama_cpp.llama_get_memory(ctx.ctx)
        nb = len(branches)
        batch = self._llm._batch.batch
        n = 0
        prefix_out = -1
        for i, tok in enumerate(inc):
            batch.token[n] = tok
            batch.pos[n] = start + i
            batch.n_seq_id[n] = nb + 1
            for sq in range(nb + 1):
                batch.seq_id[n][sq] = sq
            batch.logits[n] = start + i == n_p - 1
            if start + i == n_p - 1:
                prefix_out = n
            n += 1
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
        batch.n_tokens = n
        try:
            for k in range(nb):
                self._llama_cpp.llama_memory_seq_cp(mem, 0, k + 1, -1, -1)
            self._decode()
            if prefix_out >= 0:
                self._rows[n_p - 1] = self._row(prefix_out)
            rows = [[self._row(i) for i in idx] for idx in outs]
        finally:
            for k in range(nb):
                self._llama_cpp.llama_memory_seq_rm(mem, k + 1, -1, -1)
        self._kv.extend(inc)
        self.stats["evaluated_tokens"] += len(inc) + n_branch
        return self._rows[n_p - 1], rows

    def _decode(self) -> None:
        try:
            self._llm._ctx.decode(self._llm._batch)
        except RuntimeError as e:  # the KV cache is in an unknown state now: start from scratch next time
            self.reset()
            raise JudgeError(f"llama.cpp could not evaluate the batch ({e})") from None

    def _truncate(self, n: int) -> None:
        if n >= len(self._kv):
            return
        if not self._llm._ctx.kv_cache_seq_rm(0, n, -1):
            # cannot drop a tail of this cache: start over
            self._llm._ctx.kv_cache_seq_rm(0, 0, -1)
            n = 0
        del self._kv[n:]
        for p in [p for p in self._rows if p >= n]:
            del self._rows[p]

    def _ensure(self, seq: list[int], need: Sequence[int]) -> None:
        """Make ``seq`` the head of the KV cache and the next-token distributions at ``need`` available."""
        lcp = self._lcp(self._kv, seq)
        start = lcp
        for p in need:
            if p >= lcp or p not in self._rows:
                start = min(start, p)
        if start >= len(seq):
            return
        self._truncate(start)
        start = len(self._kv)  # the truncation may have had to reset
        need_set = set(need)
        batch = self._llm._batch.batch
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
            self._decode()
            for j in outputs:
                self._rows[i + j] = self._row(j)
            self._kv.extend(chunk)
        self.stats["evaluated_tokens"] += len(seq) - start

    def _plan_tails(self, prepared: Sequence[tuple[list[int], list[list[int]]]]) -> list[list[int]]:
        """Split queries (in answering order) into runs decoded together: consecutive queries with
        single-token choices whose prefixes share a trunk and differ in short tails (the COREN prompt
        variants' questions after one step, TRCA's statements after one transition). A run joins only while
        its tails cost no more tokens than answering the queries one after another with prefix reuse (plus
        one token per query), fit half a batch and the sequences, and no tail exceeds ``_MAX_TAIL``."""
        runs: list[list[int]] = []
        trunk = seq_extra = 0  # shared tokens of the current run; its members' costs after the first
        joinable = False  # the current run has only single-token choices
        for i, (ptoks, ctoks) in enumerate(prepared):
            single = self._n_seq > 1 and all(len(t) == 1 for t in ctoks)
            if runs and joinable and single:
                run = runs[-1]
                first, prev = prepared[run[0]][0], prepared[run[-1]][0]
                t = min(trunk, self._lcp(first, ptoks), len(ptoks) - 1)
                new_tails = sum(len(prepared[k][0]) - t for k in run) + len(ptoks) - t
                extra = seq_extra + len(ptoks) - min(self._lcp(prev, ptoks), len(ptoks) - 1)
                new_seq = len(first) - t + extra  # the same queries one after another from the trunk
                longest = max(len(prepared[k][0]) for k in [*run, i]) - t
                if (
                    len(run) < self._n_seq - 1
                    and longest <= _MAX_TAIL
                    and new_tails <= self.config.n_batch // 2
                    and new_tails <= new_seq + len(run) + 1
                    and t + new_tails <= self.n_ctx
                ):
                    run.append(i)
                    trunk, seq_extra = t, extra
                    continue
            runs.append([i])
            trunk, seq_extra, joinable = len(ptoks) - 1, 0, single
        return runs

    def _score_tails(self, run: Sequence[tuple[list[int], list[list[int]]]]) -> list[dict[str, Any]]:
        """Queries with single-token choices that share a trunk: the trunk's new tokens (in sequence 0 and
        every tail's sequence) and every tail (in its own sequence, logits only at its last token) go to
        llama.cpp in one decode; sequence 0 ends up holding the trunk."""
        first = run[0][0]
        n_t = min(min(self._lcp(first, p), len(p) - 1) for p, _ in run)
        trunk = first[:n_t]
        self._truncate(self._lcp(self._kv, trunk))
        start = len(self._kv)
        tails = [p[n_t:] for p, _ in run]
        n_tail = sum(map(len, tails))
        before = self.stats["evaluated_tokens"]
        if n_t - start + n_tail > self.config.n_batch:
            self._ensure(trunk, [])  # a long trunk goes first, in chunks
            start = n_t
        inc = trunk[start:]
        nb = len(tails)
        mem = self._llama_cpp.llama_get_memory(self._llm._ctx.ctx)
        batch = self._llm._batch.batch
        n = 0
        for i, tok in enumerate(inc):
            batch.token[n] = tok
            batch.pos[n] = start + i
            batch.n_seq_id[n] = nb + 1
            for sq in range(nb + 1):
                batch.seq_id[n][sq] = sq
            batch.logits[n] = False
            n += 1
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
        batch.n_tokens = n
        try:
            for k in range(nb):
                self._llama_cpp.llama_memory_seq_cp(mem, 0, k + 1, -1, -1)
            self._decode()
            rows = [self._row(i) for i in outs]
        finally:
            for k in range(nb):
                self._llama_cpp.llama_memory_seq_rm(mem, k + 1, -1, -1)
        self._kv.extend(inc)
        self.stats["evaluated_tokens"] += len(inc) + n_tail
        evaluated = self.stats["evaluated_tokens"] - before
        logical = sum(len(p) for p, _ in run)
        self.stats["reused_tokens"] += max(logical - evaluated, 0)
        return [
            {"logprobs": [row.logprob(t[0]) for t in ctoks], "ntokens": [1] * len(ctoks)}
            for row, (_, ctoks) in zip(rows, run, strict=True)
        ]

    def _trim_rows(self, keep: Sequence[int]) -> None:
        if len(self._rows) > _MAX_ROWS:
            keep_set = set(keep)
            for p in [p for p in self._rows if p not in keep_set]:
                del self._rows[p]

    def _check_choices(self, choices: Sequence[str]) -> tuple[str, ...]:
        if isinstance(choices, str) or not isinstance(choices, Sequence) or len(choices) < 1:
            raise JudgeError("choices must be a non-empty list of strings")
        for c in choices:
            if not isinstance(c, str) or not c:
                raise JudgeError(f"every choice must be a non-empty string, got {c!r}")
        return tuple(choices)

    def _prepare(self, prefix: str, choices: tuple[str, ...]) -> tuple[list[int], list[list[int]]]:
        """Prefix tokens (with BOS) and each choice's tokens, checked to fit the context."""
        ptoks = self.tokenize(prefix, bos=True)
        if not ptoks:
            raise JudgeError("empty prefix: this model adds no BOS token, so the prefix needs some text")
        ctoks = [self.tokenize(c) for c in choices]
        for c, t in zip(choices, ctoks, strict=False):
            if not t:
                raise JudgeError(f"choice {c!r} has no tokens")
        n_p = len(ptoks)
        longest = n_p + max(len(t) for t in ctoks) - 1
        if longest > self.n_ctx:
            raise JudgeError(
                f"prompt of {n_p} tokens plus the longest choice does not fit the context "
                f"(n_ctx={self.n_ctx}); shorten it (labeler.prompting.fit_text) or raise n_ctx"
            )
        return ptoks, ctoks

    def _compute_scores(self, prefix: str, choices: tuple[str, ...]) -> dict[str, Any]:
        return self._score_tokens(*self._prepare(prefix, choices))

    def _score_tokens(self, ptoks: list[int], ctoks: list[list[int]]) -> dict[str, Any]:
        n_p = len(ptoks)
        logprobs = [0.0] * len(ctoks)
        before = self.stats["evaluated_tokens"]
        branches = sorted({tuple(t[:-1]) for t in ctoks if len(t) > 1})
        if branches and self._n_seq > 1 and max(map(len, branches)) < self.config.n_batch // 2:
            # groups of at most n_seq - 1 branches and half a batch of tokens; the first group travels with
            # the prefix's new tokens, later ones (many long choices) in their own decodes
            groups: list[list[tuple[int, ...]]] = [[]]
            size = 0
            for b in branches:
                if groups[-1] and (
                    len(groups[-1]) >= self._n_seq - 1 or size + len(b) > self.config.n_batch // 2
                ):
                    groups.append([])
                    size = 0
                groups[-1].append(b)
                size += len(b)
            brows: dict[tuple[int, ...], list[_Row]] = {}
            for g in groups:
                prow, rows = self._decode_tree(ptoks, g)
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
                self._ensure(ptoks + t[:-1], need)
                logprobs[k] = sum(self._rows[n_p - 1 + i].logprob(tok) for i, tok in enumerate(t))
        self._trim_rows([n_p - 1])
        # the query's own tokens (prefix once, each choice's tokens but its last); not evaluated = reused
        logical = n_p + sum(len(t) - 1 for t in ctoks)
        self.stats["reused_tokens"] += max(logical - (self.stats["evaluated_tokens"] - before), 0)
        return {"logprobs": logprobs, "ntokens": [len(t) for t in ctoks]}

    # -------------------------------------------------------------------------------------------- scoring

    def _score_key(self, prefix: str, choices: tuple[str, ...], template: str, version: int) -> str:
        return make_key("score", self.model_sha256, template, version, prefix, list(choices))

    def score(
        self,
        prefix: str,
        choices: Sequence[str],
        *,
        template: str = "adhoc",
        version: int = 1,
        normalize: str = "sum",
    ) -> ChoiceScores:
        """Log-probabilities of each choice as a continuation of ``prefix`` (see the module docstring).

        ``template``/``version`` name the prompt template that produced ``prefix``; they are part of the cache
        key, so bump the version when the template changes."""
        return self.score_many([(prefix, choices)], template=template, version=version, normalize=normalize)[
            0
        ]

    def score_many(
        self,
        queries: Sequence[tuple[str, Sequence[str]]],
        *,
        template: str | Sequence[str] = "adhoc",
        version: int | Sequence[int] = 1,
        normalize: str = "sum",
        progress: bool | None = False,
    ) -> list[ChoiceScores]:
        """Answer many ``(prefix, choices)`` queries: dedup, cache hits, prefix-sharing order, batching.

        ``template``/``version``: one for all queries, or one per query (e.g. several prompt variants of one
        step sent together so that the step's text is evaluated once). Queries with single-token choices
        whose prefixes differ only in short tails after a shared trunk are decoded together, each tail in
        its own sequence (see :meth:`_plan_tails`)."""
        if normalize not in NORMALIZATIONS:
            raise JudgeError(f"normalize={normalize!r}: expected one of {', '.join(NORMALIZATIONS)}")
        t0 = time.perf_counter()
        checked = [(p, self._check_choices(c)) for p, c in queries]
        for p, _ in checked:
            if not isinstance(p, str):
                raise JudgeError(f"prefix must be a string, got {type(p).__name__}")
        n_q = len(checked)
        tids = [template] * n_q if isinstance(template, str) else list(template)
        vers = [version] * n_q if isinstance(version, int) else list(version)
        if len(tids) != n_q or len(vers) != n_q:
            raise JudgeError(f"{n_q} queries but {len(tids)} templates and {len(vers)} versions")
        keys = [self._score_key(p, c, t, v) for (p, c), t, v in zip(checked, tids, vers, strict=True)]
        meta = dict(zip(keys, zip(tids, vers, strict=True), strict=True))
        results: dict[str, tuple[dict[str, Any], bool]] = {}
        if self._cache is not None:
            for k, payload in self._cache.get_many(sorted(set(keys))).items():
                results[k] = (payload, True)
        todo: dict[str, tuple[str, tuple[str, ...]]] = {}
        for k, q in zip(keys, checked, strict=False):
            if k not in results and k not in todo:
                todo[k] = q
        order = sorted(todo, key=lambda k: (todo[k][0], todo[k][1]))
        pending: list[tuple[str, dict[str, Any], str, str, str, int]] = []
        from labeler.progress import progress as bar

        try:
            with bar(total=len(order), enabled=progress, desc="judge", unit="q") as pb:
                prepared = [self._prepare(*todo[k]) for k in order]
                for run in self._plan_tails(prepared):
                    if len(run) > 1:
                        payloads = self._score_tails([prepared[i] for i in run])
                    else:
                        payloads = [self._score_tokens(*prepared[run[0]])]
                    for i, payload in zip(run, payloads, strict=True):
                        k = order[i]
                        results[k] = (payload, False)
                        if self._cache is not None:
                            tid, ver = meta[k]
                            pending.append((k, payload, "score", self.model_sha256, tid, ver))
                            if len(pending) >= _WRITE_BATCH:
                                self._cache.put_many(pending)
                                pending = []
                    pb.update(len(run))
        finally:
            if self._cache is not None and pending:
                self._cache.put_many(pending)
            self.stats["seconds"] += time.perf_counter() - t0
        out = []
        served: set[str] = set()
        for k, (_, choices) in zip(keys, checked, strict=False):
            payload, hit = results[k]
            self.stats["queries"] += 1
            dup = k in served
            if hit or dup:
                self.stats["cache_hits"] += 1
            served.add(k)
            out.append(
                ChoiceScores(
                    choices,
                    [float(x) for x in payload["logprobs"]],
                    [int(n) for n in payload["ntokens"]],
                    normalize,
                    cached=hit or dup,
                )
            )
        return out

    # -------------------------------------------------------------------------------------------- generation

    def generate(
        self,
        prompt: str,
        *,
        grammar: str | None = None,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 64,
        stop: Sequence[str] | None = None,
        template: str = "adhoc",
        version: int = 1,
    ) -> str:
        """Greedy completion of ``prompt`` (deterministic), optionally constrained by a GBNF ``grammar`` or a
        JSON schema (llama.cpp converts it to a grammar). Returns the generated text only."""
        if grammar is not None and json_schema is not None:
            raise JudgeError("pass either grammar or json_schema, not both")
        if max_tokens < 1:
            raise JudgeError(f"max_tokens must be >= 1, got {max_tokens}")
        stop_list = [stop] if isinstance(stop, str) else list(stop or [])
        params = {"grammar": grammar, "json_schema": json_schema, "max_tokens": max_tokens, "stop": stop_list}
        key = make_key("generate", self.model_sha256, template, version, prompt, params)
        t0 = time.perf_counter()
        self.stats["queries"] += 1
        try:
            if self._cache is not None:
                hit = self._cache.get(key)
                if hit is not None:
                    self.stats["cache_hits"] += 1
                    return str(hit["text"])
            text, n_gen = self._generate(prompt, grammar, json_schema, max_tokens, stop_list)
            if self._cache is not None:
                self._cache.put(
                    key,
                    {"text": text, "ntokens": n_gen},
                    kind="generate",
                    model_sha256=self.model_sha256,
                    template=template,
                    version=version,
                )
            return text
        finally:
            self.stats["seconds"] += time.perf_counter() - t0

    def _generate(
        self,
        prompt: str,
        grammar: str | None,
        json_schema: dict[str, Any] | None,
        max_tokens: int,
        stop: list[str],
    ) -> tuple[str, int]:
        from llama_cpp.llama_grammar import LlamaGrammar

        g = None
        what = "json_schema" if json_schema is not None else "grammar"
        try:
            if json_schema is not None:
                g = LlamaGrammar.from_json_schema(json.dumps(json_schema), verbose=False)
            elif grammar is not None:
                g = LlamaGrammar.from_string(grammar, verbose=False)
        except Exception as e:  # the schema converter raises ValueError/KeyError/... with varying messages
            raise JudgeError(f"bad {what}: {e}") from None
        if g is not None:
            self._check_grammar(g._grammar, what)
        ptoks = self.tokenize(prompt, bos=True)
        if len(ptoks) + max_tokens > self.n_ctx:
            raise JudgeError(
                f"prompt of {len(ptoks)} tokens plus max_tokens={max_tokens} does not fit the "
                f"context (n_ctx={self.n_ctx})"
            )
        llm = self._llm
        # hand our KV state to llama-cpp-python's own prefix matching, then take it back
        old = list(self._kv)
        llm.input_ids[: len(old)] = old
        llm.n_tokens = len(old)
        llm._requires_eval = True
        lcp = 0
        for a, b in zip(old, ptoks, strict=False):
            if a != b:
                break
            lcp += 1
        reused = min(lcp, len(ptoks) - 1)
        try:
            out = llm.create_completion(
                ptoks,
                max_tokens=max_tokens,
                temperature=0.0,
                top_k=1,
                top_p=1.0,
                min_p=0.0,
                repeat_penalty=1.0,
                grammar=g,
                stop=stop or None,
                seed=self.config.seed,
            )
        finally:
            new = [int(t) for t in llm.input_ids[: llm.n_tokens]]
            common = 0
            for a, b in zip(old, new, strict=False):
                if a != b:
                    break
                common += 1
            common = min(common, reused)
            self._kv = new
            for p in [p for p in self._rows if p >= common]:
                del self._rows[p]
        n_gen = int(out["usage"]["completion_tokens"])  # type: ignore[index]
        self.stats["reused_tokens"] += reused
        self.stats["evaluated_tokens"] += len(ptoks) - reused
        self.stats["generated_tokens"] += n_gen
        return str(out["choices"][0]["text"]), n_gen  # type: ignore[index]

    def _check_grammar(self, gbnf: str, what: str) -> None:
        # llama-cpp-python 0.3.36 hands an unparsable grammar to llama.cpp, whose NULL sampler then crashes
        # the process (segmentation fault); parse it here first and free the probe sampler.
        lc = self._llama_cpp
        vocab = lc.llama_model_get_vocab(self._llm._model.model)
        probe = lc.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
        if not probe:
            raise JudgeError(f"bad {what}: llama.cpp cannot parse the grammar (its message is on stderr)")
        lc.llama_sampler_free(probe)

    # -------------------------------------------------------------------------------------------- anchoring

    def prime(self, prefix: str) -> None:
        """Hold exactly ``prefix`` in the KV cache, in one fixed state, before a unit of work.

        The first call for a prefix evaluates it from an empty cache (in ``n_batch`` chunks) and keeps a copy
        of its KV state; every call then clears the cache and restores that copy (a memory copy, no
        evaluation). The queries that follow are computed from the same state whatever the judge answered
        before, so a unit of work (e.g. one trajectory's queries) gives bit-identical results in any order,
        in any process, on any worker. ``prime("")`` starts from an empty cache."""
        toks = self.tokenize(prefix, bos=True) if prefix else []
        lc = self._llama_cpp
        ctx = self._llm._ctx.ctx
        if self._anchor is None or self._anchor[0] != toks:
            self.reset()
            state = None
            if toks:
                self._ensure(toks, [])
                size = lc.llama_state_seq_get_size(ctx, 0)
                state = (ctypes.c_uint8 * size)()
                if lc.llama_state_seq_get_data(ctx, state, size, 0) != size:
                    raise JudgeError("llama.cpp could not copy the KV state of the primed prefix")
            self._anchor = (toks, state)
        toks, state = self._anchor
        self.reset()
        if state is not None:
            if lc.llama_state_seq_set_data(ctx, state, len(state), 0) == 0:
                self._anchor = None
                raise JudgeError("llama.cpp could not restore the KV state of the primed prefix")
            self._kv = list(toks)

    # -------------------------------------------------------------------------------------------- lifetime

    def reset(self) -> None:
        """Forget the KV cache (the next query is evaluated from scratch)."""
        self._llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        self._kv.clear()
        self._rows.clear()
        self._llm.reset()

    def close(self) -> None:
        llm = getattr(self, "_llm", None)
        if llm is not None:
            llm.close()
            self._llm = None  # type: ignore[assignment]
        if self._own_cache and self._cache is not None:
            self._cache.close()
        self._cache = None

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_judge(
    model: str | os.PathLike[str] = DEFAULT_JUDGE,
    *,
    n_threads: int | None = None,
    n_threads_batch: int | None = None,
    n_ctx: int = 2048,
    n_gpu_layers: int = 0,
    n_batch: int = 512,
    seed: int = 0,
    cache: str | os.PathLike[str] | LabelCache | None = None,
) -> Judge:
    """Resolve ``model`` (``gemma3-270m`` or a ``.gguf`` path), load it, and attach the label cache.

    ``cache``: a path (opened here, closed with the judge), an open :class:`LabelCache` or any object with its
    ``get``/``get_many``/``put``/``put_many`` (left open), or None.
    Threads default to ``$EDGEJUDGE_THREADS`` (default 1)."""
    threads = n_threads if n_threads is not None else default_threads()
    threads_batch = n_threads_batch if n_threads_batch is not None else threads
    for name, v in (
        ("n_threads", threads),
        ("n_threads_batch", threads_batch),
        ("n_ctx", n_ctx),
        ("n_batch", n_batch),
    ):
        if not isinstance(v, int) or v < 1:
            raise JudgeError(f"{name} must be a positive integer, got {v!r}")
    if not isinstance(n_gpu_layers, int) or n_gpu_layers < -1:
        raise JudgeError(f"n_gpu_layers must be an integer >= -1 (-1: all), got {n_gpu_layers!r}")
    resolved = resolve_judge(model)
    own = isinstance(cache, (str, os.PathLike))
    lc = LabelCache(Path(cache)) if own else cache  # type: ignore[arg-type]
    try:
        cfg = JudgeConfig(
            n_ctx=n_ctx,
            n_batch=min(n_batch, n_ctx),
            n_threads=threads,
            n_threads_batch=threads_batch,
            n_gpu_layers=n_gpu_layers,
            seed=seed,
        )
        return Judge(resolved, cfg, lc, own)  # type: ignore[arg-type]
    except BaseException:
        if own and lc is not None:
            lc.close()
        raise
