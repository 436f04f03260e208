from __future__ import annotations

import numpy as np
import pytest
import torch

from labeler.coren import assembly, voting

torch.set_num_threads(1)


def test_positions_and_quintile_votes_hand_computed():
    u = voting.positions([0.3, 0.1, 0.3, 0.9, 0.5])
    # ranks 2.5, 1, 2.5, 5, 4 -> (r - 0.5) / 5
    assert np.allclose(u, [0.4, 0.1, 0.4, 0.9, 0.7])
    assert voting.quintile_votes(u).tolist() == [0, -2, 0, 2, 1]
    assert np.allclose(voting.to_scale([0.0, 0.5, 1.0]), [-2, 0, 2])
    assert voting.positions([1.0, 1.0, 1.0]).tolist() == [0.5, 0.5, 0.5]  # all tied: the middle


def test_majority_vote_counts_and_tie_rules():
    assert voting.majority_vote([2, 2, 1, -2, 2]) == 2
    # 2 vs 1 tie (2 each) without support: nearer 0 wins
    assert voting.majority_vote([2, 1, 2, 1, -2]) == 1
    # same tie, voters' mean position 1.8: 2 is nearer
    assert voting.majority_vote([2, 1, 2, 1, -2], support=1.8) == 2
    # support exactly between the tied values: back to nearest 0
    assert voting.majority_vote([2, 1, 2, 1, -2], support=1.5) == 1
    assert voting.majority_vote([-1, 1]) == -1 and voting.majority_vote([-1, 1], support=0.2) == 1
    with pytest.raises(ValueError):
        voting.majority_vote([])


def test_filtered_vote_and_fallback():
    assert voting.filtered_vote([2, -2, -2], [True, False, False], fallback=0) == (2, False)
    assert voting.filtered_vote([2, -2, -2], [False, True, True], fallback=0) == (-2, False)
    assert voting.filtered_vote([2, -2, -2], [False, False, False], fallback=1) == (1, True)
    # tie among the passing prompts, broken by their positions only
    got = voting.filtered_vote([2, -1, -2], [True, True, False], fallback=0, scale_positions=[1.9, -0.8, -2])
    assert got == (2, False)  # mean position 0.55: 2 is 1.45 away, -1 is 1.55 away
    with pytest.raises(ValueError):
        voting.filtered_vote([1, 2], [True], fallback=0)


def test_calibration_hand_computed():
    d = np.array([[0.8, 0.2], [0.6, 0.4]])
    prior = voting.calibration_prior(d)
    assert np.allclose(prior, [0.7, 0.3])
    cal = voting.calibrate(d, prior)
    # row 0: (0.8/0.7, 0.2/0.3) = (1.142857, 0.666667) -> normalised
    a, b = 0.8 / 0.7, 0.2 / 0.3
    assert np.allclose(cal[0], [a / (a + b), b / (a + b)])
    # a prompt that always prefers the first answer no longer votes for it everywhere
    assert np.argmax(cal[1]) == 1
    scores = voting.prompt_scores(d, [-1, 1])
    assert np.allclose(scores, cal @ np.array([-1, 1])) and scores[1] > scores[0]
    with pytest.raises(ValueError):
        voting.prompt_scores(d, [-1, 0, 1])


def test_mean_vote_hand_computed():
    # two prompts, three steps, Yes/No distributions [P(No), P(Yes)]
    rate = np.array(
        [
            [[0.8, 0.2], [0.6, 0.4], [0.4, 0.6]],  # prompt 0: prior (0.6, 0.4)
            [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]],  # prompt 1: says the same everywhere
        ]
    )
    pos, votes, ctx = assembly.contextual_votes(rate, [-1, 1], "mean")
    # prompt 0, step 0: p_cal ∝ (0.8/0.6, 0.2/0.4) = (4/3, 1/2) -> score (1/2 - 4/3) / (11/6) = -5/11
    # step 1: (1, 1) -> 0; step 2: (2/3, 3/2) -> (3/2 - 2/3) / (13/6) = 5/13; on the scale: 2 * score
    assert np.allclose(votes[0], [-10 / 11, 0.0, 10 / 13])
    assert np.allclose(votes[1], [0.0, 0.0, 0.0])  # a prompt without an opinion adds nothing
    assert np.allclose(ctx, [-5 / 11, 0.0, 5 / 13])  # the mean of the two
    # positions are the same as for the majority vote; the majority vote is coarser
    pos_m, votes_m, ctx_m = assembly.contextual_votes(rate, [-1, 1], "majority")
    assert np.allclose(pos, pos_m) and votes_m[0].tolist() == [-2, 0, 2]
    assert np.allclose(voting.score_scale([0.5, -1.0], [-2, -1, 0, 1, 2]), [0.5, -1.0])
    assert voting.filtered_mean([2.0, -1.0, 0.5], [True, False, True], fallback=-2.0) == (1.25, False)
    assert voting.filtered_mean([2.0, -1.0], [False, False], fallback=-0.5) == (-0.5, True)
    with pytest.raises(ValueError):
        voting.filtered_mean([1.0], [True, False], fallback=0.0)
    with pytest.raises(ValueError):
        assembly.contextual_votes(rate, [-1, 1], "median")
