"""The learner benchmark's pieces that need no training: learner specs, BC's weights, the weight report."""

from __future__ import annotations

import click
import numpy as np
import pytest

from labeler.dataset import Step, Trajectory
from policy.rewards import parse_reward
from tools.bench.bench_learners import bc_weights, parse_learner, weight_report


def test_learners_are_presets_or_spelled_out():
    assert parse_learner("iql-trca") == ("iql-trca", "iql", "trca", {})
    assert parse_learner("bc-success") == ("bc-success", "bc", "sparse", {"filter": "success"})
    assert parse_learner("hot=iql:trca:beta=10,expectile=0.9") == (
        "hot",
        "iql",
        "trca",
        {"beta": "10", "expectile": "0.9"},
    )
    with pytest.raises(click.BadParameter, match="preset"):
        parse_learner("iql")


def test_bc_weights_follow_its_filter_over_the_steps_with_candidates():
    def step(r: float, candidates: bool = True) -> Step:
        return Step("s", "a", ["a", "b"] if candidates else [], "t", labels={"trca": {"total": r}})

    won = Trajectory("w", "i", "t", True, [step(0.5), step(-0.2), step(0.0, candidates=False), step(0.0)])
    lost = Trajectory("l", "i", "t", False, [step(0.4), step(-0.1)])
    spec = parse_reward("trca")
    assert bc_weights([won, lost], "success", spec).tolist() == [1, 1, 1, 0, 0]
    assert bc_weights([won, lost], "labeled", spec).tolist() == [1, 0, 1, 1, 0]
    assert bc_weights([won, lost], "success-labeled", spec).tolist() == [1, 0, 1, 0, 0]


def test_weight_report_says_how_much_weight_the_gold_steps_get():
    gold = np.array([True, False, False, False])
    even = weight_report(np.ones(4), gold)
    assert even["gold_step_share_of_weight"] == even["gold_step_share_of_data"] == 0.25
    assert even["weight_auroc_gold"] == 0.5
    sharp = weight_report(np.array([3.0, 1.0, 0.0, 0.0]), gold)
    assert sharp["gold_step_share_of_weight"] == 0.75 and sharp["weight_auroc_gold"] == 1.0
    assert sharp["steps_with_weight"] == 0.5 and sharp["weight_max"] == 3.0
