"""Greedy generation of many prompts at once: each prompt is a llama.cpp sequence, prompts share their common
prefixes (:mod:`labeler.judge.trie`), and every generation step decodes one token of every unfinished
sequence in one batch. The answer of each prompt follows llama-cpp-python's ``create_completion`` rules as
:meth:`labeler.judge.Judge.generate` uses them: greedy over the tokens the grammar allows, end at an
end-of-generation token, at the first stop string (cut there) or after ``max_tokens``.

Sampling is grammar-first-checked: the best token is tested against the sequence's grammar alone and the whole
vocabulary is filtered only when it is rejected, which picks the same token as filtering first. Logits differ
from one-prompt-at-a-time generation only by llama.cpp's batch-shape rounding, so a near-tie between two
tokens can resolve differently (see the tolerance in tests/labeler/judge/test_batched_generation.py).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np

from labeler.judge.engine import KVEngine
from labeler.judge.tails import lcp
from labeler.judge.trie import Placed, groups, place, trunk_of

_MARGIN = 16  # KV cells kept free in a group


class _Sampler:
    """Greedy sampling under an optional GBNF grammar for one sequence (its own grammar state)."""

    def __init__(self, engine: KVEngine, gbnf: str | None):
        self.lc = engine.lc
        self.engine = engine
        self.smpl = None
        if gbnf is not None:
            vocab = self.lc.llama_model_get_vocab(engine.llm._model.model)
            self.smpl = self.lc.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")

    def _apply(self, ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        lc = self.lc
        n = len(ids)
        data = (lc.llama_token_data * n)()
        view = np.frombuffer(
            data, dtype=np.dtype([("id", np.intc), ("logit", np.float32), ("p", np.float32)])
        )
        view["id"] = ids
        view["logit"] = logits
        view["p"] = 0.0
        arr = lc.llama_token_data_array(data=data, size=n, selected=-1, sorted=False)
        lc.llama_sampler_apply(self.smpl, ctypes.byref(arr))
        return view["logit"].copy()

    def sample(self, logits: np.ndarray) -> int:
        best = int(np.argmax(logits))
        if self.smpl is None:
            return best
        if np.isfinite(self._apply(np.array([best]), logits[best : best + 1]))[0]:
            tok = best
        else:
            filtered = self._apply(np.arange(len(logits), dtype=np.intc), logits)
            tok = int(np.argmax(filtered))
        self.lc.llama_sampler_accept(self.smpl, tok)
        return tok

    def close(self) -> None:
        if self.smpl is not None:
            self.lc.llama_sampler_free(self.smpl)
            self.smpl = None


def _logits(engine: KVEngine, index: int) -> np.ndarray:
    ptr = engine.llm._ctx.get_logits_ith(index)
    return np.ctypeslib.as_array(ptr, shape=(engine.n_vocab,)).copy()


def complete_many(
    engine: KVEngine,
    prompts: Sequence[list[int]],
    gbnf: str | None,
    max_tokens: int,
    stop: Sequence[str],
) -> list[tuple[str, int]]:
    """Greedy completions of the token lists ``prompts`` (with BOS); per prompt the text and the number of
    generated tokens. Duplicates are generated once; every prompt must leave room for ``max_tokens``."""
    order = sorted(set(map(tuple, prompts)))
    leaves = [list(p) for p in order]
    done: dict[tuple[int, ...], tuple[str, int]] = {}
    cap = max(engine.n_seq - 1, 1)
    for g in groups(leaves, max_leaves=cap, max_cells=engine.n_ctx - _MARGIN, extra_per_leaf=max_tokens):
        members = [leaves[i] for i in g]
        for leaf, out in zip(members, _complete_group(engine, members, gbnf, max_tokens, stop), strict=True):
            done[tuple(leaf)] = out
    return [done[tuple(p)] for p in prompts]


def _put(engine: KVEngine, entries: Sequence[Placed], want: Sequence[bool]) -> None:
    batch = engine.llm._batch.batch
    for i, (e, w) in enumerate(zip(entries, want, strict=True)):
        batch.token[i] = e.token
        batch.pos[i] = e.pos
        batch.n_seq_id[i] = e.last - e.first + 1
        for j, leaf in enumerate(range(e.first, e.last + 1)):
            batch.seq_id[i][j] = leaf + 1
        batch.logits[i] = w
    batch.n_tokens = len(entries)


def _complete_group(
    engine: KVEngine, leaves: list[list[int]], gbnf: str | None, max_tokens: int, stop: Sequence[str]
) -> list[tuple[str, int]]:
    lc = engine.lc
    n = len(leaves)
    trunk = trunk_of(leaves)
    head = leaves[0][:trunk]
    engine.truncate(lcp(engine.kv, head))
    engine.ensure(head, [])  # sequence 0 holds exactly the shared trunk now
    vocab = lc.llama_model_get_vocab(engine.llm._model.model)
    mem = lc.llama_get_memory(engine.llm._ctx.ctx)
    samplers = [_Sampler(engine, gbnf) for _ in range(n)]
    stops = [s.encode("utf-8") for s in stop]
    gen: list[list[int]] = [[] for _ in range(n)]
    text: list[bytes | None] = [None] * n
    pending: dict[int, int] = {}  # leaf -> next token sampled and not yet decoded
    try:
        for k in range(n):
            lc.llama_memory_seq_cp(mem, 0, k + 1, -1, -1)
        entries = place(leaves, trunk)
        step = engine.config.n_batch
        for c in range(0, len(entries), step):
            chunk = entries[c : c + step]
            want = [e.pos == len(leaves[e.first]) - 1 for e in chunk]
            _put(engine, chunk, want)
            engine.decode()
            for i, (e, w) in enumerate(zip(chunk, want, strict=True)):
                if w:
                    pending[e.first] = samplers[e.first].sample(_logits(engine, i))
        engine.stats["evaluated_tokens"] += len(entries)
        while pending:
            active = []
            for k in sorted(pending):
                tok = pending.pop(k)
                if lc.llama_vocab_is_eog(vocab, tok):
                    text[k] = engine.llm.detokenize(gen[k])
                    continue
                gen[k].append(tok)
                all_text = engine.llm.detokenize(gen[k])
                hit = [s for s in stops if s in all_text]
                if hit:
                    text[k] = all_text[: all_text.index(hit[0])]
                    continue
                if len(gen[k]) >= max_tokens:
                    text[k] = all_text
                    continue
                active.append(k)
            if not active:
                break
            batch = engine.llm._batch.batch
            for i, k in enumerate(active):
                batch.token[i] = gen[k][-1]
                batch.pos[i] = len(leaves[k]) + len(gen[k]) - 1
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = k + 1
                batch.logits[i] = True
            batch.n_tokens = len(active)
            engine.decode()
            engine.stats["evaluated_tokens"] += len(active)
            for i, k in enumerate(active):
                pending[k] = samplers[k].sample(_logits(engine, i))
    finally:
        for k in range(n):
            lc.llama_memory_seq_rm(mem, k + 1, -1, -1)
        for s in samplers:
            s.close()
    logical = sum(len(x) for x in leaves)
    engine.stats["reused_tokens"] += max(logical - len(place(leaves, trunk)) - trunk, 0)
    engine.stats["generated_tokens"] += sum(map(len, gen))
    return [((t or b"").decode("utf-8", errors="ignore"), len(g)) for t, g in zip(text, gen, strict=True)]


def grammar_text(grammar: Any) -> str | None:
    """The GBNF text of a ``LlamaGrammar`` (None for no grammar)."""
    return None if grammar is None else str(grammar._grammar)
