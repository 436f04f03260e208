"""One way for a labeler to write its labels: a method's channels onto every step of a trajectory
(``step.labels[method][channel]``), the method's provenance onto the trajectory
(``trajectory.provenance[method]``), the file written atomically through
:class:`models.trajectory.TrajectoryWriter` (nothing appears at the path unless every trajectory was
written), and the label check a labeling command closes with. Labels of other methods on the steps are kept.

TRCA streams (:func:`labeler.trca.pipeline.label_file` writes each trajectory through a :class:`LabelWriter`
as pass 2 labels it); COREN and the potential label a log in memory and hand it to :func:`write_labeled`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from labeler.label_check import check_channels, format_checks, step_credit
from models.channel_choice import choice_path
from models.trajectory import Trajectory, TrajectoryWriter, read_trajectories

Channels = Mapping[str, Any]
"""One step's labels of one method: channel name -> value."""


def put_labels(
    traj: Trajectory, method: str, channels: Sequence[Channels], provenance: Mapping[str, Any]
) -> Trajectory:
    """Put ``method``'s channels on ``traj``'s steps (one mapping a step, in order) and a copy of its
    provenance on ``traj``; returns ``traj``."""
    if len(channels) != len(traj.steps):
        raise ValueError(f"{traj.id}: {len(channels)} steps of {method} labels for {len(traj.steps)} steps")
    for step, labels in zip(traj.steps, channels, strict=True):
        step.labels[method] = dict(labels)
    traj.provenance[method] = dict(provenance)
    return traj


class LabelWriter:
    """``with LabelWriter(path, method) as w: w.write(traj, channels, provenance)``: each trajectory labeled
    (:func:`put_labels`) and streamed to ``path``'s temp file, which replaces ``path`` on a clean exit; an
    exception inside the block leaves ``path`` as it was."""

    def __init__(self, path: str | os.PathLike[str], method: str):
        self.method = method
        self._out = TrajectoryWriter(path)

    @property
    def count(self) -> int:
        return self._out.count

    def write(self, traj: Trajectory, channels: Sequence[Channels], provenance: Mapping[str, Any]) -> None:
        self._out.write(put_labels(traj, self.method, channels, provenance))

    def __enter__(self) -> LabelWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._out.__exit__(exc_type, exc, tb)
        if exc_type is None:
            # A channel an audit chose for the labels this file held before is no choice for these: the
            # closing check says the step credit is unverified until they are audited again.
            choice_path(self._out.path).unlink(missing_ok=True)


def write_labeled(
    path: str | os.PathLike[str],
    method: str,
    labeled: Iterable[tuple[Trajectory, Sequence[Channels], Mapping[str, Any]]],
) -> int:
    """Write ``(trajectory, its steps' channels, provenance)`` triples as one labeled file; returns the
    count."""
    with LabelWriter(path, method) as writer:
        for traj, channels, provenance in labeled:
            writer.write(traj, channels, provenance)
    return writer.count


def closing_check(
    path: str | os.PathLike[str], channel: str, trajectories: Sequence[Trajectory] | None = None
) -> str:
    """What a labeling command prints after writing ``path``: the label check
    (:mod:`labeler.label_check`) of the ``channel`` it added, over ``trajectories`` (default: read back from
    ``path``), closed by what the check cannot say (:func:`labeler.label_check.step_credit`: the channel a
    step audit supports, or that step credit is unverified); empty when no step carries the channel."""
    trajs = read_trajectories(path) if trajectories is None else trajectories
    checks = check_channels(trajs, [channel])
    return f"{format_checks(checks, str(path))}\n{step_credit(path)}" if checks else ""
