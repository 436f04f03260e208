"""The judge's load options (:class:`JudgeConfig`, checked by :func:`judge_config`; threads default to
``$EDGEJUDGE_THREADS`` through :func:`models.settings.threads`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from labeler.judge.errors import JudgeError
from models import settings


@dataclass
class JudgeConfig:
    n_ctx: int = 2048
    n_batch: int = 512
    n_threads: int = 1
    n_threads_batch: int = 1
    n_gpu_layers: int = 0
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def judge_config(
    *,
    n_threads: int | None,
    n_threads_batch: int | None,
    n_ctx: int,
    n_gpu_layers: int,
    n_batch: int,
    seed: int,
) -> JudgeConfig:
    """The load options, checked: threads default to ``$EDGEJUDGE_THREADS`` (batch threads to ``n_threads``),
    counts must be positive, ``n_gpu_layers`` >= -1 (-1: all); ``n_batch`` is capped at ``n_ctx``."""
    try:
        threads = n_threads if n_threads is not None else settings.threads()
    except settings.SettingError as e:  # a bad option of this judge, like the checks below
        raise JudgeError(str(e)) from None
    threads_batch = n_threads_batch if n_threads_batch is not None else threads
    for name, v in (
        ("n_threads", threads),
        ("n_threads_batch", threads_batch),
        ("n_ctx", n_ctx),
        ("n_batch", n_batch),
    ):
        if not isinstance(v, int) or v < 1:
            raise JudgeError(f"{name} must be a positive integer, got {v!r}")
    if not isinstance(n_gpu_layers, int) or n_gpu_layers < -1:
        raise JudgeError(f"n_gpu_layers must be an integer >= -1 (-1: all), got {n_gpu_layers!r}")
    return JudgeConfig(
        n_ctx=n_ctx,
        n_batch=min(n_batch, n_ctx),
        n_threads=threads,
        n_threads_batch=threads_batch,
        n_gpu_layers=n_gpu_layers,
        seed=seed,
    )
