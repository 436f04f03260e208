from __future__ import annotations

from policy.worlds.adapters.twx import compose_state, world_key


def test_compose_state_is_the_one_state_text():
    s = compose_state(
        "You take the apple.",
        "You are in the kitchen.\n",
        "Inventory: \n  an apple\n",
        ["look around", "open fridge", "take banana", "take apple"],
    )
    assert s.splitlines() == [
        "Feedback: You take the apple.",
        "Inventory: an apple",
        "Recent actions: open fridge, take banana, take apple",
        "Room: You are in the kitchen.",
    ]
    first = compose_state(
        "You are in the kitchen.",
        "You are in the kitchen.",
        "Inventory:\n Your inventory is currently empty.",
        [],
    )
    assert first.splitlines()[:2] == ["Inventory: empty", "Recent actions: none"]


def test_world_key_ignores_feedback_history_and_inventory_order():
    a = compose_state(
        "You take the cup.", "You are in the kitchen.", "Inventory:\n a cup\n a plate", ["take cup"]
    )
    b = compose_state("You look around.", "You are in the kitchen.", "Inventory:\n a plate\n a cup", ["look"])
    c = compose_state("", "You are in the bathroom.", "Inventory:\n a cup\n a plate", [])
    assert world_key(a) == world_key(b) != world_key(c)
    assert world_key("free text") == "free text"
