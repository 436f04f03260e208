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
