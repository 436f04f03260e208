"""labeler.paths.world_key reads the world parts a state layout declares, wherever they stand in it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from labeler.dataset import Step, Trajectory
from labeler.paths import changed, path_steps, world_key
from labeler.trca.checks import StateView
from models.state_layout import LEGACY_LAYOUT, Part, StateLayout

# World parts in another order than TextWorld's: the place first, the inventory last, and a third world part
# compared as a bag of words.
ROBOT = StateLayout(
    (
        Part("place", "At", world=True),
        Part("feedback", "Result"),
        Part("history", "Recent skills"),
        Part("doors", "Open doors", world=True, unordered=True),
        Part("inventory", "Holding", world=True, unordered=True),
    )
)


def robot(place: str, holding: str, doors: str = "none", result: str = "ok", recent: str = "none") -> str:
    return ROBOT.compose(
        {"place": place, "feedback": result, "history": recent, "doors": doors, "inventory": holding}
    )


def test_a_layout_with_the_inventory_last():
    a = robot("dock", "a cup, a pen", doors="hall kitchen", result="done", recent="pick cup")
    b = robot("dock", "a pen, a cup", doors="kitchen hall", result="nothing", recent="pick pen")
    assert world_key(a, ROBOT) == world_key(b, ROBOT) == "dock\nhall kitchen\ncup|pen"
    assert world_key(robot("shelf", "a cup, a pen"), ROBOT) != world_key(a, ROBOT)  # the place counts
    assert world_key(robot("dock", "a cup"), ROBOT) != world_key(robot("dock", "a pen"), ROBOT)
    assert world_key(robot("dock", "empty"), ROBOT) == "dock\nnone\n"
    assert changed(a, robot("shelf", "a cup, a pen"), lambda t: world_key(t, ROBOT))
    assert not changed(a, b, lambda t: world_key(t, ROBOT))
    assert world_key("  no   labelled lines ", ROBOT) == "no labelled lines"


def test_a_layout_without_an_inventory_keeps_every_world_part():
    layout = StateLayout((Part("feedback", "Said"), Part("pose", "Pose", world=True)))
    assert world_key("Said: moved\nPose: 1 2", layout) == world_key("Said: stuck\nPose: 1 2", layout) == "1 2"
    assert world_key("Pose: 1 2", layout) != world_key("Pose: 2 1", layout)  # ordered


def test_path_steps_read_the_layout_the_trajectory_records():
    s = [robot("dock", "empty"), robot("dock", "a cup"), robot("dock", "empty"), robot("shelf", "empty")]
    actions = ["pick cup", "drop cup", "go shelf"]
    t = Trajectory(
        id="r",
        instruction="go to the shelf",
        task_type="robot",
        steps=[
            Step(observation=s[i], action=a, candidates=actions, next_observation=s[i + 1])
            for i, a in enumerate(actions)
        ],
        success=True,
        meta={"state_layout": ROBOT.to_dict()},
    )
    assert path_steps(t) == [2]  # pick and drop are a loop


def _legacy_key(text: str) -> str:
    """The key as it was computed for TextWorld's layout (inventory first, then the room)."""
    v = StateView.parse(text, LEGACY_LAYOUT)
    if v.inventory is None and v.world == " ".join(text.split()):
        return v.world
    return "|".join(sorted(v.inventory_items)) + "\n" + v.world.split("\n", 1)[-1]


line = st.text(alphabet="abc ,.", max_size=12)


@given(
    feedback=line,
    inventory=st.one_of(st.none(), line, st.just("empty")),
    history=st.one_of(st.none(), line),
    room=st.one_of(st.none(), line),
)
def test_textworld_keys_are_unchanged(feedback, inventory, history, room):
    text = LEGACY_LAYOUT.compose(
        {"feedback": feedback, "inventory": inventory, "history": history, "room": room}
    )
    assert world_key(text) == _legacy_key(text)
