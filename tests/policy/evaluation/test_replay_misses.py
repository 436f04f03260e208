"""policy.evaluation.replay_misses: each wrong decision replayed in its world, hand-made worlds and a real
TextWorld episode through ``edgejudge decisions --replay``."""

from __future__ import annotations

import json

from edge.policies import ScoringPolicy
from models.trajectory import Step, Trajectory, write_trajectories
from policy.evaluation.decisions import Miss, decision_accuracy
from policy.evaluation.replay_misses import MissOutcomes, outcome_table, replay_misses
from policy.worlds.adapters import EnvState

ACTIONS = ["go east", "wait", "jump"]


class Corridor:
    """Three cells in a row; the key lies in the last. ``go east`` moves on, ``wait`` does nothing, ``jump``
    ends the episode in failure, ``take key`` in the last cell ends it in success; ``limit`` steps at most."""

    exact_replay = True

    def __init__(self, limit: int = 8):
        self.limit = limit
        self.closed = False

    def _state(self, done: bool = False, success: bool = False) -> EnvState:
        cands = [*ACTIONS, "take key"] if self.cell == 2 else list(ACTIONS)
        done = done or self.steps >= self.limit
        return EnvState(f"cell {self.cell}", cands, "take the key", {}, 0.0, done, success)

    def reset(self, episode, split, gold=False) -> EnvState:
        self.cell, self.steps = 0, 0
        return self._state()

    def step(self, action: str) -> EnvState:
        self.steps += 1
        if action == "jump":
            return self._state(done=True)
        if action == "take key" and self.cell == 2:
            return self._state(done=True, success=True)
        if action == "go east":
            self.cell = min(2, self.cell + 1)
        return self._state()

    def invalid(self) -> EnvState:
        self.steps += 1
        return self._state()

    def close(self) -> None:
        self.closed = True


class FirstThen(ScoringPolicy):
    """Picks ``first`` on the first step of an episode, then walks east and takes the key."""

    name = "first-then"

    def __init__(self, first: str):
        self.first = first

    def scores(self, instruction, state, candidates, memory=()):
        want = self.first if not memory else ("take key" if "take key" in candidates else "go east")
        return [1.0 if c == want else 0.0 for c in candidates]


def _gold(meta: dict | None = None) -> Trajectory:
    cands = [list(ACTIONS), list(ACTIONS), [*ACTIONS, "take key"]]
    steps = [
        Step(f"cell {i}", a, c, f"cell {min(2, i + 1)}")
        for i, (a, c) in enumerate(zip(["go east", "go east", "take key"], cands, strict=True))
    ]
    meta = {"env": "toy:corridor", "params": "", "split": "test", "env_seed": 0} if meta is None else meta
    return Trajectory(id="g", instruction="take the key", task_type="t", success=True, steps=steps, meta=meta)


def _outcomes(first: str, trajectories: list[Trajectory]) -> tuple[dict[str, MissOutcomes], list[Corridor]]:
    policy = FirstThen(first)
    report = decision_accuracy(policy, trajectories)
    worlds: list[Corridor] = []

    def open_world(env, params):
        worlds.append(Corridor())
        return worlds[-1]

    return replay_misses(lambda e, p: policy, trajectories, report.misses, open_world), worlds


def test_a_miss_the_policy_recovers_from_and_a_fatal_one():
    waited, worlds = _outcomes("wait", [_gold()])
    assert waited["go"].to_dict() == {"misses": 1, "recovered": 1, "fatal": 0, "not_replayed": 0}
    assert worlds and all(w.closed for w in worlds)
    jumped, _ = _outcomes("jump", [_gold()])
    assert jumped["go"].to_dict() == {"misses": 1, "recovered": 0, "fatal": 1, "not_replayed": 0}


def test_misses_that_cannot_be_replayed_are_counted_apart():
    # a log that names no world; a logged state the world does not reproduce
    no_world = _gold(meta={})
    other = _gold()
    other.steps[0].observation = "cell 9"
    got, _ = _outcomes("wait", [no_world, other])
    assert got["go"].to_dict() == {"misses": 2, "recovered": 0, "fatal": 0, "not_replayed": 2}


def test_the_misses_are_recorded_with_the_step_and_the_pick():
    report = decision_accuracy(FirstThen("jump"), [_gold()])
    assert report.misses == [Miss(0, 0, "jump")]


def test_outcome_table_counts_right_or_recovered():
    o = {"put": MissOutcomes(recovered=3, fatal=1), "take": MissOutcomes(fatal=2)}
    table = outcome_table(o, {"put": (10, 6), "take": (4, 2), "look": (2, 2)})
    assert "| put | 10 | 4 | 3 | 1 | 0 | 0.900 |" in table
    assert "| take | 4 | 2 | 0 | 2 | 0 | 0.500 |" in table
    assert "| **all** | 16 | 6 | 3 | 3 | 0 | 0.812 |" in table  # (10 right + 3 recovered) / 16


def test_cli_replays_the_misses_of_a_real_bundle_in_textworld(tmp_path, cli):
    """Expert episodes of two held-out TextWorld games, a random-init bundle: every miss is replayed in the
    real world (which replays exactly), and each is recovered or fatal."""
    from policy.export.assemble import export_random_bundle

    data = tmp_path / "gold.jsonl.gz"
    cli("collect", "--env", "twx:twc", "--split", "test", "--episodes", "2", "--behaviour", "gold-noise",
        "--noise", "0", "--seed", "0", "--out", str(data), check=True)  # fmt: skip
    export_random_bundle(tmp_path / "b", seed=1, hidden=16, bundle_format=3)
    out = cli("decisions", str(tmp_path / "b"), str(data), "--replay", "--max-steps", "20", "--json")
    got = json.loads(out.stdout)
    misses = got["decisions"] - sum(v["right"] for v in got["verbs"].values())
    replay = got["replay"]
    assert misses > 0 and sum(v["misses"] for v in replay.values()) == misses
    assert all(v["not_replayed"] == 0 and v["recovered"] + v["fatal"] == v["misses"] for v in replay.values())
    text = cli("decisions", str(tmp_path / "b"), str(data), "--replay", "--max-steps", "20").stdout
    assert "| verb | decisions | misses | recovered | fatal | not replayed | right or recovered |" in text
    # a file that names no world
    bare = tmp_path / "bare.jsonl"
    write_trajectories(bare, [_gold(meta={})])
    bad = cli("decisions", str(tmp_path / "b"), str(bare), "--replay")
    assert bad.returncode == 1 and "name no simulated world" in bad.stderr
