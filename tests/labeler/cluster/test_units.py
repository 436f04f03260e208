from __future__ import annotations

import pytest

from labeler.cluster.units import UnitScorer, anchor_of, run_local


class _Scores:
    def __init__(self, prefix):
        self.prefix = prefix


class _Judge:
    model_sha256 = "0" * 64

    def __init__(self):
        self.log = []

    def prime(self, anchor):
        self.log.append(("prime", anchor))

    def score_many(self, queries, *, template, version, normalize):
        self.log.append(("score", len(queries), template, version))
        return [_Scores(p) for p, _ in queries]


def test_anchor_is_the_common_start_cut_after_a_newline():
    assert anchor_of(["head\nTask: a\nX", "head\nTask: b\nY"]) == "head\n"
    assert anchor_of(["no newline a", "no newline b"]) == ""
    assert anchor_of([]) == ""


def test_unit_scorer_primes_every_chunk_and_keeps_the_order():
    judge = _Judge()
    scorer = UnitScorer.local(judge)
    scorer.chunk = 3
    qs = [(f"shared\nq{i}", [" a", " b"]) for i in range(7)]
    out = scorer.score_many(qs, template="t", version=2)
    assert [s.prefix for s in out] == [p for p, _ in qs]
    assert judge.log == [("prime", "shared\n"), ("score", 3, "t", 2)] * 2 + [
        ("prime", "shared\n"),
        ("score", 1, "t", 2),
    ]
    assert scorer.queries == 7 and scorer.model_sha256 == "0" * 64


def test_run_local_primes_before_each_call():
    judge = _Judge()

    class Worker:
        def twice(self, x):
            judge.log.append(("call", x))
            return 2 * x

    assert run_local(judge, Worker(), "lead", "twice", [(1,), (2,)]) == [2, 4]
    assert judge.log == [("prime", "lead"), ("call", 1), ("prime", "lead"), ("call", 2)]


@pytest.mark.real
def test_prime_makes_answers_independent_of_earlier_queries():
    """The same unit after different histories gives bit-identical log-probs (the real judge, 1 thread)."""
    from labeler.judge import open_judge

    lead = "Say whether each step made progress.\n\nTask: tidy up\nAction: take cup\nProgress: Yes\n\n"
    unit = [(lead + f"Task: tidy up\nAction: {a}\nProgress:", [" Yes", " No"]) for a in ("open box", "sing")]
    other = [(lead + "Task: cook\nAction: take a very long detour through the garden\nProgress:", [" Yes"])]
    with open_judge("gemma3-270m", n_threads=1) as j:
        j.prime(lead)
        first = [s.logprobs for s in j.score_many(unit)]
        j.score_many(other)
        j.prime(lead)
        again = [s.logprobs for s in j.score_many(unit)]
        j.prime("")  # an empty anchor: an empty cache
        j.score_many(other)
        j.prime(lead)
        third = [s.logprobs for s in j.score_many(unit)]
    with open_judge("gemma3-270m", n_threads=1) as fresh:
        fresh.score_many(other)
        fresh.prime(lead)
        elsewhere = [s.logprobs for s in fresh.score_many(unit)]
    assert first == again == third == elsewhere
