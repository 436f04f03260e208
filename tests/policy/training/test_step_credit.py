"""Per-step credit for imitation over every episode (policy.training.step_credit) against hand-computed
values, and the learner that reads it (policy.training.learners.credit) end to end on a small file."""

from __future__ import annotations

import math

import pytest
import torch

from models.trajectory import Step, Trajectory
from policy.training.step_credit import CreditRule, linked_steps, segment_path, step_credit
from policy.worlds.adapters.twx import compose_state


def _state(fridge: str, inventory: str) -> str:
    return compose_state(
        "", f"You are in the kitchen. The fridge is {fridge}.", "Inventory: " + inventory, []
    )


A, B, C, D = (
    _state("closed", "empty"),
    _state("open", "empty"),
    _state("open", "an apple"),
    _state("open", "a cup"),
)


def _episode(success: bool) -> Trajectory:
    """look (no change), open fridge, take apple, drop apple (undone: a loop), take cup from fridge, examine
    cup."""
    moves = [(A, "look", A), (A, "open fridge", B), (B, "take apple", C), (C, "drop apple", B)]
    moves += [(B, "take cup from fridge", D), (D, "examine cup", D)]
    steps = [Step(observation=o, action=a, candidates=[a, "wait"], next_observation=n) for o, a, n in moves]
    return Trajectory(id="e", instruction="fetch the cup", task_type="twc", success=success, steps=steps)


def test_a_failed_episode_credits_its_progress_and_the_lasting_steps_before_it():
    t = _episode(success=False)
    rewards = [0.0, 0.0, 0.0, -0.05, 0.5, 0.0]  # the detour penalty on the drop, a label on the take
    assert segment_path(t.view.episode_keys, 0, 4) == [1, 4]  # look changed nothing; take + drop was a loop
    assert step_credit(t, rewards, CreditRule(failures=True)) == [0.0, 0.8, 0.0, -0.5, 1.0, 0.0]
    assert step_credit(t, rewards, CreditRule(discount=0.5, negative=0.0, failures=True)) == [
        0.0,
        0.5,
        0.0,
        0.0,
        1.0,
        0.0,
    ]
    assert step_credit(t, rewards, CreditRule(failures=False)) == [0.0, 0.0, 0.0, -0.5, 0.0, 0.0]
    # only the detour penalty made the drop negative: harm with `detours`, no signal without
    labels = [0.0, 0.0, 0.0, 0.0, 0.5, 0.0]
    assert step_credit(t, rewards, CreditRule(failures=True), labels) == [0.0, 0.8, 0.0, -0.5, 1.0, 0.0]
    assert step_credit(t, rewards, CreditRule(detours=False, failures=True), labels) == [
        0.0,
        0.8,
        0.0,
        0.0,
        1.0,
        0.0,
    ]
    # the labels called the drop progress; a later step undid it: not pushed away
    assert step_credit(t, rewards, CreditRule(failures=True), [0.0, 0.0, 0.0, 0.3, 0.5, 0.0])[3] == 0.0
    # a negative label on a step that changed nothing (a repeated look) pushes nothing away
    looked = [-0.1, 0.0, 0.0, -0.05, 0.5, -0.1]
    assert step_credit(t, looked, CreditRule(failures=True)) == [0.0, 0.8, 0.0, -0.5, 1.0, 0.0]


def test_failed_episodes_credit_only_the_steps_linked_to_their_progress():
    actions = ["open fridge", "close door", "take the cup from fridge", "look", "put cup in the sink"]
    assert linked_steps(actions, [0, 1, 2, 4]) == [
        0,
        2,
        4,
    ]  # the fridge via the cup; the door acts on neither
    assert linked_steps(actions, [1, 4]) == [4]
    t = _episode(success=False)
    t.steps[1].action = "open door"  # no longer acts on the fridge the cup was taken from
    rewards = [0.0, 0.0, 0.0, -0.05, 0.5, 0.0]
    assert step_credit(t, rewards, CreditRule(failures=True)) == [0.0, 0.0, 0.0, -0.5, 1.0, 0.0]
    assert step_credit(t, rewards, CreditRule(linked=False, failures=True)) == [0.0, 0.8, 0.0, -0.5, 1.0, 0.0]


