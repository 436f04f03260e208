"""A layout for every log: inference on 'Label: value' lines and on plain text, the reader's one line, and
`edgejudge data validate / stats / layout`."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from models.layout_inference import infer_layout
from models.state_layout import LEGACY_LAYOUT, PLAIN_LAYOUT, StateLayout, layout_of
from models.trajectory import Step, Trajectory, read_trajectories, write_trajectories

ROBOT_STATES = [
    "Result: grasp ok\nHolding: a cup, a pen\nRecent skills: grasp cup\nAt: dock\nDoors: hall, kitchen",
    "Holding: a cup\nRecent skills: none\nAt: shelf\nDoors: hall",
    "Result: moved\nHolding: nothing\nRecent skills: go shelf, grasp cup\nAt: shelf\nDoors: hall, lab",
]


PLAIN_STATES = [
    "The robot stands at the dock. A cup is on the table.",
    "The robot grasps the cup. It holds a cup.\nThe door to the hall is open.",
]


def _log(path, states, meta=None):
    steps = [
        Step(states[i], "act", ["act", "wait"], states[i + 1], info={"score": i})
        for i in range(len(states) - 1)
    ]
    trajs = [Trajectory(f"t{k}", "tidy", "robot", k == 0, steps, meta=dict(meta or {})) for k in range(3)]
    write_trajectories(path, trajs)
    return path


def test_label_lines_become_parts_with_roles():
    layout, why = infer_layout(ROBOT_STATES)
    by = {p.label: p for p in layout.parts}
    assert [p.label for p in layout.parts] == ["Result", "Holding", "Recent skills", "At", "Doors"]
    assert by["Result"].name == "feedback" and not by["Result"].world
    assert by["Holding"].name == "inventory" and by["Holding"].world and by["Holding"].unordered
    assert by["At"].world and not by["At"].items and by["Doors"].world and by["Doors"].items
    assert "Label: value" in why and "Result (the response)" in why
    # "Recent skills" is not one of the history labels it knows: a world part, said so in the reason
    assert by["Recent skills"].world


def test_textworld_texts_without_a_format_get_their_parts_not_the_legacy_guess():
    states = [
        LEGACY_LAYOUT.compose({"feedback": "You take the apple.", "inventory": "an apple",
                               "history": "take apple",
                               "room": "Kitchen. You see a fridge, a table and a sink."}),
        LEGACY_LAYOUT.compose({"inventory": "empty", "history": "none", "room": "Hall. You see a door."}),
    ]  # fmt: skip
    layout, _ = infer_layout(states)
    assert [(p.name, p.world) for p in layout.parts] == [
        ("feedback", False), ("inventory", True), ("history", False), ("room", True)
    ]  # fmt: skip
    assert not layout.parts[3].items  # a description with commas is not a list


def test_plain_text_and_nothing_at_all():
    assert infer_layout(PLAIN_STATES)[0] == PLAIN_LAYOUT
    assert "plain text" in infer_layout(PLAIN_STATES)[1]
    assert infer_layout([])[0] == PLAIN_LAYOUT
    # one labelled line among many prose lines is not a layout
    prose = [
        f"Note: step {i}\nThe arm moves.\nThe cup is on the table.\nNothing else happens." for i in range(5)
    ]
    assert infer_layout(prose)[0] == PLAIN_LAYOUT


@given(st.lists(st.text(alphabet="abcXY: ,.\n", max_size=60), max_size=8))
def test_inference_never_fails_and_its_layout_round_trips(texts):
    layout, why = infer_layout(texts)
    assert why and StateLayout.from_dict(layout.to_dict()) == layout
    for t in texts:
        layout.world_key(t)  # every text has a key


def test_the_reader_infers_once_says_so_once_and_records_it(tmp_path, capsys):
    path = _log(tmp_path / "robot.jsonl", ROBOT_STATES)
    trajs = read_trajectories(path)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no state layout recorded; inferred" in err and "robot.jsonl" in err
    assert layout_of(trajs[0].meta).names == ("feedback", "inventory", "recent_skills", "at", "doors")
    assert trajs[0].meta["state_layout_inferred"].startswith("read from its 'Label: value' lines")
    read_trajectories(path)
    assert capsys.readouterr().err == ""  # once per file and process
    # a file that says twx/1 is read with that format's layout, silently
    twx = _log(tmp_path / "twx.jsonl", ROBOT_STATES, {"state_format": "twx/1"})
    assert layout_of(read_trajectories(twx)[0].meta) == LEGACY_LAYOUT and capsys.readouterr().err == ""
    # a labeled copy carries the inferred layout on, and its reader says where it came from
    write_trajectories(tmp_path / "copy.jsonl", trajs)
    read_trajectories(tmp_path / "copy.jsonl")
    assert "inferred when an earlier stage read it" in capsys.readouterr().err


def test_data_commands_say_which_layout_and_layout_write_records_it(tmp_path, cli):
    path = _log(tmp_path / "plain.jsonl", PLAIN_STATES)
    v = cli("data", "validate", str(path))
    assert v.returncode == 0 and "state layout: none recorded; inferred: plain text" in v.stdout
    s = cli("data", "stats", str(path))
    assert s.returncode == 0 and "state layout     none recorded; inferred: plain text" in s.stdout
    shown = cli("data", "layout", str(path), "--json")
    assert json.loads(shown.stdout) == {"parts": []}
    robot = tmp_path / "robot.json"
    robot.write_text(json.dumps(infer_layout(ROBOT_STATES)[0].to_dict()))
    w = cli("data", "layout", str(path), "--set", str(robot), "--write")
    assert w.returncode == 0 and "recorded the layout in 3 trajectories" in w.stderr
    again = cli("data", "validate", str(path))
    assert "recorded by its writer (parts: Result, Holding, Recent skills, At, Doors)" in again.stdout
    assert "inferred" not in again.stderr
    bad = cli("data", "layout", str(path), "--set", str(path))
    assert bad.returncode != 0 and "not a state layout" in bad.stderr
