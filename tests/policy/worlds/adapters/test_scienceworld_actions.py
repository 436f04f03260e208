from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policy.worlds.adapters.scienceworld_actions import (
    GoldMatch,
    Template,
    ValidAction,
    cap_candidates,
    match_gold,
    object_names,
    relevance,
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
    valid = ["move a to b", "move b to a", "look at a", "look at b", "go to kitchen", "look around"]
    out = cap_candidates(valid, 4, random.Random(0))
    assert {"look around", "go to kitchen"} <= set(out) and len(out) == 4
    assert all(tier(a) == 3 for a in set(out) - {"look around", "go to kitchen"})
    kinds = ("wait1", "teleport to hallway", "focus on apple", "use a on b", "pour cup into sink")
    assert [tier(a) for a in kinds] == [1, 2, 3, 4, 4]


def test_object_names_and_relevance():
    assert object_names("move baby baby wolf to yellow box") == ["baby baby wolf", "yellow box"]
    assert object_names("pour cup containing water into sink") == ["cup containing water", "sink"]
    assert object_names("pick up axe") == ["axe"] and object_names("mix flower pot 2") == ["flower pot 2"]
    assert object_names("look around") == [] and object_names("go to kitchen") == []
    known = frozenset({"baby", "wolf", "yellow", "box", "orange"})
    assert relevance("move baby baby wolf to yellow box", known) == 2
    assert relevance("move axe to yellow box", known) == 1 and relevance("pick up axe", known) == 0


def test_cap_offers_the_actions_on_what_is_held_and_named_then_focus_and_pick_up():
    """A room of many objects: the closing move (the wolf held, the box named by the task) and the answer and
    carrying verbs on every object survive a cap the one-object actions alone would fill."""
    things = [f"thing {i}" for i in range(30)] + ["baby wolf"]
    valid = ["look around", "go to hallway"]
    valid += [f"{v} {t}" for t in things for v in ("look at", "mix", "focus on", "pick up")]
    valid += [f"move {a} to {b}" for a in [*things, "orange"] for b in ["yellow box", *things[:5]]]
    held = "In your inventory, you see: an orange, a baby wolf"
    task = "Move it to the yellow box in the kitchen."
    out = cap_candidates(valid, 80, random.Random(0), held=held, task=task)
    assert len(out) == 80 and "move baby wolf to yellow box" in out
    assert {f"focus on {t}" for t in things} <= set(out) and "pick up baby wolf" in out
    # the 14 places left go to actions on one held or named object (the box, the wolf, the orange), none to
    # the other one-object actions
    assert not any(a.startswith(("mix thing", "look at thing")) for a in out)
    assert sum(a.startswith("move thing") and a.endswith("to yellow box") for a in out) >= 2
    plain = cap_candidates(valid, 80, random.Random(0))  # nothing held or named: no action is preferred
    assert "move baby wolf to yellow box" not in plain and {f"focus on {t}" for t in things} <= set(plain)


def test_random_steps_never_focus():
    assert without_focus(["focus on apple", "pick up apple", "look around"]) == [
        "pick up apple",
        "look around",
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
