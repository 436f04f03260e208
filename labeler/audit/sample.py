"""Which steps an audit shows: a fixed-size sample stratified by the episode's outcome and by how much the
label channels disagree about the step, so a short audit sees successes and failures alike and spends its
marks where the channels would train different policies.

A step's disagreement is the spread of its percentile ranks across the channels (0 with one channel). The
strata (successful or failed episode) x (disagreement above or below its median) are visited in turn, each in
a seeded shuffle; a stratum that runs out leaves its turns to the others.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from labeler.auroc import average_ranks
from labeler.label_check import READS_FLAGS
from models.trajectory import Trajectory


@dataclass(frozen=True)
class StepRef:
    traj: int
    """The trajectory's index in the log."""
    step: int
    id: str
    """The trajectory's id (what a mark records)."""


def audited_channels(trajectories: Sequence[Trajectory]) -> list[str]:
    """The ``method.channel`` names every step of every trajectory carries as a number, less the ones computed
    from the success flag (returns, advantages) and ensemble weights."""
    names: set[str] | None = None
    for t in trajectories:
        for s in t.steps:
            here = {
                f"{m}.{c}"
                for m, chans in s.labels.items()
                for c, v in chans.items()
                if isinstance(v, int | float) and c not in READS_FLAGS and not c.startswith("w_")
            }
            names = here if names is None else names & here
    return sorted(names or ())


def step_value(traj: Trajectory, step: int, channel: str) -> float:
    method, _, name = channel.partition(".")
    return float(traj.steps[step].labels[method][name])


def disagreement(trajectories: Sequence[Trajectory], channels: Sequence[str]) -> list[float]:
    """Per step (in log order), the spread of its percentile ranks across ``channels``."""
    refs = [(t, i) for t in trajectories for i in range(len(t.steps))]
    if len(channels) < 2 or not refs:
        return [0.0] * len(refs)
    ranks = [average_ranks([step_value(t, i, ch) for t, i in refs]) for ch in channels]
    n = len(refs)
    return [(max(r[k] for r in ranks) - min(r[k] for r in ranks)) / n for k in range(n)]


def sample_steps(
    trajectories: Sequence[Trajectory], n: int, seed: int = 0, channels: Sequence[str] | None = None
) -> list[StepRef]:
    """``n`` steps (all when the log has fewer), stratified as the module docstring says, in audit order."""
    chans = audited_channels(trajectories) if channels is None else list(channels)
    spread = disagreement(trajectories, chans)
    refs = [StepRef(ti, i, t.id) for ti, t in enumerate(trajectories) for i in range(len(t.steps))]
    median = sorted(spread)[len(spread) // 2] if spread else 0.0
    strata: dict[tuple[bool, bool], list[StepRef]] = {}
    for ref, d in zip(refs, spread, strict=True):
        key = (bool(trajectories[ref.traj].success), d >= median and d > 0)
        strata.setdefault(key, []).append(ref)
    rng = random.Random(seed)
    queues = []
    for key in sorted(strata, reverse=True):  # successes first, high disagreement first
        q = strata[key][:]
        rng.shuffle(q)
        queues.append(q)
    out: list[StepRef] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop())
    return out
