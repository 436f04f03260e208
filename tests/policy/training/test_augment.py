"""Entity-consistent augmentation (policy.training.augment): which names a log lets us rename, and copies
renamed consistently everywhere."""

from __future__ import annotations

import random

from models.trajectory import Step, Trajectory
from policy.training.augment import augment, interchangeable, swapped

APPLIANCES = ("oven", "stove")
RECIPES = {"roast": "oven", "fry": "stove"}


def _cooking(i: int, food: str, how: str, success: bool = True) -> Trajectory:
    """Read the recipe, take the food, cook it where the recipe's verb says; a knife in every episode."""
    recipe = f"Directions: {how} the {food}."
    cands = [f"cook {food} in {a}" for a in APPLIANCES] + ["take knife"]
    steps = [
        Step(observation="You see a knife.", action="read cookbook", candidates=["read cookbook"],
             next_observation=recipe),
        Step(observation=recipe, action=f"take {food}", candidates=[f"take {food}", "take knife"],
             next_observation=f"You take the {food}."),
        Step(observation=f"Inventory: a {food}", action=f"cook {food} in {RECIPES[how]}", candidates=cands,
             next_observation=f"You {how} the {food}."),
    ]  # fmt: skip
    return Trajectory(
        id=f"c{i}", instruction=f"Cook the {food}.", task_type="cook", success=success, steps=steps
    )


def _placing(i: int, thing: str, place: str) -> Trajectory:
    steps = [
        Step(observation=f"A {thing} is here.", action=f"take {thing}", candidates=[f"take {thing}"],
             next_observation=f"You take the {thing}."),
        Step(observation=f"Inventory: a {thing}", action=f"put {thing} in {place}",
             candidates=[f"put {thing} in {p}" for p in ("shelf", "bin")], next_observation="Placed."),
    ]  # fmt: skip
    return Trajectory(id=f"p{i}", instruction="Tidy up.", task_type="tidy", success=True, steps=steps)


def _cooking_log() -> list[Trajectory]:
    # the same food is roasted in one episode and fried in another: the food does not decide the appliance
    plan = [
        ("carrot", "roast"),
        ("carrot", "fry"),
        ("red potato", "fry"),
        ("red potato", "roast"),
        ("egg", "fry"),
    ]
    return [_cooking(i, food, how) for i, (food, how) in enumerate(plan)]


def test_foods_whose_appliance_varies_are_interchangeable_the_fixture_and_appliances_are_not():
    (cls,) = interchangeable(_cooking_log())
    assert cls == {"carrot", "red potato", "egg"}  # not the knife (every episode), not an appliance (targets)


def test_a_food_always_cooked_one_way_is_renamed_with_the_others_whatever_else_it_affords():
    """The training games grill every chicken; the recipe, not the name, must pick the appliance: the
    chicken is renamed with the foods that can also be sliced (classes follow the free verbs only)."""
    log = _cooking_log() + [_cooking(10 + i, "chicken wing", "roast") for i in range(3)]
    for t in log[:5]:  # the other foods can be sliced too
        food = t.steps[1].action.removeprefix("take ")
        t.steps[2].candidates.append(f"slice {food}")
    (cls,) = interchangeable(log)
    assert cls == {"carrot", "red potato", "egg", "chicken wing"}


def test_names_that_decide_the_place_are_never_renamed():
    # each thing always ends on the same place in the successful episodes: its name is the knowledge
    log = [_placing(i, t, p) for i, (t, p) in enumerate([("cup", "shelf"), ("cup", "shelf"), ("can", "bin"),
                                                            ("can", "bin"), ("jar", "shelf")])]  # fmt: skip
    assert interchangeable(log) == []
    assert augment(log, 2) == log  # nothing to rename: no copies


def test_a_copy_renames_consistently_everywhere_and_keeps_the_relation():
    log = _cooking_log()
    classes = interchangeable(log)
    copy = swapped(log[0], classes, random.Random(0), "swap1")
    new = copy.steps[1].action.removeprefix("take ")
    assert new in {"red potato", "egg"} and copy.id == "c0~swap1"
    assert copy.instruction == f"Cook the {new}."
    assert copy.steps[0].next_observation == f"Directions: roast the {new}."
    assert copy.steps[2].action == f"cook {new} in oven"  # the recipe's verb still picks the appliance
    assert copy.steps[2].candidates == [f"cook {new} in oven", f"cook {new} in stove", "take knife"]
    assert "carrot" not in str(copy) and "knife" in copy.steps[0].observation
    assert copy.success and copy.steps[2].labels == log[0].steps[2].labels
    assert log[0].steps[1].action == "take carrot"  # the original is unchanged


def test_augment_adds_copies_after_each_episode_and_is_seeded():
    log = _cooking_log()
    out = augment(log, 2, seed=3)
    assert len(out) == 3 * len(log)
    assert [t.id for t in out[:3]] == ["c0", "c0~swap1", "c0~swap2"]
    assert [t.steps[1].action for t in augment(log, 2, seed=3)] == [t.steps[1].action for t in out]
    assert augment(log, 0) == log
