"""Hindsight loop erasure (policy.training.loop_erasure): a trajectory cut to its path, BC's 'paths' filter,
the detour penalty."""

from __future__ import annotations

import pytest

from models.trajectory import Step, Trajectory
from policy.training.loop_erasure import loop_erase
from policy.worlds.adapters.twx import compose_state


def _step(obs: str, action: str, nxt: str) -> Step:
    return Step(observation=obs, action=action, candidates=[action, "wait"], next_observation=nxt)


def test_loop_erase_trajectory():
    room = "You are in the kitchen. {}"
    s = [
        compose_state("", room.format(x), "Inventory: " + inv, [])
        for x, inv in [
            ("The fridge is closed.", "empty"),
            ("The fridge is open.", "empty"),
            ("The fridge is closed.", "empty"),
            ("The fridge is closed.", "a cup"),
        ]
    ]
    t = Trajectory(
        id="t",
        instruction="tidy up",
        task_type="twc",
        success=True,
        steps=[
            _step(s[0], "open fridge", s[1]),
            _step(s[1], "close fridge", s[2]),
            _step(s[2], "take cup", s[3]),
        ],
    )
    out = loop_erase(t)
    assert [x.action for x in out.steps] == ["take cup"]
    assert out.meta["loop_erased_from"] == 3 and len(t.steps) == 3  # a copy; the input is unchanged


def test_bc_paths_filter_trains_on_the_erased_successful_episodes(tmp_path):
    from models.trajectory import write_trajectories
    from policy.training.train import train_from_file
    from tests.support.toy_task import DATA, HashEmbedder

    write_trajectories(tmp_path / "d.jsonl", DATA)
    run = train_from_file(
        tmp_path / "d.jsonl",
        algo="bc",
        reward="sparse",
        out=tmp_path / "ck",
        overrides={"filter": "paths", "steps": 20, "hidden": 8, "log_every": 10},
        embedder=HashEmbedder(),
        progress=False,
    )
    assert run.dataset_episodes == len(DATA) and run.episodes == sum(t.success for t in DATA)
    assert run.transitions == sum(len(loop_erase(t).steps) for t in DATA if t.success)
    assert run.selection == "filter=paths" and "filter=paths of" in run.trained_on()


def test_detour_penalty_replaces_the_reward_of_undone_steps():
    from policy.training.loop_erasure import detour_steps
    from policy.training.rewards import RewardError, parse_reward, step_rewards

    room = "You are in the kitchen. The cup is {}."
    inv = ["empty", "a cup", "empty", "empty"]
    where = ["on the floor", "held", "on the floor", "in the cupboard"]
    s = [compose_state("", room.format(w), "Inventory: " + i, []) for w, i in zip(where, inv, strict=True)]
    steps = [_step(s[0], "take cup", s[1]), _step(s[1], "drop cup", s[2]), _step(s[2], "take cup", s[1])]
    steps.append(_step(s[1], "put cup in cupboard", s[3]))
    for step, r in zip(steps, [0.5, 0.0, 0.5, 1.0], strict=True):
        step.labels = {"trca": {"total": r}}
    t = Trajectory(id="t", instruction="tidy up", task_type="twc", success=True, steps=steps)
    assert detour_steps(t) == [0, 1]  # take + drop returned to the start: a loop
    # a step that changes no world part is off the loop-erased path, but it undid nothing: not a detour
    look = _step(s[1], "examine cup", s[1])
    looked = Trajectory(id="u", instruction="tidy up", task_type="twc", success=True, steps=[steps[0], look])
    assert looked.view.path == (0,) and detour_steps(looked) == []
    assert step_rewards(t, parse_reward("trca")) == [0.5, 0.0, 0.5, 2.0]
    assert step_rewards(t, parse_reward("trca", detour_penalty=0.1)) == [-0.1, -0.1, 0.5, 2.0]
    assert step_rewards(t, parse_reward("sparse", detour_penalty=0.1)) == [-0.1, -0.1, 0.0, 1.0]
    with pytest.raises(RewardError, match=">= 0"):
        parse_reward("trca", detour_penalty=-1)
