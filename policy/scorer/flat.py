"""The flat candidate scorer of bundle format 1: (instruction, state, K candidates, mask) -> one score each.

The whole state is one sentence vector here. Training builds the structured, memoryful scorer of
:mod:`policy.scorer.model` (bundle format 2); this one is kept to write format-1 bundles
(``export_random_bundle(..., bundle_format=1)``: the embedding-input protocol and the older runtime path are
tested with them).

Its forward signature is the format-1 ``policy.onnx`` interface (see ``models.bundle``)::

    instruction [B,D] f32, state [B,D] f32, candidates [B,K,D] f32, mask [B,K] bool -> scores [B,K] f32

K varies per step: pad the candidates and set ``mask`` False on padding; padded scores are ``MASKED_SCORE``
(finite, so softmax and the argmax stay well defined even on an all-padding row). Tiny on purpose: two small
MLPs (a context encoder over instruction and state, and a per-candidate head modulated by the context).

"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from models.inputs.candidates import DEFAULT_CANDIDATE_FEATURES, parts_of
from models.inputs.schema import MASKED_SCORE
from models.inputs.state import config_from_dict


@dataclass(frozen=True)
class FlatScorerConfig:
    embedding_dim: int = 384
    """Sentence-embedding size D (all-MiniLM-L6-v2: 384)."""
    hidden: int = 128
    """Width of the context and per-candidate layers."""
    dropout: float = 0.0
    """Dropout in the hidden layers during training (off at eval and export)."""
    candidate_features: str = DEFAULT_CANDIDATE_FEATURES
    """``action`` (candidates [B,K,D]) or ``action+arguments`` ([B,K,3D]: action, object, target; see
    ``models.inputs.candidates``)."""
    affinity_rank: int = 8
    """Rank of the learned object-target affinity (``action+arguments`` only)."""

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> FlatScorerConfig:
        cfg = config_from_dict(cls, dict(raw), "scorer config")
        parts_of(cfg.candidate_features)  # ValueError on an unknown kind
        return cfg

    @property
    def candidate_dim(self) -> int:
        return parts_of(self.candidate_features) * self.embedding_dim

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ContextEncoder(nn.Module):
    """instruction [B,D], state [B,D] -> context [B,H]."""

    def __init__(self, cfg: FlatScorerConfig):
        super().__init__()
        d, h = cfg.embedding_dim, cfg.hidden
        self.net = nn.Sequential(
            nn.Linear(3 * d, h),
            nn.GELU(),
            nn.Dropout(cfg.dropout),
            nn.Linear(h, h),
            nn.GELU(),
        )

    def forward(self, instruction: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([instruction, state, instruction * state], dim=-1))


class FlatScorer(nn.Module):
    """The policy graph. ``forward`` is exactly what ``policy.onnx`` computes.

    Per candidate: h = W_c c + W_i instruction; the context (instruction, state) modulates it FiLM-style,
    z = GELU(h * (1 + gamma(ctx)) + beta(ctx)), then a small MLP gives the score. The per-candidate cost is
    one D x H and one H x H product, so training on padded batches stays cheap on a CPU.

    With ``action+arguments`` features, c = [action; object; target] and the score gains a gated affinity
    term g(z) * (a * <o, t> + <U o, V t>): the raw cosine of the object and target embeddings (a pretrained
    prior of "what goes where") plus a low-rank learned correction. It is bilinear in the two argument
    embeddings, so it applies to objects never seen in training; the gate lets the verb decide whether
    affinity is good ("put X in Y") or not.
    """

    def __init__(self, cfg: FlatScorerConfig | None = None):
        super().__init__()
        self.cfg = cfg or FlatScorerConfig()
        d, h = self.cfg.embedding_dim, self.cfg.hidden
        self.context = ContextEncoder(self.cfg)
        self.film = nn.Linear(h, 2 * h)
        self.parts = parts_of(self.cfg.candidate_features)
        self.cand_proj = nn.Linear(self.parts * d, h)
        # The instruction matters per candidate too ("put the apple in the fridge" vs "take the apple").
        self.instr_proj = nn.Linear(d, h, bias=False)
        self.head = nn.Sequential(nn.Linear(h, h), nn.GELU(), nn.Dropout(self.cfg.dropout), nn.Linear(h, 1))
        if self.parts == 3:
            r = self.cfg.affinity_rank
            self.aff_u = nn.Linear(d, r, bias=False)
            self.aff_v = nn.Linear(d, r, bias=False)
            self.aff_scale = nn.Parameter(torch.tensor(1.0))
            self.aff_gate = nn.Linear(h, 1)

    def forward(
        self, instruction: torch.Tensor, state: torch.Tensor, candidates: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        ctx = self.context(instruction, state)  # [B,H]
        gamma, beta = self.film(ctx).unsqueeze(1).chunk(2, dim=-1)  # [B,1,H] each
        cand = self.cand_proj(candidates) + self.instr_proj(instruction).unsqueeze(1)  # [B,K,H]
        z = nn.functional.gelu(cand * (1 + gamma) + beta)
        scores = self.head(z).squeeze(-1)  # [B,K]
        if self.parts == 3:
            d = self.cfg.embedding_dim
            obj, target = candidates[..., d : 2 * d], candidates[..., 2 * d :]
            affinity = self.aff_scale * (obj * target).sum(-1) + (self.aff_u(obj) * self.aff_v(target)).sum(
                -1
            )
            scores = scores + self.aff_gate(z).squeeze(-1) * affinity
        return torch.where(mask, scores, torch.full_like(scores, MASKED_SCORE))


def build_flat_scorer(cfg: FlatScorerConfig | None = None, seed: int = 0) -> FlatScorer:
    """A freshly initialised scorer, deterministic for a given seed."""
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = FlatScorer(cfg)
    finally:
        torch.random.set_rng_state(gen_state)
    return model.eval()
