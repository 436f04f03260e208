"""Response-only logs made from an adapter's log: each state is the last response plus the inventory line;
flattened logs: the full state without its labels or layout."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from labeler.response_only import flatten, flattened, response_only
from models.state_layout import Part, StateLayout
from models.trajectory import Step, Trajectory

LAYOUT = StateLayout(
    (
        Part("feedback", "Feedback"),
        Part("inventory", "Inventory", world=True, unordered=True, items=True),
        Part("room", "Room", world=True),
    )
)


RAW = "You take\n\tthe apple."


def _state(feedback: str | None, inventory: str, room: str) -> str:
    return LAYOUT.compose({"feedback": feedback, "inventory": inventory, "room": room})


def test_states_become_the_last_response_and_the_inventory_and_nothing_else():
    s0 = _state(None, "nothing", "A hall. A door to the kitchen.")
    s1 = _state("You move to the kitchen.", "nothing", "A kitchen with an apple.")
    s2 = _state("You take the apple.", "an apple", "A kitchen.")
    steps = [
        Step(s0, "go to kitchen", ["go to kitchen"], s1, info={"score": 0.5, "progress": 0.5, "seed": 3}),
        Step(s1, "take apple", ["take apple"], s2, info={"score": 1.0, "progress": 0.5, "feedback": RAW}),
    ]
    meta = {"state_layout": LAYOUT.to_dict(), "state_format": "toy/1", "env": "toy", "params": "", "seed": 1}
    traj = Trajectory("t", "Take the apple.", "toy", True, steps, meta=meta)
    out = response_only(traj)
    first, second = out.steps
    # the first state: the scene the episode started in
    assert first.observation == "A hall. A door to the kitchen.\nInventory: nothing"
    assert first.next_observation == "You move to the kitchen."
    assert second.observation == "You move to the kitchen.\nInventory: nothing"
    assert second.next_observation == RAW  # the raw answer, as the world wrote it
    assert first.info == {"score": 0.5, "progress": 0.5}  # ground truth for measuring only
    assert out.meta == {"seed": 1}
    assert traj.steps[0].observation == s0  # the input is left as it was


LINE = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=30).map(str.strip)
"""One line of a state part, as an adapter composes it (no line breaks)."""


@given(st.lists(st.tuples(LINE, LINE, LINE), min_size=1, max_size=6), LINE)
def test_every_state_is_the_last_response_and_the_inventory_line(parts, start_room):
    states = [_state(None, "nothing", start_room or "A hall.")]
    states += [_state(fb or "ok", inv or "nothing", room or "A room.") for fb, inv, room in parts]
    steps = [
        Step(a, f"act {i}", [f"act {i}"], b, info={"score": 0.1 * i, "seed": i})
        for i, (a, b) in enumerate(zip(states, states[1:], strict=False))
    ]
    traj = Trajectory("t", "Do it.", "toy", False, steps, meta={"state_layout": LAYOUT.to_dict(), "env": "x"})
    out = response_only(traj)
    responses = [LAYOUT.parse(s).get("feedback", "") for s in states]
    responses[0] = LAYOUT.parse(states[0])["room"]  # the scene the episode started in
    for i, s in enumerate(out.steps):
        inventory = LAYOUT.parse(states[i])["inventory"]
        assert s.observation == f"{responses[i]}\nInventory: {inventory}"
        assert s.next_observation == responses[i + 1]
        assert s.info == {"score": 0.1 * i}
    assert out.meta == {}


def test_flatten_keeps_the_values_of_labelled_lines_and_other_lines_as_they_are():
    text = "Feedback: You take it.\nInventory: an apple\nRoom:\nfree text"
    assert flatten(text, ("Feedback", "Inventory", "Room")) == "You take it.\nan apple\nfree text"


def test_a_flattened_log_keeps_every_value_and_the_ground_truth_but_no_layout():
    s0 = _state(None, "nothing", "A hall.")
    s1 = _state("You move.", "an apple", "A kitchen.")
    meta = {"state_layout": LAYOUT.to_dict(), "state_format": "toy/1", "env": "toy", "params": "", "seed": 1}
    step = Step(s0, "go", ["go"], s1, info={"progress": 0.5, "gold": True, "seed": 3})
    traj = Trajectory("t", "Go.", "toy", True, [step], meta=meta)
    out = flattened(traj)
    assert out.meta == {"seed": 1} and traj.meta["env"] == "toy"  # the input is left as it was
    assert out.steps[0].observation == "nothing\nA hall."
    assert out.steps[0].next_observation == "You move.\nan apple\nA kitchen."
    assert out.steps[0].info == step.info and ":" not in out.steps[0].next_observation
