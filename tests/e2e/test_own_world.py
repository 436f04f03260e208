"""examples/own_world: the skill-log replay adapter a user copies collects, labels (TRCA, its own rubric) and
trains on its tiny log through the real commands; evaluation says it needs a simulator."""

from __future__ import annotations

import json
import shutil

import pytest

from models.trajectory import read_trajectories
from policy.worlds.adapters import open_env, parse_env
from policy.worlds.adapters.base import recorded_path
from tests.support.paths import ROOT

EXAMPLE = ROOT / "examples" / "own_world"


ENV = {"EDGEJUDGE_ENVS": "skilllog=skill_log:SkillLogAdapter", "PYTHONPATH": f"{ROOT}:{EXAMPLE}"}


LOG = "examples/own_world/episodes.jsonl"


@pytest.fixture
def skilllog(monkeypatch):
    monkeypatch.setenv("EDGEJUDGE_ENVS", ENV["EDGEJUDGE_ENVS"])
    monkeypatch.syspath_prepend(str(EXAMPLE))


def test_path_parameters_are_recorded_portably(tmp_path, monkeypatch, skilllog):
    monkeypatch.chdir(ROOT)
    # under the current folder: relative to it; a relative path stays as given
    assert parse_env("skilllog:replay", f"log={ROOT / LOG}").params == f"log={LOG}"
    assert parse_env("skilllog:replay", f"log=./{LOG}").params == f"log={LOG}"
    # elsewhere under the home folder: ~/...; anywhere else: absolute
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    shutil.copy(ROOT / LOG, home / "logs" / "tidy.jsonl")
    monkeypatch.setenv("HOME", str(home))
    spec = parse_env("skilllog:replay", f"log={home}/logs/tidy.jsonl")
    assert spec.params == "log=~/logs/tidy.jsonl" and spec.path("log") == home / "logs" / "tidy.jsonl"
    assert parse_env("skilllog:replay", spec.params) == spec  # the recorded text reads back unchanged
    assert recorded_path("/opt/x/../y") == "/opt/y"
    # resolved back when used: the world opens from the recorded text, from another folder too
    monkeypatch.chdir(tmp_path)
    with open_env(spec, step_limit=5) as env:
        assert env.episodes("test") == ["tidy-13", "tidy-14", "tidy-15"]
    assert recorded_path(str(home / "logs")) == "home/logs"  # the current folder comes before ~
    assert recorded_path(str(tmp_path)) == "."


@pytest.mark.real
def test_envs_check_runs_on_an_adapter_named_in_the_environment(cli):
    proc = cli("envs", "check", "skilllog:replay", env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SKIP invalid-answer: a log replay cannot answer an action it did not log" in proc.stdout
    assert "PASS no-score-in-state" in proc.stdout and "7 passed, 0 failed, 1 skipped" in proc.stdout


@pytest.mark.real
def test_a_skill_log_collects_labels_and_trains(tmp_path, cli):
    data, labeled, ckpt = tmp_path / "log.jsonl.gz", tmp_path / "log.trca.jsonl.gz", tmp_path / "ckpt"
    # any behaviour replays the log: a replay can only take the logged skills
    # an absolute log path is recorded relative to the folder the command runs in
    cli("collect", "--env", "skilllog:replay", "--params", f"log={ROOT / LOG}", "--noise", "0.5",
        "--out", str(data), env=ENV, check=True)  # fmt: skip
    trajs = read_trajectories(data)
    assert {t.meta["params"] for t in trajs} == {f"log={LOG}"}
    logged = [json.loads(line) for line in (EXAMPLE / "episodes.jsonl").read_text().splitlines()]
    train = [e for e in logged if e["split"] == "train"]
    assert len(trajs) == len(train) and {t.meta["state_format"] for t in trajs} == {"skilllog/1"}
    by_id = {e["id"]: e for e in train}
    for t in trajs:
        e = by_id[t.meta["env_seed"]]
        assert [s.action for s in t.steps] == [s["skill"] for s in e["steps"]] and t.success == e["success"]
        assert t.steps[0].observation.splitlines()[1:] == [
            "Holding: nothing",
            "Recent skills: none",
            "At: kitchen table",
        ]

    cli(
        "label",
        "trca",
        str(data),
        "--rubrics",
        str(EXAMPLE / "rubric.toml"),
        "--out",
        str(labeled),
        env=ENV,
        check=True,
    )
    steps = [s for t in read_trajectories(labeled) for s in t.steps]
    home = {"cup": "sink", "plate": "rack", "sponge": "caddy", "fork": "drawer"}
    puts = [(s.action[len("place ") :].split(" in "), s.labels["trca"]["total"]) for s in steps]
    right = [r for (o, *p), r in puts if p and p[0] == home.get(o)]
    wrong = [r for (o, *p), r in puts if p and o in home and p[0] != home[o]]
    assert right and wrong and min(right) > max(wrong)

    cli("train", str(labeled), "--algo", "iql", "--reward", "trca", "--set", "steps=50", "--out", str(ckpt),
        env=ENV, check=True, timeout=600)  # fmt: skip
    world = json.loads((ckpt / "checkpoint.json").read_text())["provenance"]["world"]
    assert world["env"] == "skilllog:replay" and world["state_format"] == "skilllog/1"
    assert world["params"] == f"log={LOG}"
    proc = cli("eval", str(ckpt), "--episodes", "1", env=ENV)
    assert proc.returncode == 1 and "needs a simulator" in proc.stderr and "Traceback" not in proc.stderr
