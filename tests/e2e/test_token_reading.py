"""The token reader reads the word that decides: a recipe's verb picks the appliance, for ingredients never
seen in training. Real tokenizer, real frozen token table (the static encoder distilled from the local
MiniLM), real training and a real export, on a small log written here: each episode is one decision, "cook X
in Y" for the ingredient the directions name, with another ingredient's direction beside it. Sentence vectors
alone cannot tell "roast the X" from "fry the X" well enough to pick the appliance; the token reader can."""

from __future__ import annotations

import random

import numpy as np
import pytest

from models.trajectory import Step, Trajectory, write_trajectories

pytestmark = pytest.mark.real

APPLIANCE = {"roast": "oven", "fry": "stove", "grill": "toaster"}
TRAIN = ["carrot", "potato", "apple", "onion", "pepper", "tomato", "lettuce", "banana", "garlic", "cheese",
         "salmon", "tofu", "mushroom", "cucumber"]  # fmt: skip
TEST = ["chicken leg", "pork chop", "eggplant", "zucchini", "turnip", "parsnip", "squash", "beet"]


def _episode(i: int, rng: random.Random, names: list[str]) -> Trajectory:
    item, other = rng.sample(names, 2)
    verb, other_verb = rng.choice(list(APPLIANCE)), rng.choice(["chop", "slice", "dice"])
    directions = [f"{verb} the {item}", f"{other_verb} the {other}"]
    rng.shuffle(directions)
    state = (
        f"Recipe: {', '.join(directions)}, prepare meal\n"
        f"Inventory: a {item}, a {other}, a knife\n"
        "Room: You are in the kitchen. You see an oven, a stove and a toaster."
    )
    candidates = [f"cook {x} in {a}" for x in (item, other) for a in APPLIANCE.values()]
    rng.shuffle(candidates)
    action = f"cook {item} in {APPLIANCE[verb]}"
    return Trajectory(
        id=f"e{i}",
        instruction="Cook the meal the recipe asks for.",
        task_type="cook",
        success=True,
        steps=[
            Step(
                state,
                action,
                candidates,
                state.replace("Inventory:", f"Feedback: You {verb} the {item}.\nInventory:"),
            )
        ],
    )


def _right(policy, episodes: list[Trajectory]) -> list[bool]:
    return [
        t.steps[0].candidates[policy.act(t.instruction, t.steps[0].observation, t.steps[0].candidates, ())]
        == t.steps[0].action
        for t in episodes
    ]


def test_the_token_reader_picks_the_appliance_the_verb_asks_for_on_unseen_ingredients(tmp_path):
    """Each reader is one training run, whose outcome differs across CPUs in the last bits of its kernels;
    what is asserted is what the mechanism gives, with room for that: on 300 unseen decisions the token reader
    is right at a rate whose 95 % interval lies above 0.85, and it is right where the vector reader is wrong
    far more often than the reverse (paired sign test, p < 0.001; measured 1.0 against 0.80-0.82)."""
    from edge.bundle_policy import BundlePolicy
    from policy.evaluation.evaluate import wilson_interval
    from policy.export.assemble import export_bundle
    from policy.training.train import train_from_file
    from tests.support.stats import paired_sign_test_p

    rng = random.Random(0)
    write_trajectories(tmp_path / "train.jsonl", [_episode(i, rng, TRAIN) for i in range(120)])
    test = [_episode(i, rng, TEST) for i in range(300)]
    right = {}
    for reader in ("tokens", "vectors"):
        run = train_from_file(
            tmp_path / "train.jsonl", algo="bc", reward="sparse", out=tmp_path / reader, encoder="static",
            overrides={"steps": 400, "batch_size": 32, "hidden": 32, "log_every": 100, "reader": reader},
            progress=False,
        )  # fmt: skip
        export_bundle(run.checkpoint, tmp_path / f"{reader}-bundle")
        with BundlePolicy(tmp_path / f"{reader}-bundle") as policy:
            right[reader] = _right(policy, test)
    acc = {k: float(np.mean(v)) for k, v in right.items()}
    print("cook decisions on unseen ingredients:", acc)
    assert wilson_interval(sum(right["tokens"]), len(test))[0] >= 0.85, acc
    assert paired_sign_test_p(right["tokens"], right["vectors"]) < 1e-3, acc
