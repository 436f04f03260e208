"""The judge on the REAL embedded GGUF (Gemma 3 270M Q4_K_M), tiny prompts, one thread.

The model is loaded once per session (fixture ``judge``); tests that need an empty KV cache call ``reset()``.

Tolerance: llama.cpp's quantised CPU kernels round differently for different batch shapes, so the same tokens
evaluated in one batch or in two (which is what prefix reuse does) give log-probs that differ slightly
(measured: fresh-vs-fresh with batch sizes 512/200/64/5/1 up to 0.11 nat; tools.bench.bench_judge, reused vs
from scratch over 310 log-probs of real TWC queries: max 0.25, mean 0.02). Reuse must match a fresh evaluation
within ``TOL`` = 0.3 nat per choice log-prob and 0.05 in probability; the same sequence of operations must be
bit-identical run to run.
"""

from __future__ import annotations

import json
import math

import pytest

from labeler.judge import ChoiceScores, JudgeError, open_judge

pytestmark = pytest.mark.real


TOL = 0.3


PTOL = 0.05


PROMPT = (
    "Question: Is fire hot?\nAnswer: Yes\n\nQuestion: Is ice hot?\nAnswer: No\n\n"
    "Question: Is the sun hot?\nAnswer:"
)


# longer than Gemma 3's 512-token sliding window, so reuse crosses the SWA boundary
LONG = " ".join(f"Box {i} holds a {'red' if i % 3 else 'green'} apple." for i in range(64))


@pytest.fixture(scope="session")
def judge():
    with open_judge("gemma3-270m", n_threads=1, n_threads_batch=1, n_ctx=2048, cache=None) as j:
        yield j


TOKEN_TOL = 0.1
"""Per token of a multi-token choice: batched and one-at-a-time decodes round differently (llama.cpp's CPU
kernels depend on the batch shape; measured up to 0.41 over 5 tokens on an AVX2 build)."""


def _close(a: ChoiceScores, b: ChoiceScores) -> None:
    for x, y, n in zip(a.logprobs, b.logprobs, a.ntokens, strict=True):
        assert abs(x - y) <= max(TOL, TOKEN_TOL * n), (a.logprobs, b.logprobs)
    for x, y in zip(a.probs, b.probs, strict=True):
        assert abs(x - y) <= PTOL, (a.probs, b.probs)


def test_interface(judge):
    assert len(judge.model_sha256) == 64
    assert judge.n_ctx == 2048
    assert judge.count_tokens("hello world") == 2
    assert judge.chat_template is None  # Gemma 3 270M is a base model
    s = judge.score(PROMPT, [" Yes", " No"], template="test.plain", version=1)
    assert isinstance(s, ChoiceScores)
    assert s.ntokens == [1, 1]
    assert all(lp < 0 for lp in s.logprobs)
    assert math.isclose(sum(s.probs), 1.0, rel_tol=1e-9)
    assert s.best == 0  # the model does know the sun is hot
    assert s.margin() == s.logprobs[0] - s.logprobs[1]
    for key in ("queries", "cache_hits", "evaluated_tokens", "reused_tokens", "seconds"):
        assert key in judge.stats
    assert judge.provenance()["sha256"] == judge.model_sha256


def test_deterministic_run_to_run(judge):
    choices = [" Yes", " No", " It is very hot"]
    judge.reset()
    a = judge.score(PROMPT, choices)
    judge.reset()
    b = judge.score(PROMPT, choices)
    assert a.logprobs == b.logprobs  # same operations, bit-identical
    with open_judge("gemma3-270m", n_threads=1, cache=None) as other:
        c = other.score(PROMPT, choices)
    assert c.logprobs == a.logprobs  # a second process-level instance too


