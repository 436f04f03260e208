"""The structured policy's reading of a state (models.state_items): items by layout part, the episode memory,
hand-computed cases, a property test of the parser, and a contract per environment adapter: the items are a
function of the layout alone (relabelling every part gives the same model inputs)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.state_items import (
    StateEncoding,
    fact_kind,
    kinds_of,
    list_items,
    memory_facts,
    memory_items,
    pieces,
    response_of,
    sentences,
    state_items,
)
from models.state_layout import LEGACY_LAYOUT, Part, StateLayout

LAYOUT = StateLayout(
    (
        Part("feedback", "Feedback"),
        Part("inventory", "Inventory", world=True, unordered=True, items=True),
        Part("room", "Room", world=True),
    )
)


texts = st.lists(st.sampled_from(list("ab .,!?:\n") + ["Feedback: ", "Inventory: ", "Room: "])).map("".join)


def _renamed(layout: StateLayout) -> StateLayout:
    """Every part relabelled (its name, which carries a documented meaning such as ``feedback``, kept)."""
    return StateLayout(tuple(dataclasses.replace(p, label=f"Label {i}") for i, p in enumerate(layout.parts)))


def _relabel(text: str, old: StateLayout, new: StateLayout) -> str:
    out = []
    for line in text.splitlines():
        for p, q in zip(old.parts, new.parts, strict=True):
            if line.startswith(p.prefix):
                line = q.prefix + line[len(p.prefix) :]
                break
        out.append(line)
    return "\n".join(out)


def _sample_states():
    """(layout, state text) of every adapter, composed by the adapter itself (no simulator needed)."""
    from policy.envs.scienceworld import ScienceWorldAdapter
    from policy.envs.twx import TWXAdapter

    twx = TWXAdapter.compose(
        {
            "feedback": "You open the fridge. It is cold.",
            "inventory": "Inventory:\n  a red apple\n  a cookbook\n",
            "look": "You are in the kitchen. You see a fridge that is open.",
        },
        ["look around", "open fridge"],
    )
    sw = ScienceWorldAdapter.compose(
        {
            "feedback": "The door is now open.",
            "inventory": "In your inventory, you see:\n\tan orange\n\ta thermometer",
            "look": "This room is called the kitchen. In it, you see: a door to the hallway.",
            "focus": "the orange",
        },
        ["open door to hallway"],
    )
    return [(TWXAdapter.layout, twx), (ScienceWorldAdapter.layout, sw)]


def test_items_by_part_hand_computed():
    text = (
        "Feedback: You take the apple. It is red!\n"
        "Inventory: an apple, a cup\n"
        "Room: You are in the kitchen. A fridge stands here.\n"
        "Score shown nowhere else"
    )
    assert state_items(LAYOUT, text) == [
        (1, "You take the apple."),
        (1, "It is red!"),
        (2, "an apple"),
        (2, "a cup"),
        (3, "You are in the kitchen."),
        (3, "A fridge stands here."),
        (4, "Score shown nowhere else"),  # a line of no part: the kind after the parts
    ]
    assert kinds_of(LAYOUT) == 6  # three parts, other lines, memory facts, padding
    assert state_items(LAYOUT, text, max_items=3) == state_items(LAYOUT, text)[:3]
    # a plain text is sentences of the one "other" kind
    assert state_items(LAYOUT, "A door. A key?") == [(4, "A door."), (4, "A key?")]
    assert state_items(LAYOUT, "") == []


def test_splitters():
    assert sentences("One. Two!  Three? four") == ["One.", "Two!", "Three?", "four"]
    assert pieces("Read it. Ingredients: red apple, flour. In it, you see: a door, a cup.") == [
        "Read it.",
        "Ingredients: red apple",
        "Ingredients: flour",
        "In it, you see: a door",
        "In it, you see: a cup",
    ]
    assert pieces("Note: one thing only.") == ["Note: one thing only."]  # a heading without a list
    assert sentences("Dr.Who is 3.5 m tall.") == ["Dr.Who is 3.5 m tall."]  # no space, no cut
    assert list_items(" a, , b ,c") == ["a", "b", "c"]


def test_facts_are_the_distinct_pieces_of_earlier_responses_the_state_no_longer_shows():
    memory = [
        ("read book", "Feedback: Ingredients: red apple, flour. Enjoy.\nInventory: a book"),
        ("take apple", "Feedback: You take the red apple. Enjoy.\nInventory: a book, an apple"),
    ]
    shown = state_items(LAYOUT, memory[-1][1])
    kind = fact_kind(LAYOUT)
    assert memory_facts(LAYOUT, memory, shown, size=8) == [
        (kind, "Ingredients: red apple"),  # most recent response first; "Enjoy." is shown in the state
        (kind, "Ingredients: flour"),
    ]
    assert memory_facts(LAYOUT, memory, shown, size=1) == [(kind, "Ingredients: red apple")]
    assert memory_facts(LAYOUT, memory, shown, size=0) == []


def test_memory_is_actions_and_responses_most_recent_first():
    memory = [
        ("look around", "Inventory: empty\nRoom: A kitchen."),  # no feedback line: no response
        ("take apple", "Feedback: You take the apple.\nInventory: an apple"),
        ("eat apple", "Feedback: Yum.\nInventory: empty"),
    ]
    assert memory_items(LAYOUT, memory) == [
        ("eat apple", "Yum."),
        ("take apple", "You take the apple."),
        ("look around", ""),
    ]
    assert memory_items(LAYOUT, memory, size=2) == memory_items(LAYOUT, memory)[:2]
    assert memory_items(LAYOUT, memory, size=0) == []
    # a plain text (or a layout without a feedback part) responds with the whole text
    assert response_of(LAYOUT, "You see  a door.") == "You see a door."
    no_feedback = StateLayout((Part("room", "Room", world=True),))
    assert response_of(no_feedback, "Room: A hall.") == "Room: A hall."


def test_encoding_round_trip_and_errors():
    enc = StateEncoding(max_items=10, memory=4)
    assert StateEncoding.from_dict(enc.to_dict()) == enc
    with pytest.raises(ValueError, match="unknown state encoding key"):
        StateEncoding.from_dict({"memory": 3, "horizon": 2})
    with pytest.raises(ValueError, match="max_items >= 1"):
        StateEncoding.from_dict({"max_items": 0})


def test_layouts_recorded_before_the_items_flag_read_inventory_and_history_as_lists():
    raw = LEGACY_LAYOUT.to_dict()
    for p in raw["parts"]:
        p.pop("items")
    old = StateLayout.from_dict(raw)
    assert old == LEGACY_LAYOUT and [p.items for p in old.parts] == [False, True, True, False]


@settings(max_examples=200, deadline=None)
@given(text=texts, max_items=st.integers(1, 12))
def test_items_never_fail_and_stay_in_range(text, max_items):
    items = state_items(LAYOUT, text, max_items)
    assert len(items) <= max_items
    assert all(1 <= k < kinds_of(LAYOUT) and piece and piece == piece.strip() for k, piece in items)


@pytest.mark.parametrize("case", range(2), ids=["twx", "scienceworld"])
def test_adapter_contract_items_depend_on_the_layout_only(case):
    layout, text = _sample_states()[case]
    new = _renamed(layout)
    items = state_items(layout, text)
    assert len({k for k, _ in items}) >= 3  # the state really has several parts
    assert state_items(new, _relabel(text, layout, new)) == items
    memory = memory_items(layout, [("open fridge", text)])
    assert memory == memory_items(new, [("open fridge", _relabel(text, layout, new))])
    assert memory[0][1] and memory[0][1] in text  # the response is the feedback part
