from __future__ import annotations

import numpy as np
import torch

from labeler.coren import temporal

torch.set_num_threads(1)


def test_position_prior_and_high_value():
    dists = [np.array([0.7, 0.3]), np.array([0.5, 0.3, 0.2])]
    prior = temporal.position_prior(dists, 4)
    assert np.allclose(prior, [0.6, 0.3, 0.2, 1.0])
    # raw argmax is A, but A is the favourite position: calibrated, B wins (0.45/0.3 > 0.55/0.6)
    assert temporal.high_value_index([0.55, 0.45], prior) == 1
    assert temporal.high_value_index([0.6, 0.3], prior) == 0  # tie -> first


def test_violation_rule():
    assert temporal.violated("take a", "take a", passed=False)
    assert not temporal.violated("take a", "take a", passed=True)
    assert not temporal.violated("take a", "look", passed=False)
    # calibrated against the mean: a judge that says Yes to everything passes only its more confident plans
    assert temporal.backward_passes([0.9, 0.8, 0.95]).tolist() == [True, False, True]
    assert temporal.backward_passes([0.7, 0.7]).tolist() == [True, True]  # no difference: all pass