def test_probs_sum_to_one_both_normalisations(judge):
    choices = [" Yes", " No", " Yes, it is extremely hot", " maybe"]
    s = judge.score(PROMPT, choices)
    m = judge.score(PROMPT, choices, normalize="mean")
    assert s.logprobs == m.logprobs  # raw log-probs do not depend on the normalisation
    for r in (s, m):
        assert math.isclose(sum(r.probs), 1.0, rel_tol=1e-9)
        assert all(0.0 <= p <= 1.0 for p in r.probs)
    assert s.ntokens[2] > 1
    assert m.scores[2] == pytest.approx(s.logprobs[2] / s.ntokens[2])
    assert s.probs != m.probs  # a multi-token choice is ranked differently under length normalisation


def test_multi_token_choice_is_the_sum_of_its_token_logprobs(judge):
    """Against an independent reference: llama-cpp-python, logits_all=True, prefix + choice at once."""
    import llama_cpp
    import numpy as np

    choices = [" Yes, it is", " No, it is not", " Yes"]
    judge.reset()
    got = judge.score(PROMPT, choices)
    ref = llama_cpp.Llama(
        str(judge.model.path), n_ctx=512, n_threads=1, n_threads_batch=1, logits_all=True, verbose=False
    )
    try:
        p = ref.tokenize(PROMPT.encode(), add_bos=True, special=False)
        for k, c in enumerate(choices):
            t = ref.tokenize(c.encode(), add_bos=False, special=False)
            ref.reset()
            ref.eval(p + t)
            rows = np.asarray(ref.scores[len(p) - 1 : len(p) - 1 + len(t)], dtype=np.float64)
            lse = np.log(np.exp(rows - rows.max(1, keepdims=True)).sum(1)) + rows.max(1)
            want = float(sum(rows[i, tok] - lse[i] for i, tok in enumerate(t)))
            assert got.ntokens[k] == len(t)
            assert abs(got.logprobs[k] - want) <= TOL, (c, got.logprobs[k], want)
    finally:
        ref.close()


def test_branch_decoding_matches_one_choice_at_a_time(judge):
    """Multi-token choices are decoded as parallel sequences in one batch; the one-sequence path agrees."""
    choices = [" -2", " -1", " 0", " 1", " 2", " Yes, it is", " No"]
    assert judge._n_seq > 1  # the context was created with several sequences
    judge.reset()
    before = judge.stats["evaluated_tokens"]
    tree = judge.score(PROMPT, choices)
    n_prompt = judge.count_tokens(PROMPT) + 1  # + BOS
    # one decode: the prompt, the two digit prefixes (" -", " ") and " Yes, it" (3 tokens)
    assert judge.stats["evaluated_tokens"] - before == n_prompt + 5
    saved = judge._n_seq
    try:
        judge._n_seq = 1
        judge.reset()
        one = judge.score(PROMPT, choices)
    finally:
        judge._n_seq = saved
    _close(tree, one)
    judge.reset()
    assert judge.score(PROMPT, choices).logprobs == tree.logprobs  # deterministic


def test_many_multi_token_choices_are_decoded_in_groups(judge):
    """More branches than the context has sequences: several decodes, same answer as one at a time."""
    choices = [f" go to room {i} now" for i in range(34)]
    branches = {tuple(judge.tokenize(c)[:-1]) for c in choices}
    assert len(branches) == 34 > judge._n_seq - 1  # more branches than fit one decode
    judge.reset()
    before = judge.stats["evaluated_tokens"]
    grouped = judge.score(PROMPT, choices)
    n_prompt = judge.count_tokens(PROMPT) + 1
    assert judge.stats["evaluated_tokens"] - before == n_prompt + sum(map(len, branches))
    saved = judge._n_seq
    try:
        judge._n_seq = 1
        judge.reset()
        one = judge.score(PROMPT, choices)
    finally:
        judge._n_seq = saved
    _close(grouped, one)
    assert math.isclose(sum(grouped.probs), 1.0, rel_tol=1e-9)


