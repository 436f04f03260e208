"""Greedy, optionally grammar-constrained generation: GBNF / JSON-schema grammars checked before llama.cpp
sees them, and the hand-over of the engine's KV state to llama-cpp-python's completion (and back), so that
generation reuses the cached prefix and scoring afterwards still sees a consistent cache."""

from __future__ import annotations

import json
from typing import Any

from labeler.judge.engine import KVEngine
from labeler.judge.errors import JudgeError
from labeler.judge.tails import lcp


def build_grammar(engine: KVEngine, grammar: str | None, json_schema: dict[str, Any] | None) -> Any:
    """A ``LlamaGrammar`` for ``grammar`` (GBNF) or ``json_schema``, or None; a bad one raises JudgeError."""
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
        check_grammar(engine, g._grammar, what)
    return g


def check_grammar(engine: KVEngine, gbnf: str, what: str) -> None:
    # llama-cpp-python 0.3.36 hands an unparsable grammar to llama.cpp, whose NULL sampler then crashes
    # the process (segmentation fault); parse it here first and free the probe sampler.
    lc = engine.lc
    vocab = lc.llama_model_get_vocab(engine.llm._model.model)
    probe = lc.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
    if not probe:
        raise JudgeError(f"bad {what}: llama.cpp cannot parse the grammar (its message is on stderr)")
    lc.llama_sampler_free(probe)


def complete(
    engine: KVEngine, ptoks: list[int], grammar: Any, max_tokens: int, stop: list[str], seed: int
) -> tuple[str, int]:
    """Greedy completion of the prompt tokens ``ptoks``; returns the text and the number of generated
    tokens. The engine's KV state goes to llama-cpp-python's own prefix matching and is taken back after."""
    llm = engine.llm
    old = list(engine.kv)
    llm.input_ids[: len(old)] = old
    llm.n_tokens = len(old)
    llm._requires_eval = True
    reused = min(lcp(old, ptoks), len(ptoks) - 1)
    try:
        out = llm.create_completion(
            ptoks,
            max_tokens=max_tokens,
            temperature=0.0,
            top_k=1,
            top_p=1.0,
            min_p=0.0,
            repeat_penalty=1.0,
            grammar=grammar,
            stop=stop or None,
            seed=seed,
        )
    finally:
        new = [int(t) for t in llm.input_ids[: llm.n_tokens]]
        common = min(lcp(old, new), reused)
        engine.kv = new
        engine.forget_rows_from(common)
    n_gen = int(out["usage"]["completion_tokens"])  # type: ignore[index]
    engine.stats["reused_tokens"] += reused
    engine.stats["evaluated_tokens"] += len(ptoks) - reused
    engine.stats["generated_tokens"] += n_gen
    return str(out["choices"][0]["text"]), n_gen  # type: ignore[index]
