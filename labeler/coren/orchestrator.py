"""The reward orchestrator Psi_theta: softmax weights over (r^C, r^S, r^T) per (observation, action,
instruction), grounded on the success flags, with a fallback towards the sparse reward.

Ensembled reward ``r_hat_t = s * w_t . (r^C_t, r^S_t, r^T_t, 0)``; trained on the dataset's success flags (the
sparse reward, never ``info``) with the paper's objective, averaged over trajectories::

    L(theta) = mean_tau ( s * sum_t gamma^t r_hat_t / (H * K)  +  b  -  alpha * f_s(tau) )^2

H: trajectory length, K: the largest absolute reward (2 on the -2..2 scale), f_s: 1 for success, else 0.

Three additions keep a weak judge from making a policy worse than the sparse reward (the paper's loss is the
special case ``null_channel=False, learn_scale=False, learn_bias=False``):

* a **null channel** (reward 0) among the softmax outputs: where no channel predicts success, a step's weight
  can go there, and the step keeps only the sparse reward;
* a learned **scale** ``s = sigmoid(theta_s)`` in (0, 1): how far the dense reward is trusted overall;
* a learned **bias** ``b`` in the loss only (never in the reward): it absorbs the base success rate, so a
  channel that merely adds a constant to every return does not lower the loss; only one whose returns
  *separate* successes from failures does.

:func:`fit` checks the orchestrator on held-out episodes (k-fold cross-fitting over trajectories,
stratified by the success flag): the held-out squared error of its predicted returns against that of the
constant base-rate prediction (the sparse reward alone). ``gain = 1 - mse_model / mse_base``; when the
gain is not above ``min_gain`` the **gate** is 0 and the ensemble falls back to the sparse reward entirely
(every step 0).
Effective per-channel weights are ``gate * s * w_c``; ``1 -`` their sum is the sparse reward's share.

Input features: concatenated, L2-normalised sentence embeddings of the observation, the action and the
instruction. Checkpoints are safetensors files (tensors only, no pickle) with the config, the gate, the
held-out check and the training provenance as JSON metadata.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from labeler.auroc import auroc
from labeler.folds import crossfit_splits
from models.settings import AtomicFile

CHANNELS = ("contextual", "structural", "temporal")
CKPT_FORMAT = "edgejudge.coren.orchestrator"
CKPT_VERSION = 2
READABLE_VERSIONS = ("1", "2")


class OrchestratorError(ValueError):
    """A checkpoint that is not an orchestrator, has another version, or does not fit the features."""


@dataclass
class OrchestratorConfig:
    """Training configuration; saved beside the weights."""

    input_dim: int = 3 * 384
    """Feature size: observation, action and instruction embeddings concatenated."""
    hidden: int = 64
    """Hidden units of the one hidden layer."""
    gamma: float = 0.99
    """Discount of the predicted return."""
    alpha: float = 1.0
    """Scale of the success flag in the target."""
    max_reward: float = 2.0
    """K: the largest absolute channel reward (normalises the return)."""
    epochs: int = 300
    """Full-batch Adam steps."""
    lr: float = 3e-3
    """Adam learning rate."""
    weight_decay: float = 1e-4
    """Adam weight decay."""
    seed: int = 0
    """Initialisation seed."""
    null_channel: bool = True
    """A fourth softmax output with reward 0: a step's weight can go to the sparse reward."""
    learn_scale: bool = True
    """Learn an overall trust s in (0, 1) of the dense reward (False: s = 1)."""
    learn_bias: bool = True
    """Learn a bias b in the loss (the base success rate), so constants do not count as prediction."""
    folds: int = 3
    """Held-out check: k-fold cross-fitting over trajectories (0: no check, the gate stays 1)."""
    min_gain: float = 0.0
    """Gate: the held-out gain over the base-rate prediction must exceed this, else fall back to sparse."""


