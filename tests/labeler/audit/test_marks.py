"""The marks file: appended and synced, undos, one standing mark per step and auditor, torn and bad lines."""

from __future__ import annotations

import pytest

from labeler.audit.marks import UNDONE, Mark, MarksError, append_mark, current, default_marks_path, read_marks


def test_marks_append_undo_and_stand_per_auditor(tmp_path):
    path = tmp_path / "log.audit.jsonl"
    assert read_marks(path) == []
    append_mark(path, Mark("a", 0, "progress"))
    append_mark(path, Mark("a", 1, "harmful"))
    append_mark(path, Mark("a", 1, UNDONE))
    append_mark(path, Mark("a", 0, "neither"))  # a later mark of the same step wins
    append_mark(path, Mark("a", 1, "progress", by="gemma3-270m"))
    marks = read_marks(path)
    assert [m.mark for m in marks] == ["progress", "harmful", UNDONE, "neither", "progress"]
    assert all(m.at > 0 for m in marks)
    assert {k: m.mark for k, m in current(marks, "person").items()} == {("a", 0): "neither"}
    assert {k: m.mark for k, m in current(marks, "gemma3-270m").items()} == {("a", 1): "progress"}
    with pytest.raises(ValueError, match="expected one of"):
        append_mark(path, Mark("a", 2, "great"))


def test_a_torn_last_line_is_left_out_and_a_bad_one_named(tmp_path):
    path = tmp_path / "m.jsonl"
    append_mark(path, Mark("a", 0, "progress"))
    path.write_text(path.read_text() + '{"id": "a", "step": 1, "ma')
    assert [m.step for m in read_marks(path)] == [0]
    path.write_text('{"id": "a", "step": 0, "mark": "great"}\n')
    with pytest.raises(MarksError, match="m.jsonl:1: mark 'great'"):
        read_marks(path)
    path.write_text("not json\n")
    with pytest.raises(MarksError, match="m.jsonl:1: not a mark"):
        read_marks(path)


def test_the_default_marks_file_sits_beside_the_log(tmp_path):
    assert default_marks_path(tmp_path / "fleet.jsonl.gz") == tmp_path / "fleet.audit.jsonl"
    assert default_marks_path("runs/x.jsonl").name == "x.audit.jsonl"
