"""A toy TRCA task (rubric, steps) and the judge double for the rubric builder."""

from __future__ import annotations

import math
from dataclasses import dataclass

from labeler.trca.build import TAGS
from models.trajectory import Step, Trajectory
from policy.worlds.adapters.twx import LAYOUT, STATE_FORMAT, compose_state

INSTR = "Put the apple in the fridge."


ROOM0 = "You see a closed fridge and an apple."


O0 = compose_state("", ROOM0, "Inventory: empty", [])


RUBRIC = """\
format = "edgejudge.rubrics"
format_version = 1
task_type = "toy"
version = 2

[[items]]
id = "take"
category = "execution"
text = "An object was taken"
action = '^take (?P<object>.+)$'
feedback = '^You take the {object}\\.$'

[[items]]
id = "put-right"
category = "execution"
text = "Put where it belongs"
action = '^put (?P<object>.+?) in (?P<place>.+)$'
[items.pairs]
apple = ["fridge"]

[[items]]
id = "revealed"
category = "evidence"
text = "Something new appears"
appears = ["pear", "apple"]

[[items]]
id = "not-understood"
category = "invalidity"
text = "Parser failure"
feedback = "not sure what you mean"

[[items]]
id = "noop"
category = "invalidity"
text = "Repeated action without effect"
repeat = true
unchanged = true
"""


TWX = {"state_layout": LAYOUT.to_dict(), "state_format": STATE_FORMAT}


def _step(obs, action, nxt, reward=0.0):
    return Step(
        observation=obs,
        action=action,
        candidates=[],
        next_observation=nxt,
        env_reward=reward,
        info={"progress": 0.0},
    )


def toy_dataset() -> list[Trajectory]:
    a1 = compose_state(
        "You take the apple.", "You see a closed fridge.", "Inventory: an apple", ["take apple"]
    )
    a2 = compose_state(
        "You open the fridge. The fridge contains a pear.",
        "You see an open fridge, that contains a pear.",
        "Inventory: an apple",
        ["take apple", "open fridge"],
    )
    a3 = compose_state(
        "You put the apple in the fridge.",
        "You see an open fridge, that contains a pear and an apple.",
        "Inventory: empty",
        ["take apple", "open fridge", "put apple in fridge"],
    )
    b1 = compose_state("I'm not sure what you mean.", ROOM0, "Inventory: empty", ["dance"])
    b2 = compose_state("I'm not sure what you mean.", ROOM0, "Inventory: empty", ["dance", "dance"])
    A = Trajectory(
        "A",
        INSTR,
        "toy",
        True,
        [
            _step(O0, "take apple", a1),
            _step(a1, "open fridge", a2),
            _step(a2, "put apple in fridge", a3, 1.0),
        ],
    )
    A.steps[0].labels = {"coren": {"contextual": 1.0}}
    A.provenance = {"coren": {"judge_sha256": "x"}}
    B = Trajectory("B", INSTR, "toy", False, [_step(O0, "dance", b1), _step(b1, "dance", b2)])
    C = Trajectory("C", INSTR, "toy", False, [_step(O0, "take apple", a1)])
    for t in (A, B, C):
        t.meta = dict(TWX)
    return [A, B, C]


@dataclass
class FakeScores:
    logprobs: list[float]

    @property
    def probs(self):
        e = [math.exp(x) for x in self.logprobs]
        return [x / sum(e) for x in e]


class FakeJudge:
    """Tags by keywords of the response; fixed place preference; yes when the response mentions 'pear'."""

    model_sha256 = "f" * 64

    def __init__(self):
        self.queries = []

    def _one(self, prefix, choices):
        self.queries.append(prefix)
        if choices == [f" {t}" for t in TAGS]:
            resp = prefix.rsplit("Response:", 1)[1]
            want = (
                "failed"
                if "not sure" in resp or "can't" in resp or "not something" in resp
                else "done"
                if "take" in resp
                else "nothing"
            )
            # a bias towards 'done' for every input: calibration must remove it
            return FakeScores([(0.0 if t == want else -2.0) + (1.5 if t == "done" else 0.0) for t in TAGS])
        if prefix.endswith("belongs in the"):
            obj = prefix.rsplit("A ", 1)[1]
            best = {"apple": " fridge", "sock": " basket"}.get(obj.split()[0], " box")
            # "box" is preferred for everything by a bias of +1: calibration over objects must remove it
            return FakeScores([(0.0 if c == best else -1.0) + (1.0 if c == " box" else 0.0) for c in choices])
        if choices == [" yes", " no"]:
            response = prefix.split("Game response:")[1].split("\n")[0]
            return FakeScores([0.0, -1.0] if "pear" in response else [-1.0, 0.0])
        raise AssertionError(f"unexpected query {prefix[-80:]!r}")

    def score(self, prefix, choices, *, template, version):
        return self._one(prefix, list(choices))

    def score_many(self, queries, *, template, version, normalize="sum", progress=False):
        return [self._one(p, list(c)) for p, c in queries]
