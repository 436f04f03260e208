"""models.state_layout: the one world key (agreed on by every reader), the plain layout, and which layout a
trajectory or policy is read with."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge.loop_guard import LoopGuard
from labeler.trca.checks import Transition
from models.state_layout import (
    LEGACY_LAYOUT,
    PLAIN_LAYOUT,
    Part,
    StateLayout,
    layout_of,
    policy_world,
    state_format_of,
)
from models.trajectory import Step, Trajectory
from policy.worlds.adapters.registry import BUILTIN, adapter_class
from tests.support.plain_logs import ACTIONS, BREAKS, echo, plain_state

ADAPTER_LAYOUTS = {name: adapter_class(name).layout for name in BUILTIN}


"""Every shipped adapter's layout, plus a robot layout with the inventory last and a plain one."""


ADAPTER_LAYOUTS["robot"] = StateLayout(
    (
        Part("place", "At", world=True),
        Part("feedback", "Result"),
        Part("doors", "Open doors", world=True, unordered=True),
        Part("inventory", "Holding", world=True, unordered=True, items=True),
    )
)


ADAPTER_LAYOUTS["plain"] = PLAIN_LAYOUT


word = st.sampled_from(["cup", "apple", "red", "key", "box", "pen"])


article = st.sampled_from(["a ", "an ", "the ", "some ", ""])


entries = st.lists(st.tuples(article, word), min_size=0, max_size=4)


def _compose(layout: StateLayout, values: dict[str, str]) -> str:
    return (
        layout.compose({k: v for k, v in values.items() if k in layout.names})
        if layout.parts
        else (" ".join(values.values()))
    )


def _guard_keys(key, states: list[str], actions: list[str]) -> list[str]:
    """The world keys the client's loop guard computes for an episode's states (``key`` called as the guard
    calls it), the episode taking ``actions[i]`` in ``states[i]``."""
    seen: list[str] = []

    def watched(text: str, taken) -> str:
        seen.append(key(text, taken))
        return seen[-1]

    guard = LoopGuard(key=watched)
    for state, action in zip(states, actions, strict=True):
        guard.record(state, action)
    return seen


def _keys(layout: StateLayout, text: str) -> set[str]:
    """The world key as each reader computes it: the layout, the adapter's world_key and the client's loop
    guard (TRCA's "unchanged" compares the same keys: see the agreement test)."""
    return {layout.world_key(text), *_guard_keys(layout.world_key, [text], ["look"])}


def test_a_layout_without_an_inventory_keeps_every_world_part():
    layout = StateLayout((Part("feedback", "Said"), Part("pose", "Pose", world=True)))
    assert layout.world_key("Said: moved\nPose: 1 2") == layout.world_key("Said: stuck\nPose:  1 2")
    assert layout.world_key("Pose: 1 2") != layout.world_key("Pose: 2 1")  # ordered


@pytest.mark.parametrize("name", sorted(ADAPTER_LAYOUTS))
@given(held=entries, order=st.randoms(use_true_random=False), feedback=st.text("abc .", max_size=10))
def test_every_reader_agrees_on_bags_orders_and_articles(name, held, order, feedback):
    layout = ADAPTER_LAYOUTS[name]
    unordered = [p.name for p in layout.parts if p.unordered]
    listed = ", ".join(a + w for a, w in held) or "empty"
    shuffled = list(held)
    order.shuffle(shuffled)
    other_articles = ", ".join(("the " if a else "") + w for a, w in shuffled) or "empty"
    base = {p.name: "here" for p in layout.parts}
    a = _compose(layout, {**base, **{u: listed for u in unordered}, "feedback": feedback or "ok"})
    b = _compose(layout, {**base, **{u: other_articles for u in unordered}, "feedback": "something else"})
    ka, kb = _keys(layout, a), _keys(layout, b)
    assert len(ka) == 1 and len(kb) == 1  # one definition
    if layout.parts:
        assert ka == kb  # order, articles and the response do not make another world
        assert not Transition("i", a, "look", b, layout).world_changed  # nor for TRCA's "unchanged"
    for cls_name in BUILTIN:
        if adapter_class(cls_name).layout == layout:
            assert adapter_class(cls_name).world_key(a) == layout.world_key(a)


def test_hand_computed_keys():
    layout = ADAPTER_LAYOUTS["robot"]
    text = layout.compose(
        {"place": "dock  bay", "feedback": "ok", "doors": "Hall, kitchen", "inventory": "An Apple, a cup"}
    )
    assert layout.world_key(text) == "At: dock bay\nOpen doors: hall kitchen\nHolding: apple cup"
    assert PLAIN_LAYOUT.world_key("  The door\n is open. ") == "The door is open."


