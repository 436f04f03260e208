"""Batched paths of the judge and of COREN: the token-trie placement against hand-computed cases, and on the
REAL embedded GGUF, parallel generation against one-prompt-at-a-time generation and COREN's batched QA answers
and backward checks against the simple path.

Tolerance: decoding several sequences in one batch changes llama.cpp's batch shapes, so logits differ by
rounding: on the top five tokens of TWC structural questions at most 0.41 nat against a one-sequence
evaluation (``GEN_TOL`` = 0.5). A greedy answer follows a different token where two are nearer than that, and
then differs from there on (7 of 24 TWC answers of 16 tokens did), so batched answers are tested token by
token against the model rather than for equality with one-at-a-time answers. Backward P(Yes) stays within
0.05. The same calls in the same order are bit-identical run to run.
"""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def judge():
    from labeler.judge import open_judge

    with open_judge("gemma3-270m", n_threads=1, n_threads_batch=1, n_ctx=2048, cache=None) as j:
        yield j


QA = "Task: tidy the house\nObservation: {obs}\nQuestion: {q}\nAnswer:"


OBS = [
    "You are in the kitchen. You see a fridge, a dirty plate and a dishwasher.",
    "You are in the bathroom. You see a wet towel, a towel rack and a bathtub.",
]


QUESTIONS = ["Which objects matter for the task?", "Which objects are out of place?"]


GRAMMAR = r"root ::= [^\n]+"


GEN_TOL = 0.5  # nat: batch-shape rounding on the top log-probs (measured <= 0.41 on TWC QA prompts)


@pytest.mark.real
def test_generate_many_follows_the_model_within_the_batch_tolerance(judge, tmp_path):
    """Each batched answer is greedy under a one-sequence evaluation of the same tokens: at every step the
    top log-probs agree within ``GEN_TOL`` and the chosen token is the best up to twice that (a near-tie)."""
    from labeler.judge import batched_generation as bg
    from labeler.judge import open_judge

    prompts = [QA.format(obs=o, q=q) for o in OBS for q in QUESTIONS]
    prompts.append(prompts[0])  # a duplicate is generated once
    seen: list[list[tuple[np.ndarray, int]]] = []
    sample = bg._Sampler.sample

    def recording(self, logits):
        tok = sample(self, logits)
        if not hasattr(self, "log"):
            self.log = []
            seen.append(self.log)
        self.log.append((logits.copy(), tok))
        return tok

    bg._Sampler.sample = recording
    try:
        before = judge.stats["evaluated_tokens"]
        many = judge.generate_many(prompts, grammar=GRAMMAR, max_tokens=8, stop=["\n"])
        evaluated = judge.stats["evaluated_tokens"] - before
    finally:
        bg._Sampler.sample = sample
    assert many[-1] == many[0] and len(seen) == 4 and all(a and "\n" not in a for a in many)
    # the shared text (preamble, observation) is evaluated once, not once per prompt
    assert evaluated < sum(judge.count_tokens(p) for p in prompts[:4])
    leaves = sorted({tuple(judge.tokenize(p, bos=True)) for p in prompts})
    engine = judge._engine
    for leaf, log in zip(leaves, seen, strict=True):
        gen = [tok for _, tok in log]
        seq = list(leaf) + gen[:-1]
        judge.reset()
        engine.ensure(seq, list(range(len(leaf) - 1, len(seq))))
        for i, (logits, tok) in enumerate(log):
            row = engine.rows[len(leaf) - 1 + i]
            got = logits - (np.log(np.exp(logits - logits.max()).sum()) + logits.max())
            ref = row.logits - row.lse
            top = np.argsort(-ref)[:5]
            assert np.abs(got[top] - ref[top]).max() <= GEN_TOL
            # the best token the grammar allows (no newline) under the reference; the pick is it or a near-tie
            allowed = [
                t
                for t in np.argsort(-ref)[:50]
                if judge.detokenize([int(t)]) and "\n" not in judge.detokenize([int(t)])
            ]
            assert ref[allowed[0]] - ref[tok] <= 2 * GEN_TOL
    # deterministic, and the same cache entries as generate
    assert judge.generate_many(prompts, grammar=GRAMMAR, max_tokens=8, stop=["\n"]) == many
    with open_judge("gemma3-270m", n_threads=1, cache=tmp_path / "c.sqlite") as cached:
        got = cached.generate_many(prompts[:2], grammar=GRAMMAR, max_tokens=8, stop=["\n"], template="t")
        assert cached.generate(prompts[1], grammar=GRAMMAR, max_tokens=8, stop=["\n"], template="t") == got[1]
        assert cached.stats["cache_hits"] == 1
    # the KV cache is consistent afterwards
    s = judge.score(prompts[1], [" a", " the"])
    judge.reset()
    assert judge.score(prompts[1], [" a", " the"]).logprobs == pytest.approx(s.logprobs, abs=0.3)


