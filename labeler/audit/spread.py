"""An audit's marks spread to every step: the channel ``audit.spread``, and how consistent the auditor was.

An audit marks a sample of a log's steps (tens to a few hundred). What a marked step did is described by the
same features the success-model potential reads (:mod:`labeler.potential.features`: the action, its
response's template, the verb with where its argument was named, whether the response is new), those shared
by every task type, counted as the potential counts them (:func:`labeler.potential.model.increments`: the
action, and the action with its outcome, only the first time its episode does it). Each feature gets the
mean of the marks of the marked steps that show it, less the mean of all marks, shrunk toward zero by
:data:`SHRINK` marks (``w_f = sum(mark - mean) / (count + SHRINK)``, a mark being 1 for ``progress`` and 0
for ``harmful`` or ``neither``); a step's value is its best feature's weight, ties broken by the sum of its
features' weights (:data:`TIE_BREAK`).

**Cross-fitted**: trajectories are dealt into folds stratified by their success flag; each fold's steps are
valued by the weights of the other folds' marks, so a marked step's value never comes from its own mark nor
from its episode's. The AUROC of those held-out values against the marks is the auditor's **consistency**:
whether the auditor marks what a step did the same way in other episodes. A person's marks are taken as
they are; a judge whose marks the steps' own features cannot predict on held-out episodes is rating something
else than what the steps did (:data:`labeler.audit.agreement.MIN_JUDGE_CONSISTENCY`).

Measured on the label protocol's logs (docs/benchmarks/label-logs.md), 200 steps marked by the embedded judge:
the spread channel ranks the steps of every TextWorld log at 0.84-0.95 per-step AUROC against score progress,
above every judge-free channel on each of the eight (TWC easy 0.92-0.95 where the best of them is 0.61); on
ScienceWorld, where the judge's marks barely track progress, it ranks them at 0.39-0.76. Marks that are always
right (the logs' own score progress) spread from 200 steps rank every log's steps at 0.82-0.98.

Pure Python: a few hundred marks over a few thousand steps take milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from labeler.auroc import auroc
from labeler.folds import crossfit_splits
from labeler.potential.features import step_features
from labeler.potential.model import increments
from models.trajectory import Trajectory

METHOD, NAME = "audit", "spread"
CHANNEL = f"{METHOD}.{NAME}"
"""The channel the spread marks are written as (``edgejudge label spread``)."""
SHRINK = 2.0
"""Marks' worth of zero every feature's weight starts from: a feature one marked step showed weighs a third of
its mark's difference from the mean."""
TIE_BREAK = 0.01
"""The weight of the sum of a step's feature weights beside its best one."""
FOLDS = 5
SHARED = "*|"
"""The features' scope every task type shares (:mod:`labeler.potential.features`)."""


@dataclass(frozen=True)
class Spread:
    values: list[list[float]]
    """Per trajectory, per step, the held-out value of the marks."""
    marked: int
    """Marks the fit read (``progress``, ``harmful`` or ``neither`` on a step of the log)."""
    consistency: float | None
    """The AUROC of the marked steps' held-out values, progress against the other marks; None with no mark of
    one kind."""


def step_names(traj: Trajectory) -> list[set[str]]:
    """Per step, the shared features its increment counts (see the module docstring)."""
    return [{n for n in inc if n.startswith(SHARED)} for inc in increments(list(step_features(traj)))]


def weights(marked: Sequence[tuple[set[str], float]]) -> dict[str, float]:
    """Each feature's shrunk mean difference of the marks of the steps that show it (see the module
    docstring); ``marked``: per marked step, its features and its mark (1 progress, 0 other)."""
    if not marked:
        return {}
    mean = sum(y for _, y in marked) / len(marked)
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for names, y in marked:
        for n in names:
            total[n] = total.get(n, 0.0) + y - mean
            count[n] = count.get(n, 0) + 1
    return {n: total[n] / (count[n] + SHRINK) for n in total}


def value(names: set[str], w: Mapping[str, float]) -> float:
    """A step's value: its best feature's weight plus :data:`TIE_BREAK` times their sum (0 with none)."""
    ws = [w.get(n, 0.0) for n in names]
    return max(ws, default=0.0) + TIE_BREAK * sum(ws)


def spread(
    trajectories: Sequence[Trajectory], progress: Mapping[tuple[str, int], bool], seed: int = 0
) -> Spread:
    """The marks ``progress`` (per ``(trajectory id, step)``: marked progress or not) spread to every step of
    ``trajectories``, cross-fitted (see the module docstring)."""
    feats = [step_names(t) for t in trajectories]
    index = {t.id: i for i, t in enumerate(trajectories)}
    labels = {
        (index[tid], step): float(p)
        for (tid, step), p in progress.items()
        if tid in index and 0 <= step < len(trajectories[index[tid]].steps)
    }
    values = [[0.0] * len(t.steps) for t in trajectories]
    success = [bool(t.success) for t in trajectories]
    k = min(FOLDS, len(trajectories))
    if k >= 2:
        for fit_on, held in crossfit_splits(success, k, seed):
            inside = set(fit_on)
            w = weights([(feats[ti][st], y) for (ti, st), y in labels.items() if ti in inside])
            for ti in held:
                values[ti] = [value(names, w) for names in feats[ti]]
    held_out = [(values[ti][st], y > 0.5) for (ti, st), y in labels.items()]
    figure = auroc([v for v, _ in held_out], [p for _, p in held_out]) if held_out else None
    return Spread(values, len(labels), figure)