def test_a_successful_episode_keeps_every_step_not_called_harmful():
    t = _episode(success=True)
    rewards = [0.0, 0.0, 0.0, -0.05, 0.5, 1.0]  # the success bonus on the last step, which changed nothing
    assert segment_path(t.view.episode_keys, 5, 5) == [5]  # a milestone is on its own path
    assert step_credit(t, rewards, CreditRule(failures=True)) == [1.0, 1.0, 1.0, -0.5, 1.0, 1.0]
    assert step_credit(t, rewards, CreditRule(negative=0.0, failures=True)) == [1.0, 1.0, 1.0, 0.0, 1.0, 1.0]


def test_a_successful_episode_may_credit_only_the_first_use_of_an_idle_action():
    moves = [(A, "look", A), (A, "open fridge", B), (B, "look", B), (B, "take cup from fridge", D)]
    moves += [(D, "examine cup", D)]
    steps = [Step(observation=o, action=a, candidates=[a, "wait"], next_observation=n) for o, a, n in moves]
    t = Trajectory(id="s", instruction="fetch the cup", task_type="twc", success=True, steps=steps)
    rewards = [0.0, 0.0, 0.0, 0.5, 1.0]
    assert step_credit(t, rewards, CreditRule(idle_repeats=True)) == [1.0] * 5
    # the second look changed nothing and repeated an action the episode had taken: no credit
    assert step_credit(t, rewards, CreditRule()) == [1.0, 1.0, 0.0, 1.0, 1.0]


def test_credit_rule_and_rewards_are_checked():
    with pytest.raises(ValueError, match="discount"):
        CreditRule(discount=1.5)
    with pytest.raises(ValueError, match="negative"):
        CreditRule(negative=-1)
    with pytest.raises(ValueError, match="rewards for 6 steps"):
        step_credit(_episode(False), [0.0], CreditRule(failures=True))


def test_unlikelihood_is_minus_log_one_minus_p():
    from policy.training.learners.credit import unlikelihood

    p = torch.tensor([0.25, 0.5, 1.0])
    got = unlikelihood(p.log())
    assert got[:2].tolist() == pytest.approx([-math.log(0.75), -math.log(0.5)], rel=1e-5)
    assert math.isfinite(got[2].item())  # p = 1 is clamped, not infinite


def test_credit_learner_trains_on_the_credited_steps_of_every_episode(tmp_path):
    from models.trajectory import write_trajectories
    from policy.training.train import ConfigError, train_from_file
    from tests.support.toy_task import DATA, HashEmbedder

    write_trajectories(tmp_path / "d.jsonl", DATA)
    run = train_from_file(
        tmp_path / "d.jsonl",
        algo="credit",
        reward="trca",
        out=tmp_path / "ck",
        overrides={"steps": 30, "hidden": 8, "log_every": 10},
        embedder=HashEmbedder(),
        progress=False,
    )
    # the toy's failed episodes only 'look' (reward 0): no credit; the successful ones' steps all have it
    assert run.transitions == 2 * sum(t.success for t in DATA) and run.episodes == sum(
        t.success for t in DATA
    )
    assert run.result.curves[-1]["accuracy"] == 1.0
    with pytest.raises(ConfigError, match="dense --reward"):
        train_from_file(
            tmp_path / "d.jsonl", algo="credit", reward="sparse", out=tmp_path / "x", embedder=HashEmbedder()
        )
    with pytest.raises(ConfigError, match="discount"):
        train_from_file(
            tmp_path / "d.jsonl",
            algo="credit",
            reward="trca",
            out=tmp_path / "x",
            overrides={"discount": "2"},
        )
