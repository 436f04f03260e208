"""The one success-scarce rule: the first successful and the first failed episodes, in file order; nested
across sizes, deterministic, never above the rate, a clear error when the file has too few failed episodes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labeler.subset import SubsetError, most_episodes, pool_is_enough, scarce_subset, successes_allowed

RATES = st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 1.0])


def _pool(flags):
    return [SimpleNamespace(success=f, i=i) for i, f in enumerate(flags)]


@given(st.lists(st.booleans(), min_size=1, max_size=80), st.integers(1, 40), st.integers(1, 40), RATES)
def test_subsets_are_nested_first_k_and_success_scarce(flags, a, b, rate):
    trajs = _pool(flags)
    small, big = sorted((a, b))
    succ, fail = [t.i for t in trajs if t.success], [t.i for t in trajs if not t.success]
    k = min(len(succ), successes_allowed(big, rate))
    assert pool_is_enough(trajs, big, rate) == (
        len(succ) >= successes_allowed(big, rate) and len(fail) >= big - successes_allowed(big, rate)
    )
    if len(fail) < big - k:
        with pytest.raises(SubsetError, match=f"need {big - k} failed episodes"):
            scarce_subset(trajs, big, rate)
        return
    sub_small, sub_big = scarce_subset(trajs, small, rate), scarce_subset(trajs, big, rate)
    assert len(sub_big) == big and sum(t.success for t in sub_big) <= rate * big + 1e-9
    # the first k successes and the first big - k failures, in file order
    assert [t.i for t in sub_big] == sorted(succ[:k] + fail[: big - k])
    assert {t.i for t in sub_small} <= {t.i for t in sub_big}  # nested
    assert [t.i for t in scarce_subset(trajs, big, rate)] == [t.i for t in sub_big]  # deterministic


def test_fewer_successes_than_allowed_are_filled_with_failures_and_the_error_says_what_is_missing():
    trajs = _pool([False] * 8 + [True])
    assert [t.i for t in scarce_subset(trajs, 8, 0.5)] == [0, 1, 2, 3, 4, 5, 6, 8]  # 1 success, 7 failures
    with pytest.raises(SubsetError) as e:
        scarce_subset(_pool([True] * 6 + [False] * 2), 5, 0.2)
    assert str(e.value) == (
        "5 episodes with at most 20% successful need 4 failed episodes (and 1 successful); "
        "the file holds 2 failed and 6 successful"
    )


@given(st.lists(st.booleans(), max_size=80), RATES)
def test_the_largest_subset_keeps_every_failure_and_the_first_successes_the_rate_allows(flags, rate):
    """What the policy benchmark's own cut gave (drop the last successes until at most ``rate`` succeed),
    now one size of the same rule."""
    trajs = _pool(flags)
    fails = [t for t in trajs if not t.success]
    succ = [t for t in trajs if t.success]
    keep = int(rate * len(fails) / (1 - rate)) if rate < 1 else len(succ)
    dropped_last = [t.i for t in trajs if not t.success or t in succ[:keep]]
    n = most_episodes(trajs, rate)
    assert [t.i for t in scarce_subset(trajs, n, rate)] == dropped_last
    with pytest.raises(SubsetError):  # it is the largest: one more episode breaks the rate or lacks a failure
        scarce_subset(trajs, n + 1, rate)
