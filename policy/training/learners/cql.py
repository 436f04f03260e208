"""Discrete Conservative Q-Learning over candidate actions (Kumar et al., 2020, https://arxiv.org/abs/2006.04779,
the CQL(H) loss for discrete actions as in its Atari experiments).

Q(s, a) is a :class:`CandidateScorer`; the exported policy is argmax_a Q(s, a) over the step's candidates.

    Q <- ( r + gamma * (1 - done) * max_a' Q_target(s', a') - Q(s,a) )^2
         + alpha * ( logsumexp_a Q(s, a) - Q(s, a_data) )
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from policy.training.buffer import ScorerOptions, TorchTable, new_scorer
from policy.training.common import TrainResult, adam, optimize, soft_update, train_loop, warm_start
from policy.training.learners.base import Learner


@dataclass
class CQLConfig(ScorerOptions):
    """The scorer's options (:class:`policy.training.buffer.ScorerOptions`) and the algorithm's."""

    steps: int = 3000
    """Gradient updates."""
    batch_size: int = 64
    """Transitions per update."""
    lr: float = 3e-4
    """Adam learning rate."""
    gamma: float = 0.99
    """Discount."""
    alpha: float = 1.0
    """Weight of the conservative term (pushes down Q of actions the data did not take)."""
    tau: float = 0.005
    """Polyak rate of the target network."""
    seed: int = 0
    """Seed for initialisation and batch sampling."""
    log_every: int = 50
    """Updates between logged curve points."""


def train(table: TorchTable, cfg: CQLConfig, *, dim: int, progress: bool | None = None) -> TrainResult:
    torch.manual_seed(cfg.seed)
    q = warm_start(new_scorer(table, cfg, dim), cfg.init)
    q_target = copy.deepcopy(q).requires_grad_(False)
    opt = adam(q.parameters(), cfg.lr, fused=q.fast)

    def update(b, _step: int) -> dict[str, float]:
        with torch.no_grad():
            has_next = b.next_mask.any(dim=1)
            q_next = q_target(b.instruction, b.next_state, b.next_cands, b.next_mask | ~has_next.unsqueeze(1))
            v_next = torch.where(has_next, q_next.max(dim=1).values, torch.zeros_like(b.reward))
            target = b.reward + cfg.gamma * (1.0 - b.done) * v_next
        q_all = q(b.instruction, b.state, b.cands, b.mask)
        q_sa = q_all.gather(1, b.action.unsqueeze(1)).squeeze(1)
        td = F.mse_loss(q_sa, target)
        conservative = (torch.logsumexp(q_all, dim=1) - q_sa).mean()
        loss = td + cfg.alpha * conservative
        optimize(opt, loss)
        soft_update(q_target, q, cfg.tau, fused=q.fast)
        return {
            "loss": loss.item(),
            "loss_td": td.item(),
            "conservative": conservative.item(),
            "q_mean": q_sa.mean().item(),
        }

    curves = train_loop(table, update, cfg, desc="cql", progress=progress, modules=[q])
    return TrainResult(model=q.eval(), curves=curves, config=asdict(cfg), loss_key="loss")


LEARNER = Learner("cql", CQLConfig, train)
