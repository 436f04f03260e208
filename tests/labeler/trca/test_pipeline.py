"""The TRCA labeling pipeline on a hand-made dataset (hand-computed labels): step groups, the lambda mix, the
item judge, summaries and task types.

The judge here is a test double (unit tests); tests/e2e/test_trca_real.py runs the real GGUF judge."""

from __future__ import annotations

import json

import pytest

from labeler.trca.checks import CompiledRubric
from labeler.trca.pipeline import RubricSet, TRCAConfig, label_file, label_trajectory_rewards
from labeler.trca.rubric import parse_rubric
from models.trajectory import Trajectory, read_trajectories, write_trajectories
from tests.support.trca_toy import INSTR, RUBRIC, FakeJudge, toy_dataset

"""The toy worlds write TextWorld's state texts (policy.worlds.adapters.twx.compose_state)."""


def test_zero_variance_step_group(files, tmp_path):
    data, rub = files
    trajs = toy_dataset()
    trajs[1] = Trajectory("B", INSTR, "toy", False, [trajs[2].steps[0]])  # B == C: a zero-variance group
    write_trajectories(data, trajs)
    out = tmp_path / "o.jsonl"
    label_file(data, out, RubricSet([rub]), TRCAConfig(gamma=0.5))
    got = {t.id: t.steps[0].labels["trca"] for t in read_trajectories(out)}
    assert got["B"]["return"] == got["C"]["return"] == 0.5
    assert got["A"]["adv_step"] > 0 and got["B"]["adv_step"] < 0  # A differs from B and C


def test_lambda_option_changes_only_the_mix(files, tmp_path):
    data, rub = files
    out = tmp_path / "o.jsonl"
    label_file(data, out, RubricSet([rub]), TRCAConfig(lam=0.0, gamma=0.5))
    b = {t.id: t for t in read_trajectories(out)}["B"]
    assert [s.labels["trca"]["total"] for s in b.steps] == pytest.approx([-0.5, -1.0])


def test_item_judge_llm_asks_only_for_judge_only_items():
    rub = parse_rubric(
        RUBRIC + '\n[[items]]\nid = "asked"\ncategory = "evidence"\ntext = "Saw a pear"\njudge = true\n',
        "x.toml",
    )
    cr = CompiledRubric(rub)
    a = toy_dataset()[0]
    judge = FakeJudge()
    rewards, _, q = label_trajectory_rewards(a, cr, TRCAConfig(item_judge="llm", lam=0.0), judge)
    assert q == 3 and len(judge.queries) == 3  # one question per step for the one judge-only item
    # evidence has M=2 now; step 1's response mentions the pear: "revealed" + "asked" = 2 * 1/2
    assert [r.foundational for r in rewards] == pytest.approx([0.5, 1.0, 0.5])
    rewards0, _, q0 = label_trajectory_rewards(a, cr, TRCAConfig(item_judge="none", lam=0.0), None)
    assert q0 == 0 and [r.foundational for r in rewards0] == pytest.approx([0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="needs a judge"):
        label_trajectory_rewards(a, cr, TRCAConfig(item_judge="llm"), None)


def test_summary_counts_item_hits(files):
    data, rub = files
    s = label_file(data, None, RubricSet([rub]), TRCAConfig())
    assert s.trajectories == 3 and s.steps == 6
    assert dict(s.item_hits["toy.toml"]) == {
        "take": 2,
        "revealed": 1,
        "put-right": 1,
        "not-understood": 2,
        "noop": 1,
    }
    assert json.dumps(s.rubrics)  # provenance is JSON


def test_a_star_rubric_applies_to_any_task_type(files, tmp_path):
    data, rub = files
    star = tmp_path / "any.toml"
    star.write_text(RUBRIC.replace('task_type = "toy"', 'task_type = "*"'))
    out = tmp_path / "o.jsonl"
    label_file(data, out, RubricSet([star], use_embedded=False), TRCAConfig(gamma=0.5))
    got = {t.id: t for t in read_trajectories(out)}
    assert got["A"].provenance["trca"]["rubric_task_type"] == "*"
    assert [s.labels["trca"]["total"] for s in got["A"].steps] == pytest.approx([0.5, 1.0, 0.5])
    with pytest.raises(Exception, match="a second rubric for task type"):
        RubricSet([star, star])


def test_episode_group_instruction_or_task_type(files, tmp_path):
    data, rub = files
    trajs = toy_dataset()
    trajs[2].instruction = "Put the apple somewhere else."  # C alone with its instruction
    write_trajectories(data, trajs)
    out = tmp_path / "o.jsonl"
    label_file(data, out, RubricSet([rub]), TRCAConfig(gamma=0.5))
    by_instr = {t.id: t.steps[0].labels["trca"]["adv_episode"] for t in read_trajectories(out)}
    assert (
        by_instr["C"] == 0.0 and by_instr["A"] == pytest.approx(1.0) and by_instr["B"] == pytest.approx(-1.0)
    )
    label_file(data, out, RubricSet([rub]), TRCAConfig(gamma=0.5, episode_group="task-type"))
    by_type = {t.id: t.steps[0].labels["trca"]["adv_episode"] for t in read_trajectories(out)}
    assert by_type["C"] != 0.0
    with pytest.raises(ValueError, match="episode_group"):
        TRCAConfig(episode_group="nope").validate()
