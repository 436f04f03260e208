"""The label check without ground truth (success flags only): hand-computed cases and ``label quality`` on a
file without ``info``."""

from __future__ import annotations

import pytest

from labeler.label_check import (
    NO_FIGURE,
    ChannelCheck,
    Figure,
    bootstrap_auroc,
    check_channels,
    fitted_on_flags,
    format_checks,
    heldout_check,
    mean_rewards,
    moves_vs_idle,
    step_credit,
    verdict,
)
from models.channel_choice import choice_path, write_choice
from models.trajectory import Step, Trajectory, write_trajectories


def _traj(tid: str, success: bool, values: dict[str, list[float]]) -> Trajectory:
    n = len(next(iter(values.values())))
    steps = [
        Step(
            observation=f"o{i}",
            action="a",
            candidates=[],
            next_observation=f"o{i + 1}",
            labels={"x": {k: v[i] for k, v in values.items()}},
        )
        for i in range(n)
    ]
    return Trajectory(id=tid, instruction="i", task_type="t", success=success, steps=steps)


def _dataset() -> list[Trajectory]:
    # "good": successes average 1.0 and 0.5, failures 0.0 and -0.5; "bad" the other way round; a success
    # with a long run of small rewards must not win by length: means, not sums
    return [
        _traj("s1", True, {"good": [2.0, 0.0], "bad": [-1.0, -1.0], "return": [1.0, 1.0]}),
        _traj("s2", True, {"good": [0.5, 0.5, 0.5, 0.5], "bad": [0.0, -0.5, 0.0, -0.5], "return": [1.0] * 4}),
        _traj("f1", False, {"good": [0.0, 0.0, 0.0], "bad": [1.0, 1.0, 1.0], "return": [0.0] * 3}),
        _traj("f2", False, {"good": [0.2] * 10, "bad": [0.5] * 10, "return": [0.0] * 10}),
        _traj("s3", True, {"good": [0.7], "bad": [0.1], "return": [1.0]}),
        _traj("f3", False, {"good": [0.1, 0.3], "bad": [0.8, 0.8], "return": [0.0, 0.0]}),
    ]


def test_mean_rewards_and_verdicts_by_hand():
    ds = _dataset()
    assert mean_rewards(ds, "x.good") == pytest.approx([1.0, 0.5, 0.0, 0.2, 0.7, 0.2])  # f2 by sum: 2.0
    assert mean_rewards(ds, "x.missing") is None
    a, lo, hi = bootstrap_auroc([1.0, 0.5, 0.0, 0.2], [True, True, False, False], n=50)
    assert a == 1.0 and lo <= a <= hi
    assert verdict(0.8, 0.6, 0.95) == "separates"
    assert verdict(0.8, 0.45, 0.95) == "weak"  # interval reaches chance
    assert verdict(0.55, 0.51, 0.6) == "weak"  # above chance but below 0.6
    assert verdict(0.2, 0.05, 0.4) == "inverted"
    assert verdict(None, None, None) == "n/a"
    assert verdict(0.8, 0.6, 0.95, fitted=True) == "in-sample"  # fit on these flags: cannot tell
    assert verdict(0.55, 0.45, 0.6, fitted=True) == "weak"  # not even in-sample: that is still told


def test_labels_fit_on_the_same_flags_are_never_called_separating():
    ds = _dataset()
    for t in ds:
        for s in t.steps:
            s.labels = {"trca": s.labels["x"]}
        t.provenance = {"trca": {"rubric_grounded": True, "rubric_dataset": "d", "labeled_from": "d"}}
    checks = {c.channel: c for c in check_channels(ds, ["trca.good", "trca.bad"], boots=50)}
    good, bad = checks["trca.good"], checks["trca.bad"]
    assert good.mean_reward.value == 1.0 and good.fitted and good.verdict == "in-sample"
    assert bad.verdict == "inverted" and "even in-sample" in bad.message
    text = format_checks([good, bad])
    assert "warning: trca.good" in text and "cannot tell whether the labels generalise" in text
    assert verdict(0.9, 0.7, 1.0, smaller_class=2) == "too few"  # two successes: no verdict


def test_two_successes_get_no_verdict():
    two = [t for t in _dataset() if t.id not in ("s3", "f3")]
    (check,) = check_channels(two, ["x.good"], boots=50)
    assert check.verdict == "too few" and "warning: x.good: fewer than 3" in format_checks([check])


def test_check_channels_warns_and_skips_flag_channels():
    checks = {c.channel: c for c in check_channels(_dataset(), ["x.good", "x.bad", "x.return"], boots=50)}
    assert "x.return" not in checks  # computed from the success flag: not a label to check
    assert checks["x.good"].mean_reward.value == 1.0 and checks["x.bad"].mean_reward.value == 0.0
    text = format_checks(list(checks.values()), "d.jsonl")
    assert "warning: x.bad" in text and "worse than the sparse reward" in text
    assert "warning: x.good" not in text


