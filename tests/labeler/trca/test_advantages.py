from __future__ import annotations

import math

import pytest

from labeler.trca.advantages import completion_aware_returns, group_standardise


def test_completion_aware_return_adds_terminal_success_reward():
    assert completion_aware_returns([1.0, 0.0, 2.0], True, gamma=0.5) == pytest.approx([1.75, 1.5, 3.0])
    assert completion_aware_returns([1.0, 0.0, 2.0], False, gamma=0.5) == pytest.approx([1.5, 1.0, 2.0])
    assert completion_aware_returns([0.0], True, gamma=0.9, success_reward=10.0) == [10.0]
    with pytest.raises(ValueError, match="gamma"):
        completion_aware_returns([0.0], True, gamma=-0.1)


def test_group_standardise_singleton_and_zero_variance_groups_give_zero():
    values = [1.0, 3.0, 5.0, 2.0, 2.0, 7.0]
    keys = ["a", "a", "b", "c", "c", "d"]
    # group a: mean 2, population std 1 -> -1, +1; b and d singletons -> 0; c zero variance -> 0
    assert group_standardise(values, keys) == pytest.approx([-1.0, 1.0, 0.0, 0.0, 0.0, 0.0])


def test_group_standardise_three_members():
    v = [1.375, -0.2, 0.5]
    mean = sum(v) / 3
    std = math.sqrt(sum((x - mean) ** 2 for x in v) / 3)
    assert group_standardise(v, [0, 0, 0]) == pytest.approx([(x - mean) / std for x in v])
    with pytest.raises(ValueError):
        group_standardise([1.0], [0, 1])
