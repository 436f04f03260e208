"""The cross-fit folds: stratified by the success flag, seeded, and every other fold to fit on."""

from __future__ import annotations

from labeler.folds import crossfit_splits, folds_of


def test_folds_are_stratified():
    folds = folds_of([True] * 4 + [False] * 6, 2, seed=1)
    assert sorted(folds[0] + folds[1]) == list(range(10))
    assert [sum(i < 4 for i in f) for f in folds] == [2, 2]
    three = folds_of([True, True, True, False, False, False], 3, seed=0)
    assert all(sum(i < 3 for i in f) == 1 and len(f) == 2 for f in three)  # one success, one failure each


def test_folds_are_seeded_and_a_small_class_leaves_some_folds_without_it():
    success = [True, False, False, False, True, False, False]
    assert folds_of(success, 3, seed=4) == folds_of(success, 3, seed=4)
    folds = folds_of(success, 3, seed=0)
    assert sorted(i for f in folds for i in f) == list(range(7))
    assert sum(any(success[i] for i in f) for f in folds) == 2  # two successes: one fold has none


def test_each_split_fits_on_every_other_fold_in_order():
    success = [True] * 3 + [False] * 5
    splits = list(crossfit_splits(success, 2, seed=3))
    assert [held for _, held in splits] == folds_of(success, 2, seed=3)
    for fit_on, held in splits:
        assert fit_on == sorted(set(range(8)) - set(held))