def test_loop_erasure_and_checks_agree_on_an_inventory_listed_anew():
    layout = LEGACY_LAYOUT
    s0 = layout.compose({"inventory": "a cup, an apple", "room": "Kitchen."})
    s1 = layout.compose({"feedback": "You drop the cup.", "inventory": "an apple", "room": "Kitchen."})
    s2 = layout.compose(
        {"feedback": "You take the cup.", "inventory": "an apple, the cup", "room": "Kitchen."}
    )
    t = Trajectory(
        "t",
        "tidy",
        "x",
        True,
        [Step(s0, "drop cup", [], s1), Step(s1, "take cup", [], s2)],
        meta={"state_layout": layout.to_dict()},
    )
    assert t.view.path == ()  # back where it began: both steps are a loop
    assert not Transition("tidy", s0, "look", s2, layout).world_changed


def test_plain_layout_response_is_what_the_next_state_adds():
    before = "You are in the hall. The door is closed.\nYou hold nothing."
    after = "The door opens. You are in the hall. The door is open.\nYou hold nothing."
    assert PLAIN_LAYOUT.response(before, after) == "The door opens. The door is open."
    assert PLAIN_LAYOUT.response(before, before) == ""
    assert PLAIN_LAYOUT.plain and not LEGACY_LAYOUT.plain
    assert StateLayout.from_dict(PLAIN_LAYOUT.to_dict()) == PLAIN_LAYOUT


def test_structured_response_is_the_feedback_part():
    s = LEGACY_LAYOUT.compose({"feedback": "You open the fridge.", "room": "Kitchen."})
    assert LEGACY_LAYOUT.response("Room: Kitchen.", s) == "You open the fridge."
    assert LEGACY_LAYOUT.response(s, LEGACY_LAYOUT.compose({"room": "Kitchen."})) == ""  # no new text


def test_a_log_is_read_as_twx1_only_when_it_says_so():
    assert layout_of({}) == PLAIN_LAYOUT
    assert layout_of({"state_format": "robot/3"}) == PLAIN_LAYOUT
    assert layout_of({"state_format": "twx/1"}) == LEGACY_LAYOUT
    recorded = ADAPTER_LAYOUTS["robot"]
    assert layout_of({"state_format": "twx/1", "state_layout": recorded.to_dict()}) == recorded
    assert state_format_of({}) == ""
    # policies written before layouts and formats were recorded are TextWorld's
    assert state_format_of(policy_world({})) == "twx/1"
    assert layout_of(policy_world({"state_layout": PLAIN_LAYOUT.to_dict()})) == PLAIN_LAYOUT


def test_a_plain_text_echo_of_the_episodes_actions_is_neither_response_nor_world():
    actions = ["look around", "take cup", "take cup"]
    before = "You take the cup.\ncup\nlook around, take cup\nKitchen. A table."
    after = "That is already held.\ncup\nlook around, take cup, take cup\nKitchen. A table."
    assert PLAIN_LAYOUT.response(before, after, actions) == "That is already held."
    assert PLAIN_LAYOUT.world_key(before, actions) == "You take the cup. cup Kitchen. A table."
    assert PLAIN_LAYOUT.world_key("none\nKitchen.", actions) == PLAIN_LAYOUT.world_key("Kitchen.", actions)
    assert PLAIN_LAYOUT.world_key(before) != PLAIN_LAYOUT.world_key(before, actions)  # no actions: whole text
    nxt = after.replace("take cup, take cup", "take cup, take cup, take cup")
    tr = Transition("tidy", after, "take cup", nxt, PLAIN_LAYOUT, tuple(actions))
    assert not tr.world_changed  # a repeat that changed nothing, though its echo grew


@given(rng=st.randoms(use_true_random=False), steps=st.integers(1, 12))
def test_every_reader_agrees_on_a_plain_log_that_echoes_its_actions(rng, steps):
    """The client's loop guard keys every state of a plain log with the actions the episode took before it,
    as the layout does (tests/edge/test_cpp.py replays such episodes through the C++ guard); an echo of those
    actions (or "none") on a line of its own changes no key."""
    taken: list[str] = []
    states: list[str] = []
    for _ in range(steps):
        states.append(plain_state(rng, taken))
        taken.append(rng.choice(ACTIONS))
    want = [PLAIN_LAYOUT.world_key(s, taken[:i]) for i, s in enumerate(states)]
    assert _guard_keys(PLAIN_LAYOUT.world_key, states, taken) == want
    for i, s in enumerate(states[1:], 1):
        echoed = s + rng.choice(BREAKS) + echo(rng, taken[:i])
        assert PLAIN_LAYOUT.world_key(echoed, taken[:i]) == want[i]
