"""Training entry point: dataset -> features -> one learner -> checkpoint (+ curves).

The learners are those of :mod:`policy.training.learners.registry`; each declares its config, the data it
selects and the labels it needs (:class:`policy.training.learners.base.Learner`), so nothing here names one.
Config overrides are ``key=value`` strings checked against the learner's dataclass fields (unknown keys are
errors, values are parsed to the field's type).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.inputs.candidates import parts_of
from models.log_set import describe_logs, read_logs
from policy.encoders.features import TextEmbedder
from policy.training.augment import augment as entity_swaps
from policy.training.buffer import TOKEN_LENGTH, build_table
from policy.training.common import TrainResult, save_checkpoint, set_threads
from policy.training.learners.registry import ConfigError, learner
from policy.training.rewards import RewardSpec, parse_reward
from policy.worlds.adapters.recorded import dataset_world

__all__ = ["ConfigError", "TrainRun", "make_config", "parse_overrides", "train_from_file"]


def selection(lrn: Any, cfg: Any, augment: int) -> str | None:
    """What chose (or added) the trained transitions, for the summary; None: the dataset as it is."""
    parts = lrn.selection(cfg)
    parts += (
        [f"up to {augment} renamed {'copy' if augment == 1 else 'copies'} of each episode"] if augment else []
    )
    return ", ".join(parts) or None


def _value(algo: str, key: str, default: Any, raw: Any) -> Any:
    """``raw`` parsed to the type of the field's ``default``."""
    try:
        if isinstance(default, bool):
            if str(raw).lower() not in ("true", "false", "1", "0"):
                raise ValueError(raw)
            return str(raw).lower() in ("true", "1")
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
        return str(raw)
    except ValueError:
        raise ConfigError(f"{algo} config {key}={raw!r}: expected {type(default).__name__}") from None


def make_config(algo: str, overrides: dict[str, Any]) -> Any:
    """The config of learner ``algo`` with ``overrides`` (field name -> value or its text), checked."""
    lrn = learner(algo)
    fields = {f.name: f for f in dataclasses.fields(lrn.config)}
    values: dict[str, Any] = {}
    for key, raw in overrides.items():
        if key not in fields:
            raise ConfigError(f"unknown {algo} config key {key!r}: expected one of {', '.join(fields)}")
        values[key] = _value(algo, key, fields[key].default, raw)
    cfg = lrn.config(**values)
    lrn.check(cfg)
    try:
        parts_of(cfg.candidate_features)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return cfg


def parse_overrides(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"bad config override {item!r}: expected key=value")
        out[key.strip()] = value.strip()
    return out


@dataclass
class TrainRun:
    result: TrainResult
    checkpoint: Path
    transitions: int
    """Transitions the algorithm trained on (after its filters; steps without candidates are no decision)."""
    episodes: int
    """Episodes those transitions come from."""
    dataset_episodes: int
    dataset_steps: int
    selection: str | None
    """What chose the trained transitions out of the dataset (e.g. ``filter=success``); None: all of them."""
    seconds: float
    embed_seconds: float
    update_seconds: float
    """The algorithm's updates alone (no reading, embedding or saving)."""
    texts_embedded: int

    def trained_on(self) -> str:
        """``"1203 transitions of 40 episodes (filter=success of 120 episodes, 3154 steps)"``: what the
        algorithm trained on, and the dataset when that is not all of it."""
        text = f"{self.transitions} transitions of {self.episodes} episodes"
        if self.selection or (self.transitions, self.episodes) != (self.dataset_steps, self.dataset_episodes):
            how = f"{self.selection} of " if self.selection else "of "
            text += f" ({how}{self.dataset_episodes} episodes, {self.dataset_steps} steps in the dataset)"
        return text


def train_from_file(
    data: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    algo: str,
    reward: str | RewardSpec,
    out: str | os.PathLike[str],
    overrides: dict[str, Any] | None = None,
    encoder: str = "all-MiniLM-L6-v2",
    skip_invalid: bool = False,
    progress: bool | None = None,
    embedder: TextEmbedder | None = None,
    augment: int = 0,
) -> TrainRun:
    """Train ``algo`` on the logs ``data`` (a file or a folder, or several: one set of episodes,
    :func:`models.log_set.read_logs`) and write the checkpoint ``out``. ``augment``: renamed copies of each
    episode to train on besides it (:mod:`policy.training.augment`)."""
    set_threads()
    lrn = learner(algo)
    cfg = make_config(algo, overrides or {})
    spec = parse_reward(reward) if isinstance(reward, str) else reward
    why = lrn.needs_labels(cfg)
    if why and spec.is_sparse:
        raise ConfigError(f"{why}: give a dense --reward (e.g. trca)")
    all_trajs = read_logs(data, skip_invalid=skip_invalid)
    trajs = lrn.episodes(all_trajs, cfg)
    if augment:
        trajs = entity_swaps(trajs, augment, seed=cfg.seed)
    t0 = time.perf_counter()
    embedder = embedder or TextEmbedder(encoder, progress=progress)
    before = embedder.computed
    table = build_table(
        trajs,
        embedder,
        spec,
        candidate_features=cfg.candidate_features,
        encoding=cfg.encoding,
        token_source=embedder.token_source(TOKEN_LENGTH) if cfg.reader == "tokens" else None,
        **lrn.table_options(cfg, spec),
    )
    t_embed = time.perf_counter() - t0
    t_updates = time.perf_counter()
    result = lrn.train(lrn.rows(table, cfg), cfg, dim=embedder.dim, progress=progress)
    table = lrn.trained(table, cfg)
    t_updates = time.perf_counter() - t_updates
    trained_episodes = len(np.unique(table.episode))
    judge = {
        m: p.get("judge_sha256") for t in trajs for m, p in t.provenance.items() if p.get("judge_sha256")
    }
    provenance = {
        "dataset": describe_logs(data),
        "dataset_trajectories": len(all_trajs),
        "dataset_success_rate": sum(t.success for t in all_trajs) / len(all_trajs),
        "trained_transitions": len(table),
        "trained_episodes": trained_episodes,
        "reward": spec.name,
        "detour_penalty": spec.detour_penalty,
        "terminal_bonus": None if spec.is_sparse else spec.terminal_bonus,
        "judge_sha256": judge or None,
        "encoder": embedder.encoder.name,
        "encoder_sha256": embedder.encoder.sha256,
        "seed": cfg.seed,
        "augment": augment,
        "world": dataset_world(all_trajs),
    }
    ckpt = save_checkpoint(
        out,
        result.model,
        algo=lrn.recorded_name(cfg),
        algo_config=result.config,
        reward=spec.name,
        provenance=provenance,
        curves=result.curves,
    )
    return TrainRun(
        result=result,
        checkpoint=ckpt,
        transitions=len(table),
        episodes=trained_episodes,
        dataset_episodes=len(all_trajs),
        dataset_steps=sum(len(t.steps) for t in all_trajs),
        selection=selection(lrn, cfg, augment),
        seconds=time.perf_counter() - t0,
        embed_seconds=t_embed,
        update_seconds=t_updates,
        texts_embedded=embedder.computed - before,
    )
