"""Several logs read as one: files and folders, file order, ids unique across files, torn lines."""

from __future__ import annotations

import pytest

from models.log_set import describe_logs, log_files, read_logs
from models.trajectory import DatasetError, write_trajectories
from tests.support.trajectories import make_traj


def _log(path, ids):
    path.parent.mkdir(parents=True, exist_ok=True)
    trajs = [make_traj(i) for i in ids]
    for t, i in zip(trajs, ids, strict=True):
        t.id = f"ep-{i}"
    write_trajectories(path, trajs)
    return path


def test_files_and_folders_in_order(tmp_path):
    a = _log(tmp_path / "round-0.jsonl.gz", [0, 1])
    _log(tmp_path / "fleet" / "robot-b" / "day-1.jsonl", [4])
    _log(tmp_path / "fleet" / "robot-a" / "day-1.jsonl.gz", [2, 3])
    (tmp_path / "fleet" / "notes.txt").write_text("not a log")
    files = log_files([a, tmp_path / "fleet"])
    assert [f.name for f in files] == ["round-0.jsonl.gz", "day-1.jsonl.gz", "day-1.jsonl"]
    assert [t.id for t in read_logs([a, tmp_path / "fleet"])] == ["ep-0", "ep-1", "ep-2", "ep-3", "ep-4"]
    assert [t.id for t in read_logs(a)] == ["ep-0", "ep-1"]  # one path, as before


def test_a_file_named_twice_is_read_once(tmp_path):
    a = _log(tmp_path / "a.jsonl", [0])
    assert len(read_logs([a, tmp_path / "a.jsonl", tmp_path])) == 1


def test_an_episode_in_two_files_names_both(tmp_path):
    a = _log(tmp_path / "a.jsonl", [0, 1])
    b = _log(tmp_path / "b.jsonl", [1])
    with pytest.raises(DatasetError) as e:
        read_logs([a, b])
    assert str(b) in str(e.value) and str(a) in str(e.value) and "'ep-1'" in str(e.value)


def test_missing_paths_and_empty_folders_are_errors(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        log_files([tmp_path / "nope.jsonl"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="holds no log"):
        log_files([tmp_path / "empty"])


def test_a_torn_last_line_keeps_every_complete_episode(tmp_path, capsys):
    a = _log(tmp_path / "a.jsonl", [0])
    b = _log(tmp_path / "b.jsonl", [1, 2])
    b.write_text(b.read_text()[:-20])  # a power loss inside the last episode
    assert [t.id for t in read_logs([a, b])] == ["ep-0", "ep-1"]
    assert "b.jsonl" in capsys.readouterr().err


def test_describe(tmp_path):
    assert describe_logs("x.jsonl") == "x.jsonl"
    assert describe_logs(["x.jsonl", tmp_path]) == f"x.jsonl, {tmp_path}"
