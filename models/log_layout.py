"""How a log's state layout is found when its writer recorded none: which trajectories need one, the
``meta`` key that says it was inferred, and the one notice per file that says so (``models.trajectory`` infers
it, :func:`models.trajectory.file_layout`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from models.state_layout import LEGACY_STATE_FORMAT

LAYOUT_SAMPLE = 64
"""Trajectories a file's layout is inferred from (its first ones without a recorded layout)."""
INFERRED_KEY = "state_layout_inferred"
"""``meta`` key: why the recorded layout was inferred (absent when the log's writer recorded it)."""
_noticed: set[tuple[str, str]] = set()


def needs_layout(meta: dict[str, Any]) -> bool:
    """Whether a trajectory records no layout and no state format that implies one."""
    return not meta.get("state_layout") and meta.get("state_format") != LEGACY_STATE_FORMAT


def layout_notice(path: str | os.PathLike[str], reason: str, *, earlier: bool = False) -> None:
    """Say once per file and process, on stderr, which layout a file is read with and why."""
    key = (str(Path(path).resolve()), reason)
    if key in _noticed:
        return
    _noticed.add(key)
    how = "inferred when an earlier stage read it" if earlier else "inferred"
    print(
        f"{path}: no state layout recorded; {how}: {reason} (review or declare one with 'edgejudge data "
        "layout')",
        file=sys.stderr,
    )
