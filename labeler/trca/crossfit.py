"""A held-out check of a success-grounded rubric: build it without some episodes, label those, compare.

The builder reads the success flags, so a rubric's rewards on the episodes it was built from are in-sample.
:func:`crossfit_check` splits the trajectories into k folds (:mod:`labeler.folds`), builds a rubric
from every other fold with the same judge (its answers are cached, so repeated tags cost nothing), labels the
held-out fold with it, and checks the held-out mean rewards per step against the success flags
(:func:`labeler.label_check.heldout_check`). ``info`` is never read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from labeler.folds import crossfit_splits
from labeler.label_check import ChannelCheck, heldout_check
from labeler.trca.build import BuildConfig, Scorer, build_rubric
from labeler.trca.checks import CompiledRubric
from labeler.trca.pipeline import TRCAConfig, label_trajectory_rewards
from models.trajectory import Trajectory


def crossfit_check(
    trajectories: Sequence[Trajectory],
    judge: Scorer,
    cfg: BuildConfig,
    folds: int = 2,
    trca: TRCAConfig | None = None,
    seed: int = 0,
) -> ChannelCheck | None:
    """The held-out check of ``trca.total`` (None when a class has fewer than ``folds`` trajectories)."""
    trajs = [t for t in trajectories if t.task_type == cfg.task_type]
    y = [bool(t.success) for t in trajs]
    if folds < 2 or min(sum(y), len(y) - sum(y)) < folds:
        return None
    trca = trca or TRCAConfig()
    quiet = dataclasses.replace(cfg, progress=False)
    mean = [0.0] * len(trajs)
    for fit_on, fold in crossfit_splits(y, folds, seed):
        rubric = build_rubric([trajs[i] for i in fit_on], judge, quiet).rubric
        cr = CompiledRubric(rubric)
        for i in fold:
            rewards, _, _ = label_trajectory_rewards(trajs[i], cr, trca)
            mean[i] = sum(r.total for r in rewards) / max(len(rewards), 1)
    return heldout_check("trca.total", mean, y)
