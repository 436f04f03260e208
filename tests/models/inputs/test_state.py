"""The structured policy's reading of a state (models.inputs.state): items by layout part, the memory window,
hand-computed cases, property tests of the parser and of the window (what a client keeping only the horizon
sends gives the same inputs as the whole episode), the item-kind bound, and a contract per environment
adapter: the items are a function of the layout alone (relabelling every part gives the same model
inputs)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.inputs.arrays import state_texts
from models.inputs.state import (
    StateEncoding,
    check_kinds,
    fact_kind,
    kinds_of,
    list_items,
    memory_facts,
    memory_window,
    pieces,
    state_items,
)
from models.state_layout import LEGACY_LAYOUT, PLAIN_LAYOUT, Part, StateLayout, sentences

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
    from policy.worlds.adapters.scienceworld import ScienceWorldAdapter
    from policy.worlds.adapters.twx import TWXAdapter

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
    steps = memory_window(LAYOUT, StateEncoding(), memory)
    shown = state_items(LAYOUT, memory[-1][1])
    kind = fact_kind(LAYOUT)
    assert memory_facts(LAYOUT, steps, shown, size=8) == [
        (kind, "Ingredients: red apple"),  # most recent response first; "Enjoy." is shown in the state
        (kind, "Ingredients: flour"),
    ]
    assert memory_facts(LAYOUT, steps, shown, size=1) == [(kind, "Ingredients: red apple")]
    assert memory_facts(LAYOUT, steps, shown, size=0) == []


def test_memory_window_is_actions_and_responses():
    memory = [
        ("look around", "Inventory: empty\nRoom: A kitchen."),  # no feedback line: no response
        ("take apple", "Feedback: You take the apple.\nInventory: an apple"),
        ("eat apple", "Feedback: Yum.\nInventory: empty"),
    ]
    assert memory_window(LAYOUT, StateEncoding(), memory) == [
        ("look around", ""),
        ("take apple", "You take the apple."),
        ("eat apple", "Yum."),
    ]
    assert (
        memory_window(LAYOUT, StateEncoding(memory=2), memory)
        == memory_window(LAYOUT, StateEncoding(), memory)[1:]
    )
    assert memory_window(LAYOUT, StateEncoding(memory=0), memory) == []
    assert StateEncoding(memory=2).horizon == 3 and StateEncoding(memory=0).horizon == 0


def test_a_plain_response_is_what_the_next_state_adds():
    memory = [
        ("look", "You are at the table. A cup is here."),
        ("take cup", "You are at the table. You hold the cup."),
        ("wait", "You are at the table. You hold the cup."),
    ]
    # the first step's state before is not in the memory: its whole text answers
    assert PLAIN_LAYOUT.responses(memory) == [
        "You are at the table. A cup is here.",
        "You hold the cup.",
        "",
    ]
    assert PLAIN_LAYOUT.responses(memory[1:], before=memory[0][1]) == ["You hold the cup.", ""]
    # an echo of the episode's own actions is not the world's answer
    echo = [("look", "A hall."), ("open door", "A hall. The door opens.\nlook, open door")]
    assert PLAIN_LAYOUT.responses(echo) == ["A hall.", "The door opens."]
    # a structured text answers with its feedback part, whatever the state before
    no_feedback = StateLayout((Part("room", "Room", world=True),))
    assert no_feedback.responses([("go", "Room: A hall.")], before="Room: A yard.") == ["Room: A hall."]


def _episode(n: int, plain: bool) -> list[tuple[str, str]]:
    """n steps whose texts repeat and change, with a long-lived fact early on."""
    out = []
    for i in range(n):
        room = f"Room {i % 5}. A door is here." if plain else f"Room: Room {i % 5}. A door is here."
        said = f"You read: step {i} matters. Recipe: fry {i % 3}, roast {i % 4}."
        text = f"{said}\n{room}" if plain else f"Feedback: {said}\nInventory: item {i % 2}\n{room}"
        out.append((f"act {i % 7}", text))
    return out


@pytest.mark.parametrize("plain", [False, True], ids=["structured", "plain"])
@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 60), memory=st.integers(0, 12), facts=st.integers(0, 12))
def test_a_client_keeping_only_the_horizon_gives_the_same_inputs(plain, n, memory, facts):
    layout = PLAIN_LAYOUT if plain else LAYOUT
    enc = StateEncoding(max_items=48, memory=memory, facts=facts)
    episode = _episode(n + 1, plain)
    state, full = episode[-1][1], episode[:-1]
    kept = full[-enc.horizon :] if enc.horizon else []
    assert state_texts(layout, enc, state, kept) == state_texts(layout, enc, state, full)


def test_the_item_kind_bound_counts_parts_other_lines_and_facts():
    parts = tuple(Part(f"p{i}", f"P{i}", world=True) for i in range(14))
    layout = StateLayout(parts)
    assert kinds_of(layout) == 17  # 14 parts, unlabelled lines, facts, padding
    with pytest.raises(ValueError, match="14 parts.*17 item kinds.*16"):
        check_kinds(layout, 16, "bundle")
    check_kinds(StateLayout(parts[:13]), 16, "bundle")  # 13 parts fit 16 kinds


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
    memory = memory_window(layout, StateEncoding(), [("open fridge", text)])
    assert memory == memory_window(new, StateEncoding(), [("open fridge", _relabel(text, layout, new))])
    assert memory[0][1] and memory[0][1] in text  # the response is the feedback part
