"""The judge's load options (:class:`JudgeConfig`) and the default thread count (``$EDGEJUDGE_THREADS``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from labeler.judge.errors import JudgeError


def default_threads() -> int:
    """``$EDGEJUDGE_THREADS`` (default 1)."""
    raw = os.environ.get("EDGEJUDGE_THREADS", "1")
    try:
        n = int(raw)
    except ValueError:
        raise JudgeError(f"EDGEJUDGE_THREADS={raw!r}: expected a positive integer") from None
    if n < 1:
        raise JudgeError(f"EDGEJUDGE_THREADS={raw!r}: expected a positive integer")
    return n


@dataclass
class JudgeConfig:
    n_ctx: int = 2048
    n_batch: int = 512
    n_threads: int = 1
    n_threads_batch: int = 1
    n_gpu_layers: int = 0
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
