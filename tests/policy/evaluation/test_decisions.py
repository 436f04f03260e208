"""policy.evaluation.decisions: per-decision accuracy against logged actions, per verb, with the episode as
memory."""

from __future__ import annotations

import json

import pytest

from edge.policies import ScoringPolicy
from models.trajectory import Step, Trajectory, write_trajectories
from policy.evaluation.decisions import decision_accuracy


class PrefersOven(ScoringPolicy):
    """Picks a candidate with 'oven' when there is one, else the first; records the memory it was given."""

    name = "prefers-oven"

    def __init__(self):
        self.memories: list[int] = []
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1

    def scores(self, instruction, state, candidates, memory=()):
        self.memories.append(len(memory))
        return [1.0 if "oven" in c else 0.0 for c in candidates]


def _episode(i: int, steps: list[tuple[str, list[str]]]) -> Trajectory:
    return Trajectory(
        id=f"e{i}",
        instruction="cook",
        task_type="cook",
        success=True,
        steps=[Step(f"s{j}", a, c, f"s{j + 1}") for j, (a, c) in enumerate(steps)],
    )


EPISODES = [
    _episode(0, [
        ("take potato", ["take potato", "take onion"]),
        ("cook potato in oven", ["cook potato in stove", "cook potato in oven"]),
        ("eat meal", ["eat meal"]),  # one candidate: no decision
    ]),
    _episode(1, [
        ("Cook onion in stove", ["Cook onion in stove", "cook onion in oven"]),
        ("go north", ["go south", "look"]),  # the logged action is not a candidate: no decision
    ]),
]  # fmt: skip


def test_counts_per_verb_with_the_verb_the_policy_chose_instead():
    policy = PrefersOven()
    report = decision_accuracy(policy, EPISODES)
    assert report.episodes == 2 and policy.resets == 2
    assert report.decisions == 3 and report.skipped == 2
    take, cook = report.verbs["take"], report.verbs["cook"]
    assert (take.decisions, take.right) == (1, 1)
    assert (cook.decisions, cook.right) == (2, 1) and dict(cook.wrong_picks) == {"cook": 1}
    assert report.accuracy == pytest.approx(2 / 3)
    # the memory is the episode so far, as in a rollout
    assert policy.memories == [0, 1, 0]


def test_table_and_json(tmp_path):
    report = decision_accuracy(PrefersOven(), EPISODES)
    table = report.table(min_decisions=2)
    assert "| cook | 2 | 1 | 0.500 | 0 | cook 1 |" in table
    assert "| (verbs under 2) | 1 | 1 | 1.000 | 0 |  |" in table
    assert table.splitlines()[-1] == "| **all** | 3 | 2 | 0.667 | 0 |  |"
    assert json.loads(json.dumps(report.to_dict()))["verbs"]["cook"]["wrong_picks"] == {"cook": 1}


def test_a_miss_the_episode_takes_later_is_counted_apart():
    """Picking an action the episode logs later (a reordering: cut the onion before the potato) is a miss,
    counted under 'later' so that order is told apart from a wrong choice."""
    episode = _episode(0, [
        ("cook potato in stove", ["cook potato in stove", "cook onion in oven"]),  # later: oven first
        ("cook onion in oven", ["cook onion in oven", "take onion"]),
        ("take potato", ["take potato", "cook potato in oven"]),  # never logged: a wrong choice
    ])  # fmt: skip
    report = decision_accuracy(PrefersOven(), [episode])
    cook, take = report.verbs["cook"], report.verbs["take"]
    assert (cook.decisions, cook.right, cook.later) == (2, 1, 1)
    assert (take.decisions, take.right, take.later) == (1, 0, 0)
    assert report.to_dict()["verbs"]["cook"]["later"] == 1
    assert "| cook | 2 | 1 | 0.500 | 1 | cook 1 |" in report.table()


def test_cli_on_a_real_bundle(tmp_path, cli):
    """``edgejudge decisions`` on a random-init bundle and a real file: a table, and JSON."""
    from policy.export.assemble import export_random_bundle

    export_random_bundle(tmp_path / "b", seed=1, hidden=16, bundle_format=3)
    write_trajectories(tmp_path / "d.jsonl", EPISODES[:1])  # a file holds only actions among candidates
    out = cli("decisions", str(tmp_path / "b"), str(tmp_path / "d.jsonl"), "--json")
    got = json.loads(out.stdout)
    assert got["decisions"] == 2 and got["skipped"] == 1 and set(got["verbs"]) == {"take", "cook"}
    text = cli("decisions", str(tmp_path / "b"), str(tmp_path / "d.jsonl"))
    assert "| **all** | 2 |" in text.stdout and "2 decisions in 1 episodes" in text.stdout
    bad = cli("decisions", str(tmp_path / "b"), str(tmp_path / "missing.jsonl"))
    assert bad.returncode == 1 and "error:" in bad.stderr
