"""``edgejudge label potential`` on a file, and the trainers' ``--reward potential``."""

from __future__ import annotations

from models.trajectory import read_trajectories, write_trajectories
from policy.training.rewards import parse_reward
from tests.labeler.potential.test_model import _log, _traj


def test_label_potential_writes_delta_phi_and_support_on_every_step(tmp_path, cli):
    src, out = tmp_path / "log.jsonl", tmp_path / "log.potential.jsonl.gz"
    write_trajectories(src, _log())
    r = cli("label", "potential", str(src), "--out", str(out), "--folds", "3")
    assert r.returncode == 0, r.stderr
    assert "12 trajectories, 54 steps" in r.stdout
    # the label check of the new channel follows, so the user sees it before training
    assert "label check from the success flags alone" in r.stdout and "potential.delta" in r.stdout
    trajs = read_trajectories(out)
    assert all(set(s.labels["potential"]) == {"delta", "phi", "support"} for t in trajs for s in t.steps)
    assert trajs[0].provenance["potential"]["fitted_on"] == "success flags"
    spec = parse_reward("potential")
    assert (spec.method, spec.channel) == ("potential", "delta")


def test_a_log_it_cannot_fit_is_refused_and_nothing_is_written(tmp_path, cli):
    src, out = tmp_path / "log.jsonl", tmp_path / "out.jsonl"
    write_trajectories(src, [_traj(0, True, ["a"]), _traj(1, False, ["b"]), _traj(2, False, ["b"])])
    r = cli("label", "potential", str(src), "--out", str(out))
    assert r.returncode != 0
    assert "at least 2 successful and 2 failed trajectories, this log has 1 and 2" in r.stderr
    assert not out.exists()
