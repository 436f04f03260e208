"""The reward orchestrator Psi_theta: softmax weights over (r^C, r^S, r^T) per (observation, action,
instruction).

Ensembled reward ``r_hat_t = w_t . (r^C_t, r^S_t, r^T_t)``; trained on the dataset's success flags (the sparse
reward, never ``info``) with the paper's objective, averaged over trajectories::

    L(theta) = mean_tau ( sum_t gamma^t r_hat_t / (H * K)  -  alpha * f_s(tau) )^2

H: trajectory length, K: the largest absolute reward (2 on the -2..2 scale), f_s: 1 for success, else 0.

Input features: concatenated, L2-normalised sentence embeddings of the observation, the action and the
instruction. Checkpoints are safetensors files (tensors only, no pickle) with the config and the training
provenance as JSON metadata.
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

CHANNELS = ("contextual", "structural", "temporal")
CKPT_FORMAT = "edgejudge.coren.orchestrator"
CKPT_VERSION = 1


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


class Orchestrator(nn.Module):
    def __init__(self, cfg: OrchestratorConfig):
        super().__init__()
        self.cfg = cfg
        self.net = nn.Sequential(
            nn.Linear(cfg.input_dim, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, len(CHANNELS))
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Softmax weights over the three channels, shape (..., 3)."""
        return torch.softmax(self.net(x), dim=-1)


def ensemble(weights: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
    return (weights * rewards).sum(dim=-1)


def orchestrator_loss(
    weights: torch.Tensor,
    rewards: torch.Tensor,
    mask: torch.Tensor,
    success: torch.Tensor,
    gamma: float,
    max_reward: float,
    alpha: float,
) -> torch.Tensor:
    """The paper's loss for a padded batch: weights/rewards (B, T, 3), mask (B, T) of 0/1, success (B,)."""
    b, t = mask.shape
    discount = gamma ** torch.arange(t, dtype=rewards.dtype)
    r_hat = ensemble(weights, rewards) * mask
    lengths = mask.sum(dim=1).clamp(min=1)
    ret = (r_hat * discount).sum(dim=1) / (lengths * max_reward)
    return ((ret - alpha * success) ** 2).mean()


@dataclass
class Batch:
    features: torch.Tensor  # (B, T, D)
    rewards: torch.Tensor  # (B, T, 3)
    mask: torch.Tensor  # (B, T)
    success: torch.Tensor  # (B,)


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


def train(batch: Batch, cfg: OrchestratorConfig) -> TrainResult:
    torch.manual_seed(cfg.seed)
    model = Orchestrator(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    losses = []
    for _ in range(cfg.epochs):
        opt.zero_grad()
        loss = orchestrator_loss(
            model(batch.features),
            batch.rewards,
            batch.mask,
            batch.success,
            cfg.gamma,
            cfg.max_reward,
            cfg.alpha,
        )
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    model.eval()
    return TrainResult(model, losses)


@torch.no_grad()
def weights_for(model: Orchestrator, features: np.ndarray) -> np.ndarray:
    return model(torch.as_tensor(features, dtype=torch.float32)).numpy().astype(np.float64)


def save(model: Orchestrator, path: str | Path, provenance: dict[str, Any]) -> str:
    """Write a safetensors checkpoint atomically; returns its sha256."""
    import os
    import tempfile

    from safetensors.torch import save_file

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": CKPT_FORMAT,
        "version": str(CKPT_VERSION),
        "config": json.dumps(asdict(model.cfg)),
        "provenance": json.dumps(provenance, sort_keys=True),
    }
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    try:
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, tmp, metadata=meta)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
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
    if meta.get("version") != str(CKPT_VERSION):
        raise OrchestratorError(
            f"{p}: checkpoint version {meta.get('version')} (this edgejudge reads {CKPT_VERSION})"
        )
    known = {f.name for f in OrchestratorConfig.__dataclass_fields__.values()}
    raw = json.loads(meta.get("config", "{}"))
    unknown = sorted(set(raw) - known)
    if unknown:
        raise OrchestratorError(f"{p}: unknown config key {unknown[0]!r}")
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
