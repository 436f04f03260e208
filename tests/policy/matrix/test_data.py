"""The matrix's data steps without a simulator or judge: a pool already in the work folder is cut and made in
each log shape (no collection), the file names of the full-state files are those of earlier runs, and the
label summary's figures are the hand-computed ones."""

from __future__ import annotations

import click
import pytest

from models.channel_choice import write_choice
from models.state_layout import Part, StateLayout
from models.trajectory import Step, Trajectory, read_trajectories, write_trajectories
from policy.matrix.data import (
    WorldData,
    channel_of,
    file_label_quality,
    label_summary,
    short_hash,
    train_reward,
)
from policy.matrix.plan import QUICK, parse_world, with_overrides

LAYOUT = StateLayout((Part("feedback", "Feedback"), Part("inventory", "Inventory", world=True)))


def _traj(tid: str, rewards: list[float], progress: list[bool], success: bool, task: str = "t") -> Trajectory:
    steps = [
        Step(
            observation=LAYOUT.compose({"feedback": f"o{i}", "inventory": "nothing"}),
            action=f"a{i}",
            candidates=[f"a{i}"],
            next_observation=LAYOUT.compose({"feedback": f"o{i + 1}", "inventory": "an apple"}),
            info={"progress": float(p), "gold": p},
            labels={"trca": {"total": r, "foundational": r}},
        )
        for i, (r, p) in enumerate(zip(rewards, progress, strict=True))
    ]
    meta = {"state_layout": LAYOUT.to_dict(), "env": "twx:twc"}
    return Trajectory(id=tid, instruction="i", task_type=task, success=success, steps=steps, meta=meta)


def test_label_summary_is_the_hand_computed_auroc_with_counts_and_the_methods_channels():
    # steps ranked by reward: 0.9 (progress), 0.5 (not), 0.4 (progress), 0.1 (not), 0.0 (not)
    trajs = [
        _traj("s", [0.9, 0.1], [True, False], True),
        _traj("f", [0.5, 0.4, 0.0], [False, True, False], False),
    ]
    out = label_summary(trajs, "trca.total")
    assert (out["trajectories"], out["steps"], out["progress_steps"], out["successes"]) == (2, 5, 2, 1)
    # AUROC = P(progress step outranks a non-progress one): (0.9 | 0.5, 0.1, 0.0) 3 wins,
    # (0.4 | 0.5, 0.1, 0.0) 2 wins of 3 -> 5 / 6
    assert out["auroc_progress"] == pytest.approx(5 / 6, abs=1e-4)
    assert set(out["channels"]) == {"trca.total", "trca.foundational"}
    assert out["check"] == "too few"  # one success: the check gives no verdict
    # the success flag on every step (1, 1 | 0, 0, 0): the progress step flagged 1 ties one and beats two
    # non-progress steps (2.5), the one flagged 0 ties two (1.0) -> 3.5 / 6
    flag = label_summary(trajs, "success")
    assert flag["auroc_progress"] == pytest.approx(3.5 / 6, abs=1e-4)
    assert flag["check"] is None and flag["channels"] == {}
    assert label_summary(trajs, "coren.ensemble")["auroc_progress"] is None  # not labeled: said, not guessed


def test_channels_of_the_sources():
    assert channel_of("trca") == channel_of("trca-built") == "trca.total"
    assert (channel_of("sparse"), channel_of("success")) == ("env.reward", "success")
    assert (channel_of("potential"), channel_of("coren")) == ("potential.delta", "coren.ensemble")


