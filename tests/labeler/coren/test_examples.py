from __future__ import annotations

import torch

torch.set_num_threads(1)


def test_examples_built_from_the_data():
    from labeler.coren.examples import data_examples, data_preamble
    from tests.support.trca_tags import episode

    trajs = [
        episode("s1", ["push wall", "take apple", "put apple in box", "take apple", "put apple in fridge"]),
        episode("f1", ["take apple", "pull rope", "take apple"]),
    ]
    ex = data_examples(trajs, per_type=4)
    yes = [e.action for e in ex if e.progress]
    no = [e.action for e in ex if not e.progress]
    # Yes: lasting steps of the success only (the box detour is erased, the failure never counts)
    assert sorted(yes) == ["put apple in fridge", "take apple"]
    # No: steps that changed nothing (a refusal, a repeat that failed)
    assert set(no) <= {"push wall", "pull rope", "take apple"} and "push wall" in no
    assert [e.progress for e in ex][:2] == [True, False]  # interleaved
    pre = data_preamble("Say whether each action made progress.\n\nTask: x", ex)
    assert pre.startswith("Say whether each action made progress.\n\nTask: Put the things where they belong.")
    assert "Action: put apple in fridge\nResult: You put the apple in the fridge.\nProgress: Yes" in pre
    assert data_examples(trajs, per_type=4) == ex  # seeded


def test_on_a_response_only_log_one_rule_says_yes_and_no():
    """A response-only log: each state is the last response and an inventory line, so every state text
    differs from the one before. "Changed the world" is the view's partial-state rule on both sides: a step
    that drew an answer the same action had drawn before (or no answer) is a "No", not a change."""
    from labeler.coren.examples import data_examples
    from models.trajectory import Step, Trajectory

    def log(tid, success, rows):
        out, before = [], "You wake up in the hall."
        for action, response in rows:
            out.append(
                Step(f"{before}\nInventory: nothing", action, [action], f"{response}\nInventory: nothing")
            )
            before = response
        return Trajectory(tid, "Find the apple.", "toy", success, out)

    trajs = [
        log(
            "s",
            True,
            [
                ("go to kitchen", "You move to the kitchen."),
                ("look around", "A kitchen. A fridge."),
                ("open fridge", "You open the fridge. An apple."),
                ("look around", "A kitchen. A fridge."),  # the same answer again: changed nothing
                ("take apple", "You take the apple."),
            ],
        ),
        log(
            "f",
            False,
            [
                ("go to garden", "You cannot go there."),
                ("look around", "A garden."),
                ("go to garden", "You cannot go there."),  # a refusal drawn before: changed nothing
            ],
        ),
    ]
    assert all(t.view.partial for t in trajs)
    ex = data_examples(trajs, per_type=8)
    yes = {e.action for e in ex if e.progress}
    no = {e.action for e in ex if not e.progress}
    # the repeats: their state texts differ from the ones before, which alone is no change on such a log
    assert no == {"look around", "go to garden"}
    assert yes <= {"go to kitchen", "look around", "open fridge", "take apple"} and "take apple" in yes
    assert [t.view.changed for t in trajs] == [(True, True, True, False, True), (True, True, False)]
