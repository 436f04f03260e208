"""tools.bench.bench_judge: the labelers' call pattern and the report's rates, without a judge."""

from __future__ import annotations

import pytest

from tools.bench.bench_judge import _Clock, _groups, _results, _Tally, _timed


def _q(pattern: str, traj: int, variant: int = 0) -> dict:
    return {
        "pattern": pattern,
        "traj": traj,
        "variant": variant,
        "prefix": f"{pattern}{traj}{variant}",
        "choices": [" yes", " no"],
    }


QUERIES = [
    _q("coren", 0, 0),
    _q("coren", 0, 1),
    _q("trca", 0),
    _q("coren1", 0, 0),
    _q("coren1", 0, 1),
    _q("coren", 1, 0),
    _q("trca", 1),
]


def test_calls_follow_the_labelers_per_trajectory_coren1_per_variant():
    assert _groups(QUERIES) == [
        (0, "coren", [0, 1]),
        (0, "coren1", [3]),
        (0, "coren1", [4]),
        (0, "trca", [2]),
        (1, "coren", [5]),
        (1, "trca", [6]),
    ]


def test_timed_sections_list_seconds_then_each_rate_per_cpu_and_wall_second():
    clock = _Clock()
    clock.cpu, clock.wall = 2.0, 4.0
    out = _timed(
        clock, queries={"per_s_cpu": 1.0, "per_s_wall": 0.5}, tokens={"per_s_cpu": 3, "per_s_wall": 2}
    )
    assert list(out.items()) == [
        ("seconds_cpu", 2.0),
        ("seconds_wall", 4.0),
        ("queries_per_s_cpu", 1.0),
        ("queries_per_s_wall", 0.5),
        ("tokens_per_s_cpu", 3),
        ("tokens_per_s_wall", 2),
    ]


def test_results_rates_ratios_and_agreement():
    tally = _Tally(QUERIES)
    for k, clock in [*tally.clocks.items(), *tally.per.items()]:
        clock.cpu = clock.wall = {"a": 1.0, "b": 7.0, "c": 1.0, "warm": 0.5}.get(
            k if isinstance(k, str) else k[0]
        )
    tally.tokens_a = 100
    tally.evaluated = {k: (70 if k[0] == "b" else 10) for k in tally.evaluated}
    tally.logprobs = {"b": [[-1.0, -2.0]] * 7, "c": [[-1.0, -2.5]] * 7}
    r = _results(QUERIES, {"steps": 2}, tally)
    assert list(r) == [
        "data",
        "a_ceiling",
        "b_naive",
        "c_edgejudge",
        "c_warm_rerun",
        "by_pattern",
        "ratios",
        "agreement",
        "targets",
    ]
    assert r["data"]["patterns"] == {"coren": 3, "coren1": 2, "trca": 2}
    assert r["b_naive"]["evaluated_tokens"] == 210 and r["c_edgejudge"]["evaluated_tokens"] == 30
    assert r["ratios"]["c_over_b_queries_per_s"] == {"cpu": 7.0, "wall": 7.0}
    assert r["c_edgejudge"]["effective_tokens_per_s_cpu"] == 210
    assert r["agreement"] == {"max_abs_logprob_diff_b_vs_c": 0.5, "mean_abs_logprob_diff": 0.25}
    assert r["targets"]["c_over_b_queries_per_s >= 5 (cpu)"] is True
    assert r["by_pattern"]["trca"]["c_over_b_cpu"] == pytest.approx(7.0)
