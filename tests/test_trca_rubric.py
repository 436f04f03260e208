"""Rubric files (parse, file:line errors, round trip), deterministic transition checks, template mining."""

from __future__ import annotations

import re

import pytest

from labeler.dataset import Step, Trajectory
from labeler.trca.checks import CompiledRubric, StateView, Transition, context_key
from labeler.trca.mine import mine, parse_action
from labeler.trca.rubric import (
    RUBRICS_DIR,
    RubricError,
    dump_rubric,
    load_rubric,
    parse_rubric,
    write_rubric,
)
from policy.envs.twx import LAYOUT, compose_state

GOOD = """\
format = "edgejudge.rubrics"
format_version = 1
task_type = "toy"
version = 3
description = "toy rubric"

[build]
judge_sha256 = "abc"

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
"apple" = ["fridge"]
"dirty sock" = "laundry basket"

[[items]]
id = "put-wrong"
category = "invalidity"
text = "Put where it does not belong"
action = '^put (?P<object>.+?) in (?P<place>.+)$'
pairs_mismatch = true
[items.pairs]
"apple" = ["fridge"]

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

[[items]]
id = "gained"
category = "execution"
text = "Inventory grew"
inventory = "gain"
instruction = "apple"

[[items]]
id = "asked"
category = "evidence"
text = "The agent learned where the key is"
judge = true
"""


def test_parse_good_rubric():
    r = parse_rubric(GOOD, "toy.toml")
    assert r.task_type == "toy" and r.version == 3 and len(r.items) == 8
    assert r.category_sizes() == {"evidence": 2, "execution": 3, "invalidity": 3}
    assert r.items[1].pairs == {"apple": ["fridge"], "dirty sock": ["laundry basket"]}
    assert r.items[7].judge and not r.items[7].has_check and r.items[2].pairs_mismatch
    assert r.build == {"judge_sha256": "abc"} and len(r.sha256) == 64


def test_round_trip_dump_parse(tmp_path):
    r = parse_rubric(GOOD, "toy.toml")
    text = write_rubric(tmp_path / "out.toml", r, header="reviewed\nby hand")
    assert text.startswith("# reviewed\n# by hand\n")
    back = load_rubric(tmp_path / "out.toml")
    assert [vars(a) for a in back.items] == [vars(b) for b in r.items]
    assert back.version == r.version and back.build == r.build
    assert dump_rubric(back, "reviewed\nby hand") == text


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


@pytest.mark.parametrize(
    "old, new, needle, message",
    [
        ('category = "invalidity"', 'category = "badness"', 'category = "badness"', "is not one of evidence"),
        ('feedback = "not sure what you mean"', 'feedback = "(unclosed"', "(unclosed", "invalid regex"),
        (
            'appears = ["pear", "apple"]',
            'appears = ["pear", "apple"]\ncolour = "red"',
            "colour",
            "unknown key",
        ),
        ('id = "noop"', 'id = "take"', 'id = "take"\ncategory = "invalidity"', "duplicate id 'take'"),
        (
            "'^put (?P<object>.+?) in (?P<place>.+)$'",
            "'^put (.+)$'",
            "[items.pairs]",
            "needs an 'action' regex",
        ),
        ('inventory = "gain"', 'inventory = "more"', 'inventory = "more"', "is not one of gain"),
        ("repeat = true", "repeat = 1", "repeat = 1", "expected true or false"),
        ("judge = true", "judge = true\nfeedback = 'x'", "judge = true", "must not also have"),
        ("version = 3", "version = 0", "version = 0", "expected an integer >= 1"),
        ("format_version = 1", "format_version = 9", "format_version = 9", "unsupported"),
    ],
)
def test_semantic_errors_report_file_and_line(old, new, needle, message):
    bad = GOOD.replace(old, new, 1)
    assert bad != GOOD
    with pytest.raises(RubricError) as ei:
        parse_rubric(bad, "bad.toml")
    e = ei.value
    if needle == 'id = "take"\ncategory = "invalidity"':  # the second occurrence of the id
        lines = [i for i, line in enumerate(bad.splitlines(), start=1) if line == 'id = "take"']
        assert e.line == lines[1]
    else:
        assert e.line == _line_of(bad, needle)
    assert message in str(e)
    assert str(e).startswith(f"bad.toml:{e.line}: ")


