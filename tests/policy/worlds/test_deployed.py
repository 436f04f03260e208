"""Collection with a deployed bundle (policy.worlds.deployed, ``edgejudge collect --policy``): the bundle acts
in a real world in process and through a real edge-serve, with exploration, and every finished episode is
appended through the robot's episode log writer, a log the labelers read that grows round after round."""

from __future__ import annotations

import pytest

from models.trajectory import read_trajectories
from policy.export.assemble import export_random_bundle

pytestmark = pytest.mark.real


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("deployed") / "bundle"
    export_random_bundle(out, seed=3, hidden=16, bundle_format=3)
    return out


def test_a_bundle_collects_in_process_then_through_edge_serve_into_one_growing_log(bundle, tmp_path, cli):
    log = tmp_path / "fleet.jsonl"
    base = ["collect", "--env", "twx:twc", "--split", "train", "--max-steps", "12", "--policy", str(bundle)]
    first = cli(*base, "--episodes", "3", "--epsilon", "0.3", "--seed", "1", "--out", str(log))
    assert first.returncode == 0, first.stderr
    assert "appended to" in first.stdout and "3 episodes" in first.stdout
    second = cli(*base, "--episodes", "2", "--serve", "--temperature", "0.5", "--out", str(log), timeout=600)
    assert second.returncode == 0, second.stderr
    trajs = read_trajectories(log)
    assert len(trajs) == 5 and len({t.id for t in trajs}) == 5
    assert [t.meta.get("epsilon") for t in trajs[:3]] == [0.3] * 3
    assert [t.meta.get("temperature") for t in trajs[3:]] == [0.5] * 2 and trajs[3].meta["serve"]
    for t in trajs:
        assert t.meta["behaviour"] == "policy" and t.meta["env"] == "twx:twc" and t.task_type == "twc"
        assert 1 <= len(t.steps) <= 12 and all(s.action in s.candidates for s in t.steps)
        assert all({"score", "progress", "gold"} <= s.info.keys() for s in t.steps)
        assert t.meta["recorded_by"] == "edge.episode_log"
    assert cli("data", "validate", str(log)).returncode == 0


def test_scripted_options_and_a_gzip_log_are_refused_with_policy(bundle, tmp_path, cli):
    base = ["collect", "--env", "twx:twc", "--policy", str(bundle), "--episodes", "1"]
    p = cli(*base, "--behaviour", "random", "--out", str(tmp_path / "a.jsonl"))
    assert p.returncode == 2 and "leave out --behaviour" in p.stderr
    p = cli(*base, "--out", str(tmp_path / "a.jsonl.gz"))
    assert p.returncode == 2 and "compress it after the run" in p.stderr
    p = cli(
        "collect",
        "--env",
        "twx:twc",
        "--episodes",
        "1",
        "--epsilon",
        "0.2",
        "--out",
        str(tmp_path / "b.jsonl"),
    )
    assert p.returncode == 2 and "go with --policy" in p.stderr
    p = cli(*base, "--epsilon", "0.2", "--temperature", "1", "--out", str(tmp_path / "c.jsonl"))
    assert p.returncode == 2 and "not both" in p.stderr
    assert not list(tmp_path.iterdir())
