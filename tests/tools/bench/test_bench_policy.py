"""tools.bench.bench_policy declares each row once: algorithm, reward, config and the label channel it
needs."""

from __future__ import annotations

import click.testing
import pytest


@pytest.fixture(scope="module")
def bench():
    from tools.bench import bench_policy

    return bench_policy


def test_every_row_is_declared_once_and_parses(bench):
    from policy.rewards import parse_reward

    for name in bench.DEFAULT_ROWS.split(","):
        assert name in bench.ROW_SPECS or name in ("random", "llm"), name
    assert set(bench.DETOUR_PENALTY) <= set(bench.ROW_SPECS)
    for name, (algo, reward, extra, label_need) in bench.ROW_SPECS.items():
        assert algo in ("bc", "iql", "cql", "awr"), name
        assert isinstance(extra, dict), name
        parse_reward(reward, detour_penalty=bench.DETOUR_PENALTY.get(name, 0.0))
        if label_need is not None:
            method, channel = label_need
            assert method in ("trca", "coren") and channel, name
        # A row whose reward reads labels must say which channel it needs (to skip it on unlabeled data).
        if reward.split(".")[0] in ("trca", "coren"):
            assert label_need is not None and label_need[0] == reward.split(".")[0], name


def test_a_retired_row_is_refused_by_name(bench, tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text("")
    res = click.testing.CliRunner().invoke(
        bench.main,
        ["--train", str(data), "--out-dir", str(tmp_path / "out"), "--rows", "iql-trca-detour-loc"],
    )
    assert res.exit_code == 2, res.output
    assert "unknown rows: iql-trca-detour-loc" in res.output
