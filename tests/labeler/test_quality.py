"""Label quality against the ground truth: the channels' AUROCs and the ``label quality`` command."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from labeler.quality import BASELINE, channel_names, measure, quality
from models.channel_choice import write_choice
from models.trajectory import Step, Trajectory, write_trajectories


def _dataset() -> list[Trajectory]:
    def step(progress: float, gold: bool, value: float, reward: float = 0.0) -> Step:
        return Step(
            observation="o",
            action="a",
            candidates=["a", "b"],
            next_observation="o2",
            env_reward=reward,
            info={"progress": progress, "gold": gold},
            labels={"m": {"good": value, "bad": -value, "dist": [0.5, 0.5]}},
        )

    ok = Trajectory(
        id="t1",
        instruction="i",
        task_type="x",
        success=True,
        steps=[step(0.5, True, 1.0), step(0.0, False, 0.0), step(0.5, True, 1.0, reward=1.0)],
    )
    fail = Trajectory(
        id="t2",
        instruction="i",
        task_type="x",
        success=False,
        steps=[step(0.0, False, 0.0), step(0.0, True, 0.0)],
    )
    return [ok, fail]


def test_measure_channels_and_baseline():
    trajs = _dataset()
    assert channel_names(trajs) == ["m.bad", "m.good"]  # list-valued channels are not rewards
    r = measure(trajs, "mem")
    by = {c.channel: c for c in r.channels}
    assert set(by) == {"m.bad", "m.good", BASELINE}
    assert (r.steps, r.progress_steps, r.gold_steps, r.successes) == (5, 2, 3, 1)
    assert by["m.good"].auroc_progress == 1.0 and by["m.bad"].auroc_progress == 0.0
    # gold: positives {1, 1, 0}, negatives {0, 0}: 2 wins * 2 + 1 * (0.5 + 0.5) -> 5/6
    assert by["m.good"].auroc_gold == pytest.approx(5 / 6)
    assert by["m.good"].auroc_success == 1.0
    # env reward: only the last step of the success is 1
    assert by[BASELINE].auroc_progress == pytest.approx(0.75)


def test_quality_cli_json_and_plot(cli, tmp_path):
    path = tmp_path / "labeled.jsonl"
    write_trajectories(path, _dataset())
    png = tmp_path / "q.png"
    proc = cli("label", "quality", str(path), "--json", "--plot", str(png), check=True)
    data = json.loads(proc.stdout)
    assert {c["channel"] for c in data["channels"]} == {"m.bad", "m.good", BASELINE}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = cli("label", "quality", str(path), check=True).stdout
    assert "m.good" in text and "AUROC progress" in text


def test_quality_cli_bad_input(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    proc = cli("label", "quality", str(bad))
    assert proc.returncode == 1 and f"{bad}:1:" in proc.stderr
    proc = cli("label", "quality", str(bad), "--bogus")
    assert proc.returncode == 2 and "--bogus" in proc.stderr


def test_the_check_names_a_channel_to_train_on_only_where_an_audit_chose_one(tmp_path):
    path = tmp_path / "labeled.jsonl"
    write_trajectories(path, _dataset())
    out = CliRunner().invoke(quality, [str(path), "--check"])
    assert out.exit_code == 0, out.output
    tail = out.stdout.splitlines()[-2:]
    assert tail[0].startswith("step credit unverified: the verdicts say only whether")
    assert tail[1].startswith(f"verify it: 'edgejudge label audit {path}'")
    write_choice(path, "m.good", "person", "the audit by person supports it: AUROC 0.910")
    out = CliRunner().invoke(quality, [str(path), "--check"])
    assert out.stdout.splitlines()[-1].startswith(
        "train on m.good: the audit by person supports it: AUROC 0.910 (labeled.choice.json"
    )
    no_check = CliRunner().invoke(quality, [str(path)])  # ground truth and no check: nothing to qualify
    assert "step credit" not in no_check.output and "train on" not in no_check.output


def test_an_audit_in_the_same_run_is_the_one_the_check_names(tmp_path):
    """``--audit`` records its choice before the check is printed: the line after the table is this
    audit's."""
    from tests.labeler.audit.helpers import labeled_log, mark_truly

    path = tmp_path / "fleet.jsonl"
    trajs = labeled_log(6, 4)
    write_trajectories(path, trajs)
    marks = tmp_path / "fleet.audit.jsonl"
    mark_truly(marks, trajs)
    out = CliRunner().invoke(quality, [str(path), "--check", "--audit", str(marks)])
    assert out.exit_code == 0, out.output
    assert "train on good.r: the audit by person supports it: AUROC 1.000" in out.output
    assert "step credit unverified" not in out.output
