from __future__ import annotations

import pytest

from labeler.trca.checks import CompiledRubric, StateView, Transition, context_key
from labeler.trca.rubric import (
    RubricError,
    parse_rubric,
)
from models.trajectory import Step, Trajectory
from policy.worlds.adapters.twx import LAYOUT, compose_state
from tests.support.trca_rubric import GOOD, INSTR, O0


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


def _response_only(steps: list[tuple[str, str]], first: str) -> Trajectory:
    """A response-only log: each state is the last response plus an inventory line."""
    out, before = [], first
    for action, response in steps:
        out.append(Step(f"{before}\nInventory: nothing", action, [action], response))
        before = response
    return Trajectory("r", "Find the apple.", "toy", False, out)


RESPONSE_STEPS = [
    ("look around", "You are in the hall. You see an apple and a door to the kitchen."),
    ("go to kitchen", "You move to the kitchen."),
    ("look around", "You are in the kitchen. You see an apple and a door to the hall."),
    ("take pear", "No such thing."),
    ("take pear", "No such thing."),
]


def test_on_partial_states_evidence_is_new_to_the_episode_and_a_repeated_answer_changes_nothing():
    from labeler.trca.checks import transitions_of

    rubric = parse_rubric(
        """
format = "edgejudge.rubrics"
format_version = 1
task_type = "toy"
version = 1
[[items]]
id = "apple-seen"
category = "evidence"
text = "An apple appears"
appears = ["apple"]
[[items]]
id = "idle"
category = "invalidity"
text = "Changes nothing"
unchanged = true
""",
        "toy.toml",
    )
    cr = CompiledRubric(rubric)
    trs = transitions_of(_response_only(RESPONSE_STEPS, "You wake up."))
    assert all(tr.seen is not None for tr in trs)
    hits = [{cr.items[i].item.id for i, _ in cr.hits(tr)} for tr in trs]
    # the apple is new the first time the episode shows it, not when the kitchen shows it again
    assert "apple-seen" in hits[0] and "apple-seen" not in hits[2]
    # the first "No such thing." is news; the same answer to the same action again changed nothing
    assert "idle" not in hits[3] and "idle" in hits[4]
