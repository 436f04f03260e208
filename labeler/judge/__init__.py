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

Generation: ``generate`` is greedy (deterministic), optionally under a GBNF grammar or JSON schema;
``generate_many`` answers many prompts at once, each prompt a llama.cpp sequence sharing the common prefixes
and every generation step one batch for all unfinished sequences (the same cache entries as ``generate``;
answers equal one-at-a-time generation up to batch-shape rounding of near-tied tokens).

Every query goes through the label cache (:mod:`labeler.cache`) when one is given, so reruns and resumed runs
cost nothing. ``score_many`` answers a list of queries: it deduplicates, serves cache hits, orders the rest so
that queries sharing a prefix run one after another, and writes each result as soon as it is computed.

Threads: ``n_threads`` / ``n_threads_batch`` default to ``$EDGEJUDGE_THREADS`` (default 1: llama.cpp slows
down badly with more threads than free cores on a shared box).

Modules:

* :mod:`~labeler.judge.api` — :class:`Judge` (scoring, generation, label cache, statistics) and
  :func:`open_judge`.
* :mod:`~labeler.judge.engine` — the KV-prefix engine: one llama.cpp context, prefix reuse, branch and tail
  decodes over several sequences.
* :mod:`~labeler.judge.tails` — the tail planner: which queries are decoded together after a shared trunk.
* :mod:`~labeler.judge.generation` — greedy generation, GBNF / JSON-schema grammars, the KV hand-over.
* :mod:`~labeler.judge.batched_generation` — many prompts generated together as parallel sequences.
* :mod:`~labeler.judge.trie` — token-trie placement of many token lists in one batch, and its grouping.
* :mod:`~labeler.judge.scores` — :class:`ChoiceScores`, one query's answer.
* :mod:`~labeler.judge.config` — :class:`JudgeConfig` and its checks.
* :mod:`~labeler.judge.errors` — :class:`JudgeError`, :class:`JudgeLoadError`.
"""

from labeler.judge.api import Judge, open_judge
from labeler.judge.config import JudgeConfig
from labeler.judge.errors import JudgeError, JudgeLoadError
from labeler.judge.scores import NORMALIZATIONS, ChoiceScores

__all__ = [
    "NORMALIZATIONS",
    "ChoiceScores",
    "Judge",
    "JudgeConfig",
    "JudgeError",
    "JudgeLoadError",
    "open_judge",
]
