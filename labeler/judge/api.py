"""The judge's public interface: :class:`Judge` (scoring, generation, the label cache, statistics) and
:func:`open_judge`. The decoding itself is in :mod:`labeler.judge.engine`."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from labeler.cache import LabelCache, make_key
from labeler.judge import batched_generation, generation
from labeler.judge.config import JudgeConfig, judge_config
from labeler.judge.engine import KVEngine
from labeler.judge.errors import JudgeError
from labeler.judge.scores import NORMALIZATIONS, ChoiceScores
from labeler.judge.tails import Prepared, lcp, plan_tails
from models.registry import DEFAULT_JUDGE, ResolvedModel, resolve_judge

# results are written as soon as they are computed (a WAL commit costs ~0.1 ms, a query >= 20 ms), so a killed
# run loses at most the query in flight
_WRITE_BATCH = 1


class Judge:
    """A loaded GGUF judge. Create with :func:`open_judge`; close with :meth:`close` or a ``with`` block.

    ``stats``: ``queries`` (answered, including cache hits and duplicates), ``cache_hits`` (answered without
    the model), ``evaluated_tokens`` (tokens llama.cpp decoded for prompts and choices), ``reused_tokens`` (a
    query's tokens that came from the KV cache instead), ``generated_tokens``, ``seconds`` (wall time inside
    the judge).
    """

    def __init__(self, model: ResolvedModel, config: JudgeConfig, cache: LabelCache | None, own_cache: bool):
        self.model = model
        self.config = config
        self._cache = cache
        self._own_cache = own_cache
        self.stats: dict[str, float] = {
            "queries": 0,
            "cache_hits": 0,
            "evaluated_tokens": 0,
            "reused_tokens": 0,
            "generated_tokens": 0,
            "seconds": 0.0,
        }
        self._engine = KVEngine(model.path, config, self.stats)

    # -------------------------------------------------------------------------------------------- identity

    @property
    def model_sha256(self) -> str:
        return self.model.sha256

    @property
    def n_ctx(self) -> int:
        return self._engine.n_ctx

    @property
    def chat_template(self) -> str | None:
        """The GGUF's chat template, or None for a base model (use plain completion prompts then)."""
        return self.model.info.chat_template if self.model.info else None

    def provenance(self) -> dict[str, Any]:
        return {
            **self.model.provenance(),
            "n_ctx": self.n_ctx,
            "backend": "llama-cpp-python",
            "backend_version": getattr(self._engine.lc, "__version__", "?"),
        }

    # ---------------------------------------------------------------------------------------- engine access

    @property
    def _llm(self) -> Any:
        """The underlying ``llama_cpp.Llama`` (benchmarks read its context directly)."""
        return self._engine.llm

    @property
    def _n_seq(self) -> int:
        """Sequences the decodes may use (1: branch by branch, no parallel tails)."""
        return self._engine.n_seq

    @_n_seq.setter
    def _n_seq(self, value: int) -> None:
        self._engine.n_seq = value

    _lcp = staticmethod(lcp)

    def _plan_tails(self, prepared: Sequence[Prepared]) -> list[list[int]]:
        """Runs of queries decoded together (see :func:`labeler.judge.tails.plan_tails`)."""
        return plan_tails(prepared, n_seq=self._n_seq, n_batch=self.config.n_batch, n_ctx=self.n_ctx)

    # -------------------------------------------------------------------------------------------- tokens

    def tokenize(self, text: str, *, bos: bool = False) -> list[int]:
        return list(self._engine.llm.tokenize(text.encode("utf-8"), add_bos=bos, special=False))

    def detokenize(self, tokens: Sequence[int]) -> str:
        return self._engine.llm.detokenize(list(tokens)).decode("utf-8", errors="replace")

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` without BOS."""
        return len(self.tokenize(text))

    def _check_choices(self, choices: Sequence[str]) -> tuple[str, ...]:
        if isinstance(choices, str) or not isinstance(choices, Sequence) or len(choices) < 1:
            raise JudgeError("choices must be a non-empty list of strings")
        for c in choices:
            if not isinstance(c, str) or not c:
                raise JudgeError(f"every choice must be a non-empty string, got {c!r}")
        return tuple(choices)

    def _prepare(self, prefix: str, choices: tuple[str, ...]) -> Prepared:
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
                f"(n_ctx={self.n_ctx}); shorten it or raise n_ctx"
            )
        return ptoks, ctoks

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
        """Log-probabilities of each choice as a continuation of ``prefix`` (see the package docstring).

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
        its own sequence (see :mod:`labeler.judge.tails`)."""
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
        from models.progress import progress as bar

        try:
            with bar(total=len(order), enabled=progress, desc="judge", unit="q") as pb:
                prepared = [self._prepare(*todo[k]) for k in order]
                for run in self._plan_tails(prepared):
                    if len(run) > 1:
                        payloads = self._engine.score_tails([prepared[i] for i in run])
                    else:
                        payloads = [self._engine.score_tokens(*prepared[run[0]])]
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

    def generate_many(
        self,
        prompts: Sequence[str],
        *,
        grammar: str | None = None,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 64,
        stop: Sequence[str] | None = None,
        template: str | Sequence[str] = "adhoc",
        version: int | Sequence[int] = 1,
    ) -> list[str]:
        """:meth:`generate` for many prompts at once: cache hits first, then every missing prompt as its own
        llama.cpp sequence, decoded together (:mod:`labeler.judge.batched_generation`); same cache entries
        as :meth:`generate`. ``template``/``version``: one for all prompts or one per prompt."""
        if grammar is not None and json_schema is not None:
            raise JudgeError("pass either grammar or json_schema, not both")
        if max_tokens < 1:
            raise JudgeError(f"max_tokens must be >= 1, got {max_tokens}")
        n_q = len(prompts)
        tids = [template] * n_q if isinstance(template, str) else list(template)
        vers = [version] * n_q if isinstance(version, int) else list(version)
        if len(tids) != n_q or len(vers) != n_q:
            raise JudgeError(f"{n_q} prompts but {len(tids)} templates and {len(vers)} versions")
        stop_list = [stop] if isinstance(stop, str) else list(stop or [])
        params = {"grammar": grammar, "json_schema": json_schema, "max_tokens": max_tokens, "stop": stop_list}
        keys = [
            make_key("generate", self.model_sha256, t, v, p, params)
            for p, t, v in zip(prompts, tids, vers, strict=True)
        ]
        t0 = time.perf_counter()
        out: dict[str, str] = {}
        todo: dict[str, str] = {}
        try:
            if self._cache is not None:
                out.update({k: str(v["text"]) for k, v in self._cache.get_many(sorted(set(keys))).items()})
            todo = {k: p for k, p in zip(keys, prompts, strict=True) if k not in out}
            if todo:
                g = generation.build_grammar(self._engine, grammar, json_schema)
                toks = {}
                for k, p in todo.items():
                    toks[k] = self.tokenize(p, bos=True)
                    if len(toks[k]) + max_tokens > self.n_ctx:
                        raise JudgeError(
                            f"prompt of {len(toks[k])} tokens plus max_tokens={max_tokens} does not fit the "
                            f"context (n_ctx={self.n_ctx})"
                        )
                ks = list(todo)
                answers = batched_generation.complete_many(
                    self._engine,
                    [toks[k] for k in ks],
                    batched_generation.grammar_text(g),
                    max_tokens,
                    stop_list,
                )
                meta = dict(zip(keys, zip(tids, vers, strict=True), strict=True))
                rows = []
                for k, (text, n_gen) in zip(ks, answers, strict=True):
                    out[k] = text
                    rows.append(
                        (k, {"text": text, "ntokens": n_gen}, "generate", self.model_sha256, *meta[k])
                    )
                if self._cache is not None:
                    self._cache.put_many(rows)
        finally:
            self.stats["seconds"] += time.perf_counter() - t0
        computed = set(todo)
        served: set[str] = set()
        for k in keys:
            self.stats["queries"] += 1
            if k not in computed or k in served:
                self.stats["cache_hits"] += 1
            served.add(k)
        return [out[k] for k in keys]

    def _generate(
        self,
        prompt: str,
        grammar: str | None,
        json_schema: dict[str, Any] | None,
        max_tokens: int,
        stop: list[str],
    ) -> tuple[str, int]:
        g = generation.build_grammar(self._engine, grammar, json_schema)
        ptoks = self.tokenize(prompt, bos=True)
        if len(ptoks) + max_tokens > self.n_ctx:
            raise JudgeError(
                f"prompt of {len(ptoks)} tokens plus max_tokens={max_tokens} does not fit the "
                f"context (n_ctx={self.n_ctx})"
            )
        return generation.complete(self._engine, ptoks, g, max_tokens, stop, self.config.seed)

    # -------------------------------------------------------------------------------------------- units

    def prime(self, prefix: str) -> None:
        """Hold exactly ``prefix`` in the KV cache, in one fixed state, before a unit of work.

        The first call for a prefix evaluates it from an empty cache and keeps a copy of its KV state; every
        call then clears the cache and restores that copy (a memory copy, no evaluation). The queries that
        follow are computed from the same state whatever the judge answered before, so a unit of work (e.g.
        one trajectory's queries) gives bit-identical results in any order, in any process, on any worker
        (llama.cpp's kernels round differently for different batch shapes, so without this an answer can
        depend on the queries before it). ``prime("")`` starts from an empty cache."""
        self._engine.prime(self.tokenize(prefix, bos=True) if prefix else [])

    # -------------------------------------------------------------------------------------------- lifetime

    def reset(self) -> None:
        """Forget the KV cache (the next query is evaluated from scratch)."""
        self._engine.reset()

    def close(self) -> None:
        engine = getattr(self, "_engine", None)
        if engine is not None:
            engine.close()
            self._engine = None  # type: ignore[assignment]
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
    cfg = judge_config(
        n_threads=n_threads,
        n_threads_batch=n_threads_batch,
        n_ctx=n_ctx,
        n_gpu_layers=n_gpu_layers,
        n_batch=n_batch,
        seed=seed,
    )
    resolved = resolve_judge(model)
    own = isinstance(cache, (str, os.PathLike))
    lc = LabelCache(Path(cache)) if own else cache  # type: ignore[arg-type]
    try:
        return Judge(resolved, cfg, lc, own)  # type: ignore[arg-type]
    except BaseException:
        if own and lc is not None:
            lc.close()
        raise
