"""Run a training checkpoint: the features of the encoder it was trained on (cached) + the torch scorer."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import torch

from edge.actions import candidate_matrix
from policy.common import load_checkpoint, set_threads
from policy.features import TextEmbedder


class TorchPolicy:
    name = "checkpoint"

    def __init__(self, checkpoint: str | os.PathLike[str], *, embedder: TextEmbedder | None = None):
        set_threads()
        self.model, self.meta = load_checkpoint(checkpoint)
        trained_on = self.meta.get("provenance", {}).get("encoder") or "all-MiniLM-L6-v2"
        self.embedder = embedder or TextEmbedder(trained_on, progress=False)
        if self.embedder.dim != self.model.cfg.embedding_dim:
            raise ValueError(
                f"checkpoint expects {self.model.cfg.embedding_dim}-d embeddings, the encoder "
                f"gives {self.embedder.dim}"
            )
        self.name = f"{self.meta.get('algo', 'checkpoint')}:{self.meta.get('reward', '?')}"

    def scores(self, instruction: str, observation: str, candidates: Sequence[str]) -> np.ndarray:
        cfg = self.model.cfg
        ctx = torch.from_numpy(self.embedder.embed([instruction, observation]))
        cand = candidate_matrix(cfg.candidate_features, candidates, self.embedder.embed, cfg.embedding_dim)
        with torch.no_grad():
            s = self.model(
                ctx[0:1],
                ctx[1:2],
                torch.from_numpy(cand)[None],
                torch.ones(1, len(candidates), dtype=torch.bool),
            )
        return s[0].numpy()

    def act(self, instruction: str, observation: str, candidates: Sequence[str]) -> int:
        return int(np.argmax(self.scores(instruction, observation, candidates)))

    def reset(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> TorchPolicy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
