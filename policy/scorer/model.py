"""The structured, memoryful candidate scorer: each candidate attends over the state's items and the episode.

Inputs: the bundle-format-2 ``policy.onnx`` interface, the table in ``models.inputs.schema`` (the
instruction, the state's items and their kinds, the memory window's actions, responses and mask, the
candidates and their mask; scores out, padded candidates get ``MASKED_SCORE``); with the token reader
(``reader="tokens"``, :mod:`policy.scorer.token_reader`) format 3's, which adds the items' and candidates'
token ids.

How it scores: the instruction, every item (its vector plus a learned embedding of its kind) and every memory
step (action and response vectors plus a learned embedding of its age) become tokens of width H; a small
transformer (``layers`` pre-norm self-attention blocks) mixes them, so "the apple is held" and "the apple was
put in the fridge two steps ago" can meet. Each candidate then attends over the tokens (cross-attention;
what it finds enters added to and multiplied with the candidate, so that "grill the chicken" found in a
recipe can favour "cook chicken in toaster"), is modulated FiLM-style by the instruction token, and a small
MLP gives its score. Match features (the best cosine of each candidate part to the items of each kind and to
the memory's actions and responses) say directly whether an object is held, in view, in the recipe or
already acted on. Items include the *facts* of earlier responses (models.inputs.state). With
``action+arguments`` features a gated bilinear object-target affinity is added (the cosine of the two
argument embeddings plus a low-rank learned correction), which applies to objects never seen in training.

The same network serves every trainer: IQL/BC/AWR use its scores as the actor's logits, CQL as Q-values;
:class:`ValueHead` gives IQL's state value from the same kind of state encoder. Parity with onnxruntime is
checked at export (``policy.export.policy_graph``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import torch
from torch import nn

from models import settings
from models.inputs.candidates import DEFAULT_CANDIDATE_FEATURES, parts_of
from models.inputs.schema import MASKED_SCORE, input_names, state_names
from models.inputs.state import StateEncoding, config_from_dict
from models.inputs.tokens import CANDIDATE_TOKENS, ITEM_TOKENS
from policy.scorer.attention import Attention, Block
from policy.scorer.rows import Rows, part, project, similarity
from policy.scorer.token_reader import DEFAULT_BITS, TABLE_BITS, TokenReader

READERS = {"vectors": 2, "tokens": 3}
"""Scorer readers and the bundle format each is exported in."""
TRAINING_READER = "tokens"
"""The reader training builds (``ScorerOptions.reader``, ``edgejudge train --set reader=...``)."""
UNRECORDED_READER = "vectors"
"""What a scorer config that names no reader means: checkpoints written before the token reader, which read
sentence vectors only. Training always records its reader."""


@dataclass(frozen=True)
class ScorerConfig:
    embedding_dim: int = 384
    """Sentence-embedding size D (all-MiniLM-L6-v2: 384)."""
    hidden: int = 64
    """Token width H."""
    dropout: float = 0.0
    """Dropout in attention and hidden layers during training (off at eval and export)."""
    candidate_features: str = DEFAULT_CANDIDATE_FEATURES
    """``action`` (candidates [B,K,D]) or ``action+arguments`` ([B,K,3D]: action, object, target; see
    ``models.inputs.candidates``)."""
    affinity_rank: int = 8
    """Rank of the learned object-target affinity (``action+arguments`` only)."""
    heads: int = 4
    """Attention heads (H must be a multiple)."""
    layers: int = 1
    """Self-attention blocks over the state's tokens."""
    kinds: int = 16
    """Rows of the item-kind embedding: a layout may have up to ``kinds - 3`` parts
    (``models.inputs.state.kinds_of``)."""
    encoding: StateEncoding = field(default_factory=StateEncoding)
    """Items, memory steps (rows of the age embedding) and facts read (models.inputs.state)."""
    reader: str = UNRECORDED_READER
    """``vectors``: items and candidates as sentence vectors only (bundle format 2); ``tokens``: also their
    token ids, read against each other by :class:`policy.scorer.token_reader.TokenReader` (bundle format
    3)."""
    vocab: int = 0
    """Rows of the frozen token table (``tokens`` reader)."""
    token_dims: int = 0
    """Width of the frozen token table (``tokens`` reader)."""
    item_tokens: int = ITEM_TOKENS
    """Tokens of an item read (``tokens`` reader; models.inputs.tokens)."""
    candidate_tokens: int = CANDIDATE_TOKENS
    """Tokens of a candidate read (``tokens`` reader)."""
    token_bits: int = DEFAULT_BITS
    """How the token reader's baked tables are stored in ``policy.onnx`` and run by a checkpoint: 4 (int4
    rows with a scale each, two values a byte), 8 (int8, twice the size) or 32 (float32; ``tokens``
    reader). Chosen at export: training does not read it."""
    reader_width: int = 0
    """Width of the token reader's relation vectors (``tokens`` reader); 0: ``hidden``. Its two baked token
    tables ([vocab, width + 1] each) are most of ``policy.onnx``, and its per-(candidate, item) work scales
    with it."""

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ScorerConfig:
        """The config :meth:`to_dict` wrote; checkpoints written before the encoding was one entry hold
        ``max_items``, ``memory`` and ``facts`` at the top level."""
        raw = dict(raw)
        flat = {k: raw.pop(k) for k in ("max_items", "memory", "facts") if k in raw}
        raw["encoding"] = StateEncoding.from_dict({**flat, **dict(raw.get("encoding") or {})})
        cfg = config_from_dict(cls, raw, "scorer config")
        parts_of(cfg.candidate_features)  # ValueError on an unknown kind
        if cfg.hidden % cfg.heads:
            raise ValueError(f"hidden ({cfg.hidden}) must be a multiple of heads ({cfg.heads})")
        return cfg

    def __post_init__(self) -> None:
        if self.reader not in READERS:
            raise ValueError(f"unknown scorer reader {self.reader!r}: expected one of {', '.join(READERS)}")
        if self.token_bits not in TABLE_BITS:
            raise ValueError(f"token_bits {self.token_bits}: expected one of {TABLE_BITS}")

    @property
    def format_version(self) -> int:
        """The bundle format this scorer is exported in."""
        return READERS[self.reader]

    @property
    def candidate_dim(self) -> int:
        return parts_of(self.candidate_features) * self.embedding_dim

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class StateInputs(NamedTuple):
    """A batch of states as the scorer reads them (see the module docstring for shapes; in training the
    vectors may be :class:`Rows`)."""

    items: torch.Tensor
    item_kinds: torch.Tensor
    memory_actions: torch.Tensor
    memory_responses: torch.Tensor
    memory_mask: torch.Tensor
    item_tokens: torch.Tensor | None = None
    """Token ids of the items [B,T,L] (bundle format 3, dense inputs; :class:`Rows` items carry theirs)."""