def test_prefix_reuse_matches_fresh_across_the_sliding_window(judge):
    base = LONG + "\nQuestion: Does box 3 hold a green apple?\nAnswer:"
    assert judge.count_tokens(base) > 580  # beyond the 512-token SWA window
    queries = [
        (base, [" Yes", " No"]),
        (base, [" Yes, it does", " No, it does not"]),  # same prefix, multi-token choices
        (base + " Well,", [" yes", " no"]),  # extends the cached prefix
        (
            LONG + "\nQuestion: Does box 4 hold a green apple?\nAnswer:",
            [" Yes", " No"],
        ),  # truncate + continue
        (base, [" Yes", " No"]),  # back to a shorter, earlier prefix
    ]
    judge.reset()
    before = dict(judge.stats)
    reused = [judge.score(p, c) for p, c in queries]
    evaluated = judge.stats["evaluated_tokens"] - before["evaluated_tokens"]
    assert (
        judge.stats["reused_tokens"] - before["reused_tokens"] > 1500
    )  # the long prefix was not re-evaluated
    fresh = []
    for p, c in queries:
        judge.reset()
        fresh.append(judge.score(p, c))
    for r, f in zip(reused, fresh, strict=True):
        _close(r, f)
    full = sum(judge.count_tokens(p) + 1 for p, _ in queries)
    assert evaluated < full / 3  # reuse evaluated far fewer tokens than from-scratch


def test_choices_sharing_tokens_are_evaluated_once(judge):
    judge.reset()
    judge.score(PROMPT, [" Yes"])
    before = judge.stats["evaluated_tokens"]
    judge.score(PROMPT, [" Yes", " No", " Maybe"])  # single-token choices: the prefix's logits answer all
    assert judge.stats["evaluated_tokens"] == before


def test_score_many_dedups_and_keeps_order(judge):
    other = "Question: Is snow cold?\nAnswer:"
    qs = [(PROMPT, [" Yes", " No"]), (other, [" Yes", " No"]), (PROMPT, [" Yes", " No"])]
    before = dict(judge.stats)
    out = judge.score_many(qs)
    assert len(out) == 3
    assert out[0].logprobs == out[2].logprobs
    assert out[2].cached  # the duplicate was served without the model
    assert judge.stats["queries"] - before["queries"] == 3
    assert judge.stats["cache_hits"] - before["cache_hits"] == 1
    single = [judge.score(p, c) for p, c in qs]
    for a, b in zip(out, single, strict=True):
        _close(a, b)


def test_tails_after_a_shared_trunk_are_decoded_together_and_match_fresh(judge, tmp_path):
    """COREN's shape: one step, then several prompt variants' short questions (single-token answers), sent in
    one score_many with a template id per query. The tails run as parallel sequences in one decode; each
    result matches that query evaluated alone from an empty KV cache, and the step is evaluated once."""
    step = "Task: tidy the kitchen\nAction: take dirty plate\nResult: You take the dirty plate.\n"
    tails = ["Progress:", "Task progress:", "Good step:", "Did this help the task? Answer:"]
    qs = [(PROMPT + "\n\n" + step + t, [" No", " Yes"]) for t in tails]
    qs.append((PROMPT + "\n\n" + step + "Most useful option:", [" A", " B", " C"]))
    prepared = [judge._prepare(p, tuple(c)) for p, c in sorted(qs)]
    assert judge._plan_tails(prepared) == [list(range(len(qs)))]  # one run, one decode
    judge.reset()
    before = judge.stats["evaluated_tokens"]
    with open_judge("gemma3-270m", n_threads=1, cache=tmp_path / "c.sqlite") as cached:
        out = judge.score_many(qs, template=[f"test.v{i}" for i in range(len(qs))], version=[1] * len(qs))
        evaluated = judge.stats["evaluated_tokens"] - before
        # the trunk once plus every tail, never a whole query per variant
        trunk = judge._lcp(prepared[0][0], prepared[-1][0])
        assert evaluated == trunk + sum(len(p) - trunk for p, _ in prepared)
        again = cached.score_many(qs, template=[f"test.v{i}" for i in range(len(qs))], version=[1] * len(qs))
        assert cached.score_many(qs, template=[f"test.v{i}" for i in range(len(qs))], version=[1] * len(qs))[
            0
        ].cached
        with pytest.raises(JudgeError, match="templates"):
            cached.score_many(qs, template=["only.one"], version=1)
    for q, a, b in zip(qs, out, again, strict=True):
        judge.reset()
        _close(a, judge.score(*q))
        assert a.logprobs == b.logprobs  # the same calls in the same order: bit-identical
        assert math.isclose(sum(a.probs), 1.0, rel_tol=1e-9)


