"""How a log is read when it is not what its writer meant: which trajectories need an inferred state layout,
the ``meta`` key that says it was inferred, and the one notice per file that says so (``models.trajectory``
infers it, :func:`models.trajectory.file_layout`); and the one notice for a last line a power loss cut."""

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


_torn_noticed: set[tuple[str, int, int]] = set()


def torn_notice(path: str | os.PathLike[str], line: int, size: int) -> None:
    """Say on stderr, once per file version and process, that the file ends inside line ``line`` (``size``
    bytes of it), left out."""
    p = Path(path).resolve()
    key = (str(p), p.stat().st_size, line)
    if key in _torn_noticed:
        return
    _torn_noticed.add(key)
    print(
        f"{path}:{line}: torn line: the file ends inside it ({size} bytes, not complete JSON, e.g. a power "
        "loss while it was written); left out, every complete line before it is read",
        file=sys.stderr,
    )
