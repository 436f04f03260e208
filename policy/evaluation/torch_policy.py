"""Run a training checkpoint: the features of the encoder it was trained on (cached) + the torch scorer.

The state and the memory become the scorer's inputs through the same builder as the runtime's
(:mod:`models.inputs.formats`, the format the checkpoint exports to, through the layout its training data
recorded)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import torch

from edge.policies import Memory, ScoringPolicy
from models.inputs.candidates import candidate_matrix
from models.inputs.formats import embed_inputs, input_format
from models.inputs.tokens import TokenIds
from models.state_layout import layout_of
from policy.encoders.features import TextEmbedder
from policy.scorer.model import StateInputs
from policy.training.common import load_checkpoint, set_threads


class TorchPolicy(ScoringPolicy):
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
        self.layout = layout_of(self.meta.get("provenance", {}).get("world") or {})
        cfg = self.model.cfg
        caps = (cfg.item_tokens, cfg.candidate_tokens)
        reads_tokens = self.model.reader is not None
        self.inputs = input_format(
            cfg.format_version,
            dim=cfg.embedding_dim,
            layout=self.layout,
            encoding=cfg.encoding,
            token_ids=TokenIds(self.embedder.encoder.tokenizer_json, max(caps)) if reads_tokens else None,
            caps=caps,
        )
        if reads_tokens:
            self.model.reader.bake()  # its quantised token tables, as the exported bundle reads them

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> np.ndarray:
        cfg = self.model.cfg
        d = cfg.embedding_dim
        instr = torch.from_numpy(self.embedder.embed([instruction]))
        arrays = embed_inputs(self.inputs, state, memory, self.embedder.embed, d)
        feeds = self.inputs.feeds([arrays])
        cand_tokens = self.inputs.candidate_feeds([candidates], len(candidates)).get("candidate_tokens")
        cand = candidate_matrix(cfg.candidate_features, candidates, self.embedder.embed, d)
        with torch.no_grad():
            s = self.model(
                instr,
                StateInputs(**{k: torch.from_numpy(v) for k, v in feeds.items()}),
                torch.from_numpy(cand)[None],
                torch.ones(1, len(candidates), dtype=torch.bool),
                None if cand_tokens is None else torch.from_numpy(cand_tokens),
            )
        return s[0].numpy()
