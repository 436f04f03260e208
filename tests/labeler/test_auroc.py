"""Rank-based AUROC (labeler.auroc): hand-computed cases, ties, and the pairwise definition."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labeler.auroc import auroc, average_ranks


def test_average_ranks_ties():
    assert average_ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]
    assert average_ranks([5.0, 5.0, 5.0]) == [2.0, 2.0, 2.0]
    assert average_ranks([]) == []


def test_auroc_hand_computed():
    # perfect separation
    assert auroc([0.1, 0.2, 0.8, 0.9], [False, False, True, True]) == 1.0
    # perfectly inverted
    assert auroc([0.9, 0.8, 0.2, 0.1], [False, False, True, True]) == 0.0
    # pairs (pos, neg): (0.5 vs 0.1) win, (0.5 vs 0.7) loss, (0.9 vs 0.1) win, (0.9 vs 0.7) win -> 3/4
    assert auroc([0.1, 0.7, 0.5, 0.9], [False, False, True, True]) == 0.75


def test_auroc_ties_count_half():
    # all tied: chance
    assert auroc([1.0, 1.0, 1.0, 1.0], [True, False, True, False]) == 0.5
    # pos {1, 2}, neg {1, 0}: (1 vs 1) tie .5, (1 vs 0) 1, (2 vs 1) 1, (2 vs 0) 1 -> 3.5/4
    assert auroc([1.0, 2.0, 1.0, 0.0], [True, True, False, False]) == 0.875


def test_auroc_one_class_is_none_and_bad_input_raises():
    assert auroc([0.1, 0.2], [True, True]) is None
    assert auroc([], []) is None
    with pytest.raises(ValueError, match="not finite"):
        auroc([float("nan"), 1.0], [True, False])
    with pytest.raises(ValueError, match="2 scores but 1 labels"):
        auroc([1.0, 2.0], [True])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.booleans()), min_size=2, max_size=30))
def test_auroc_matches_pairwise_definition(pairs):
    scores = [float(s) for s, _ in pairs]
    labels = [y for _, y in pairs]
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    got = auroc(scores, labels)
    if not pos or not neg:
        assert got is None
        return
    want = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))
    assert math.isclose(got, want, abs_tol=1e-12)
