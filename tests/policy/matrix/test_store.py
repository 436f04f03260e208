"""The matrix's row store: rows keyed by their configuration, one JSON file rewritten atomically, and the
rows of a run elsewhere merged in."""

from __future__ import annotations

import json
import os

import pytest

from policy.matrix.store import FORMAT, RowStore, episodes_digest, merge, row_key


def test_row_key_is_the_configuration_in_any_order():
    assert row_key({"a": 1, "b": [2, 3]}) == row_key({"b": [2, 3], "a": 1})
    assert row_key({"a": 1}) != row_key({"a": 1, "b": None})


def test_store_round_trip_and_refuses_a_foreign_file(tmp_path):
    store = RowStore(tmp_path / "m.json")
    store.put({"world": "w", "seed": 0}, {"status": "ok", "success_rate": 0.5})
    again = RowStore(tmp_path / "m.json")
    assert again.get({"seed": 0, "world": "w"})["success_rate"] == 0.5
    assert again.get({"world": "w", "seed": 1}) is None
    assert not list(tmp_path.glob(".*tmp"))  # the atomic rewrite leaves no temporary file
    (tmp_path / "other.json").write_text(json.dumps({"rows": []}))
    with pytest.raises(ValueError, match="not a benchmark-matrix file"):
        RowStore(tmp_path / "other.json")


def test_merge_takes_finished_rows_and_backfilled_ones_but_keeps_mine(tmp_path):
    mine, other = RowStore(tmp_path / "a.json"), RowStore(tmp_path / "b.json")
    mine.put({"w": 1}, {"status": "ok", "success_rate": 0.5})
    mine.put({"w": 2}, {"status": "error", "reason": "x"})
    mine.put({"w": 3}, {"status": "ok", "success_rate": 0.1})
    other.put({"w": 1}, {"status": "ok", "success_rate": 0.9})  # same fields: mine stays
    other.put({"w": 2}, {"status": "ok", "success_rate": 0.2})  # mine failed: taken
    other.put({"w": 3}, {"status": "ok", "success_rate": 0.1, "gold_decisions": {}})  # backfilled: taken
    other.put({"w": 4}, {"status": "error", "reason": "y"})  # not finished: left out
    assert merge(mine, other) == 2
    assert mine.get({"w": 1})["success_rate"] == 0.5 and mine.get({"w": 2})["success_rate"] == 0.2
    assert "gold_decisions" in mine.get({"w": 3}) and mine.get({"w": 4}) is None


def test_the_rows_file_is_compact_and_the_per_episode_arrays_go_to_the_full_rows(tmp_path):
    config = {"world": "w", "seed": 0, "runner": "edge-serve"}
    episodes = [[1, 1, 1.0, 7], [2, 0, 0.25, 40]]
    store = RowStore(tmp_path / "m.json", tmp_path / "work" / "m.full.json")
    store.put(config, {"status": "ok", "success_rate": 0.5, "per_episode": episodes})
    text = (tmp_path / "m.json").read_text()
    assert "per_episode" not in text and text.count('"world"') == 1  # the configuration once, no arrays
    row = json.loads(text)["rows"][0]
    assert row["episodes_sha"] == episodes_digest(episodes)
    # read back with the full rows: the arrays return; without them (another machine) only the digest
    again = RowStore(tmp_path / "m.json", tmp_path / "work" / "m.full.json").get(config)
    assert again["per_episode"] == episodes and again["world"] == "w" and again["success_rate"] == 0.5
    elsewhere = RowStore(tmp_path / "m.json").get(config)
    assert "per_episode" not in elsewhere and elsewhere["episodes_sha"] == row["episodes_sha"]


def test_a_rows_file_written_with_the_arrays_still_reads(tmp_path):
    config = {"world": "w", "seed": 0}
    old = {
        "format": FORMAT,
        "meta": {},
        "rows": [{**config, "status": "ok", "per_episode": [[1, 1, 1.0, 3]], "config": config}],
    }
    (tmp_path / "old.json").write_text(json.dumps(old, indent=1))
    store = RowStore(tmp_path / "old.json")
    assert store.get(config)["episodes_sha"] == episodes_digest([[1, 1, 1.0, 3]])
    store.save()
    assert "per_episode" not in (tmp_path / "old.json").read_text()


def test_a_failed_steps_reason_names_paths_under_the_working_directory_relative_to_it(tmp_path):
    store = RowStore(tmp_path / "m.json")
    reason = f"edgejudge label potential {os.path.join(os.getcwd(), 'runs', 'a.jsonl.gz')} failed: /etc/x"
    row = store.put({"world": "w"}, {"status": "error", "reason": reason})
    assert row["reason"] == "edgejudge label potential runs/a.jsonl.gz failed: /etc/x"
    assert RowStore(tmp_path / "m.json").get({"world": "w"})["reason"] == row["reason"]


def test_two_runs_side_by_side_on_one_file_keep_each_others_rows(tmp_path):
    """Two matrix runs writing the same results file: each save takes in what the other wrote since it read
    the file, so neither run's rows are lost (a finished row on disk beats an unfinished one in memory)."""
    path, full = tmp_path / "m.json", tmp_path / "work" / "m.full.json"
    a, b = RowStore(path, full), RowStore(path, full)
    a.put({"w": 1}, {"status": "ok", "success_rate": 0.5, "per_episode": [[1, 1, 1.0, 3]]})
    b.put({"w": 2}, {"status": "error", "reason": "x"})
    b.put({"w": 3}, {"status": "ok", "success_rate": 0.25})
    a.put({"w": 2}, {"status": "ok", "success_rate": 0.75})  # a finished what b failed: a's row wins
    b.put({"w": 4}, {"status": "ok", "success_rate": 0.0})
    again = RowStore(path, full)
    assert [again.get({"w": i})["success_rate"] for i in (1, 2, 3, 4)] == [0.5, 0.75, 0.25, 0.0]
    assert again.get({"w": 1})["per_episode"] == [[1, 1, 1.0, 3]]  # b's saves kept a's arrays too
    assert b.get({"w": 1})["success_rate"] == 0.5  # and b now knows a's rows


def test_planned_rows_leave_out_what_an_earlier_run_with_other_settings_left(tmp_path):
    from policy.matrix.store import planned_rows

    store = RowStore(tmp_path / "r.json")
    old, new = {"world": "w", "seed": 0, "steps": 1}, {"world": "w", "seed": 0, "steps": 2}
    store.put(old, {"status": "ok", "success_rate": 0.0})
    store.put(new, {"status": "ok", "success_rate": 0.9})
    assert len(planned_rows(store)) == 2  # no plan recorded: every row
    store.meta = {**store.meta, "plan": [row_key(new)]}
    store.save()
    assert [r["success_rate"] for r in planned_rows(RowStore(tmp_path / "r.json"))] == [0.9]
