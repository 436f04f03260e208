"""examples/own_world: the skill-log replay adapter a user copies collects, labels (TRCA, its own rubric) and
trains on its tiny log through the real commands; evaluation says it needs a simulator."""

from __future__ import annotations

import json

import pytest

from labeler.dataset import read_trajectories
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "own_world"
ENV = {"EDGEJUDGE_ENVS": "skilllog=skill_log:SkillLogAdapter", "PYTHONPATH": f"{ROOT}:{EXAMPLE}"}


@pytest.mark.real
def test_a_skill_log_collects_labels_and_trains(tmp_path, cli):
    data, labeled, ckpt = tmp_path / "log.jsonl.gz", tmp_path / "log.trca.jsonl.gz", tmp_path / "ckpt"
    # any behaviour replays the log: a replay can only take the logged skills
    cli("collect", "--env", "skilllog:replay", "--noise", "0.5", "--out", str(data), env=ENV, check=True)
    trajs = read_trajectories(data)
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
    proc = cli("eval", str(ckpt), "--episodes", "1", env=ENV)
    assert proc.returncode == 1 and "needs a simulator" in proc.stderr and "Traceback" not in proc.stderr
