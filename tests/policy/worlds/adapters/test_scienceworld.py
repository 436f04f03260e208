"""ScienceWorld adapter pieces that need no JVM: the state text, the focus part and the parameters."""

from __future__ import annotations

import pytest

from policy.worlds.adapters import EnvError, parse_env
from policy.worlds.adapters.scienceworld import (
    LAYOUT,
    ScienceWorldAdapter,
    canonical_listing,
    compose_state,
    focused_on,
)

CUP, BOWL = "a glass cup (containing nothing)", "a bowl (containing a red apple, a banana)"


TABLE, CHAIR = f"\ta table. On the table is: {CUP}, {BOWL}.\n", "\ta chair. On the chair is: nothing.\n"


LOOK = (
    "This room is called the kitchen. In it, you see: \n\tthe agent\n\ta substance called air\n"
    f"{TABLE}{CHAIR}You also see:\n\tA door to the outside (that is open)\n"
    "\tA door to the hallway (that is open)\n"
)


def test_listing_order_does_not_change_the_state_text():
    shuffled = LOOK.replace(TABLE + CHAIR, CHAIR + f"\ta table. On the table is: {BOWL}, {CUP}.\n")
    assert shuffled != LOOK and canonical_listing(shuffled) == canonical_listing(LOOK)
    inv = "In your inventory, you see:\n\tan orange\n"
    a = compose_state("You move to the kitchen.", LOOK, inv, ["go to kitchen"])
    assert a == compose_state("You move to the kitchen.", shuffled, inv, ["go to kitchen"])
    parts = LAYOUT.parse(a)
    assert parts["inventory"] == "an orange" and parts["history"] == "go to kitchen"
    assert (
        "the agent" not in parts["room"]
        and "called air" not in parts["room"]
        and "door to the hallway" in parts["room"]
    )
    assert "feedback" not in LAYOUT.parse(compose_state(LOOK, LOOK, inv, ["look around"]))
    long = compose_state("x" * 1000, LOOK, "In your inventory, you see:\n", [])
    assert len(LAYOUT.parse(long)["feedback"]) == 300 and LAYOUT.parse(long)["inventory"] == "empty"


def test_focus_is_a_world_part_of_the_state():
    world_key = LAYOUT.world_key

    assert focused_on("You focus on the baby wolf.") == "the baby wolf"
    assert focused_on("You move to the kitchen.") is None
    inv = "In your inventory, you see:\n\tan orange\n"
    before = compose_state("", LOOK, inv, ["look around"])
    recent = ["look around", "focus on orange"]
    after = compose_state("You focus on the orange.", LOOK, inv, recent, "the orange")
    parts = LAYOUT.parse(after)
    assert parts["focus"] == "the orange" and "focus" not in LAYOUT.parse(before)
    # the lines in order: feedback, inventory, focus, recent actions, room
    assert [ln.split(":", 1)[0] for ln in after.splitlines()] == [
        "Feedback", "Inventory", "Focus", "Recent actions", "Room",
    ]  # fmt: skip
    # focusing changes the world key (it commits the agent), the recent actions do not
    assert world_key(before) != world_key(after)
    again = compose_state("", LOOK, inv, ["focus on orange", "look around"], "the orange")
    assert world_key(again) == world_key(after)
    assert ScienceWorldAdapter.compose({"look": LOOK, "inventory": inv, "focus": "the orange"}, []) == (
        compose_state("", LOOK, inv, [], "the orange")
    )


def test_parameters_resolve_and_bad_ones_are_one_line_errors():
    spec = parse_env("scienceworld:boil")
    assert spec.params == "simplifications=easy,candidates=128"
    assert parse_env("scienceworld:boil", spec.params) == spec
    assert parse_env("scienceworld:boil", "simplifications=teleportAction+openDoors,candidates=0").values == {
        "simplifications": "teleportAction+openDoors",
        "candidates": "0",
    }
    for name, params, message in [
        ("scienceworld:bake", None, "unknown scienceworld task 'bake': expected one of boil, melt"),
        ("scienceworld:boil", "simplifications=fast", "unknown ScienceWorld simplification 'fast'"),
        ("scienceworld:boil", "candidates=lots", "expected an integer"),
        ("scienceworld:boil", "candidates=-1", "expected 0 (all) or a positive cap"),
        ("scienceworld:boil", "level=easy", "unknown parameter 'level' for scienceworld:boil"),
    ]:
        with pytest.raises(EnvError) as e:
            parse_env(name, params)
        assert message in str(e.value) and "\n" not in str(e.value)
