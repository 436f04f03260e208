from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
