"""A labeled log for the audit's tests: episodes whose steps carry two channels, one that credits the steps
that made progress (``good.r``) and one that credits the others (``bad.r``)."""

from __future__ import annotations

from pathlib import Path

from models.trajectory import Step, Trajectory


def labeled_log(n: int = 6, steps: int = 4) -> list[Trajectory]:
    out = []
    for i in range(n):
        success = i % 2 == 0
        rows = []
        for t in range(steps):
            moved = (t + i) % 2 == 0  # the step that made progress
            rows.append(
                Step(
                    observation=f"Room {i}.{t}: a table, a box.",
                    action=f"put thing {t} in box" if moved else "look",
                    candidates=["look", f"put thing {t} in box"],
                    next_observation=f"Room {i}.{t + 1}: you did it {t}." if moved else "Nothing happens.",
                    labels={
                        "good": {"r": 1.0 if moved else 0.0, "advantage": 5.0},
                        "bad": {"r": 0.0 if moved else 1.0, "w_x": 0.5},
                    },
                )
            )
        out.append(Trajectory(f"ep{i}", "put every thing in the box", "toy", success, rows))
    return out


def mark_truly(marks: Path, trajectories: list[Trajectory], by: str = "person") -> None:
    """Mark every step of ``trajectories`` as it is: ``progress`` for the steps that moved, ``neither`` for
    the looks (the marks that support ``good.r``)."""
    from labeler.audit.marks import Mark, append_mark

    for t in trajectories:
        for i, s in enumerate(t.steps):
            append_mark(marks, Mark(t.id, i, "neither" if s.action == "look" else "progress", by=by))
