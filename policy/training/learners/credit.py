"""Credit-weighted imitation over every episode: behaviour cloning weighted by the per-step credit of
:mod:`policy.training.step_credit` (the successful episodes' steps the labels do not call harmful; with
``failures``, also the failed episodes' labeled progress and the steps that led to it), with an unlikelihood
term on the steps of every episode the labels call harmful (Welleck et al., 2019,
https://arxiv.org/abs/1908.04319, applied to logged actions):

    pi <- - sum_t  w_t+ * log pi(a_t | s_t)  +  w_t- * log(1 - pi(a_t | s_t))
                                                            (w+ = max(w, 0), w- = max(-w, 0))

Steps without credit carry no signal and are not sampled.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np
import torch
import torch.nn.functional as F

from policy.training.buffer import ScorerOptions, TransitionTable, new_scorer
from policy.training.common import TrainResult, adam, optimize, train_loop, warm_start
from policy.training.learners.base import ConfigError, Learner
from policy.training.rewards import rewards_without_detours
from policy.training.step_credit import CreditRule, step_credit


@dataclass
class CreditConfig(ScorerOptions):
    """The scorer's options (:class:`policy.training.buffer.ScorerOptions`) and the algorithm's."""

    steps: int = 2000
    """Gradient updates."""
    batch_size: int = 64
    """Transitions per update."""
    lr: float = 1e-3
    """Adam learning rate (as BC's)."""
    discount: float = CreditRule.discount
    """Credit of a step one place further, on the loop-erased path, from the progress it led to."""
    negative: float = CreditRule.negative
    """Weight of the unlikelihood term on harmful steps (0: drop them)."""
    failures: bool = CreditRule.failures
    """Credit the progress of failed episodes too (their hindsight segments); off: the failed episodes teach
    by their harmful steps alone."""
    detours: bool = CreditRule.detours
    """Push away steps the detour penalty marks as well as those the labels call harmful."""
    linked: bool = CreditRule.linked
    """In failed episodes, credit only the steps before a milestone that act on what it acts on."""
    idle_repeats: bool = CreditRule.idle_repeats
    """In successful episodes, credit a step that changed nothing every time (True; default: its first use
    only)."""
    seed: int = 0
    """Seed for initialisation and batch sampling."""
    log_every: int = 50
    """Updates between logged curve points."""

    def rule(self) -> CreditRule:
        """The credit fields as a :class:`policy.training.step_credit.CreditRule` (checked there)."""
        return CreditRule(**{f.name: getattr(self, f.name) for f in fields(CreditRule)})


def select(table: TransitionTable) -> TransitionTable:
    """The steps with credit (the table's ``weight`` column:
    :func:`policy.training.step_credit.step_credit`)."""
    rows = np.flatnonzero(table.weight != 0)
    if not (table.weight > 0).any():
        raise ValueError("credit-weighted imitation: no step has positive credit (no reward > 0 in the file)")
    return table.subset(rows)


def unlikelihood(logp: torch.Tensor) -> torch.Tensor:
    """-log(1 - p) from log p, stable where p is near 1 (p is clamped below 1 - 1e-6)."""
    return -torch.log1p(-logp.exp().clamp(max=1.0 - 1e-6))


def train(
    table: TransitionTable, cfg: CreditConfig, *, dim: int, progress: bool | None = None
) -> TrainResult:
    data = select(table).to_torch()
    torch.manual_seed(cfg.seed)
    actor = warm_start(new_scorer(data, cfg, dim), cfg.init)
    opt = adam(actor.parameters(), cfg.lr, fused=actor.fast)

    def update(b, _step: int) -> dict[str, float]:
        logits = actor(b.instruction, b.state, b.cands, b.mask)
        logp = F.log_softmax(logits, dim=1).gather(1, b.action.unsqueeze(1)).squeeze(1)
        pos, neg = b.weight.clamp(min=0), (-b.weight).clamp(min=0)
        loss = (-(pos * logp) + neg * unlikelihood(logp)).mean()
        optimize(opt, loss)
        kept = pos > 0
        acc = (logits.argmax(1) == b.action)[kept].float().mean() if kept.any() else torch.tensor(0.0)
        return {
            "loss": loss.item(),
            "accuracy": acc.item(),
            "negative_share": (neg > 0).float().mean().item(),
        }

    curves = train_loop(
        data,
        update,
        cfg,
        desc="credit",
        progress=progress,
        modules=[actor],
        prepare=lambda b: actor.prepare(b.state, b.cands),
    )
    return TrainResult(
        model=actor.eval(),
        curves=curves,
        config=asdict(cfg),
        loss_key="loss",
        extra={"transitions": data.n, "weights": table.weight},
    )


def _check(cfg: CreditConfig) -> None:
    try:
        cfg.rule()
    except ValueError as e:
        raise ConfigError(str(e)) from None


def _table_options(cfg: CreditConfig, spec) -> dict:
    """Each step weighed by its credit (:func:`policy.training.step_credit.step_credit`) from the labels."""
    rule = cfg.rule()
    return {"step_weights": lambda t, rs: step_credit(t, rs, rule, rewards_without_detours(t, spec))}


LEARNER = Learner(
    "credit",
    CreditConfig,
    train,
    rows=lambda table, _cfg: table,
    trained=lambda table, _cfg: select(table),
    needs_labels=lambda _cfg: "credit reads what the labels call harmful",
    check=_check,
    table_options=_table_options,
    selection=lambda _cfg: ["the credited steps"],
)
