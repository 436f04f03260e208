"""A trajectory's view (models.trajectory_view): loop-erased paths and "changed" read the world parts a layout
declares, wherever they stand; partial states; one view per trajectory, rebuilt when its texts change."""

from __future__ import annotations

from models.state_layout import Part, StateLayout, layout_of
from models.trajectory import Step, Trajectory
from models.trajectory_view import TrajectoryView, answered_anew
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
    assert key(a) != key(robot("shelf", "a cup, a pen"))
    assert key(a) == key(b)
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
    assert t.view.path == (2,)  # pick and drop are a loop


def test_a_trajectory_path_by_hand():
    t = episode("s1", S1)
    # states: table, hand, box, hand(=1), hand(push, =1), fridge -> path: take (0), put in fridge (4)
    assert t.view.path == (0, 4)
    key = layout_of(t.meta).world_key
    assert key(t.steps[0].next_observation) == key(t.steps[2].next_observation)


def _response_only(steps: list[tuple[str, str]], first: str = "You wake up in the hall.") -> Trajectory:
    """A response-only log: each state is the last response plus an inventory line."""
    out, before = [], first
    for action, response in steps:
        out.append(Step(f"{before}\nInventory: nothing", action, [action], response))
        before = response
    return Trajectory("r", "Find the apple.", "toy", True, out)


def test_partial_states_are_told_from_whether_states_name_what_the_actions_act_on():
    log = _response_only([("go to kitchen", "You move to the kitchen."), ("take apple", "You take it.")])
    assert log.view.partial
    hall = "Hall with an apple and a door to the kitchen."
    full = [Step(hall, a, [a], "x") for a in ("go to kitchen", "take apple")]
    assert not Trajectory("f", "Find the apple.", "toy", False, full).view.partial


def test_on_partial_states_a_loop_is_a_return_that_learned_nothing_new():
    log = _response_only(
        [
            ("go to kitchen", "You move to the kitchen."),  # 0
            ("go to hall", "You move to the hall."),  # 1: back where... but it learned "the hall" answer
            ("go to kitchen", "You move to the kitchen."),  # 2: the kitchen again, nothing new since step 1
            ("go to hall", "You move to the hall."),  # 3: and the hall again: steps 2-3 are a loop
            ("take pear", "No such thing."),  # 4
            ("go to kitchen", "You move to the kitchen."),  # 5
            ("take pear", "No such thing."),  # 6: the same refusal, but step 5 ... was no news either
        ]
    )
    assert log.view.path == (0, 1, 4, 5, 6)
    assert log.view.changed == (True, True, False, False, True, False, False)


def test_answered_anew_reads_actions_and_responses_normalised():
    earlier = [("Go to Kitchen", "You move to the kitchen.")]
    assert not answered_anew("go to  kitchen", "you move to the KITCHEN.", earlier)
    assert answered_anew("go to hall", "You move to the kitchen.", earlier)
    assert not answered_anew("look", "  ", [])  # an empty response changes nothing


def test_one_view_per_trajectory_built_once_and_rebuilt_when_its_texts_or_layout_change(monkeypatch):
    import models.trajectory_view as view_module
    from policy.training.loop_erasure import detour_steps

    calls = []
    real = view_module.layout_of
    monkeypatch.setattr(view_module, "layout_of", lambda meta: calls.append(1) or real(meta))
    log = _response_only(
        [("go to kitchen", "You move to the kitchen."), ("go to kitchen", "You move to the kitchen.")]
    )
    assert log.view is log.view
    detour_steps(log), log.responses(), log.view.partial, log.view.episode_keys
    assert len(calls) == 1  # the detour penalty, the responses and the path read one layout, once
    assert isinstance(log.view, TrajectoryView) and log.view.responses == tuple(log.responses())

    before = log.view
    log.steps[1].next_observation = "You see a pear."
    assert log.view is not before and log.view.responses[-1] == "You see a pear."
    log.meta["state_layout"] = ROBOT.to_dict()
    assert log.view.layout == ROBOT and len(calls) == 3


def test_a_view_of_no_steps():
    v = Trajectory("e", "Find the apple.", "toy", False, []).view
    assert v.responses == v.episode_keys == v.path == v.changed == () and not v.partial