def test_fitted_on_flags_reads_provenance():
    t = _traj("s", True, {"v": [1.0]})
    t.provenance = {
        "coren": {"orchestrator": "trained on this dataset's success flags", "qa_source": "file"},
        "trca": {"rubric_grounded": True, "rubric_dataset": "d.jsonl", "labeled_from": "d.jsonl"},
    }
    assert fitted_on_flags([t], "coren.ensemble") and not fitted_on_flags([t], "coren.structural")
    assert not fitted_on_flags([t], "coren.contextual")
    assert fitted_on_flags([t], "trca.total")
    t.provenance["trca"]["labeled_from"] = "other.jsonl"  # a rubric built elsewhere: held-out
    assert not fitted_on_flags([t], "trca.total")


def test_label_quality_without_ground_truth_prints_the_check(tmp_path, cli):
    p = tmp_path / "robot.jsonl"
    write_trajectories(p, _dataset())
    out = cli("label", "quality", str(p)).stdout
    assert "label check from the success flags alone" in out and "warning: x.bad" in out
    assert "AUROC progress" not in out  # no ground truth: no ground-truth table
    js = cli("label", "quality", str(p), "--json").stdout
    assert '"label_check"' in js


def test_a_separation_that_lives_in_the_last_step_alone_is_told_so():
    """``end``: the same small rewards in every episode, and a large one on a success's last step; ``steady``:
    every step of a success a little above every step of a failure. Both separate by their mean reward;
    without each episode's last step only ``steady`` does."""
    ds = []
    for i in range(6):
        body = [0.1 * ((i + j) % 3) for j in range(4)]
        ds.append(_traj(f"s{i}", True, {"end": [*body, 5.0], "steady": [0.5 + 0.01 * i] * 5}))
        ds.append(_traj(f"f{i}", False, {"end": [*body, 0.0], "steady": [0.2 + 0.01 * i] * 5}))
    assert mean_rewards(ds[:1], "x.end", drop_last=True) == pytest.approx([0.075])
    checks = {c.channel: c for c in check_channels(ds, ["x.end", "x.steady"], boots=100)}
    assert checks["x.end"].mean_reward.value == 1.0 and checks["x.end"].without_last_step.value == 0.5
    assert checks["x.end"].verdict == "last step"
    steady = checks["x.steady"]
    assert steady.verdict == "separates" and steady.without_last_step.value == 1.0
    text = format_checks(list(checks.values()))
    assert (
        "warning: x.end: its mean reward separates successes from failures only with each episode's last"
        in text
    )


def test_a_separation_that_comes_from_failures_running_longer_is_told_so():
    """``long``: every step of every episode is rewarded alike, except that the steps after the fourth are
    penalised, and only failures run that long; ``steady`` as above. Over each episode's first 4 steps (the
    successes' median length) only ``steady`` separates."""
    ds = []
    for i in range(6):
        first = [0.1 * ((i + j) % 3) for j in range(4)]
        ds.append(_traj(f"s{i}", True, {"long": first, "steady": [0.5 + 0.01 * i] * 4}))
        ds.append(_traj(f"f{i}", False, {"long": [*first, *[-1.0] * 6], "steady": [0.2 + 0.01 * i] * 10}))
    checks = {c.channel: c for c in check_channels(ds, ["x.long", "x.steady"], boots=100)}
    long = checks["x.long"]
    assert (long.mean_reward.value, long.without_last_step.value) == (1.0, 1.0)
    assert long.first_steps_k == 4 and long.first_steps.value == 0.5
    assert long.verdict == "length" and checks["x.steady"].verdict == "separates"
    assert "warning: x.long: its mean reward separates whole successes from failures, but not over" in (
        format_checks(list(checks.values()))
    )


def _acted(tid: str, success: bool, actions: list[str], rewards: list[float]) -> Trajectory:
    """A trajectory whose steps change the state unless the action is ``look`` (the state stays the same)."""
    steps, state = [], 0
    for a, r in zip(actions, rewards, strict=True):
        nxt = state if a == "look" else state + 1
        steps.append(Step(f"room {state}", a, [], f"room {nxt}", labels={"x": {"r": r}}))
        state = nxt
    return Trajectory(id=tid, instruction="i", task_type="t", success=success, steps=steps)


