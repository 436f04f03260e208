"""labeler.dataset_summary: a file's numbers (its layout line is tested with the layout inference)."""

from __future__ import annotations

from labeler.dataset_summary import dataset_stats
from models.trajectory import write_trajectories
from tests.support.trajectories import make_traj


def test_stats(tmp_path):
    path = tmp_path / "d.jsonl"
    write_trajectories(path, [make_traj(0, 2, True), make_traj(1, 4, False)])
    s = dataset_stats(path)
    assert s["trajectories"] == 2 and s["steps"] == 6 and s["success_rate"] == 0.5
    assert s["mean_length"] == 3 and s["max_length"] == 4 and s["mean_candidates"] == 2
    assert s["task_types"] == {"twc": 2}