def test_build_table_holds_plain_values_only():
    bad = GOOD.replace('judge_sha256 = "abc"', 'judge_sha256 = "abc"\nwhen = 2026-11-30')
    with pytest.raises(RubricError, match="build.when: expected a string") as ei:
        parse_rubric(bad, "bad.toml")
    assert ei.value.line == _line_of(bad, "when = 2026-11-30")


def test_item_without_check_points_at_its_header():
    bad = GOOD.replace("repeat = true\nunchanged = true\n", "")
    with pytest.raises(RubricError, match="no check") as ei:
        parse_rubric(bad, "bad.toml")
    assert ei.value.line == _line_of(bad, 'id = "noop"') - 1  # the [[items]] line


def test_toml_syntax_error_has_line():
    bad = GOOD.replace('text = "Parser failure"', 'text = "Parser failure')
    with pytest.raises(RubricError) as ei:
        parse_rubric(bad, "bad.toml")
    assert ei.value.line == _line_of(bad, 'text = "Parser failure')
    assert "bad.toml:" in str(ei.value) and "toml" in str(ei.value)


def test_missing_file_and_no_items(tmp_path):
    with pytest.raises(RubricError, match="does not exist"):
        load_rubric(tmp_path / "nope.toml")
    head = GOOD.split("[[items]]")[0]
    with pytest.raises(RubricError, match="no \\[\\[items\\]\\]"):
        parse_rubric(head, "x.toml")


def test_validate_cli_reports_file_line(tmp_path, cli):
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text(GOOD)
    bad.write_text(GOOD.replace("'^take (?P<object>.+)$'", "'^take (?P<object>.+$'"))
    ok = cli("rubrics", "validate", str(good))
    assert ok.returncode == 0 and "OK" in ok.stdout and "8 items" in ok.stdout
    proc = cli("rubrics", "validate", str(good), str(bad))
    assert proc.returncode == 1
    line = _line_of(bad.read_text(), "'^take (?P<object>.+$'")
    assert f"{bad}:{line}: items[0].action: invalid regex" in proc.stderr


def test_embedded_rubrics_are_valid():
    files = sorted(RUBRICS_DIR.glob("*.toml"))
    assert {f.stem for f in files} >= {"twc", "cookingworld"}
    for f in files:
        r = load_rubric(f)
        assert r.task_type == f.stem
        assert all(r.category_sizes()[c] >= 1 for c in ("evidence", "execution", "invalidity"))


# ------------------------------------------------------------------------------------------------ checks

INSTR = "Put the apple in the fridge."
O0 = compose_state("", "You see a closed fridge and an apple.", "Inventory: empty", [])


def _tr(obs: str, action: str, nxt: str, instruction: str = INSTR) -> Transition:
    return Transition(instruction, obs, action, nxt, LAYOUT)


def _hits(tr: Transition) -> dict[str, set[str]]:
    cr = CompiledRubric(parse_rubric(GOOD, "toy.toml"))
    return {cr.items[i].item.id: set(b) for i, b in cr.hits(tr)}


def test_state_view_reads_compose_state_layout():
    s = compose_state(
        "You take the apple.", "Room text.", "Inventory:\n  an apple\n  some flour\n", ["a", "b"]
    )
    v = StateView.parse(s, LAYOUT)
    assert v.feedback == "You take the apple." and v.recent == ("a", "b")
    assert v.inventory_items == {"apple", "flour"}
    assert "Recent actions" not in v.context
    plain = StateView.parse("The robot grasps the cup.")
    assert plain.feedback == "The robot grasps the cup." and plain.inventory is None and plain.recent == ()


def test_take_fills_object_slot_and_binds_it():
    nxt = compose_state(
        "You take the apple.", "You see a closed fridge.", "Inventory: an apple", ["take apple"]
    )
    assert _hits(_tr(O0, "take apple", nxt)) == {"take": {"object=apple"}, "gained": {"apple"}}
    wrong = compose_state("You take the pear.", "x", "Inventory: empty", ["take apple"])
    assert "take" not in _hits(_tr(O0, "take apple", wrong))  # the response names another object


