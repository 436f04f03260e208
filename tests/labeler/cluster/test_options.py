"""The cluster options without a Ray cluster: joining or starting Ray, and the commands' errors and help
(the real-Ray tests: tests/e2e/test_cluster_real.py)."""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from labeler.cluster.options import ClusterConfig, ClusterError, cluster_config


def _no_ray(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )


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
    from models.cli import main
    from models.trajectory import Step, Trajectory, write_trajectories

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
