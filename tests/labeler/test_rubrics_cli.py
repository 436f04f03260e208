"""``edgejudge rubrics build`` over a file of several task types: without --task-type one rubric per task type
(the judge opened once), with it the one asked for; --base takes its task type from the base rubric. The
judge is the keyword double of the rubric builder's tests (the real judge builds rubrics per task type in
tests/e2e/test_response_logs.py and in the matrix's run, tests/policy/matrix/test_cli.py)."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest
from click.testing import CliRunner

from labeler.trca.rubric import load_rubric
from models.trajectory import write_trajectories
from tests.support.trca_toy import FakeJudge, toy_dataset


@pytest.fixture
def judge(monkeypatch):
    """The keyword judge in place of the GGUF judge; counts how often a judge was opened."""
    opened = []

    @contextlib.contextmanager
    def scorer(cluster, judge_ref, threads, cache):
        opened.append(judge_ref)
        yield FakeJudge()

    monkeypatch.setattr("labeler.rubrics_cli._scorer", scorer)
    return opened


def _two_task_types(path):
    trajs = [
        dataclasses.replace(t, id=f"{task}-{t.id}", task_type=task)
        for task in ("toy", "toy-b")
        for t in toy_dataset()
    ]
    write_trajectories(path, trajs)


def _build(*args):
    from models.cli import main

    return CliRunner().invoke(main, ["rubrics", "build", "--check-folds", "0", "--no-progress", *args])


def test_without_a_task_type_one_rubric_per_task_type_of_the_file(tmp_path, judge):
    data = tmp_path / "two.jsonl"
    _two_task_types(data)
    res = _build("--dataset", str(data), "--out", str(tmp_path / "r.toml"))
    assert res.exit_code == 0, res.output
    built = sorted(p.name for p in tmp_path.glob("r.*.toml"))
    assert built == ["r.toy-b.toml", "r.toy.toml"] and judge == ["gemma3-270m"]  # one judge for both
    assert [load_rubric(tmp_path / n).task_type for n in built] == ["toy-b", "toy"]
    assert (
        f"label with: --rubrics {tmp_path / 'r.toy.toml'} --rubrics {tmp_path / 'r.toy-b.toml'}" in res.output
    )

    one = _build("--dataset", str(data), "--task-type", "toy-b", "--out", str(tmp_path / "b.toml"))
    assert one.exit_code == 0, one.output
    assert load_rubric(tmp_path / "b.toml").task_type == "toy-b" and not list(tmp_path.glob("b.*.toml"))

    # the same rubric per task type, with or without --task-type
    assert load_rubric(tmp_path / "b.toml").items == load_rubric(tmp_path / "r.toy-b.toml").items


def test_errors_name_the_task_type_and_base_gives_its_own(tmp_path, judge):
    data = tmp_path / "two.jsonl"
    _two_task_types(data)
    res = _build("--dataset", str(data), "--task-type", "nope", "--out", str(tmp_path / "r.toml"))
    assert res.exit_code == 1 and f"{data}: no trajectory of task type 'nope'" in res.output
    base = tmp_path / "base.toml"
    assert _build("--dataset", str(data), "--task-type", "toy", "--out", str(base)).exit_code == 0
    res = _build(
        "--dataset", str(data), "--base", str(base), "--task-type", "toy-b", "--out", str(tmp_path / "x")
    )
    assert res.exit_code == 2 and "is for task type 'toy', not 'toy-b'" in res.output
    ext = _build("--dataset", str(data), "--base", str(base), "--out", str(tmp_path / "ext.toml"))
    assert ext.exit_code == 0, ext.output
    assert load_rubric(tmp_path / "ext.toml").task_type == "toy" and not list(tmp_path.glob("ext.*.toml"))
