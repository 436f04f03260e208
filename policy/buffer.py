"""The offline transition table every trainer samples from: texts embedded once, steps as index arrays.

Each step i holds the row of its instruction, state and next state in one embedding table ``emb`` [U,D], its
candidate rows padded to ``K`` (``cand`` [N,K,P], ``-1`` = padding or an empty part; P parts per
candidate, see ``edge.actions``), the index of the taken action, reward, done
and the next step's candidates (for CQL's max over next actions; empty on the last step). A batch gathers rows
from ``emb`` into the scorer's inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from edge.actions import DEFAULT_CANDIDATE_FEATURES, candidate_texts, parts_of
from labeler.dataset import Trajectory
from policy.features import TextEmbedder
from policy.model import ScorerConfig
from policy.rewards import RewardSpec, step_channel, step_rewards

TRAIN_CANDIDATE_FEATURES = "action+arguments"
"""What training uses unless told otherwise (bundles without the manifest key are the older ``action``)."""


@dataclass
class Batch:
    instruction: torch.Tensor  # [B,D]
    state: torch.Tensor  # [B,D]
    cands: torch.Tensor  # [B,K,P*D]
    mask: torch.Tensor  # [B,K] bool
    action: torch.Tensor  # [B] long
    reward: torch.Tensor  # [B]
    done: torch.Tensor  # [B] float (1: no bootstrap)
    next_state: torch.Tensor  # [B,D]
    next_cands: torch.Tensor  # [B,K,P*D]
    next_mask: torch.Tensor  # [B,K] bool
    weight: torch.Tensor  # [B] stored per-step weight source (e.g. TRCA advantage), 0 if unused
    success: torch.Tensor  # [B] float: the step's episode succeeded


@dataclass
class TransitionTable:
    emb: np.ndarray  # [U,D]
    instr: np.ndarray  # [N]
    state: np.ndarray  # [N]
    next_state: np.ndarray  # [N]
    cand: np.ndarray  # [N,K,P] (-1 padding / empty part)
    action: np.ndarray  # [N]
    reward: np.ndarray  # [N]
    done: np.ndarray  # [N]
    next_cand: np.ndarray  # [N,K,P] (-1 padding; all -1 when done or last)
    weight: np.ndarray  # [N]
    success: np.ndarray  # [N]
    episode: np.ndarray  # [N] trajectory index
    info: dict[str, Any] = field(default_factory=dict)
    candidate_features: str = DEFAULT_CANDIDATE_FEATURES

    def __len__(self) -> int:
        return len(self.action)

    def subset(self, rows: np.ndarray) -> TransitionTable:
        return TransitionTable(
            emb=self.emb,
            instr=self.instr[rows],
            state=self.state[rows],
            next_state=self.next_state[rows],
            cand=self.cand[rows],
            action=self.action[rows],
            reward=self.reward[rows],
            done=self.done[rows],
            next_cand=self.next_cand[rows],
            weight=self.weight[rows],
            success=self.success[rows],
            episode=self.episode[rows],
            info=dict(self.info),
            candidate_features=self.candidate_features,
        )

    def to_torch(self) -> TorchTable:
        return TorchTable(self)


class TorchTable:
    """The table as tensors, with batch gathering."""

    def __init__(self, t: TransitionTable):
        self.n = len(t)
        self.candidate_features = t.candidate_features
        d = t.emb.shape[1]
        # Row U is an all-zero embedding used for padding.
        self.emb = torch.from_numpy(np.concatenate([t.emb, np.zeros((1, d), np.float32)]))
        pad = len(t.emb)

        def idx(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.where(a < 0, pad, a).astype(np.int64))

        self.instr, self.state, self.next_state = idx(t.instr), idx(t.state), idx(t.next_state)
        self.cand, self.next_cand = idx(t.cand), idx(t.next_cand)
        # A candidate exists where its first part (the action text itself) does.
        self.mask = torch.from_numpy(t.cand[..., 0] >= 0)
        self.next_mask = torch.from_numpy(t.next_cand[..., 0] >= 0)
        self.action = torch.from_numpy(t.action.astype(np.int64))
        self.reward = torch.from_numpy(t.reward.astype(np.float32))
        self.done = torch.from_numpy(t.done.astype(np.float32))
        self.weight = torch.from_numpy(t.weight.astype(np.float32))
        self.success = torch.from_numpy(t.success.astype(np.float32))

    def batch(self, rows: torch.Tensor) -> Batch:
        e = self.emb
        return Batch(
            instruction=e[self.instr[rows]],
            state=e[self.state[rows]],
            cands=e[self.cand[rows]].flatten(-2),
            mask=self.mask[rows],
            action=self.action[rows],
            reward=self.reward[rows],
            done=self.done[rows],
            next_state=e[self.next_state[rows]],
            next_cands=e[self.next_cand[rows]].flatten(-2),
            next_mask=self.next_mask[rows],
            weight=self.weight[rows],
            success=self.success[rows],
        )

    def sample(self, batch_size: int, gen: torch.Generator) -> Batch:
        return self.batch(torch.randint(0, self.n, (batch_size,), generator=gen))


def build_table(
    trajectories: Sequence[Trajectory],
    embedder: TextEmbedder,
    reward: RewardSpec,
    *,
    weight_channel: tuple[str, str] | None = None,
    candidate_features: str = TRAIN_CANDIDATE_FEATURES,
) -> TransitionTable:
    """Embed every distinct text once and lay the steps out as index arrays."""
    texts: dict[str, int] = {}
    parts = parts_of(candidate_features)

    def row(text: str) -> int:
        if not text:
            return -1  # an absent part (e.g. no target): the zero row
        r = texts.get(text)
        if r is None:
            r = texts[text] = len(texts)
        return r

    instr, state, next_state, action, rew, done, weight, success, episode = ([] for _ in range(9))
    cand_rows: list[list[int]] = []
    next_cand_rows: list[list[int]] = []

    def cand_row(cands: list[str]) -> list[int]:
        return [row(x) for x in candidate_texts(candidate_features, cands)]

    for ei, t in enumerate(trajectories):
        rs = step_rewards(t, reward)
        ws = step_channel(t, *weight_channel) if weight_channel else [0.0] * len(t.steps)
        n = len(t.steps)
        for i, s in enumerate(t.steps):
            if not s.candidates:
                continue  # nothing to choose from: no decision to learn
            instr.append(row(t.instruction))
            state.append(row(s.observation))
            next_state.append(row(s.next_observation))
            cand_rows.append(cand_row(s.candidates))
            action.append(s.candidates.index(s.action))
            rew.append(rs[i])
            last = i == n - 1
            done.append(1.0 if (last and t.success) else 0.0)
            nxt = t.steps[i + 1].candidates if not last else []
            next_cand_rows.append(cand_row(nxt))
            weight.append(ws[i])
            success.append(float(t.success))
            episode.append(ei)
    if not action:
        raise ValueError("the dataset has no step with candidate actions")
    k = max(max(len(c) for c in cand_rows), max((len(c) for c in next_cand_rows), default=0), parts) // parts

    def pad(rows: list[list[int]]) -> np.ndarray:
        out = np.full((len(rows), k, parts), -1, dtype=np.int64)
        for i, r in enumerate(rows):
            out[i, : len(r) // parts] = np.asarray(r, dtype=np.int64).reshape(-1, parts)
        return out

    emb = embedder.embed(list(texts))
    return TransitionTable(
        emb=emb,
        instr=np.array(instr),
        state=np.array(state),
        next_state=np.array(next_state),
        cand=pad(cand_rows),
        action=np.array(action),
        reward=np.array(rew, dtype=np.float32),
        done=np.array(done, dtype=np.float32),
        next_cand=pad(next_cand_rows),
        weight=np.array(weight, dtype=np.float32),
        success=np.array(success, dtype=np.float32),
        episode=np.array(episode),
        info={"texts": len(texts), "max_candidates": k, "episodes": len(trajectories)},
        candidate_features=candidate_features,
    )


def scorer_config(table: TransitionTable | TorchTable, cfg: Any, dim: int) -> ScorerConfig:
    """The scorer a trainer builds: width from the algorithm config, candidate features from the table
    (which must be the ones the config asks for)."""
    if table.candidate_features != cfg.candidate_features:
        raise ValueError(
            f"the transition table has {table.candidate_features!r} candidate features, the config asks for "
            f"{cfg.candidate_features!r}: build the table with candidate_features={cfg.candidate_features!r}"
        )
    return ScorerConfig(embedding_dim=dim, hidden=cfg.hidden, candidate_features=cfg.candidate_features)
