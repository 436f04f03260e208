from __future__ import annotations

import pytest

from edge.loop_guard import LoopGuard
from models.state_layout import PLAIN_LAYOUT


def test_loop_guard_never_repeats_a_loop_closing_action():
    g = LoopGuard(key=lambda obs, actions: obs.split("|")[0])  # "world|history": the key drops the history
    hold, placed = ["put x in y", "look"], ["take x", "put z in w"]
    assert g.choose("H|1", hold, [0.9, 0.1]) == 0  # put x away
    assert g.choose("P|2", placed, [0.9, 0.5]) == 0  # take it back (the policy's argmax) ...
    assert g.choose("H|3", hold, [0.9, 0.1]) == 0  # ... back in H: 'take x' closed a loop; 'put' stays fine
    assert g.choose("P|4", placed, [0.9, 0.5]) == 1  # 'take x' is not taken from P again
    assert g.overrides == 1
    g.reset()
    assert g.choose("P|4", placed, [0.9, 0.5]) == 0 and g.overrides == 0  # a new episode forgets


def test_loop_guard_no_ops_exact_repeats_and_fallback():
    g = LoopGuard()
    cands = ["look", "go", "wait"]
    assert g.choose("S", cands, [0.9, 0.5, 0.1]) == 0  # a no-op: S again ...
    assert g.choose("S", cands, [0.9, 0.5, 0.1]) == 1  # ... so 'look' closed a loop of length one
    assert g.choose("T", cands, [0.9, 0.5, 0.1]) == 0
    g2 = LoopGuard()
    assert [g2.choose("S", ["a"], [1.0]) for _ in range(3)] == [0, 0, 0]  # nothing else: the argmax
    with pytest.raises(ValueError):
        g.choose("S", cands, [1.0])


def test_guard_record_keeps_the_memory_of_actions_it_did_not_choose():
    guard = LoopGuard()
    guard.record("s0", "b")
    assert guard.choose("s0", ["a", "b"], [0.0, 1.0]) == 0  # b was taken in this exact observation


ROOM = "You are in the kitchen. A table with a cup."


def test_the_guard_keys_a_plain_log_with_the_episodes_actions():
    """A plain log whose state echoes the recent actions: the guard's key of every state is the layout's key
    with the actions the episode took before it (chosen or recorded, in order), so a repeated no-op whose echo
    grew is a loop."""
    seen: list[tuple[str, tuple[str, ...]]] = []

    def key(text, actions):
        seen.append((text, tuple(actions)))
        return PLAIN_LAYOUT.world_key(text, actions)

    guard = LoopGuard(key=key)
    cands = ["look around", "take cup"]
    states = [f"{ROOM}\nnone", f"{ROOM}\nlook around", f"{ROOM}\nLook around, look around."]
    assert guard.choose(states[0], cands, [0.9, 0.1]) == 0
    assert guard.choose(states[1], cands, [0.9, 0.1]) == 0  # the first state's key had no actions to drop
    assert guard.choose(states[2], cands, [0.9, 0.1]) == 1  # the echo grew, the world did not: a loop
    guard.record(f"{ROOM}\nlook around, look around, take cup", "look around")
    taken = ["look around", "look around", "take cup"]
    assert seen == [
        (s, tuple(taken[:i])) for i, s in enumerate([*states, f"{ROOM}\nlook around, look around, take cup"])
    ]
    assert guard.key is key
    guard.reset()
    guard.choose(states[0], cands, [0.9, 0.1])
    assert seen[-1] == (states[0], ())  # a new episode has taken nothing yet


def test_the_layouts_world_key_is_a_guard_key():
    guard = LoopGuard(key=PLAIN_LAYOUT.world_key)
    cands = ["look around", "take cup"]
    picks = [
        guard.choose(f"{ROOM}\n{echo}", cands, [0.9, 0.1])
        for echo in ("none", "look around", "look around, look around")
    ]
    assert picks == [0, 0, 1]
    assert LoopGuard().key("a  b", ["a"]) == "a  b"  # by default the whole text
