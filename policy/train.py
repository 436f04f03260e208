"""Training entry point: dataset -> features -> one algorithm -> checkpoint (+ curves).

``ALGOS`` maps a name to (module, config class). Config overrides are ``key=value`` strings checked against
the
dataclass fields (unknown keys are errors, values are parsed to the field's type).
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from labeler.dataset import read_trajectories
from models.inputs.candidates import parts_of
from policy import awr, bc, cql, credit_bc, iql
from policy.augment import augment as entity_swaps
from policy.buffer import TOKEN_LENGTH, build_table
from policy.common import TrainResult, save_checkpoint, set_threads
from policy.credit import step_credit
from policy.envs.recorded import dataset_world
from policy.features import TextEmbedder
from policy.paths import loop_erase
from policy.rewards import RewardSpec, parse_reward, step_rewards

ALGOS: dict[str, tuple[Any, type]] = {
    "iql": (iql, iql.IQLConfig),
    "cql": (cql, cql.CQLConfig),
    "bc": (bc, bc.BCConfig),
    "awr": (awr, awr.AWRConfig),
    "credit": (credit_bc, credit_bc.CreditConfig),
}
AWR_ADVANTAGE = ("trca", "advantage")


class ConfigError(ValueError):
    pass


def selection(algo: str, cfg: Any, augment: int) -> str | None:
    """What chose (or added) the trained transitions, for the summary; None: the dataset as it is."""
    parts = [f"filter={cfg.filter}"] if algo == "bc" and cfg.filter != "all" else []
    parts += ["the credited steps"] if algo == "credit" else []
    parts += (
        [f"up to {augment} renamed {'copy' if augment == 1 else 'copies'} of each episode"] if augment else []
    )
    return ", ".join(parts) or None


def labels_of(traj, spec: RewardSpec) -> list[float] | None:
    """The step rewards of ``traj`` without the detour penalty (None when there is none to take off)."""
    return step_rewards(traj, dataclasses.replace(spec, detour_penalty=0.0)) if spec.detour_penalty else None


def make_config(algo: str, overrides: dict[str, Any]) -> Any:
    if algo not in ALGOS:
        raise ConfigError(f"unknown algorithm {algo!r}: expected one of {', '.join(ALGOS)}")
    cls = ALGOS[algo][1]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, raw in overrides.items():
        if key not in fields:
            raise ConfigError(f"unknown {algo} config key {key!r}: expected one of {', '.join(fields)}")
        default = fields[key].default
        try:
            if isinstance(default, bool):
                if str(raw).lower() not in ("true", "false", "1", "0"):
                    raise ValueError(raw)
                values[key] = str(raw).lower() in ("true", "1")
            elif isinstance(default, int):
                values[key] = int(raw)
            elif isinstance(default, float):
                values[key] = float(raw)
            else:
                values[key] = str(raw)
        except ValueError:
            raise ConfigError(f"{algo} config {key}={raw!r}: expected {type(default).__name__}") from None
    cfg = cls(**values)
    if algo == "bc" and cfg.filter not in bc.FILTERS:
        raise ConfigError(f"bc filter {cfg.filter!r}: expected one of {', '.join(bc.FILTERS)}")
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
    data: str | os.PathLike[str],
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
    """Train ``algo`` on the file ``data`` and write the checkpoint ``out``. ``augment``: renamed copies of
    each episode to train on besides it (:mod:`policy.augment`)."""
    set_threads()
    cfg = make_config(algo, overrides or {})
    spec = parse_reward(reward) if isinstance(reward, str) else reward
    if algo == "bc" and cfg.filter in bc.LABEL_FILTERS and spec.is_sparse:
        raise ConfigError(f"bc filter {cfg.filter!r} reads the labels: give a dense --reward (e.g. trca)")
    if algo == "credit":
        if spec.is_sparse:
            raise ConfigError("credit reads what the labels call harmful: give a dense --reward (e.g. trca)")
        try:
            rule = cfg.rule()
        except ValueError as e:
            raise ConfigError(str(e)) from None
    trajs = all_trajs = read_trajectories(data, skip_invalid=skip_invalid)
    if algo == "bc" and cfg.filter == "paths":
        trajs = [loop_erase(t) for t in all_trajs if t.success]
        if not trajs:
            raise ConfigError("bc filter 'paths': the dataset has no successful episode")
    if augment:
        trajs = entity_swaps(trajs, augment, seed=cfg.seed)
    t0 = time.perf_counter()
    embedder = embedder or TextEmbedder(encoder, progress=progress)
    before = embedder.computed
    table = build_table(
        trajs,
        embedder,
        spec,
        weight_channel=AWR_ADVANTAGE if algo == "awr" else None,
        step_weights=(lambda t, rs: step_credit(t, rs, rule, labels_of(t, spec)))
        if algo == "credit"
        else None,
        candidate_features=cfg.candidate_features,
        encoding=cfg.encoding,
        token_source=embedder.token_source(TOKEN_LENGTH) if cfg.reader == "tokens" else None,
    )
    t_embed = time.perf_counter() - t0
    module = ALGOS[algo][0]
    dim = embedder.dim
    t_updates = time.perf_counter()
    if algo == "bc":
        table = bc.select(table, cfg.filter)  # what BC trains on (its own select keeps it as it is)
        result = module.train(table, cfg, dim=dim, progress=progress)
    elif algo == "credit":
        result = module.train(table, cfg, dim=dim, progress=progress)
        table = credit_bc.select(table)  # what it trained on, for the provenance
    else:
        result = module.train(table.to_torch(), cfg, dim=dim, progress=progress)
    t_updates = time.perf_counter() - t_updates
    trained_episodes = len(np.unique(table.episode))
    judge = {
        m: p.get("judge_sha256") for t in trajs for m, p in t.provenance.items() if p.get("judge_sha256")
    }
    provenance = {
        "dataset": str(data),
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
    name = algo if algo != "bc" else f"bc-{cfg.filter}"
    ckpt = save_checkpoint(
        out,
        result.model,
        algo=name,
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
        selection=selection(algo, cfg, augment),
        seconds=time.perf_counter() - t0,
        embed_seconds=t_embed,
        update_seconds=t_updates,
        texts_embedded=embedder.computed - before,
    )
