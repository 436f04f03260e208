"""Loop-erased paths and "changed" read the world parts a layout declares, wherever they stand."""

from __future__ import annotations

from labeler.dataset import Step, Trajectory
from labeler.paths import changed, path_steps
from models.state_layout import Part, StateLayout, layout_of
from tests.support.trca_tags import S1, episode

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


"""The tiny world writes TextWorld's twx/1 state texts."""


def test_a_layout_with_the_inventory_last():
    key = ROBOT.world_key
    a = robot("dock", "a cup, a pen", doors="hall kitchen", result="done", recent="pick cup")
    b = robot("dock", "the pen, a cup", doors="kitchen hall", result="nothing", recent="pick pen")
    assert key(a) == key(b) == "At: dock\nOpen doors: hall kitchen\nHolding: cup pen"
    assert key(robot("shelf", "a cup, a pen")) != key(a)  # the place counts
    assert key(robot("dock", "a cup")) != key(robot("dock", "a pen"))
    assert changed(a, robot("shelf", "a cup, a pen"), key)
    assert not changed(a, b, key)
    assert key("  no   labelled lines ") == "no labelled lines"


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


def test_a_trajectory_path_by_hand():
    t = episode("s1", S1)
    # states: table, hand, box, hand(=1), hand(push, =1), fridge -> path: take (0), put in fridge (4)
    assert path_steps(t) == [0, 4]
    key = layout_of(t.meta).world_key
    assert key(t.steps[0].next_observation) == key(t.steps[2].next_observation)
