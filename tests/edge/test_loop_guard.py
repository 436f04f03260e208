from __future__ import annotations

import pytest

from edge.loop_guard import LoopGuard


def test_loop_guard_never_repeats_a_loop_closing_action():
    g = LoopGuard(key=lambda obs: obs.split("|")[0])  # "world|history": the key drops the history
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