def test_pairs_and_appears_and_instruction_filter():
    after = compose_state(
        "You put the apple in the fridge.",
        "A fridge that contains an apple and a pear.",
        "Inventory: empty",
        ["put apple in fridge"],
    )
    h = _hits(_tr(O0, "put apple in fridge", after))
    assert h == {"put-right": {"object=apple;place=fridge"}, "revealed": {"pear"}}  # not put-wrong
    wrong = _hits(_tr(O0, "put apple in oven", after))
    assert "put-right" not in wrong and wrong["put-wrong"] == {"object=apple;place=oven"}
    assert "put-wrong" not in _hits(_tr(O0, "put pear in oven", after))  # an object the table does not know
    gain = compose_state("You take the pear.", "x", "Inventory: a pear", ["take pear"])
    assert "gained" in _hits(_tr(O0, "take pear", gain))
    assert "gained" not in _hits(_tr(O0, "take pear", gain, instruction="Make tea."))  # per-instruction item


def test_invalidity_repeat_without_effect():
    o1 = compose_state(
        "I'm not sure what you mean.", "You see a closed fridge and an apple.", "Inventory: empty", ["dance"]
    )
    o2 = compose_state(
        "I'm not sure what you mean.",
        "You see a closed fridge and an apple.",
        "Inventory: empty",
        ["dance", "dance"],
    )
    assert _hits(_tr(O0, "dance", o1)) == {"not-understood": {""}}  # not a repeat yet
    assert _hits(_tr(o1, "dance", o2)) == {"not-understood": {""}, "noop": {""}}


def test_context_key_ignores_recent_actions_and_case():
    a = compose_state("", "Room.", "Inventory: empty", ["x"])
    b = compose_state("", "ROOM.", "Inventory: empty", ["y", "z"])
    assert context_key(INSTR, a, LAYOUT) == context_key(INSTR, b, LAYOUT)
    assert context_key(INSTR, a, LAYOUT) != context_key("Other task.", a, LAYOUT)


# ------------------------------------------------------------------------------------------------ mining


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


def test_parse_action():
    assert parse_action("put rotten yellow apple in trash can") == (
        "put",
        "rotten yellow apple",
        "in",
        "trash can",
    )
    assert parse_action("inventory") == ("inventory", None, None, None)


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


def test_argument_in_relates_the_action_to_the_instruction_an_earlier_response_or_a_part():
    from labeler.trca.checks import transitions_of

    rubric = parse_rubric(
        'format = "edgejudge.rubrics"\nformat_version = 1\ntask_type = "cook"\nversion = 1\n'
        '[[items]]\nid = "asked"\ncategory = "execution"\ntext = "t"\naction = \'^slice (?P<object>.+)$\'\n'
        'argument_in = "earlier"\n'
        '[[items]]\nid = "named"\ncategory = "execution"\ntext = "t"\naction = \'^take\\b\'\n'
        'argument_in = "instruction"\n'
        '[[items]]\nid = "held"\ncategory = "execution"\ntext = "t"\naction = \'^drop\\b\'\n'
        'argument_in = "inventory"\n',
        "cook.toml",
    )
    cr = CompiledRubric(rubric)
    s0 = compose_state("", "Kitchen.", "Inventory: a red potato", [])
    s1 = compose_state(
        "Recipe: slice the red potato, fry the egg.", "Kitchen.", "Inventory: a red potato", []
    )
    steps = [
        Step(s0, "read recipe", [], s1),
        Step(s1, "slice red potato", [], s1),
        Step(s1, "slice carrot", [], s1),
        Step(s1, "take egg", [], s1),
        Step(s1, "drop red potato", [], s1),
        Step(s1, "drop knife", [], s1),
    ]
    t = Trajectory(
        "c", "Take the egg to the table.", "cook", False, steps, meta={"state_layout": LAYOUT.to_dict()}
    )
    hits = [{cr.items[i].item.id for i, _ in cr.hits(tr)} for tr in transitions_of(t)]
    assert hits == [set(), {"asked"}, set(), {"named"}, {"held"}, set()]
    with pytest.raises(RubricError, match="argument_in"):
        parse_rubric(
            'format = "edgejudge.rubrics"\nformat_version = 1\ntask_type = "x"\nversion = 1\n'
            '[[items]]\nid = "a"\ncategory = "execution"\ntext = "t"\naction = "^x"\n'
            'argument_in = "Bad Place"\n',
            "x.toml",
        )