class Orchestrator(nn.Module):
    def __init__(self, cfg: OrchestratorConfig):
        super().__init__()
        self.cfg = cfg
        outputs = len(CHANNELS) + int(cfg.null_channel)
        self.net = nn.Sequential(
            nn.Linear(cfg.input_dim, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, outputs)
        )
        self.scale_logit = nn.Parameter(torch.zeros(()))  # s = sigmoid(.) starts at 0.5
        self.bias = nn.Parameter(torch.zeros(()))
        self.register_buffer("gate", torch.ones(()))  # set by the held-out check; saved with the weights

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Softmax weights over the channels (and the null channel last), shape (..., 3 or 4)."""
        return torch.softmax(self.net(x), dim=-1)

    @property
    def scale(self) -> torch.Tensor:
        return torch.sigmoid(self.scale_logit) if self.cfg.learn_scale else torch.ones(())

    @property
    def loss_bias(self) -> torch.Tensor:
        return self.bias if self.cfg.learn_bias else torch.zeros(())


def ensemble(weights: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
    """``w . r``; a null channel (weights with one more column than rewards) has reward 0."""
    return (weights[..., : rewards.shape[-1]] * rewards).sum(dim=-1)


def predicted_returns(
    weights: torch.Tensor,
    rewards: torch.Tensor,
    mask: torch.Tensor,
    gamma: float,
    max_reward: float,
    scale: float | torch.Tensor = 1.0,
) -> torch.Tensor:
    """``s * sum_t gamma^t w_t . r_t / (H * K)`` per trajectory of a padded batch, shape (B,)."""
    _, t = mask.shape
    discount = gamma ** torch.arange(t, dtype=rewards.dtype)
    r_hat = ensemble(weights, rewards) * mask
    lengths = mask.sum(dim=1).clamp(min=1)
    return scale * (r_hat * discount).sum(dim=1) / (lengths * max_reward)


def orchestrator_loss(
    weights: torch.Tensor,
    rewards: torch.Tensor,
    mask: torch.Tensor,
    success: torch.Tensor,
    gamma: float,
    max_reward: float,
    alpha: float,
    scale: float | torch.Tensor = 1.0,
    bias: float | torch.Tensor = 0.0,
) -> torch.Tensor:
    """The loss for a padded batch: weights (B, T, 3 or 4), rewards (B, T, 3), mask (B, T) of 0/1,
    success (B,); ``scale`` s and ``bias`` b as in the module docstring (1 and 0: the paper's loss)."""
    ret = predicted_returns(weights, rewards, mask, gamma, max_reward, scale)
    return ((ret + bias - alpha * success) ** 2).mean()


@dataclass
class Batch:
    features: torch.Tensor  # (B, T, D)
    rewards: torch.Tensor  # (B, T, 3)
    mask: torch.Tensor  # (B, T)
    success: torch.Tensor  # (B,)

    def subset(self, idx: list[int]) -> Batch:
        i = torch.as_tensor(idx, dtype=torch.long)
        return Batch(self.features[i], self.rewards[i], self.mask[i], self.success[i])


def make_batch(features: list[np.ndarray], rewards: list[np.ndarray], success: list[bool]) -> Batch:
    """Pad per-trajectory arrays (T_i, D) and (T_i, 3) into one batch."""
    b, t = len(features), max(len(f) for f in features)
    d = features[0].shape[1]
    x = torch.zeros(b, t, d)
    r = torch.zeros(b, t, len(CHANNELS))
    m = torch.zeros(b, t)
    for i, (f, rw) in enumerate(zip(features, rewards, strict=True)):
        x[i, : len(f)] = torch.as_tensor(f, dtype=torch.float32)
        r[i, : len(rw)] = torch.as_tensor(rw, dtype=torch.float32)
        m[i, : len(f)] = 1.0
    return Batch(x, r, m, torch.as_tensor([float(s) for s in success]))


@dataclass
class TrainResult:
    model: Orchestrator
    losses: list[float] = field(default_factory=list)


def _loss(model: Orchestrator, batch: Batch) -> torch.Tensor:
    c = model.cfg
    return orchestrator_loss(
        model(batch.features),
        batch.rewards,
        batch.mask,
        batch.success,
        c.gamma,
        c.max_reward,
        c.alpha,
        scale=model.scale,
        bias=model.loss_bias,
    )


def train(batch: Batch, cfg: OrchestratorConfig) -> TrainResult:
    torch.manual_seed(cfg.seed)
    model = Orchestrator(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    losses = []
    for _ in range(cfg.epochs):
        opt.zero_grad()
        loss = _loss(model, batch)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    model.eval()
    return TrainResult(model, losses)


@torch.no_grad()
def predict(model: Orchestrator, batch: Batch) -> np.ndarray:
    """Predicted success per trajectory: the scaled, normalised return plus the learned bias."""
    c = model.cfg
    ret = predicted_returns(
        model(batch.features), batch.rewards, batch.mask, c.gamma, c.max_reward, model.scale
    )
    return (ret + model.loss_bias).numpy().astype(np.float64)


def heldout_gain(predicted: np.ndarray, base: np.ndarray, target: np.ndarray) -> tuple[float, float, float]:
    """(gain, mse of the predictions, mse of the base-rate predictions) against the target alpha * f_s:
    ``gain = 1 - mse / mse_base`` (0 when the base rate is already exact)."""
    mse = float(np.mean((predicted - target) ** 2))
    mse_base = float(np.mean((base - target) ** 2))
    gain = 1.0 - mse / mse_base if mse_base > 0 else 0.0
    return gain, mse, mse_base


@dataclass
class HeldoutCheck:
    """The held-out comparison that sets the gate (all on held-out trajectories)."""

    folds: int
    trajectories: int
    gain: float | None = None
    mse: float | None = None
    mse_base: float | None = None
    auroc: float | None = None
    """AUROC of the held-out predicted returns against the success flags."""
    gate: float = 1.0
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def heldout_check(batch: Batch, cfg: OrchestratorConfig) -> HeldoutCheck:
    """Cross-fit the orchestrator and compare its held-out predictions with the base rate (see module)."""
    success = [bool(x) for x in batch.success.tolist()]
    n = len(success)
    chk = HeldoutCheck(folds=cfg.folds, trajectories=n)
    n_pos = sum(success)
    if cfg.folds < 2:
        chk.reason = "no held-out check (folds < 2): gate 1"
        return chk
    if min(n_pos, n - n_pos) < cfg.folds:
        chk.reason = (
            f"too few successes or failures ({n_pos} / {n - n_pos}) for {cfg.folds} folds: gate 1, unchecked"
        )
        return chk
    pred = np.zeros(n)
    base = np.zeros(n)
    target = cfg.alpha * np.asarray(success, dtype=np.float64)
    for train_idx, fold in crossfit_splits(success, cfg.folds, cfg.seed):
        m = train(batch.subset(train_idx), cfg).model
        pred[fold] = predict(m, batch.subset(fold))
        base[fold] = float(target[train_idx].mean())
    chk.gain, chk.mse, chk.mse_base = heldout_gain(pred, base, target)
    chk.auroc = auroc(pred.tolist(), success)
    if chk.gain > cfg.min_gain:
        chk.reason = f"held-out gain {chk.gain:+.3f} over the base rate: dense reward kept"
    else:
        chk.gate = 0.0
        chk.reason = (
            f"held-out gain {chk.gain:+.3f} <= {cfg.min_gain:+.3f}: the channels do not predict success on "
            "held-out episodes; falling back to the sparse reward"
        )
    return chk


@dataclass
class FitResult:
    model: Orchestrator
    losses: list[float]
    check: HeldoutCheck


def fit(batch: Batch, cfg: OrchestratorConfig) -> FitResult:
    """The held-out check, then the orchestrator trained on every trajectory, gated by the check."""
    check = heldout_check(batch, cfg)
    res = train(batch, cfg)
    res.model.gate.fill_(check.gate)
    return FitResult(res.model, res.losses, check)


@torch.no_grad()
def weights_for(model: Orchestrator, features: np.ndarray) -> np.ndarray:
    """Effective per-channel weights ``gate * s * w_c``, shape (N, 3); what they leave of 1 is the sparse
    reward's share."""
    w = model(torch.as_tensor(features, dtype=torch.float32))[..., : len(CHANNELS)]
    return (w * model.scale * model.gate).numpy().astype(np.float64)


def save(model: Orchestrator, path: str | Path, provenance: dict[str, Any]) -> str:
    """Write a safetensors checkpoint atomically; returns its sha256."""
    from safetensors.torch import save_file

    p = Path(path)
    meta = {
        "format": CKPT_FORMAT,
        "version": str(CKPT_VERSION),
        "config": json.dumps(asdict(model.cfg)),
        "provenance": json.dumps(provenance, sort_keys=True),
    }
    with AtomicFile(p) as tmp:
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(tmp), metadata=meta)
    return file_sha256(p)


def load(path: str | Path, input_dim: int | None = None) -> tuple[Orchestrator, dict[str, Any], str]:
    """Load a checkpoint: (model, its provenance, file sha256). Raises :class:`OrchestratorError`."""
    from safetensors import SafetensorError, safe_open

    p = Path(path)
    if not p.is_file():
        raise OrchestratorError(f"{p}: orchestrator checkpoint does not exist")
    try:
        with safe_open(str(p), framework="pt") as f:
            meta = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 - safe_open has no __iter__
    except (SafetensorError, OSError, ValueError) as e:
        raise OrchestratorError(f"{p}: not a safetensors orchestrator checkpoint ({e})") from None
    if meta.get("format") != CKPT_FORMAT:
        raise OrchestratorError(f"{p}: not a COREN orchestrator checkpoint (format {meta.get('format')!r})")
    if meta.get("version") not in READABLE_VERSIONS:
        raise OrchestratorError(
            f"{p}: checkpoint version {meta.get('version')} "
            f"(this edgejudge reads {', '.join(READABLE_VERSIONS)})"
        )
    known = {f.name for f in OrchestratorConfig.__dataclass_fields__.values()}
    raw = json.loads(meta.get("config", "{}"))
    unknown = sorted(set(raw) - known)
    if unknown:
        raise OrchestratorError(f"{p}: unknown config key {unknown[0]!r}")
    if meta.get("version") == "1":  # the paper's orchestrator: three outputs, no scale, no gate
        raw = {**raw, "null_channel": False, "learn_scale": False, "learn_bias": False, "folds": 0}
        tensors = {**tensors, "scale_logit": torch.zeros(()), "bias": torch.zeros(()), "gate": torch.ones(())}
    cfg = OrchestratorConfig(**raw)
    if input_dim is not None and cfg.input_dim != input_dim:
        raise OrchestratorError(f"{p}: expects {cfg.input_dim}-dim features, the encoder gives {input_dim}")
    model = Orchestrator(cfg)
    try:
        model.load_state_dict(tensors)
    except RuntimeError as e:
        raise OrchestratorError(f"{p}: weights do not fit the config ({str(e).splitlines()[0]})") from None
    model.eval()
    return model, json.loads(meta.get("provenance", "{}")), file_sha256(p)


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()