def test_generate_with_grammar_and_json_schema(judge):
    p = "Is ice hot?\nAnswer: No\n\nIs the sun hot?\nAnswer:"
    a = judge.generate(p, grammar='root ::= " Yes" | " No"', max_tokens=4)
    assert a in (" Yes", " No")
    schema = {
        "type": "object",
        "properties": {"objects": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
        "required": ["objects"],
    }
    text = judge.generate("Objects on the kitchen table, as JSON:", json_schema=schema, max_tokens=48)
    data = json.loads(text)
    assert isinstance(data["objects"], list) and all(isinstance(x, str) for x in data["objects"])
    assert judge.generate(p, grammar='root ::= " Yes" | " No"', max_tokens=4) == a  # greedy: deterministic
    # scoring after generation still sees a consistent KV cache
    s = judge.score(PROMPT, [" Yes", " No"])
    judge.reset()
    _close(s, judge.score(PROMPT, [" Yes", " No"]))
    with pytest.raises(JudgeError, match="grammar"):
        judge.generate(p, grammar="root ::= (", max_tokens=4)
    with pytest.raises(JudgeError, match="either"):
        judge.generate(p, grammar='root ::= "a"', json_schema={"type": "string"})


def test_label_cache_serves_reruns(judge, tmp_path):
    from labeler.cache import LabelCache

    with LabelCache(tmp_path / "c.sqlite") as cache:
        with open_judge("gemma3-270m", n_threads=1, cache=cache) as j:
            a = j.score(PROMPT, [" Yes", " No"], template="t", version=1)
            g = j.generate(PROMPT, max_tokens=3, template="t", version=1)
            assert j.stats["cache_hits"] == 0
        with open_judge("gemma3-270m", n_threads=1, cache=cache) as j:
            b = j.score(PROMPT, [" Yes", " No"], template="t", version=1)
            assert j.generate(PROMPT, max_tokens=3, template="t", version=1) == g
            assert j.stats["cache_hits"] == 2 and j.stats["evaluated_tokens"] == 0
            assert b.cached and b.logprobs == a.logprobs
            c = j.score(PROMPT, [" Yes", " No"], template="t", version=2)  # a new template version recomputes
            assert not c.cached
        assert len(cache) == 3


def test_bad_input_is_rejected(judge, monkeypatch):
    with pytest.raises(JudgeError, match="non-empty"):
        judge.score(PROMPT, [])
    with pytest.raises(JudgeError, match="non-empty"):
        judge.score(PROMPT, " Yes")  # a string is not a list of choices
    with pytest.raises(JudgeError, match="non-empty string"):
        judge.score(PROMPT, [" Yes", ""])
    with pytest.raises(JudgeError, match="normalize"):
        judge.score(PROMPT, [" Yes"], normalize="max")
    with pytest.raises(JudgeError, match="does not fit the context"):
        judge.score("word " * 3000, [" Yes"])
    with pytest.raises(JudgeError, match="n_threads"):
        open_judge("gemma3-270m", n_threads=0)
    monkeypatch.setenv("EDGEJUDGE_THREADS", "many")
    with pytest.raises(JudgeError, match="EDGEJUDGE_THREADS"):
        open_judge("gemma3-270m")
    with pytest.raises(TypeError):
        open_judge("gemma3-270m", n_thread=1)  # unknown options are rejected, not swallowed
