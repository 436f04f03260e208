from __future__ import annotations

import dataclasses
import json


def test_data_validate_and_stats_cli(tmp_path, cli):
    from models.trajectory import write_trajectories
    from tests.support.trajectories import make_traj

    good = tmp_path / "good.jsonl"
    write_trajectories(good, [make_traj(0), make_traj(1, success=False)])
    ok = cli("data", "validate", str(good))
    assert ok.returncode == 0 and "OK (2 trajectories)" in ok.stdout
    st = cli("data", "stats", str(good), "--json", check=True)
    assert json.loads(st.stdout)["success_rate"] == 0.5

    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + '{"id": 1}\n')
    proc = cli("data", "validate", str(bad))
    assert proc.returncode == 1
    assert f"{bad}:3: id: expected str, got int" in proc.stderr
    assert cli("data", "stats", str(bad)).returncode != 0
    skipped = cli("data", "stats", str(bad), "--skip-invalid", "--json", check=True)
    assert json.loads(skipped.stdout)["skipped_lines"] == 1


def test_data_subset_writes_the_success_scarce_subset_and_explains_a_short_file(tmp_path, cli):
    from models.trajectory import read_trajectories, write_trajectories
    from tests.support.trajectories import make_traj

    src = tmp_path / "pool.jsonl.gz"
    write_trajectories(src, [make_traj(i, success=i % 2 == 0) for i in range(10)])  # t0, t2, ... succeed
    out = tmp_path / "sub.jsonl.gz"
    p = cli("data", "subset", str(src), "--episodes", "6", "--max-success-rate", "0.34", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"wrote {out}: 6 episodes of {src}, 2 successful (33%)"
    assert [t.id for t in read_trajectories(out)] == ["t0", "t1", "t2", "t3", "t5", "t7"]
    short = cli("data", "subset", str(src), "--episodes", "9", "--out", str(out))
    assert short.returncode == 1 and "Traceback" not in short.stderr
    assert (
        "need 7 failed episodes (and 2 successful); the file holds 5 failed and 5 successful" in short.stderr
    )


def test_data_merge_writes_a_fleets_logs_as_one_and_refuses_an_episode_twice(tmp_path, cli):
    from models.trajectory import read_trajectories, write_trajectories
    from tests.support.trajectories import make_traj

    first = tmp_path / "round-0.jsonl.gz"
    write_trajectories(first, [make_traj(0), make_traj(1, success=False)])
    (tmp_path / "robots" / "b").mkdir(parents=True)
    write_trajectories(tmp_path / "robots" / "b" / "day.jsonl", [make_traj(3, success=False)])
    write_trajectories(tmp_path / "robots" / "a.jsonl", [make_traj(2, success=False)])
    out = tmp_path / "all.jsonl.gz"
    p = cli("data", "merge", str(first), str(tmp_path / "robots"), "--out", str(out), check=True)
    assert p.stdout.strip() == f"wrote {out}: 4 episodes of 3 files, 1 successful (25%)"
    assert [t.id for t in read_trajectories(out)] == ["t0", "t1", "t2", "t3"]
    twice = cli("data", "merge", str(first), str(out), "--out", str(tmp_path / "x.jsonl"))
    assert twice.returncode == 1 and "Traceback" not in twice.stderr
    assert f"episode id 't0' is also in {first}" in twice.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_data_response_only_rewrites_layout_logs_and_refuses_plain_ones(tmp_path, cli):
    from models.state_layout import Part, StateLayout
    from models.trajectory import Step, Trajectory, read_trajectories, write_trajectories

    layout = StateLayout(
        (Part("feedback", "Said"), Part("inventory", "Held", world=True), Part("room", "At", world=True))
    )
    s0 = layout.compose({"inventory": "nothing", "room": "A hall."})
    s1 = layout.compose({"feedback": "You go.", "inventory": "nothing", "room": "A kitchen."})
    meta = {"state_layout": layout.to_dict(), "env": "toy"}
    traj = Trajectory(
        "a", "Go.", "toy", True, [Step(s0, "go", ["go"], s1, info={"score": 1.0, "x": 2})], meta=meta
    )
    src, out = tmp_path / "a.jsonl", tmp_path / "ro.jsonl"
    other = tmp_path / "b.jsonl"
    write_trajectories(src, [traj])
    write_trajectories(other, [dataclasses.replace(traj, id="b", success=False)])
    p = cli("data", "response-only", str(src), str(other), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"wrote {out}: 2 trajectories (1 successful), response-only"
    step = read_trajectories(out)[0].steps[0]
    assert (step.observation, step.next_observation, step.info) == (
        "A hall.\nHeld: nothing",
        "You go.",
        {"score": 1.0},
    )
    again = cli("data", "response-only", str(out), "--out", str(tmp_path / "x.jsonl"))
    assert again.returncode == 1 and "record no state layout" in again.stderr