class StateEncoder(nn.Module):
    """(instruction [B,D], :class:`StateInputs`) -> tokens [B,1+T+M,H] and their padding [B,1+T+M]; token 0
    is the instruction's (never padding), the context of the whole state after the blocks."""

    def __init__(self, cfg: ScorerConfig, fast: bool = True):
        super().__init__()
        self.fast = fast
        """Run the blocks on the real tokens only, attention fused (see :class:`CandidateScorer`)."""
        d, h = cfg.embedding_dim, cfg.hidden
        self.instr = nn.Linear(d, h)
        self.item = nn.Linear(d, h)
        self.kind = nn.Embedding(cfg.kinds, h)
        self.mem_action = nn.Linear(d, h)
        self.mem_response = nn.Linear(d, h, bias=False)
        self.age = nn.Embedding(max(1, cfg.encoding.memory), h)
        self.blocks = nn.ModuleList(Block(h, cfg.heads, cfg.dropout) for _ in range(cfg.layers))
        self.ln = nn.LayerNorm(h)

    def forward(self, instruction: torch.Tensor, s: StateInputs) -> tuple[torch.Tensor, torch.Tensor]:
        ages = torch.arange(s.memory_mask.shape[1], device=instruction.device)
        memory = project(s.memory_actions, self.mem_action) + project(s.memory_responses, self.mem_response)
        tokens = torch.cat(
            [
                self.instr(instruction).unsqueeze(1),
                project(s.items, self.item) + self.kind(s.item_kinds),
                memory + self.age(ages),
            ],
            dim=1,
        )
        pad = torch.cat(
            [torch.zeros_like(s.item_kinds[:, :1], dtype=torch.bool), s.item_kinds == 0, ~s.memory_mask],
            dim=1,
        )
        if self.fast:
            b, n, h = tokens.shape
            keep = torch.nonzero(~pad.flatten()).squeeze(1)
            x = tokens.reshape(b * n, h).index_select(0, keep)
            for block in self.blocks:
                x = block.packed(x, keep, pad)
            x = self.ln(x)
            return x.new_zeros(b * n, h).index_copy(0, keep, x).view(b, n, h), pad
        for block in self.blocks:
            tokens = block(tokens, pad)
        return self.ln(tokens), pad


