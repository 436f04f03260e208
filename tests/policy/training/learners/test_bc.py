"""BC's step filters (policy.training.learners.bc.select): which transitions each keeps, checked against
hand-set rewards."""

from __future__ import annotations

import numpy as np
import pytest

from models.trajectory import Step, Trajectory
from policy.training.buffer import build_table
from policy.training.learners.bc import select
from policy.training.rewards import parse_reward
from tests.support.toy_task import HashEmbedder


def _episode(name: str, success: bool, labels: list[float]) -> Trajectory:
    steps = [
        Step(
            observation=f"{name} state {i}",
            action=f"act {i}",
            candidates=[f"act {i}", "wait"],
            next_observation=f"{name} state {i + 1}",
            labels={"trca": {"total": r}},
        )
        for i, r in enumerate(labels)
    ]
    return Trajectory(id=name, instruction="do it", task_type="t", success=success, steps=steps)


EPISODES = [_episode("won", True, [0.5, -0.2, 0.0]), _episode("lost", False, [0.4, 0.0, -0.3])]


def _kept(filter: str, reward: str = "trca") -> list[tuple[int, float]]:
    table = build_table(EPISODES, HashEmbedder(), parse_reward(reward))
    kept = select(table, filter)
    return [(int(e), round(float(r), 6)) for e, r in zip(kept.episode, kept.reward, strict=True)]


def test_success_keeps_every_step_of_the_successful_episodes():
    assert _kept("success") == [(0, 0.5), (0, -0.2), (0, 1.0)]  # the last step: label 0 + terminal bonus 1


def test_labeled_keeps_the_steps_with_a_positive_reward_in_any_episode():
    assert _kept("labeled") == [(0, 0.5), (0, 1.0), (1, 0.4)]


def test_success_labeled_drops_what_the_labels_call_harmful_in_the_successful_episodes():
    assert _kept("success-labeled") == [(0, 0.5), (0, 1.0)]


def test_success_plus_progress_adds_the_failed_episodes_progress():
    assert _kept("success+progress") == [(0, 0.5), (0, 1.0), (1, 0.4)]


def test_all_keeps_everything_and_unknown_filters_are_refused():
    assert len(_kept("all")) == 6
    with pytest.raises(ValueError, match="unknown BC filter"):
        _kept("best")


def test_a_label_filter_needs_a_dense_reward(tmp_path):
    from models.trajectory import write_trajectories
    from policy.training.train import ConfigError, train_from_file

    write_trajectories(tmp_path / "d.jsonl", EPISODES)
    with pytest.raises(ConfigError, match="reads the labels"):
        train_from_file(
            tmp_path / "d.jsonl",
            algo="bc",
            reward="sparse",
            out=tmp_path / "ck",
            overrides={"filter": "labeled"},
            embedder=HashEmbedder(),
        )
    assert not (tmp_path / "ck").exists()
    assert np.isclose(sum(r for _e, r in _kept("labeled")), 1.9)
