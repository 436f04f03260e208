"""TRCA rewards against hand-computed examples."""

from __future__ import annotations

import pytest

from labeler.trca.rewards import trajectory_rewards

# items: 0, 1 evidence (M=2); 2 execution (M=1); 3, 4 invalidity (M=2)
CATS = ["evidence", "evidence", "execution", "invalidity", "invalidity"]


ALL = [0, 1, 2, 3, 4]


HITS = [
    [(0, frozenset({"apple"}))],  # t0: evidence about the apple, first time
    [(0, frozenset({"apple"}))],  # t1: the same again: foundational yes, breakthrough no
    [(0, frozenset({"pear"})), (2, frozenset({""}))],  # t2: evidence about a new binding + execution
    [(3, frozenset({""}))],  # t3: one invalidity
    [
        (3, frozenset({""})),
        (4, frozenset({""})),
        (2, frozenset({""})),
    ],  # t4: two invalidity + repeated execution
]


def test_foundational_is_signed_sum_scaled_by_category_size():
    r = trajectory_rewards(HITS, CATS, ALL, lam=0.8)
    assert [x.foundational for x in r] == pytest.approx([0.5, 0.5, 1.5, -0.5, 0.0])


def test_breakthrough_credits_only_the_first_time_per_binding():
    r = trajectory_rewards(HITS, CATS, ALL, lam=0.8)
    assert [x.breakthrough for x in r] == pytest.approx([0.5, 0.0, 1.5, 0.0, 0.0])
    phi = [sum(x.breakthrough for x in r[: t + 1]) for t in range(len(r))]
    assert phi == pytest.approx([0.5, 0.5, 2.0, 2.0, 2.0])  # cumulative coverage of positive items


def test_invalidity_is_negative_and_never_a_breakthrough():
    r = trajectory_rewards([[(3, frozenset({""}))], [(4, frozenset({"x"}))]], CATS, ALL, lam=0.5)
    assert [x.foundational for x in r] == pytest.approx([-0.5, -0.5])
    assert [x.breakthrough for x in r] == [0.0, 0.0]
    assert all(x.total < 0 for x in r)


@pytest.mark.parametrize(
    "lam, expected",
    [
        (0.8, [0.5, 0.1, 1.5, -0.1, 0.0]),  # 0.2 r^F + 0.8 r^B
        (0.0, [0.5, 0.5, 1.5, -0.5, 0.0]),  # r^F only
        (1.0, [0.5, 0.0, 1.5, 0.0, 0.0]),  # r^B only
        (0.5, [0.5, 0.25, 1.5, -0.25, 0.0]),
    ],
)
def test_lambda_mixing(lam, expected):
    assert [x.total for x in trajectory_rewards(HITS, CATS, ALL, lam=lam)] == pytest.approx(expected)


def test_one_over_m_uses_only_items_active_for_the_instruction():
    # with item 1 inactive (a per-instruction item of another instruction), evidence has M=1
    r = trajectory_rewards([[(0, frozenset({""}))]], CATS, [0, 2, 3, 4], lam=0.0)
    assert r[0].foundational == pytest.approx(1.0)


def test_lambda_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="lambda"):
        trajectory_rewards(HITS, CATS, ALL, lam=1.5)
