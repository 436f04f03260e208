"""The cluster options, units and priming without a Ray cluster (the real-Ray tests: test_cluster_real.py)."""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from labeler.cluster.options import ClusterConfig, ClusterError, cluster_config
from labeler.cluster.units import UnitScorer, anchor_of, run_local


def test_without_ray_there_is_no_cluster():
    assert cluster_config(None, 2, 1.0, 0.0, 3) is None


def test_ray_alone_joins_ray_address_or_starts_a_local_ray(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert cluster_config("", 2, 1.0, 0.0, 3).address is None
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    assert cluster_config("", 2, 1.0, 0.0, 3).address == "10.0.0.5:6379"
    assert cluster_config("local", 2, 1.0, 0.0, 3).address is None  # 'local' ignores RAY_ADDRESS
    cfg = cluster_config("head:6379", 4, 2.0, 0.5, 1)
    assert cfg == ClusterConfig("head:6379", 4, 2.0, 0.5, 1)
    assert cfg.describe()["address"] == "head:6379"


def _no_ray(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )


def test_ray_missing_is_one_clear_line(monkeypatch):
    _no_ray(monkeypatch)
    with pytest.raises(ClusterError, match=r"pip install 'edgejudge\[cluster\]'"):
        cluster_config("", 2, 1.0, 0.0, 3)


@pytest.mark.parametrize(
    "args",
    [
        ["label", "coren", "IN", "--out", "o.jsonl", "--ray"],
        ["label", "trca", "IN", "--out", "o.jsonl", "--item-judge", "llm", "--ray"],
        ["rubrics", "build", "--dataset", "IN", "--task-type", "twc", "--out", "r.toml", "--ray"],
    ],
)
def test_commands_refuse_ray_without_ray_installed(monkeypatch, tmp_path, args):
    from labeler.dataset import Step, Trajectory, write_trajectories
    from models.cli import main

    data = tmp_path / "in.jsonl"
    write_trajectories(data, [Trajectory("t0", "do it", "twc", False, [Step("o", "a", ["a"], "o2")])])
    _no_ray(monkeypatch)
    res = CliRunner().invoke(main, [str(data) if a == "IN" else a for a in args])
    assert res.exit_code == 1
    assert "needs Ray, which is not installed: pip install 'edgejudge[cluster]'" in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("group,cmd", [("label", "coren"), ("label", "trca"), ("rubrics", "build")])
def test_help_explains_the_cluster_options(group, cmd):
    from models.cli import main

    out = CliRunner().invoke(main, [group, cmd, "--help"]).output
    for opt in (
        "--ray [ADDRESS]",
        "--judge-actors",
        "--cpus-per-actor",
        "--gpus-per-actor",
        "--actor-restarts",
    ):
        assert opt in out


def test_anchor_is_the_common_start_cut_after_a_newline():
    assert anchor_of(["head\nTask: a\nX", "head\nTask: b\nY"]) == "head\n"
    assert anchor_of(["no newline a", "no newline b"]) == ""
    assert anchor_of([]) == ""


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


@pytest.mark.real
def test_the_driver_tokenizes_like_the_judge_without_loading_weights():
    from labeler.cluster.workers import DriverJudge
    from labeler.judge import open_judge

    class Pool:
        infos = [{"n_ctx": 2048, "provenance": {"backend": "llama-cpp-python"}}]
        stats = {"queries": 3}

    text = "Task: put the apple away\nAction: take apple ☃ ünïcode\n\n"
    driver = DriverJudge("gemma3-270m", Pool())
    try:
        with open_judge("gemma3-270m", n_threads=1) as judge:
            assert driver.tokenize(text, bos=True) == judge.tokenize(text, bos=True)
            assert driver.count_tokens(text) == judge.count_tokens(text)
            assert driver.model_sha256 == judge.model_sha256
        assert driver.n_ctx == 2048 and driver.stats == {"queries": 3}
        with pytest.raises(ClusterError, match="run on the judge actors"):
            driver.score_many([("x", [" y"])], template="t", version=1)
    finally:
        driver.close()
