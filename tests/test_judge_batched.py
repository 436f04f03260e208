"""Batched paths of the judge and of COREN: the token-trie placement against hand-computed cases, and on the
REAL embedded GGUF, parallel generation against one-prompt-at-a-time generation and COREN's batched QA answers
and backward checks against the simple path.

Tolerance: decoding several sequences in one batch changes llama.cpp's batch shapes, so logits differ by
rounding (the same kernels as prefix reuse: <= 0.3 nat per log-prob, tests/test_judge.py). Greedy answers are
identical unless two tokens are within that rounding of each other; on the prompts here they are identical,
and COREN's labels on the tiny set are identical with backward P(Yes) within 0.05. The same calls in the same
order are bit-identical run to run.
"""

from __future__ import annotations

import numpy as np
import pytest

from labeler.judge.trie import Placed, cells, groups, place, trunk_of

LEAVES = [[1, 2, 3], [1, 2, 4, 5], [1, 6]]


def test_place_shares_each_common_prefix_once():
    assert trunk_of(LEAVES) == 1
    # after the trunk [1]: token 2 is shared by leaves 0-1, the rest is each leaf's own
    assert place(LEAVES, 1) == [
        Placed(2, 1, 0, 1),
        Placed(3, 2, 0, 0),
        Placed(4, 2, 1, 1),
        Placed(5, 3, 1, 1),
        Placed(6, 1, 2, 2),
    ]
    assert cells(LEAVES) == 6 and cells(LEAVES, extra_per_leaf=2) == 12
    # a leaf always keeps its last token (its own output row), even when it is the trunk
    assert trunk_of([[7, 8]]) == 1 and place([[7, 8]], 1) == [Placed(8, 1, 0, 0)]


def test_place_with_a_prefix_leaf_and_three_way_sharing():
    leaves = [[1, 2], [1, 2, 3], [1, 2, 3, 4]]
    assert trunk_of(leaves) == 1
    assert place(leaves, 1) == [Placed(2, 1, 0, 2), Placed(3, 2, 1, 2), Placed(4, 3, 2, 2)]


def test_groups_respect_leaves_and_cells():
    assert groups(LEAVES, max_leaves=2, max_cells=100) == [[0, 1], [2]]
    assert groups(LEAVES, max_leaves=3, max_cells=6) == [[0, 1, 2]]
    assert groups(LEAVES, max_leaves=3, max_cells=6, extra_per_leaf=1) == [[0], [1], [2]]


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


@pytest.mark.real
def test_generate_many_matches_generate_one_at_a_time(judge, tmp_path):
    from labeler.judge import open_judge

    prompts = [QA.format(obs=o, q=q) for o in OBS for q in QUESTIONS]
    prompts.append(prompts[0])  # a duplicate is generated once
    grammar = r"root ::= [^\n]+"
    one = []
    for p in prompts:
        judge.reset()
        one.append(judge.generate(p, grammar=grammar, max_tokens=12, stop=["\n"]))
    before = judge.stats["evaluated_tokens"]
    many = judge.generate_many(prompts, grammar=grammar, max_tokens=12, stop=["\n"])
    assert many == one
    assert all(a and "\n" not in a for a in many)
    # the shared text is evaluated once, not once per prompt
    assert judge.stats["evaluated_tokens"] - before < sum(judge.count_tokens(p) for p in prompts[:4])
    # the KV cache is consistent afterwards: a score matches a fresh one exactly
    s = judge.score(prompts[1], [" a", " the"])
    judge.reset()
    assert judge.score(prompts[1], [" a", " the"]).logprobs == pytest.approx(s.logprobs, abs=0.3)
    # the same cache entries as generate: a later generate is a cache hit
    with open_judge("gemma3-270m", n_threads=1, cache=tmp_path / "c.sqlite") as cached:
        got = cached.generate_many(prompts[:2], grammar=grammar, max_tokens=12, stop=["\n"], template="t")
        assert (
            cached.generate(prompts[1], grammar=grammar, max_tokens=12, stop=["\n"], template="t") == got[1]
        )
        assert cached.stats["cache_hits"] == 1


@pytest.mark.real
def test_coren_batched_answers_and_checks_match_the_simple_path():
    """The labeler's batched QA answers (generate_many) and backward checks (one score_many) against a judge
    that answers every call one query at a time."""
    from labeler.coren.pipeline import CorenConfig, CorenLabeler
    from labeler.coren.prompts import load_prompts, load_templates
    from labeler.dataset import Step, Trajectory
    from labeler.judge import open_judge
    from models.encoder import load_sentence_encoder, resolve_encoder

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
    assert rep_fast.qa_pass_rate == rep_simple.qa_pass_rate  # the same answers
    assert np.abs(fast.p_yes - simple.p_yes).max() <= 0.05
    assert np.array_equal(fast.channels, simple.channels)
