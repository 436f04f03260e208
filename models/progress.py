"""Progress bars for long work: on stderr, shown on a terminal, silent in pipes and CI unless asked for."""

from __future__ import annotations

import sys
from typing import Any


def progress(total: int | None = None, *, enabled: bool | None = None, **kwargs: Any):
    """A tqdm bar; ``enabled=None`` shows it only when stderr is a terminal."""
    from tqdm import tqdm

    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=total, disable=not enabled, file=sys.stderr, dynamic_ncols=True, **kwargs)
