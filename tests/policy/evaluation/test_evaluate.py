from __future__ import annotations

import random

import torch

from policy.evaluation.evaluate import wilson_interval

torch.set_num_threads(1)


def test_random_policy_draws_one_number_per_step():
    from policy.evaluation.evaluate import RandomPolicy

    rng, policy = random.Random(7), RandomPolicy(7)
    picks = [policy.act("i", "s", ["a", "b", "c"]) for _ in range(20)]
    assert picks == [rng.randrange(3) for _ in range(20)]
    assert len(policy.scores("i", "s", ["a", "b"])) == 2


def test_wilson_interval():
    lo, hi = wilson_interval(9, 10)
    assert abs(lo - 0.5958) < 1e-3 and abs(hi - 0.9821) < 1e-3
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(20, 20)[1] == 1.0
