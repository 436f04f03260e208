"""What a learner declares: its config, the data it selects, the labels it needs, how it trains.

A learner is one module under :mod:`policy.training.learners` that ends with ``LEARNER = Learner(...)``, and
one line in :mod:`policy.training.learners.registry`. :func:`policy.training.train.train_from_file` reads
nothing else: every hook has a default that suits a learner training on every transition of the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from policy.training.buffer import TransitionTable
from policy.training.common import TrainResult
from policy.training.learners.registry import ConfigError

__all__ = ["ConfigError", "Learner"]


def _as_torch(table: TransitionTable, _cfg: Any) -> Any:
    return table.to_torch()


def _same(data: Any, _cfg: Any) -> Any:
    return data


def _nothing(*_args: Any) -> None:
    return None


@dataclass(frozen=True)
class Learner:
    name: str
    config: type
    """Its dataclass config (the scorer's options, :class:`policy.training.buffer.ScorerOptions`, and its
    own); ``--set KEY=VALUE`` overrides its fields."""
    train: Callable[..., TrainResult]
    """``train(rows, cfg, *, dim, progress) -> TrainResult`` on what :attr:`rows` gives."""
    rows: Callable[[TransitionTable, Any], Any] = _as_torch
    """What :attr:`train` takes from the table: by default all of it, as torch tensors."""
    trained: Callable[[TransitionTable, Any], TransitionTable] = _same
    """The table's rows it trained on (the checkpoint's provenance and the summary)."""
    needs_labels: Callable[[Any], str | None] = _nothing
    """Why a config of it reads dense labels (``credit reads what the labels call harmful``), or None when
    the success flag will do."""
    check: Callable[[Any], None] = _nothing
    """Raises :class:`ConfigError` for a config that cannot train (beyond the fields' types)."""
    episodes: Callable[[list, Any], list] = _same
    """The trajectories it learns from, out of the file's (e.g. loop-erased successful paths)."""
    table_options: Callable[[Any, Any], dict[str, Any]] = lambda _cfg, _spec: {}
    """Extra arguments of :func:`policy.training.buffer.build_table` from (config, reward spec): per-step
    weights, a stored channel read as weights."""
    selection: Callable[[Any], list[str]] = lambda _cfg: []
    """What chose the trained transitions, for the summary (``["filter=success"]``); empty: all of them."""
    checkpoint_name: Callable[[Any], str] | None = None
    """The algorithm name recorded in the checkpoint (default: :attr:`name`)."""

    def recorded_name(self, cfg: Any) -> str:
        return self.checkpoint_name(cfg) if self.checkpoint_name else self.name