class CandidateScorer(nn.Module):
    """The policy graph: ``forward(instruction, state, candidates, mask)`` with ``state`` a
    :class:`StateInputs`; :class:`PolicyGraph` is the same with flat inputs, as exported.

    ``fast`` (chosen once, when the scorer is built) takes the fast paths, which compute the same values with
    less work: the state encoder runs its token-wise layers on the state's real tokens only and attention
    through ``scaled_dot_product_attention``; on a training batch (:class:`Rows`) the token reader sums tokens
    as matrix products over the batch's vocabulary (:meth:`TokenReader.rows`), and what depends on the
    batch's ids alone (distinct rows, match features, the reader's pairs) is computed once per batch, on a
    worker thread while the previous batch trains; the learners' Adam and Polyak average run as fused
    multi-tensor kernels. Unset, it is on unless ``EDGEJUDGE_TRAIN_REFERENCE=1`` asks for the reference
    computation (A/B checks and ``tools/bench/bench_train_speed.py``: the two agree to float rounding,
    ``tests/policy/scorer/test_model.py``). The exported graph takes the plain ops (:class:`PolicyGraph`
    turns the fast paths off)."""

    def __init__(
        self,
        cfg: ScorerConfig | None = None,
        token_table: torch.Tensor | None = None,
        *,
        fast: bool | None = None,
    ):
        super().__init__()
        self.cfg = cfg or ScorerConfig()
        self.fast = (not settings.train_reference()) if fast is None else fast
        d, h = self.cfg.embedding_dim, self.cfg.hidden
        self.reader: TokenReader | None = None
        if self.cfg.reader == "tokens":
            # The frozen table is part of the checkpoint; a scorer built to load one starts with zeros.
            if token_table is None:
                token_table = torch.zeros(self.cfg.vocab, self.cfg.token_dims)
            if tuple(token_table.shape) != (self.cfg.vocab, self.cfg.token_dims):
                raise ValueError(
                    f"token table {tuple(token_table.shape)}, the config says "
                    f"({self.cfg.vocab}, {self.cfg.token_dims})"
                )
            width = self.cfg.reader_width or h
            self.reader = TokenReader(token_table, width, self.cfg.kinds, self.cfg.token_bits, fast=self.fast)
            self.read_proj = nn.Linear(width, h)
            self.exact_proj = nn.Linear(self.reader.exact_dim, h)
        self.state = StateEncoder(self.cfg, self.fast)
        self.parts = parts_of(self.cfg.candidate_features)
        self.cand_proj = nn.Linear(self.parts * d, h)
        self.instr_proj = nn.Linear(d, h, bias=False)
        # How well each candidate part matches the state: the best cosine over the items of every kind, over
        # the memory's actions and over its responses (parts x (kinds - 1 + 2) features).
        self.match = nn.Linear(self.parts * (self.cfg.kinds + 1), h)
        self.ln_q = nn.LayerNorm(h)
        self.cross = Attention(h, self.cfg.heads, self.cfg.dropout)
        self.ln_z = nn.LayerNorm(h)
        self.film = nn.Linear(h, 2 * h)
        self.head = nn.Sequential(nn.Linear(h, h), nn.GELU(), nn.Dropout(self.cfg.dropout), nn.Linear(h, 1))
        if self.parts == 3:
            r = self.cfg.affinity_rank
            self.aff_u = nn.Linear(d, r, bias=False)
            self.aff_v = nn.Linear(d, r, bias=False)
            self.aff_scale = nn.Parameter(torch.tensor(1.0))
            self.aff_gate = nn.Linear(h, 1)

    def forward(
        self,
        instruction: torch.Tensor,
        state: StateInputs,
        candidates: torch.Tensor | Rows,
        mask: torch.Tensor,
        candidate_tokens: torch.Tensor | None = None,
    ) -> torch.Tensor:
        tokens, pad = self.state(instruction, state)
        ctx = tokens[:, 0]  # [B,H]
        cand = project(candidates, self.cand_proj) + self.instr_proj(instruction).unsqueeze(1)  # [B,K,H]
        cand = cand + self.match(self.match_features(state, candidates))
        if self.reader is not None:
            pooled, exact = self.read_tokens(state, candidates, candidate_tokens)
            cand = cand + self.read_proj(pooled) + self.exact_proj(exact)
        att = self.cross(self.ln_q(cand), tokens, pad)
        z = cand + att + cand * att  # the product lets the head relate what a candidate is to what it found
        gamma, beta = self.film(ctx).unsqueeze(1).chunk(2, dim=-1)
        z = nn.functional.gelu(self.ln_z(z) * (1 + gamma) + beta)
        scores = self.head(z).squeeze(-1)  # [B,K]
        if self.parts == 3:
            d = self.cfg.embedding_dim
            obj, target = part(candidates, 1, d), part(candidates, 2, d)
            affinity = self.aff_scale * (obj * target).sum(-1) + (self.aff_u(obj) * self.aff_v(target)).sum(
                -1
            )
            scores = scores + self.aff_gate(z).squeeze(-1) * affinity
        return torch.where(mask, scores, torch.full_like(scores, MASKED_SCORE))

    def use_fast_paths(self, on: bool) -> None:
        """Take the fast paths (or the plain ops) from now on, in every part of the scorer."""
        self.fast = self.state.fast = on
        if self.reader is not None:
            self.reader.fast = on

    def read_tokens(
        self, state: StateInputs, candidates: torch.Tensor | Rows, candidate_tokens: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The token reader's (pooled [B,K,H], exact-match features): from the rows of the training table
        when the inputs are :class:`Rows` with token ids, else from the id tensors."""
        assert self.reader is not None
        cfg = self.cfg
        items = state.items
        if isinstance(candidates, Rows) and isinstance(items, Rows):
            if candidates.tokens is None or candidates.tokens is not items.tokens:
                raise ValueError("a token-reading scorer needs the table's token ids with its rows")
            return self.reader.rows(
                candidates.tokens,
                candidates.index[..., 0],
                items.index[..., 0],
                state.item_kinds,
                candidate_tokens=cfg.candidate_tokens,
                item_tokens=cfg.item_tokens,
                cache=candidates.cache.setdefault(("reader", id(items)), {"items": items})
                if self.fast
                else None,
            )
        if candidate_tokens is None or state.item_tokens is None:
            raise ValueError("a token-reading scorer needs item_tokens and candidate_tokens")
        return self.reader.dense(candidate_tokens, state.item_tokens, state.item_kinds)

    @torch.no_grad()
    def prepare(self, state: StateInputs, candidates: torch.Tensor | Rows) -> None:
        """Compute what a forward pass on these rows needs that depends on the rows alone (distinct rows,
        match features, the token reader's pairs) into the rows' caches: a trainer calls it for the next
        batch on another thread while this one trains (:func:`policy.training.common.train_loop`)."""
        items = state.items
        if not (self.fast and isinstance(candidates, Rows) and isinstance(items, Rows)):
            return
        for rows in (items, state.memory_actions, state.memory_responses, candidates):
            if isinstance(rows, Rows):
                for p in range(rows.parts):
                    rows.unique(p)
        self.match_features(state, candidates)
        if self.reader is not None and candidates.tokens is not None:
            cfg = self.cfg
            self.reader.cached_pairs(
                candidates.tokens,
                candidates.index[..., 0],
                items.index[..., 0],
                state.item_kinds,
                cfg.candidate_tokens,
                cfg.item_tokens,
                candidates.cache.setdefault(("reader", id(items)), {"items": items}),
            )

    def match_features(self, state: StateInputs, candidates: torch.Tensor | Rows) -> torch.Tensor:
        """[B,K,parts*(kinds+1)]: per candidate part, the best cosine to an item of each kind 1..kinds-1, to a
        memory action and to a memory response (-1 where there is none)."""
        if self.fast and isinstance(candidates, Rows) and isinstance(state.items, Rows):
            # A function of the batch's frozen vectors alone (no parameter): once per batch and candidates.
            key = ("match", id(state.items), self.cfg.kinds)
            if key not in candidates.cache:
                with torch.no_grad():
                    candidates.cache[key] = (state.items, self.match_features_fast(state, candidates))
            return candidates.cache[key][1]
        d, p = self.cfg.embedding_dim, self.parts
        sims = similarity(candidates, state.items, p, d)  # [B,K,P,T]
        kinds = torch.arange(1, self.cfg.kinds, device=sims.device)
        of_kind = state.item_kinds.unsqueeze(-1) == kinds  # [B,T,kinds-1]
        per_kind = sims.unsqueeze(-1).masked_fill(~of_kind[:, None, None], -1.0).amax(3)  # [B,K,P,kinds-1]
        absent = (~state.memory_mask)[:, None, None, :]
        memory = [
            similarity(candidates, group, p, d).masked_fill(absent, -1.0).amax(-1, keepdim=True)
            for group in (state.memory_actions, state.memory_responses)
        ]
        return torch.cat([per_kind, *memory], dim=-1).flatten(-2)  # [B,K,P*(kinds+1)]

    def match_features_fast(self, state: StateInputs, candidates: Rows) -> torch.Tensor:
        """:meth:`match_features` with the best cosine per kind taken by a scatter (not a mask per kind)."""
        d, p = self.cfg.embedding_dim, self.parts
        sims = similarity(candidates, state.items, p, d)  # [B,K,P,T]
        b, k, _, t = sims.shape
        index = state.item_kinds[:, None, None, :].expand(b, k, p, t)
        per_kind = torch.full((b, k, p, self.cfg.kinds), -1.0, dtype=sims.dtype)
        per_kind = per_kind.scatter_reduce(3, index, sims, "amax")[..., 1:]  # [B,K,P,kinds-1]
        absent = (~state.memory_mask)[:, None, None, :]
        memory = [
            similarity(candidates, group, p, d).masked_fill(absent, -1.0).amax(-1, keepdim=True)
            for group in (state.memory_actions, state.memory_responses)
        ]
        return torch.cat([per_kind, *memory], dim=-1).flatten(-2)


class PolicyGraph(nn.Module):
    """:class:`CandidateScorer` with the flat inputs of ``policy.onnx``, in the order of
    ``models.inputs.schema``'s row for its format (2 or 3; the exporter binds them by position, each named
    from the row)."""

    def __init__(self, scorer: CandidateScorer):
        super().__init__()
        scorer.use_fast_paths(False)  # a traced graph takes the plain ops
        self.scorer = scorer
        self.version = scorer.cfg.format_version

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        named = dict(zip(input_names(self.version), inputs, strict=True))
        state = StateInputs(**{name: named[name] for name in state_names(self.version)})
        return self.scorer(
            named["instruction"], state, named["candidates"], named["mask"], named.get("candidate_tokens")
        )


class ValueHead(nn.Module):
    """V(instruction, state) -> [B]: IQL's state value (not exported)."""

    def __init__(self, cfg: ScorerConfig, *, fast: bool | None = None):
        super().__init__()
        self.state = StateEncoder(cfg, (not settings.train_reference()) if fast is None else fast)
        self.out = nn.Sequential(nn.Linear(cfg.hidden, cfg.hidden), nn.GELU(), nn.Linear(cfg.hidden, 1))

    def forward(self, instruction: torch.Tensor, state: StateInputs) -> torch.Tensor:
        tokens, _pad = self.state(instruction, state)
        return self.out(tokens[:, 0]).squeeze(-1)


def build_scorer(
    cfg: ScorerConfig | None = None,
    seed: int = 0,
    token_table: torch.Tensor | None = None,
    *,
    fast: bool | None = None,
) -> CandidateScorer:
    """A freshly initialised scorer, deterministic for a given seed."""
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = CandidateScorer(cfg, token_table, fast=fast)
    finally:
        torch.random.set_rng_state(gen_state)
    return model.eval()
