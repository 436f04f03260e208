"""The response-only label benchmark's report: rows per log and per family, the success-flag floor."""

from __future__ import annotations

from labeler.dataset import Step, Trajectory, write_trajectories
from tools.bench.bench_response_logs import markdown, report


def _traj(i: int, task: str, success: bool) -> Trajectory:
    steps = []
    for k in range(4):
        progress = 0.25 if (success and k % 2 == 0) else 0.0
        good = 1.0 if progress else 0.0
        info = {"score": 0.0, "progress": progress, "gold": bool(good)}
        labels = {"trca": {"total": good}, "potential": {"delta": good - 0.5}}
        steps.append(Step(f"s{k}", "a", ["a"], f"r{k}", info=info, labels=labels))
    return Trajectory(f"{task}-{i}", "Do it.", task, success, steps)


def test_the_report_has_a_pooled_row_per_log_and_family_rows_where_families_are_big_enough(tmp_path):
    big, small = tmp_path / "big.jsonl", tmp_path / "small.jsonl"
    write_trajectories(big, [_traj(i, t, i < 3) for t in ("a", "b") for i in range(10)])
    write_trajectories(small, [_traj(i, t, i < 1) for t in ("a", "b") for i in range(5)])
    rep = report({"2 families x 10": big, "2 families x 5": small})
    logs = [r["log"] for r in rep["rows"]]
    assert logs == ["2 families x 10", "  a", "  b", "2 families x 5"]
    pooled = rep["rows"][0]
    assert pooled["auroc"]["trca.total"] == 1.0 and pooled["auroc"]["coren.ensemble"] is None
    # every step of a successful episode carries the flag: half of them made progress
    assert 0.5 < pooled["success_broadcast"] < 1.0
    md = markdown(rep)
    assert "| own success flag | trca.total | potential.delta | coren.ensemble |" in md
    assert "| n/a |" in md  # no COREN labels: said, not guessed