@pytest.mark.real
def test_coren_batched_answers_and_checks_match_the_simple_path():
    """The labeler's batched QA answers (generate_many) and backward checks (one score_many) against a judge
    that answers every call one query at a time."""
    from labeler.coren.pipeline import CorenConfig, CorenLabeler
    from labeler.coren.prompts import load_prompts, load_templates
    from labeler.judge import open_judge
    from models.encoder import load_sentence_encoder, resolve_encoder
    from models.trajectory import Step, Trajectory

    take, look, put = "take dirty plate", "look around", "put dirty plate in dishwasher"
    room = "Room: You are in the kitchen. You see a dishwasher that is open and a table."
    steps = [
        Step(f"Inventory: empty\n{room} On the table is a dirty plate.", look, [look, take, put], room),
        Step(f"Inventory: empty\n{room}", take, [take, look], "Feedback: You take the dirty plate."),
        Step(
            f"Inventory: a dirty plate\n{room}",
            put,
            [look, put],
            "Feedback: You put the plate in the dishwasher.",
        ),
    ]
    trajs = [
        Trajectory(id="a", instruction="Tidy up the kitchen.", task_type="t", success=True, steps=steps),
        Trajectory(id="b", instruction="Tidy up the kitchen.", task_type="t", success=False, steps=steps[:2]),
    ]

    class OneAtATime:  # the simple path: QA answers and backward checks one at a time
        def __init__(self, j):
            self.j = j
            self.stats = j.stats
            self.model_sha256 = j.model_sha256
            self.n_ctx = j.n_ctx

        def count_tokens(self, text):
            return self.j.count_tokens(text)

        def score_many(self, queries, *, template, version, **kw):
            if not all(tuple(c) == (" Yes", " No") for _, c in queries):  # step queries: as before
                return self.j.score_many(queries, template=template, version=version, **kw)
            ts = [template] * len(queries) if isinstance(template, str) else template
            vs = [version] * len(queries) if isinstance(version, int) else version
            return [
                self.j.score(p, c, template=t, version=v)
                for (p, c), t, v in zip(queries, ts, vs, strict=True)
            ]

        def generate(self, prompt, **kw):
            return self.j.generate(prompt, **kw)

        def prime(self, prefix):  # the same fixed state before each unit of work
            self.j.prime(prefix)

    encoder = load_sentence_encoder(resolve_encoder())
    cfg = CorenConfig(qa_size=2)
    results = []
    with open_judge("gemma3-270m", n_threads=1, n_ctx=2048, cache=None) as j:
        for jj in (j, OneAtATime(j)):
            j.reset()
            lab = CorenLabeler(jj, encoder, load_prompts(2), load_templates(), cfg)
            results.append((lab.label([Trajectory(**t.__dict__) for t in trajs]), lab.report))
    (fast, rep_fast), (simple, rep_simple) = results
    assert rep_fast.queries == rep_simple.queries and rep_fast.qa_entries >= 1
    # step queries are the same calls: the contextual channel is identical
    assert np.array_equal(fast.channels[:, 0], simple.channels[:, 0]) and np.array_equal(
        fast.rate, simple.rate
    )
    # backward checks: batch-shape rounding only
    assert np.abs(fast.p_yes - simple.p_yes).max() <= 0.05
    # structural answers may differ at near-ties; the channels stay on the scale
    assert np.all(np.abs(fast.channels) <= 2) and np.all(np.isfinite(fast.channels))
