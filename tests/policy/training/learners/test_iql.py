"""IQL's reward scale: the dataset's episode returns mapped to a fixed spread (hand-computed)."""

from __future__ import annotations

import pytest

from models.trajectory import Step, Trajectory
from policy.training.buffer import build_table
from policy.training.learners.iql import RETURN_SPAN, return_scale
from policy.training.rewards import parse_reward
from tests.support.toy_task import HashEmbedder


def _episode(name: str, success: bool, labels: list[float]) -> Trajectory:
    steps = [
        Step(
            f"{name} {i}", f"act {i}", [f"act {i}", "wait"], f"{name} {i + 1}", labels={"trca": {"total": r}}
        )
        for i, r in enumerate(labels)
    ]
    return Trajectory(id=name, instruction="do it", task_type="t", success=success, steps=steps)


EPISODES = [_episode("won", True, [0.5, 0.5, 0.0]), _episode("lost", False, [0.5, -1.0])]


def _scale(reward: str) -> float:
    return return_scale(build_table(EPISODES, HashEmbedder(), parse_reward(reward)).to_torch())


def test_sparse_returns_span_one_and_keep_the_scale_of_ten():
    assert _scale("sparse") == RETURN_SPAN == 10.0


def test_dense_returns_are_scaled_to_the_same_span():
    # returns: 0.5 + 0.5 + 0 + 1 (terminal bonus) = 2.0 and 0.5 - 1.0 = -0.5: spread 2.5
    assert _scale("trca") == pytest.approx(10.0 / 2.5)


def test_equal_returns_keep_the_default_span():
    same = [_episode("a", False, [0.0]), _episode("b", False, [0.0, 0.0])]
    assert return_scale(build_table(same, HashEmbedder(), parse_reward("sparse")).to_torch()) == RETURN_SPAN
