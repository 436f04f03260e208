"""ScienceWorld adapter pieces that need no JVM: the candidate cap, gold-action matching, the state text and
the parameters."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policy.envs import EnvError, parse_env
from policy.envs.scienceworld import (
    LAYOUT,
    ScienceWorldAdapter,
    canonical_listing,
    compose_state,
    focused_on,
)
from policy.envs.scienceworld_actions import (
    GoldMatch,
    Template,
    ValidAction,
    cap_candidates,
    match_gold,
    tier,
    without_focus,
)

VERBS = [
    "look around",
    "wait1",
    "go to kitchen",
    "teleport to hallway",
    "focus on apple",
    "pick up cup",
    "move cup to table",
    "pour cup in sink",
    "use thermometer on water",
    "reset task",
]
actions = st.lists(st.sampled_from(VERBS) | st.text("abcdef ", min_size=1, max_size=12), max_size=60)


@settings(max_examples=60, deadline=None)
@given(valid=actions, cap=st.integers(0, 20), seed=st.integers(0, 5), keep=st.sampled_from(["", "x gold"]))
def test_cap_keeps_gold_is_bounded_sorted_and_deterministic(valid, cap, seed, keep):
    keep_list = [keep] if keep else []
    out = cap_candidates(valid, cap, random.Random(seed), keep_list)
    assert out == sorted(set(out)) and "reset task" not in out
    assert set(out) <= (set(valid) | set(keep_list)) - {"reset task"}
    if keep:
        assert keep in out
    if cap > 0:
        assert len(out) <= max(cap, len(keep_list))
    else:
        assert set(out) == (set(valid) | set(keep_list)) - {"reset task"}
    assert out == cap_candidates(valid, cap, random.Random(seed), keep_list)


def test_cap_fills_tiers_in_order():
    valid = ["move a to b", "move b to a", "pick up a", "pick up b", "go to kitchen", "look around"]
    out = cap_candidates(valid, 4, random.Random(0))
    assert {"look around", "go to kitchen"} <= set(out) and len(out) == 4
    assert all(tier(a) == 3 for a in set(out) - {"look around", "go to kitchen"})
    assert [tier(a) for a in ("wait1", "teleport to hallway", "focus on apple", "use a on b")] == [1, 2, 3, 4]


def test_random_steps_never_focus():
    assert without_focus(["focus on apple", "pick up apple", "look around"]) == [
        "pick up apple",
        "look around",
    ]


TEMPLATES = [
    Template(9, "move OBJ to OBJ"),
    Template(4, "look at OBJ"),
    Template(0, "open OBJ"),
    Template(13, "use OBJ on OBJ"),
    Template(2, "go OBJ"),
    Template(2, "teleport OBJ"),
    Template(18, "wait1"),
]
REFERENTS = {
    1: ["common toad", "egg common toad", "toad"],
    2: ["orange box", "box"],
    3: ["thermometer"],
    4: ["lead", "substance"],
    5: ["inventory"],
    6: ["door to kitchen", "door"],
}
VALID = [
    ValidAction("move common toad to orange box", 9, (1, 2)),
    ValidAction("look at lead", 4, (4,)),
    ValidAction("use thermometer on lead", 13, (3, 4)),
    ValidAction("use thermometer on inventory", 13, (3, 5)),
    ValidAction("wait1", 18, ()),
    ValidAction("teleport to kitchen", 2, (7,)),
]


@pytest.mark.parametrize(
    "gold, expected",
    [
        ("wait1", GoldMatch("wait1", "literal")),
        ("examine lead", GoldMatch("look at lead", "alias")),
        (
            "move egg common toad in inventory to orange box",
            GoldMatch("move common toad to orange box", "referent"),
        ),
        ("use thermometer in inventory on lead", GoldMatch("use thermometer on lead", "referent")),
        ("open door to kitchen", GoldMatch(None, "noop")),
        ("open door to attic", GoldMatch(None, "noop")),  # the door, already open: no "open door" listed
        ("open fridge", GoldMatch(None, "unmatched")),  # an object the valid list does not show
        ("move toad to sink", GoldMatch(None, "unmatched")),
        ("go to kitchen", GoldMatch(None, "unmatched")),  # same template id as teleport, other verb
    ],
)
def test_gold_actions_match_by_objects(gold, expected):
    assert match_gold(gold, VALID, TEMPLATES, REFERENTS) == expected


CUP, BOWL = "a glass cup (containing nothing)", "a bowl (containing a red apple, a banana)"
TABLE, CHAIR = f"\ta table. On the table is: {CUP}, {BOWL}.\n", "\ta chair. On the chair is: nothing.\n"
LOOK = (
    "This room is called the kitchen. In it, you see: \n\tthe agent\n\ta substance called air\n"
    f"{TABLE}{CHAIR}You also see:\n\tA door to the outside (that is open)\n"
    "\tA door to the hallway (that is open)\n"
)


def test_listing_order_does_not_change_the_state_text():
    shuffled = LOOK.replace(TABLE + CHAIR, CHAIR + f"\ta table. On the table is: {BOWL}, {CUP}.\n")
    assert shuffled != LOOK and canonical_listing(shuffled) == canonical_listing(LOOK)
    inv = "In your inventory, you see:\n\tan orange\n"
    a = compose_state("You move to the kitchen.", LOOK, inv, ["go to kitchen"])
    assert a == compose_state("You move to the kitchen.", shuffled, inv, ["go to kitchen"])
    parts = LAYOUT.parse(a)
    assert parts["inventory"] == "an orange" and parts["history"] == "go to kitchen"
    assert (
        "the agent" not in parts["room"]
        and "called air" not in parts["room"]
        and "door to the hallway" in parts["room"]
    )
    assert "feedback" not in LAYOUT.parse(compose_state(LOOK, LOOK, inv, ["look around"]))
    long = compose_state("x" * 1000, LOOK, "In your inventory, you see:\n", [])
    assert len(LAYOUT.parse(long)["feedback"]) == 300 and LAYOUT.parse(long)["inventory"] == "empty"


def test_focus_is_a_world_part_of_the_state():
    world_key = LAYOUT.world_key

    assert focused_on("You focus on the baby wolf.") == "the baby wolf"
    assert focused_on("You move to the kitchen.") is None
    inv = "In your inventory, you see:\n\tan orange\n"
    before = compose_state("", LOOK, inv, ["look around"])
    recent = ["look around", "focus on orange"]
    after = compose_state("You focus on the orange.", LOOK, inv, recent, "the orange")
    parts = LAYOUT.parse(after)
    assert parts["focus"] == "the orange" and "focus" not in LAYOUT.parse(before)
    # the lines in order: feedback, inventory, focus, recent actions, room
    assert [ln.split(":", 1)[0] for ln in after.splitlines()] == [
        "Feedback", "Inventory", "Focus", "Recent actions", "Room",
    ]  # fmt: skip
    # focusing changes the world key (it commits the agent), the recent actions do not
    assert world_key(before) != world_key(after)
    again = compose_state("", LOOK, inv, ["focus on orange", "look around"], "the orange")
    assert world_key(again) == world_key(after)
    assert ScienceWorldAdapter.compose({"look": LOOK, "inventory": inv, "focus": "the orange"}, []) == (
        compose_state("", LOOK, inv, [], "the orange")
    )


def test_parameters_resolve_and_bad_ones_are_one_line_errors():
    spec = parse_env("scienceworld:boil")
    assert spec.params == "simplifications=easy,candidates=64"
    assert parse_env("scienceworld:boil", spec.params) == spec
    assert parse_env("scienceworld:boil", "simplifications=teleportAction+openDoors,candidates=0").values == {
        "simplifications": "teleportAction+openDoors",
        "candidates": "0",
    }
    for name, params, message in [
        ("scienceworld:bake", None, "unknown scienceworld task 'bake': expected one of boil, melt"),
        ("scienceworld:boil", "simplifications=fast", "unknown ScienceWorld simplification 'fast'"),
        ("scienceworld:boil", "candidates=lots", "expected an integer"),
        ("scienceworld:boil", "candidates=-1", "expected 0 (all) or a positive cap"),
        ("scienceworld:boil", "level=easy", "unknown parameter 'level' for scienceworld:boil"),
    ]:
        with pytest.raises(EnvError) as e:
            parse_env(name, params)
        assert message in str(e.value) and "\n" not in str(e.value)
