"""Advantage-weighted behaviour cloning with stored advantages (AWR's policy step, Peng et al., 2019,
https://arxiv.org/abs/1910.00177), using the advantages the TRCA labeler writes per step
(``labels["trca"]["advantage"]``: episode-relative + step-relative) instead of a learned critic.

    pi <- - min(exp(A / beta), weight_clip) * log pi(a | s)
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from policy.training.buffer import ScorerOptions, TorchTable, new_scorer
from policy.training.common import TrainResult, adam, optimize, train_loop, warm_start
from policy.training.learners.base import Learner


@dataclass
class AWRConfig(ScorerOptions):
    """The scorer's options (:class:`policy.training.buffer.ScorerOptions`) and the algorithm's."""

    steps: int = 2000
    """Gradient updates."""
    batch_size: int = 64
    """Transitions per update."""
    lr: float = 1e-3
    """Adam learning rate (BC on 8.5k TWC steps: 1,000 updates at 3e-4 underfit, 5 % test success; 3,000 at
    1e-3: 20 %)."""
    temperature: float = 1.0
    """beta in exp(A / beta): lower = greedier towards high-advantage actions."""
    weight_clip: float = 100.0
    """Upper clip of the weights."""
    normalize: bool = True
    """Standardise the stored advantages over the dataset first (scale-free temperature)."""
    seed: int = 0
    """Seed for initialisation and batch sampling."""
    log_every: int = 50
    """Updates between logged curve points."""


def train(table: TorchTable, cfg: AWRConfig, *, dim: int, progress: bool | None = None) -> TrainResult:
    adv = table.weight
    if cfg.normalize:
        adv = (adv - adv.mean()) / adv.std().clamp(min=1e-6)
    weights = torch.exp(adv / cfg.temperature).clamp(max=cfg.weight_clip)
    data = copy.copy(table)  # shallow: only the weight column is replaced
    data.weight = weights
    torch.manual_seed(cfg.seed)
    actor = warm_start(new_scorer(table, cfg, dim), cfg.init)
    opt = adam(actor.parameters(), cfg.lr, fused=actor.fast)

    def update(b, _step: int) -> dict[str, float]:
        logp = (
            F.log_softmax(actor(b.instruction, b.state, b.cands, b.mask), dim=1)
            .gather(1, b.action.unsqueeze(1))
            .squeeze(1)
        )
        loss = -(b.weight * logp).mean()
        optimize(opt, loss)
        return {"loss": loss.item(), "nll": -logp.mean().item(), "weight_mean": b.weight.mean().item()}

    curves = train_loop(data, update, cfg, desc="awr", progress=progress, modules=[actor])
    return TrainResult(
        model=actor.eval(),
        curves=curves,
        config=asdict(cfg),
        loss_key="loss",
        extra={"weights": weights.numpy()},
    )


ADVANTAGE = ("trca", "advantage")
"""The stored channel AWR weighs steps by: TRCA's per-step advantage."""

LEARNER = Learner("awr", AWRConfig, train, table_options=lambda _cfg, _spec: {"weight_channel": ADVANTAGE})