def test_a_pool_in_the_work_folder_is_cut_and_made_in_every_shape_without_collecting(tmp_path):
    s = with_overrides(QUICK, sizes=(4,), max_success_rate=0.5)
    wd = WorldData(tmp_path, parse_world("twc-easy"), s, lambda msg: None)
    pool = [_traj(f"e{i}", [0.0, 1.0], [False, True], i % 3 == 0) for i in range(20)]
    write_trajectories(wd.dir / "pool-20.jsonl.gz", pool)
    full = read_trajectories(wd.plain(4))
    assert [t.id for t in full] == ["e0", "e1", "e2", "e3"] and sum(t.success for t in full) == 2
    plain = read_trajectories(wd.plain(4, "plain"))
    assert [t.id for t in plain] == [t.id for t in full] and "state_layout_inferred" in plain[0].meta
    assert plain[0].steps[0].next_observation == "o1\nan apple"
    response = read_trajectories(wd.plain(4, "response"))
    assert "state_layout_inferred" in response[0].meta and response[0].steps[0].next_observation == "o1"
    # the full-state files keep the names of earlier runs; a shape is a part of the name
    assert wd.label_path("trca", 4).name == "data-n4.trca.jsonl.gz"
    assert wd.label_path("trca", 4, "plain").name == "data-n4.plain.trca.jsonl.gz"
    assert wd.label_path("success", 4, "response").name == "data-n4.response.jsonl.gz"
    with pytest.raises(ValueError, match="unknown log shape"):
        wd.plain(4, "xml")


def test_the_split_is_part_of_the_folder_only_when_it_is_not_train(tmp_path):
    w = parse_world("twc-easy")
    train = WorldData(tmp_path, w, QUICK, print)
    dev = WorldData(tmp_path, w, with_overrides(QUICK, split="dev"), print)
    cfg = {"env": w.env, "params": w.params, "max_steps": w.max_steps, "behaviour": QUICK.behaviour,
           "noise": QUICK.noise, "seed": QUICK.collect_seed,
           "max_success_rate": QUICK.max_success_rate}  # fmt: skip
    assert train.dir.name == f"twc-easy-{short_hash(cfg)}" and dev.dir != train.dir


def _labeled_world(tmp_path) -> WorldData:
    """A world whose 4-episode file is already labeled by TRCA in the work folder (nothing to collect or
    label)."""
    s = with_overrides(QUICK, sizes=(4,), max_success_rate=0.5)
    wd = WorldData(tmp_path, parse_world("twc-easy"), s, lambda msg: None)
    pool = [_traj(f"e{i}", [0.0, 1.0], [False, True], i % 3 == 0) for i in range(20)]
    write_trajectories(wd.dir / "pool-20.jsonl.gz", pool)
    write_trajectories(wd.label_path("trca", 4), read_trajectories(wd.plain(4)))
    return wd


def test_an_auto_row_trains_on_the_channel_recorded_for_its_labeled_file(tmp_path):
    """``trca-auto`` reads the files ``trca`` labels, and trains (and is measured) on the channel a step
    audit of its file recorded: resolved as ``edgejudge train --reward auto`` resolves it."""
    wd = _labeled_world(tmp_path)
    labeled = wd.label_path("trca", 4)
    assert wd.label_path("trca-auto", 4) == labeled
    assert train_reward("trca", [labeled]) == "trca"  # the other sources keep their own reward
    write_choice(labeled, "trca.foundational", "person", "the audit by person supports it")
    assert wd.training_file("trca-auto", 4)[0] == labeled
    assert train_reward("trca-auto", [labeled]) == "trca.foundational"
    assert file_label_quality(labeled, "trca")["channel"] == "trca.total"
    assert file_label_quality(labeled, "trca-auto")["channel"] == "trca.foundational"  # not the cached one


def test_an_auto_row_without_a_recorded_choice_is_an_error_naming_the_file_and_the_commands(tmp_path):
    """No silent fallback: without a choice there is no channel to train an ``auto`` row on."""
    wd = _labeled_world(tmp_path)
    labeled = wd.label_path("trca", 4)
    with pytest.raises(click.ClickException) as e:
        wd.training_file("trca-auto", 4)
    assert e.value.message == (
        f"trca-auto: no channel chosen for {labeled}: 'edgejudge label audit {labeled}' (a person, or "
        f"--auditor judge), then 'edgejudge label quality {labeled} --audit "
        f"{labeled.with_name('data-n4.trca.audit.jsonl')}' records the one the audit supports"
    )
    with pytest.raises(click.ClickException, match="no channel chosen for"):
        train_reward("trca-auto", [labeled])
    assert wd.training_file("trca", 4)[0] == labeled  # the source it reads trains as before
