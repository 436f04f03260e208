from __future__ import annotations

import re

from labeler.trca.mine import mine
from models.trajectory import Step, Trajectory
from policy.worlds.adapters.twx import LAYOUT, compose_state
from tests.support.trca_rubric import INSTR, O0


def _traj(tid: str, rows: list[tuple[str, str]]) -> Trajectory:
    steps = []
    for action, feedback in rows:
        steps.append(
            Step(
                observation=O0,
                action=action,
                candidates=[],
                next_observation=compose_state(feedback, "Room.", "Inventory: empty", [action]),
            )
        )
    meta = {"state_layout": LAYOUT.to_dict()}
    return Trajectory(id=tid, instruction=INSTR, task_type="toy", success=False, steps=steps, meta=meta)


def test_mine_abstracts_object_names_into_templates():
    t = _traj(
        "a",
        [
            ("take apple", "You take the apple."),
            ("take red pear", "You take the red pear."),
            ("open fridge", "You open the fridge. The fridge contains an egg and some milk."),
            ("open box", "You open the box. The box contains a pen."),
            ("put apple in fridge", "You put the apple in the fridge."),
            ("put pear in box", "You put the pear in the box."),
            ("look", "Room."),
        ],
    )
    t.steps[0].candidates = ["take apple", "take egg", "take milk", "take pen", "put apple in fridge"]
    t.steps[0].action = "take apple"
    m = mine([t], min_count=2)
    shown = {(tp.verb, tp.display) for tp in m.templates}
    assert ("take", "You take the {object}.") in shown
    assert ("put", "You put the {object} in the {place}.") in shown
    assert ("open", "You open the {object}. The {object} contains {thing}.") in shown
    tp = next(tp for tp in m.templates if tp.verb == "put")
    assert tp.action_regex() == r"^put (?P<object>.+?) (?:in) (?P<place>.+)$"
    assert tp.response_regex() == r"^You put the {object} in the {place}\.$"
    assert re.compile(tp.action_regex()).match("put apple in fridge")
    assert m.places_for["put"] == {"apple": {"fridge"}, "pear": {"box"}}
