"""Real collection through the TextWorldExpress adapter (both games), determinism, the behaviour mixture and
CLI bad input."""

from __future__ import annotations

import re

import pytest

from models.trajectory import read_trajectories
from policy.worlds.adapters import open_env, parse_env
from policy.worlds.collect import BehaviourError, CollectConfig, collect, mixture_text, parse_behaviour


@pytest.mark.real
@pytest.mark.parametrize("game", ["twc", "cookingworld"])
def test_real_collection_both_games(tmp_path, cli, game):
    out = tmp_path / "d.jsonl.gz"
    proc = cli(
        "collect",
        "--env",
        f"twx:{game}",
        "--episodes",
        "4",
        "--noise",
        "0.0",
        "--seed",
        "3",
        "--no-progress",
        "--out",
        str(out),
        check=True,
    )
    assert "wrote" in proc.stdout
    trajs = read_trajectories(out)
    assert len(trajs) == 4
    for t in trajs:
        assert t.task_type == game and t.meta["env"] == f"twx:{game}"
        assert t.success, "noise 0 follows the gold path, which must succeed"
        assert t.steps[-1].env_reward == 1.0 and all(s.env_reward == 0.0 for s in t.steps[:-1])
        assert all(s.action in s.candidates for s in t.steps)
        assert all(s.info["gold"] for s in t.steps)
        assert sum(s.info["progress"] for s in t.steps) == pytest.approx(1.0, abs=1e-4)
        for a, b in zip(t.steps, t.steps[1:], strict=False):
            assert a.next_observation == b.observation


@pytest.mark.real
def test_collection_is_deterministic_and_noise_matters():
    spec = parse_env("twx:twc")
    cfg = CollectConfig(env=spec, episodes=6, behaviour="gold-noise=0.5,random=0.5", noise=0.3, seed=11)
    with open_env(spec, step_limit=cfg.max_steps) as env:
        a = [t.to_dict() for t in collect(cfg, env)]
        b = [t.to_dict() for t in collect(cfg, env)]
        c = [
            t.to_dict()
            for t in collect(CollectConfig(env=spec, episodes=6, behaviour="random", seed=11), env)
        ]
    assert a == b
    assert a != c
    assert {t["meta"]["behaviour"] for t in c} == {"random"}
    assert any(not s["info"]["gold"] for t in c for s in t["steps"])


@pytest.mark.real
def test_dev_split_and_step_limit():
    spec = parse_env("twx:twc")
    cfg = CollectConfig(env=spec, split="dev", episodes=2, behaviour="random", seed=0, max_steps=3)
    trajs = list(collect(cfg))
    assert all(t.meta["split"] == "dev" and t.meta["env_seed"] >= 10000 for t in trajs)
    assert all(len(t.steps) <= 3 for t in trajs)


@pytest.mark.real
def test_target_success_pilots_the_behaviour_mixture(tmp_path, cli):
    out = tmp_path / "d.jsonl.gz"
    args = ["--env", "twx:twc", "--episodes", "6", "--noise", "0", "--max-steps", "8", "--seed", "2"]
    pilot = ["--target-success", "0.5", "--pilot-episodes", "4"]
    proc = cli("collect", *args, *pilot, "--no-progress", "--out", str(out), check=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("pilot")]
    assert len(lines) == 1, proc.stdout
    m = re.fullmatch(
        r"pilot \(4 episodes per behaviour\): gold-noise (\d+)%, random (\d+)%; chosen --behaviour (\S+) "
        r"\(expected success (\d+)%, target 50%\)",
        lines[0],
    )
    assert m, lines[0]
    gold, rand, chosen, expected = int(m[1]) / 100, int(m[2]) / 100, m[3], int(m[4]) / 100
    assert gold == 1.0  # noise 0: the gold path, which succeeds
    weights = parse_behaviour(chosen)
    w = weights.get("gold-noise", 0.0)
    assert abs(w * gold + (1 - w) * rand - expected) <= 0.01 and abs(expected - 0.5) <= 0.05
    trajs = read_trajectories(out)
    assert len(trajs) == 6 and {t.meta["behaviour"] for t in trajs} <= set(weights)


def test_target_success_rules(cli, tmp_path):
    assert [mixture_text(w) for w in (1.0, 0.0, 0.35, 0.8)] == [
        "gold-noise",
        "random",
        "gold-noise=0.35,random=0.65",
        "gold-noise=0.8,random=0.2",
    ]
    out = tmp_path / "never.jsonl"
    proc = cli("collect", "--target-success", "0.5", "--behaviour", "random", "--out", str(out))
    assert proc.returncode == 2 and "--target-success chooses the behaviour mixture" in proc.stderr
    proc = cli("collect", "--target-success", "1.5", "--out", str(out))
    assert proc.returncode == 2 and not out.exists()


@pytest.mark.parametrize("spec", ["gold-noise", "random", "gold-noise=1,random=3"])
def test_parse_behaviour(spec):
    w = parse_behaviour(spec)
    assert sum(w.values()) == pytest.approx(1.0)


@pytest.mark.parametrize("spec", ["expert", "random=-1", "random=x", "", "random=0"])
def test_parse_behaviour_rejects(spec):
    with pytest.raises(BehaviourError):
        parse_behaviour(spec)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--env", "twx:nope"], "unknown twx task"),
        (["--env", "atari:pong"], "unknown environment adapter"),
        (["--split", "validation"], "validation"),
        (["--episodes", "-3"], "episodes must be >= 1"),
        (["--noise", "1.5"], "noise must be in [0, 1]"),
        (["--behaviour", "expert"], "unknown behaviour"),
    ],
)
def test_collect_cli_bad_input_writes_nothing(tmp_path, cli, args, message):
    out = tmp_path / "never.jsonl"
    proc = cli("collect", *args, "--out", str(out), "--no-progress")
    assert proc.returncode != 0
    assert message in proc.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []
