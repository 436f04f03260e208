"""tools.bench.bench_scienceworld_labels without a simulator or judge: a family whose files exist is resumed
(no stage runs), COREN is left out of a family it is not asked for, and the rows' AUROCs are the hand-computed
ones."""

from __future__ import annotations

import pytest

from labeler.dataset import Step, Trajectory, write_trajectories


@pytest.fixture(scope="module")
def tool():
    from tools.bench import bench_scienceworld_labels

    return bench_scienceworld_labels


def _traj(tid: str, rewards: list[float], progress: list[bool], success: bool) -> Trajectory:
    steps = [
        Step(
            observation=f"o{i}",
            action=f"a{i}",
            candidates=[f"a{i}"],
            next_observation=f"o{i + 1}",
            info={"progress": float(p), "gold": p},
            labels={"trca": {"total": r}},
        )
        for i, (r, p) in enumerate(zip(rewards, progress, strict=True))
    ]
    return Trajectory(id=tid, instruction="i", task_type="t", success=success, steps=steps)


def test_resumed_family_and_rows(tool, tmp_path):
    task = "find-plant"
    # steps ranked by reward: 0.9 (progress), 0.5 (not), 0.4 (progress), 0.1 (not), 0.0 (not)
    trajs = [
        _traj("s", [0.9, 0.1], [True, False], True),
        _traj("f", [0.5, 0.4, 0.0], [False, True, False], False),
    ]
    write_trajectories(tmp_path / f"{task}.test.jsonl.gz", trajs)
    write_trajectories(tmp_path / f"{task}.test.trca.jsonl.gz", trajs)
    (tmp_path / f"{task}.toml").write_text("[[items]]\n[[items]]\n")
    fam = tool.run_family(task, tmp_path, episodes=2, coren_episodes=0, coren_prompts=4)
    assert fam["timings"] == {} and fam["rubric_items"] == 2  # nothing ran: every stage's file existed
    assert fam["files"] == [str(tmp_path / f"{task}.test.trca.jsonl.gz")]  # no COREN file asked for
    row = tool._row("x", trajs)
    assert (row["trajectories"], row["steps"], row["progress_steps"], row["successes"]) == (2, 5, 2, 1)
    # AUROC = P(progress step outranks a non-progress one): pairs (0.9 | 0.5, 0.1, 0.0) 3 wins,
    # (0.4 | 0.5, 0.1, 0.0) 2 wins of 3 -> 5 / 6
    assert row["auroc_progress"]["trca.total"] == pytest.approx(5 / 6, abs=1e-4)  # rounded to 4 places
    table = tool.markdown([row])
    assert table.splitlines()[2].startswith("| x | 2 | 5 (2) | 1 | ") and "0.833" in table
