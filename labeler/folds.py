"""The cross-fit folds the labelers share: trajectories dealt into k folds stratified by the success flag,
so that each trajectory can be labeled (or checked) by a model fit without it.

Used by the success-model potential (:func:`labeler.potential.model.crossfit`), TRCA's held-out rubric check
(:mod:`labeler.trca.crossfit`) and COREN's orchestrator check (:mod:`labeler.coren.orchestrator`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np


def folds_of(success: Sequence[bool], k: int, seed: int = 0) -> list[list[int]]:
    """k folds of trajectory indices, stratified by the success flag (each class dealt out in turn after a
    seeded shuffle). Fewer than k members of a class leave some folds without it."""
    rng = np.random.default_rng(seed)
    folds: list[list[int]] = [[] for _ in range(k)]
    for cls in (True, False):
        idx = [i for i, s in enumerate(success) if bool(s) == cls]
        rng.shuffle(idx)
        for j, i in enumerate(idx):
            folds[j % k].append(int(i))
    return [sorted(f) for f in folds]


def crossfit_splits(success: Sequence[bool], k: int, seed: int = 0) -> Iterator[tuple[list[int], list[int]]]:
    """``(fit, held)`` per fold of :func:`folds_of`: the indices a model is fit on (every other fold, in
    order) and the fold it labels."""
    for held in folds_of(success, k, seed):
        out = set(held)
        yield [i for i in range(len(success)) if i not in out], held
