"""The success-model potential: ΔΦ is the weight of a step's first-seen features, cross-fitted."""

from __future__ import annotations

import pytest

from labeler.potential.model import (
    PotentialConfig,
    PotentialError,
    crossfit,
    fit,
    increments,
    support,
    support_table,
)
from models.trajectory import Step, Trajectory


def _traj(i: int, success: bool, actions: list[str]) -> Trajectory:
    steps = [Step(f"state {i} {k}", a, [a], f"You did {a}.") for k, a in enumerate(actions)]
    return Trajectory(id=f"t{i}", instruction="Do it.", task_type="toy", success=success, steps=steps)


def _log() -> list[Trajectory]:
    wins = [_traj(i, True, ["look", "press button", "look"]) for i in range(6)]
    losses = [
        _traj(10 + i, False, ["look", "kick wall", "look", "kick wall", "look", "kick wall"])
        for i in range(6)
    ]
    return wins + losses


def test_increments_count_a_done_thing_once_and_other_features_each_time():
    f = [frozenset({"*|a:x", "*|t:ok"}), frozenset({"*|a:x", "*|t:ok"}), frozenset({"*|t:ok", "*|a:y"})]
    assert increments(f) == [{"*|a:x": 1.0, "*|t:ok": 1.0}, {"*|t:ok": 1.0}, {"*|t:ok": 1.0, "*|a:y": 1.0}]


def test_the_fit_weighs_what_marks_success_up_and_what_marks_failure_down():
    from labeler.potential.features import step_features

    trajs = _log()
    model = fit(
        [increments(list(step_features(t))) for t in trajs], [t.success for t in trajs], PotentialConfig(l2=1)
    )
    press, kick = model.weights["*|a:press button"], model.weights["*|a:kick wall"]
    assert press > 0.1 and kick < -0.1
    assert abs(model.weights.get("*|a:look", 0.0)) < 0.1 * min(press, -kick)  # in every episode: says nothing


def test_delta_rewards_the_deciding_step_and_nothing_for_a_repeat():
    trajs = _log()
    labels = crossfit(trajs, PotentialConfig(folds=3))
    win, loss = labels[0], labels[-1]
    assert win[1].delta > 0.1 and loss[1].delta < -0.1
    assert loss[3].delta < 0  # kicking the wall again: the verb's failures count each time ...
    assert loss[5].delta == pytest.approx(loss[3].delta)  # ... the same each time; the action itself once
    for steps in labels:  # phi is the running sum of the deltas from the bias
        assert steps[2].phi == pytest.approx(steps[1].phi + steps[2].delta)


def test_each_trajectory_is_labeled_by_a_model_that_did_not_see_it():
    trajs = _log()
    for t in trajs[:2]:  # two successes sing instead of pressing the button
        t.steps[1].action = "sing"
    labels = crossfit(trajs, PotentialConfig(folds=2, seed=0))
    from labeler.folds import folds_of

    folds = folds_of([t.success for t in trajs], 2, 0)
    apart = next(f for f in folds if (0 in f) != (1 in f))  # the folds split the two singers
    assert apart
    # each singer is labeled by the model fit on the other fold, which saw the other singer succeed
    assert labels[0][1].delta > 0 and labels[1][1].delta > 0


def test_too_few_successes_is_an_error_that_says_what_is_needed():
    trajs = [_traj(0, True, ["a"])] + [_traj(i, False, ["b"]) for i in range(1, 5)]
    with pytest.raises(
        PotentialError, match="at least 2 successful and 2 failed trajectories, this log has 1 and 4"
    ):
        crossfit(trajs)


def test_support_is_the_successes_share_minus_half_the_failures_share_of_the_best_new_feature():
    # 2 successes, 4 failures; x: both successes and 2 failures show it, y: one success, z: 3 failures
    eps = [
        [{"*|x": 1.0, "toy|x": 1.0}, {"*|y": 1.0}],
        [{"*|x": 1.0}],
        [{"*|x": 1.0}, {"*|z": 1.0}],
        [{"*|x": 1.0, "*|z": 1.0}],
        [{"*|z": 1.0}],
        [],
    ]
    table = support_table(eps, [True, True, False, False, False, False], failure_weight=0.5)
    assert table == pytest.approx({"*|x": 2 / 2 - 0.5 * 2 / 4, "*|y": 1 / 2, "*|z": -0.5 * 3 / 4})
    assert support(table, {"*|x", "*|y", "toy|x"}) == pytest.approx(0.75)  # the best; task scope not read
    assert support(table, {"*|z"}) == pytest.approx(-0.375)
    assert support(table, set()) == 0.0 and support(table, {"*|unseen"}) == 0.0


def test_support_pays_a_repeated_step_once():
    labels = crossfit(_log(), PotentialConfig(folds=3))
    win, loss = labels[0], labels[-1]
    assert win[1].support > 0.5  # pressing the button: every success, no failure
    assert loss[1].support < 0  # kicking the wall: failures only
    assert loss[3].support < 0  # kicking again: new only in that the response is a repeat (failures only)
    assert loss[5].support == 0.0  # the third kick shows nothing new: paid nothing
    # looking, and looking again (a repeated response): every trajectory does both, 1 - 0.5 x 1
    assert win[0].support == pytest.approx(0.5) and win[2].support == pytest.approx(0.5)
