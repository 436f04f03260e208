"""What a dataset file holds, for ``edgejudge data``: its summary numbers, and which state layout its
trajectories are read with and why (:mod:`models.trajectory` reads them)."""

from __future__ import annotations

import os
from typing import Any

from models.log_layout import INFERRED_KEY
from models.state_layout import LEGACY_LAYOUT, LEGACY_STATE_FORMAT, StateLayout
from models.trajectory import ReadReport, file_layout, iter_trajectories


def layout_summary(path: str | os.PathLike[str]) -> str:
    """One line: which layout ``path``'s trajectories are read with, and why (from its first trajectory)."""
    first = next(iter_trajectories(path, skip_invalid=True, layouts=False))
    meta = first.meta
    if meta.get("state_layout"):
        layout = StateLayout.from_dict(meta["state_layout"])
        names = ", ".join(p.label for p in layout.parts) or "none (plain text)"
        if meta.get(INFERRED_KEY):
            return f"inferred when an earlier stage read it: {meta[INFERRED_KEY]}"
        return f"recorded by its writer (parts: {names})"
    if meta.get("state_format") == LEGACY_STATE_FORMAT:
        parts = ", ".join(p.label for p in LEGACY_LAYOUT.parts)
        return f"{LEGACY_STATE_FORMAT}, the state format it names ({parts})"
    inferred = file_layout(path)
    assert inferred is not None
    return f"none recorded; inferred: {inferred[1]}"


def dataset_stats(path: str | os.PathLike[str], *, skip_invalid: bool = False) -> dict[str, Any]:
    """Summary numbers of a dataset, computed in one streaming pass."""
    report = ReadReport()
    n = steps = successes = max_len = cands = 0
    task_types: dict[str, int] = {}
    label_channels: set[str] = set()
    for t in iter_trajectories(path, skip_invalid=skip_invalid, report=report, layouts=False):
        n += 1
        steps += len(t.steps)
        successes += int(t.success)
        max_len = max(max_len, len(t.steps))
        cands += sum(len(s.candidates) for s in t.steps)
        task_types[t.task_type] = task_types.get(t.task_type, 0) + 1
        for s in t.steps:
            for method, chans in s.labels.items():
                label_channels.update(f"{method}.{c}" for c in chans)
    return {
        "path": str(path),
        "trajectories": n,
        "steps": steps,
        "success_rate": successes / n,
        "successes": successes,
        "mean_length": steps / n,
        "max_length": max_len,
        "mean_candidates": cands / steps,
        "task_types": dict(sorted(task_types.items())),
        "label_channels": sorted(label_channels),
        "skipped_lines": report.skipped,
    }