def test_a_separation_that_credits_idle_steps_over_the_moves_is_misplaced():
    """Successes look around (a step that changes nothing) more than failures do, and the channel rewards
    looking: it separates the episodes, over their first steps and without their last one, but ranks every
    success's moves (take, put: reward 0) below the failures' idle steps (look: reward 1): moves vs idle
    AUROC 0."""
    ds = []
    for i in range(6):
        ds.append(_acted(f"s{i}", True, ["look", "take", "look", "put"], [1.0, 0.0, 1.0, 0.0]))
        ds.append(_acted(f"f{i}", False, ["take", "look", "drop", "take"], [0.0, 1.0, 0.0, 0.0]))
    # positives: the successes' take and put (reward 0, 12 of them); negatives: the failures' looks (1, 6)
    assert moves_vs_idle(ds, "x.r", boots=50) == Figure(0.0, 0.0, 0.0)
    (c,) = check_channels(ds, ["x.r"], boots=100)
    assert (c.mean_reward.value, c.without_last_step.value, c.first_steps.value) == (1.0, 1.0, 1.0)
    assert c.verdict == "misplaced" and c.moves_vs_idle.value == 0.0
    assert "warning: x.r: its mean reward separates successes from failures, but it does not rank" in (
        format_checks([c])
    )
    # the last step alone rewarded above the looks is not enough: the take is still below (AUROC 0.5)
    for t in ds:
        if t.success:
            t.steps[-1].labels["x"]["r"] = 2.0
    (c,) = check_channels(ds, ["x.r"], boots=100)
    assert c.verdict == "misplaced" and c.moves_vs_idle.value == 0.5
    # the take rewarded too: separates
    for t in ds:
        if t.success:
            t.steps[1].labels["x"]["r"] = 2.0
    (c,) = check_channels(ds, ["x.r"], boots=100)
    assert c.verdict == "separates" and c.moves_vs_idle.value == 1.0


def test_moves_vs_idle_needs_both_kinds_of_step():
    busy = [_acted("s", True, ["take", "put"], [1.0, 1.0]), _acted("f", False, ["take", "look"], [0.0, 0.0])]
    assert (
        moves_vs_idle(busy, "x.r", boots=20).value == 1.0
    )  # the success's two moves (1.0) above one idle (0.0)
    # a success's idle step and a failure's move are neither kind
    mixed = [_acted("s", True, ["look", "put"], [5.0, 1.0]), _acted("f", False, ["take", "look"], [9.0, 0.0])]
    assert moves_vs_idle(mixed, "x.r", boots=20).value == 1.0
    no_idle = [_acted("s", True, ["take", "put"], [1.0, 1.0]), _acted("f", False, ["take", "drop"], [0, 0])]
    assert moves_vs_idle(no_idle, "x.r", boots=20) == NO_FIGURE


def test_the_record_names_its_figures_and_keeps_its_json_keys():
    """Each figure is a value with its interval; ``to_dict`` keeps the flat keys files already hold
    (``body_*``: without the last step, ``prefix_*``: the first steps, ``anchor_*``: moves vs idle)."""
    (c,) = check_channels(_dataset(), ["x.good"], boots=50)
    assert (
        isinstance(c.mean_reward, Figure) and c.mean_reward.low <= c.mean_reward.value <= c.mean_reward.high
    )
    assert c.first_steps_k == 2  # the successes' median length
    d = c.to_dict()
    assert list(d) == [
        "channel", "trajectories", "successes", "auroc", "low", "high", "fitted", "verdict", "message",
        "body_auroc", "body_low", "prefix_auroc", "prefix_low", "prefix_steps", "anchor_auroc", "anchor_low",
    ]  # fmt: skip
    assert d["auroc"] == round(c.mean_reward.value, 4) and d["prefix_steps"] == 2
    assert d["anchor_auroc"] == (None if c.moves_vs_idle.value is None else round(c.moves_vs_idle.value, 4))


def test_a_heldout_check_has_only_the_whole_episode_figure():
    c = heldout_check("trca.total", [1.0, 0.9, 0.8, 0.1, 0.2, 0.0], [True] * 3 + [False] * 3, boots=50)
    assert isinstance(c, ChannelCheck) and c.mean_reward.value == 1.0 and not c.fitted
    assert c.without_last_step == c.first_steps == c.moves_vs_idle == NO_FIGURE and c.first_steps_k is None
    assert c.message.endswith("(held-out episodes)")


def test_step_credit_is_unverified_until_an_audit_records_a_channel(tmp_path):
    """The verdicts read the success flags alone: the line after them names a channel to train on only
    where an audit of the steps supports one, and otherwise says how to get one."""
    log = tmp_path / "fleet.trca.jsonl.gz"
    unverified = step_credit(log).split("\n")
    assert len(unverified) == 2
    assert unverified[0].startswith("step credit unverified: the verdicts say only whether")
    assert "not whether its steps are credited right" in unverified[0]
    assert unverified[1] == (
        f"verify it: 'edgejudge label audit {log}' (a person, or --auditor judge), then 'edgejudge label "
        f"quality {log} --audit {tmp_path / 'fleet.trca.audit.jsonl'}'"
    )
    write_choice(log, "trca.total", "person", "the audit by person supports it: AUROC 0.830")
    assert step_credit(log) == (
        "train on trca.total: the audit by person supports it: AUROC 0.830 (fleet.trca.choice.json: "
        "'edgejudge train --reward auto' trains on it)"
    )
    choice_path(log).write_text("[]")  # not a choice: nothing is vouched for
    broken = step_credit(log).split("\n")
    assert broken[0].startswith("step credit unverified: ") and "not a channel choice" in broken[0]
    assert broken[1] == unverified[1]
