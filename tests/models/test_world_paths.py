"""Loop erasure over world states (models.world_paths): hand-computed cases and the loop-free property."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from models.world_paths import loop_erased_steps, path_steps


def test_hand_computed_paths():
    # states before each step, then the final state
    assert loop_erased_steps(["A", "B", "C"]) == [0, 1]  # no loop
    assert loop_erased_steps(["A", "A", "B"]) == [1]  # a no-op at A: the action that left A is kept
    assert loop_erased_steps(["A", "B", "A", "C"]) == [2]  # A->B->A is a detour
    assert loop_erased_steps(["A", "B", "C", "B", "D"]) == [0, 3]
    assert loop_erased_steps(["A", "B", "C", "A"]) == []  # the episode ends where it began
    assert loop_erased_steps(["A"]) == []


@given(st.lists(st.sampled_from("ABCDE"), min_size=1, max_size=40))
def test_erased_path_is_a_loop_free_walk_from_start_to_end(keys):
    kept = loop_erased_steps(keys)
    assert kept == sorted(kept)
    visited = [keys[t] for t in kept]
    assert len(set(visited)) == len(visited)  # no world state twice
    assert keys[-1] not in visited  # and never the final one
    if kept:
        assert keys[kept[0]] == keys[0]
        # each kept action leads to the world state the next kept step starts from (or to the end)
        nexts = [keys[t + 1] for t in kept]
        assert nexts == [*visited[1:], keys[-1]]


def test_path_steps_key_the_states_and_the_final_one():
    states = ["A1", "B1", "A2"]  # the world is the letter: the first two steps are a loop
    assert path_steps(states, "C3", lambda text: text[0]) == [2]
    assert path_steps([], "C", lambda text: text) == []
