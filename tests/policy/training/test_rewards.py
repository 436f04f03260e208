from __future__ import annotations

import pytest
import torch

from policy.training.rewards import RewardError, parse_reward, step_rewards
from tests.support.toy_task import DATA, _traj

torch.set_num_threads(1)


def test_reward_sources():
    t = DATA[0]
    assert step_rewards(t, parse_reward("sparse")) == [0.0, 1.0]
    assert step_rewards(t, parse_reward("coren")) == [1.0, 2.0]  # dense + terminal bonus
    assert step_rewards(t, parse_reward("trca.total", terminal_bonus=0.0)) == [0.5, 0.5]
    assert step_rewards(DATA[1], parse_reward("coren")) == [-1.0, -1.0]
    with pytest.raises(RewardError, match="unknown reward"):
        parse_reward("dense")
    with pytest.raises(RewardError, match="no label coren.contextual"):
        step_rewards(t, parse_reward("coren.contextual"))
    with pytest.raises(RewardError, match="use --reward sparse"):
        step_rewards(_traj(0, True, labels=False), parse_reward("trca"))
