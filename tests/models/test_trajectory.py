"""Contract of the trajectory dataset format: validation messages, atomic writes, round trips."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.trajectory import (
    DatasetError,
    ReadReport,
    Step,
    Trajectory,
    TrajectoryWriter,
    read_trajectories,
    write_trajectories,
)
from tests.support.trajectories import make_traj


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def good_line(i: int = 0, **overrides) -> dict:
    d = make_traj(i).to_dict()
    d.update(overrides)
    return d


BAD_LINES = [
    ('{"id": "t0", "instruction": "x"', "line", "invalid JSON"),
    (json.dumps({k: v for k, v in good_line().items() if k != "success"}), "success", "missing"),
    (json.dumps(good_line(success="yes")), "success", "expected bool, got str"),
    (json.dumps(good_line(success=1)), "success", "expected bool, got int"),
    (json.dumps(good_line(id=7)), "id", "expected str, got int"),
    (json.dumps(good_line(steps=[])), "steps", "empty"),
    (json.dumps(good_line(bogus=1)), "bogus", "unknown field"),
    (json.dumps(good_line(format=99)), "format", "unsupported format version"),
    ("[1, 2]", "line", "expected a JSON object"),
]


def step_dict(**overrides) -> dict:
    d = make_traj().steps[0].to_dict()
    d.update(overrides)
    return d


text = st.text(max_size=30)


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_round_trip(tmp_path, suffix):
    trajs = [make_traj(i, n_steps=i + 1, success=i % 2 == 0) for i in range(5)]
    trajs[0].steps[0].labels = {"coren": {"contextual": 1.0, "dist": [0.1, 0.9]}}
    trajs[0].provenance = {"coren": {"judge_sha256": "ab" * 32}}
    path = tmp_path / f"d{suffix}"
    assert write_trajectories(path, trajs) == 5
    assert read_trajectories(path, layouts=False) == trajs
    if suffix.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"


@pytest.mark.parametrize("line, field, problem", BAD_LINES)
def test_bad_lines_name_file_line_field(tmp_path, line, field, problem):
    path = write_lines(tmp_path / "bad.jsonl", [json.dumps(good_line(0)), line])
    with pytest.raises(DatasetError) as ei:
        read_trajectories(path)
    assert ei.value.line == 2 and ei.value.field == field
    assert problem in ei.value.problem
    assert str(ei.value).startswith(f"{path}:2: {field}: ")


@pytest.mark.parametrize(
    "step, field, problem",
    [
        (step_dict(action="fly"), "steps[0].action", "not among the step's 2 candidates"),
        (step_dict(env_reward="1"), "steps[0].env_reward", "expected a number"),
        (step_dict(env_reward=float("nan")), "steps[0].env_reward", "not finite"),
        (step_dict(candidates=["a", 3]), "steps[0].candidates[1]", "expected str"),
        ({k: v for k, v in step_dict().items() if k != "observation"}, "steps[0].observation", "missing"),
        (step_dict(labels={"coren": {"contextual": "high"}}), "steps[0].labels.coren.contextual", "number"),
        (step_dict(extra=1), "steps[0].extra", "unknown field"),
    ],
)
def test_bad_steps(tmp_path, step, field, problem):
    line = json.dumps(good_line(steps=[step]), allow_nan=True)
    path = write_lines(tmp_path / "bad.jsonl", [line])
    with pytest.raises(DatasetError) as ei:
        read_trajectories(path)
    assert (ei.value.line, ei.value.field) == (1, field)
    assert problem in ei.value.problem


def test_action_outside_empty_candidates_is_allowed(tmp_path):
    """A log without candidates is valid data (methods that need candidates say so themselves)."""
    path = write_lines(tmp_path / "d.jsonl", [json.dumps(good_line(steps=[step_dict(candidates=[])]))])
    assert read_trajectories(path)[0].steps[0].candidates == []


def test_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    with pytest.raises(DatasetError, match=r"empty.jsonl: file: empty"):
        read_trajectories(path)


def test_missing_file(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        read_trajectories(tmp_path / "nope.jsonl")


def test_corrupt_gzip(tmp_path):
    good = tmp_path / "good.jsonl.gz"
    write_trajectories(good, [make_traj(i) for i in range(50)])
    data = good.read_bytes()
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(data[: len(data) // 2])  # truncated stream
    with pytest.raises(DatasetError, match="corrupt gzip"):
        read_trajectories(bad)
    flipped = bytearray(data)
    flipped[20] ^= 0xFF
    bad.write_bytes(bytes(flipped))
    with pytest.raises(DatasetError):
        read_trajectories(bad)


def test_duplicate_ids(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [json.dumps(good_line(0)), json.dumps(good_line(0))])
    with pytest.raises(DatasetError, match="duplicate id"):
        read_trajectories(path)


def test_skip_invalid_counts_and_reports(tmp_path):
    path = write_lines(
        tmp_path / "d.jsonl",
        [
            json.dumps(good_line(0)),
            "{truncated",
            json.dumps(good_line(2)),
            json.dumps(good_line(3, success=None)),
        ],
    )
    report = ReadReport()
    trajs = read_trajectories(path, skip_invalid=True, report=report)
    assert [t.id for t in trajs] == ["t0", "t2"]
    assert report.read == 2 and report.skipped == 2
    assert [e.line for e in report.errors] == [2, 4]


def test_skip_invalid_with_nothing_valid_is_an_error(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", ["{", "[]"])
    with pytest.raises(DatasetError, match="no valid trajectories"):
        read_trajectories(path, skip_invalid=True)


def test_blank_lines_are_ignored(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", ["", json.dumps(good_line(0)), "   "])
    assert len(read_trajectories(path)) == 1


def test_atomic_writer_leaves_nothing_on_failure(tmp_path):
    path = tmp_path / "out.jsonl"
    write_trajectories(path, [make_traj(0)])
    before = path.read_bytes()

    def boom():
        yield make_traj(1)
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_trajectories(path, boom())
    assert path.read_bytes() == before  # the old file is untouched
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # no temp file left


def test_atomic_writer_new_file_absent_until_close(tmp_path):
    path = tmp_path / "sub" / "out.jsonl.gz"
    with TrajectoryWriter(path) as w:
        w.write(make_traj(0))
        assert not path.exists()
    assert read_trajectories(path)[0].id == "t0"
    with gzip.open(path, "rt") as f:
        assert json.loads(f.readline())["id"] == "t0"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_reader_never_crashes_on_garbage(tmp_path_factory, blob):
    """Arbitrary bytes give either trajectories or a DatasetError, never another exception."""
    path = tmp_path_factory.mktemp("fuzz") / "g.jsonl"
    path.write_bytes(blob)
    try:
        read_trajectories(path)
    except DatasetError:
        pass


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.builds(
            lambda obs, acts, reward, ok: Step(
                observation=obs,
                action=acts[0],
                candidates=acts,
                next_observation=obs[::-1],
                env_reward=reward,
            ),
            text,
            st.lists(text, min_size=1, max_size=4),
            st.floats(-1e6, 1e6),
            st.booleans(),
        ),
        min_size=1,
        max_size=5,
    ),
    text,
    st.booleans(),
)
def test_round_trip_property(tmp_path_factory, steps, instruction, success):
    traj = Trajectory(id="x", instruction=instruction, task_type="t", success=success, steps=steps)
    path = tmp_path_factory.mktemp("rt") / "p.jsonl.gz"
    write_trajectories(path, [traj])
    assert read_trajectories(path, layouts=False) == [traj]


def test_responses_are_read_through_the_recorded_layout():
    """The response of a step is the layout's (the policy's memory reads the same): on a TextWorld text the
    feedback line, never the agent's own recent-actions line; on a plain text what the next state adds."""
    from models.state_layout import LEGACY_LAYOUT, LEGACY_STATE_FORMAT

    before = "Inventory: empty\nRecent actions: none\nRoom: a kitchen with an apple."
    looked = "Feedback: a kitchen with an apple.\nInventory: empty\nRecent actions: look around\nRoom: hall."
    took = "Feedback: You take it.\nInventory: an apple\nRecent actions: look around, take apple\nRoom: x."

    def traj(states: list[str], actions: list[str], meta: dict) -> Trajectory:
        steps = [
            Step(observation=o, action=a, candidates=[a], next_observation=n, env_reward=0.0, info={})
            for o, a, n in zip(states, actions, states[1:], strict=False)
        ]
        return Trajectory(id="t", instruction="i", task_type="x", success=False, steps=steps, meta=meta)

    twx = traj([before, looked, took], ["look around", "take apple"], {"state_format": LEGACY_STATE_FORMAT})
    assert twx.responses() == ["a kitchen with an apple.", "You take it."]
    assert LEGACY_LAYOUT.parse(looked)["history"] == "look around"  # what a first-new-line rule would show
    plain = traj(["A hall.", "A hall. The door opens.", "A hall. The door opens."], ["open door", "wait"], {})
    assert plain.responses() == ["The door opens.", ""]
    assert traj([before], [], {}).responses() == []
