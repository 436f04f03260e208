"""The one way labelers write labels: channels onto steps, provenance onto the trajectory, an atomic file, and
the closing label check."""

from __future__ import annotations

import pytest

from labeler.label_writer import LabelWriter, closing_check, put_labels, write_labeled
from models.channel_choice import write_choice
from models.trajectory import Step, Trajectory, read_trajectories, write_trajectories


def _traj(tid: str, success: bool, n: int = 2) -> Trajectory:
    steps = [
        Step(f"o{i}", "a", [], f"o{i + 1}", labels={"other": {"v": 1.0}}) for i in range(n)
    ]  # another method's labels, to be kept
    return Trajectory(id=tid, instruction="i", task_type="t", success=success, steps=steps)


def test_put_labels_adds_the_method_beside_the_others_and_copies_the_provenance():
    t = _traj("a", True)
    prov = {"seed": 0}
    put_labels(t, "m", [{"r": 0.5}, {"r": -0.5}], prov)
    assert [s.labels for s in t.steps] == [
        {"other": {"v": 1.0}, "m": {"r": 0.5}},
        {"other": {"v": 1.0}, "m": {"r": -0.5}},
    ]
    prov["seed"] = 1
    assert t.provenance["m"] == {"seed": 0}
    with pytest.raises(ValueError, match="a: 1 steps of m labels for 2 steps"):
        put_labels(t, "m", [{"r": 0.0}], prov)


def test_write_labeled_writes_the_file_and_a_failure_leaves_the_old_one(tmp_path):
    out = tmp_path / "out.jsonl.gz"
    n = write_labeled(out, "m", [(_traj("a", True), [{"r": 1.0}] * 2, {"k": 1})])
    (back,) = read_trajectories(out)
    assert n == 1 and back.steps[1].labels["m"] == {"r": 1.0} and back.provenance["m"] == {"k": 1}

    def broken():
        yield _traj("b", False), [{"r": 0.0}] * 2, {}
        raise RuntimeError("labeler failed")

    with pytest.raises(RuntimeError):
        write_labeled(out, "m", broken())
    assert [t.id for t in read_trajectories(out)] == ["a"]  # atomic: the earlier file is untouched


def test_the_label_writer_streams_and_counts(tmp_path):
    out = tmp_path / "out.jsonl"
    with LabelWriter(out, "m") as w:
        for i in range(3):
            w.write(_traj(str(i), i == 0, n=1), [{"r": float(i)}], {})
    assert w.count == 3 and [t.steps[0].labels["m"]["r"] for t in read_trajectories(out)] == [0.0, 1.0, 2.0]


def test_new_labels_drop_the_channel_an_audit_chose_for_the_old_ones_and_a_failure_keeps_it(tmp_path):
    from models.channel_choice import read_choice

    out = tmp_path / "log.jsonl.gz"
    write_labeled(out, "m", [(_traj("a", True), [{"r": 1.0}] * 2, {})])
    write_choice(out, "m.r", "person", "the audit by person supports it")

    def broken():
        yield _traj("b", False), [{"r": 0.0}] * 2, {}
        raise RuntimeError("labeler failed")

    with pytest.raises(RuntimeError):
        write_labeled(out, "m", broken())
    assert read_choice(out)["channel"] == "m.r"  # the labels it was chosen for are still there
    write_labeled(out, "m", [(_traj("a", True), [{"r": 0.5}] * 2, {})])
    assert read_choice(out) is None


def test_closing_check_reads_the_file_back_or_uses_the_trajectories_given(tmp_path):
    trajs = [_traj(f"s{i}", True) for i in range(3)] + [_traj(f"f{i}", False) for i in range(3)]
    for t in trajs:
        put_labels(t, "m", [{"r": 1.0 if t.success else 0.0}] * 2, {})
    p = tmp_path / "l.jsonl"
    write_trajectories(p, trajs)
    text = closing_check(p, "m.r")
    assert text.startswith("l.jsonl: label check from the success flags alone (6 trajectories, 3 successful)")
    assert text == closing_check(p, "m.r", trajs)
    assert closing_check(p, "m.missing") == ""


def test_closing_check_says_step_credit_is_unverified_unless_an_audit_chose_a_channel(tmp_path):
    """``separates`` is about whole episodes: the check closes with the channel an audit supports, or with
    what would verify the step credit."""
    trajs = [_traj(f"s{i}", True) for i in range(3)] + [_traj(f"f{i}", False) for i in range(3)]
    for t in trajs:
        put_labels(t, "m", [{"r": 1.0 if t.success else 0.0}] * 2, {})
    p = tmp_path / "l.jsonl"
    write_trajectories(p, trajs)
    lines = closing_check(p, "m.r").splitlines()
    assert lines[-2].startswith("step credit unverified: the verdicts say only whether")
    assert lines[-1].startswith(f"verify it: 'edgejudge label audit {p}'")
    assert f"--audit {tmp_path / 'l.audit.jsonl'}" in lines[-1]
    write_choice(p, "m.r", "person", "the audit by person supports it: AUROC 0.900")
    lines = closing_check(p, "m.r").splitlines()
    assert lines[-1].startswith("train on m.r: the audit by person supports it: AUROC 0.900 (l.choice.json")
    assert not any("unverified" in line for line in lines)
