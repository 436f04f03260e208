"""Behaviour cloning over candidate actions, on all data or on successful episodes only (the classic
"filtered BC" / %BC baseline, e.g. Chen et al., 2021, https://arxiv.org/abs/2106.01345, section 5).

    pi <- - log pi(a | s)          over all steps, or only the steps of successful episodes
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F

from policy.training.buffer import ScorerOptions, TransitionTable, new_scorer
from policy.training.common import TrainResult, adam, optimize, train_loop, warm_start
from policy.training.learners.base import ConfigError, Learner
from policy.training.loop_erasure import loop_erase

FILTERS = ("all", "success", "paths", "labeled", "success-labeled", "success+progress")
LABEL_FILTERS = ("labeled", "success-labeled", "success+progress")
"""Filters that read the step rewards (a dense ``--reward``: the labels, the terminal bonus, the detour
penalty)."""


@dataclass
class BCConfig(ScorerOptions):
    """The scorer's options (:class:`policy.training.buffer.ScorerOptions`) and the algorithm's."""

    steps: int = 2000
    """Gradient updates."""
    batch_size: int = 64
    """Transitions per update."""
    lr: float = 1e-3
    """Adam learning rate (BC on 8.5k TWC steps: 1,000 updates at 3e-4 underfit, 5 % test success; 3,000 at
    1e-3: 20 %)."""
    filter: str = "all"
    """'all' steps; only steps of 'success'ful episodes; 'paths': the loop-erased paths of the successful
    episodes (policy.training.loop_erasure: detours that return to an earlier world state are dropped); with a
    dense reward, 'labeled': the steps of any episode whose reward is positive (what the labels rank as
    progress, and the successful episodes' last steps), 'success-labeled': the steps of successful episodes
    whose reward is not negative (what the labels do not call harmful), or 'success+progress': those and the
    failed episodes' steps with a positive reward (what the labels call progress wherever it happened)."""
    seed: int = 0
    """Seed for initialisation and batch sampling."""
    log_every: int = 50
    """Updates between logged curve points."""


def kept(filter: str, success, reward):
    """Which steps ``filter`` keeps, from their episode's success flag and their reward (numpy arrays or one
    step's values); 'paths' keeps the successful episodes' rows of a table built from their loop-erased
    paths (policy.training.train)."""
    if filter == "all":
        return np.ones_like(reward, dtype=bool)
    if filter == "labeled":
        return reward > 0
    if filter == "success-labeled":
        return success & (reward >= 0)
    if filter == "success+progress":
        return (success & (reward >= 0)) | (reward > 0)
    return success  # 'success', 'paths'


def select(table: TransitionTable, filter: str) -> TransitionTable:
    if filter not in FILTERS:
        raise ValueError(f"unknown BC filter {filter!r}: expected {', '.join(FILTERS)}")
    if filter == "all":
        return table
    if filter == "labeled":
        if not (table.reward > 0).any():
            raise ValueError("BC on labeled steps: no step has a positive reward")
    elif not (table.success > 0).any():
        raise ValueError("BC on successful episodes: the dataset has no successful episode")
    return table.subset(np.flatnonzero(kept(filter, table.success > 0, table.reward)))


def train(table: TransitionTable, cfg: BCConfig, *, dim: int, progress: bool | None = None) -> TrainResult:
    data = select(table, cfg.filter).to_torch()
    torch.manual_seed(cfg.seed)
    actor = warm_start(new_scorer(data, cfg, dim), cfg.init)
    opt = adam(actor.parameters(), cfg.lr, fused=actor.fast)

    def update(b, _step: int) -> dict[str, float]:
        logits = actor(b.instruction, b.state, b.cands, b.mask)
        loss = F.cross_entropy(logits, b.action)
        optimize(opt, loss)
        acc = (logits.argmax(1) == b.action).float().mean()
        return {"loss": loss.item(), "accuracy": acc.item()}

    curves = train_loop(
        data,
        update,
        cfg,
        desc=f"bc-{cfg.filter}",
        progress=progress,
        modules=[actor],
        prepare=lambda b: actor.prepare(b.state, b.cands),
    )
    return TrainResult(
        model=actor.eval(), curves=curves, config=asdict(cfg), loss_key="loss", extra={"transitions": data.n}
    )


def _check(cfg: BCConfig) -> None:
    if cfg.filter not in FILTERS:
        raise ConfigError(f"bc filter {cfg.filter!r}: expected one of {', '.join(FILTERS)}")


def _episodes(trajs: list, cfg: BCConfig) -> list:
    """'paths': the loop-erased paths of the successful episodes; else the file's episodes."""
    if cfg.filter != "paths":
        return trajs
    paths = [loop_erase(t) for t in trajs if t.success]
    if not paths:
        raise ConfigError("bc filter 'paths': the dataset has no successful episode")
    return paths


def _selected(table: TransitionTable, cfg: BCConfig) -> TransitionTable:
    return select(table, cfg.filter)


LEARNER = Learner(
    "bc",
    BCConfig,
    train,
    rows=_selected,  # what BC trains on (its train selects again, which keeps it as it is)
    trained=_selected,
    needs_labels=lambda cfg: (
        f"bc filter {cfg.filter!r} reads the labels" if cfg.filter in LABEL_FILTERS else None
    ),
    check=_check,
    episodes=_episodes,
    selection=lambda cfg: [f"filter={cfg.filter}"] if cfg.filter != "all" else [],
    checkpoint_name=lambda cfg: f"bc-{cfg.filter}",
)
