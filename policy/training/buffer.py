"""The offline transition table every trainer samples from: texts embedded once, steps as index arrays.

Every distinct text (instructions, state items, memory actions and responses, candidate parts) is one row
of the embedding table ``emb`` [U,D]. A *state record* is one state as the structured scorer reads it
(:mod:`models.inputs.state`): the rows of its items and their kinds (``rec_items``/``rec_kinds`` [S,T]) and
of its memory, the episode so far, most recent first (``rec_mem_action``/``rec_mem_response`` [S,M]). Each
step i holds its instruction row, the record of its state and of its next state, its candidate rows padded to
``K`` (``cand`` [N,K,P], P parts per candidate, see ``models.inputs.candidates``), the index of the taken
action, reward, done and the next step's candidates (for CQL's max over next actions; empty on the last step).
``-1`` is padding or an absent text (a zero vector) throughout. A batch gathers rows from ``emb`` into the
scorer's inputs (:class:`policy.scorer.model.StateInputs`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from models.inputs.arrays import state_texts
from models.inputs.candidates import DEFAULT_CANDIDATE_FEATURES, candidate_texts, parts_of
from models.inputs.state import StateEncoding, check_kinds
from models.inputs.tokens import CANDIDATE_TOKENS, ITEM_TOKENS, TokenIds, pad_ids
from models.state_layout import StateLayout
from models.trajectory import Trajectory
from policy.encoders.features import TextEmbedder
from policy.scorer.model import (
    TRAINING_READER,
    UNRECORDED_READER,
    CandidateScorer,
    Rows,
    ScorerConfig,
    StateInputs,
)
from policy.training.rewards import RewardSpec, step_channel, step_rewards

TRAIN_CANDIDATE_FEATURES = "action+arguments"
"""What training uses unless told otherwise (bundles without the manifest key are the older ``action``)."""


@dataclass
class ScorerOptions:
    """What every trainer's config says about the scorer it trains
    (:class:`policy.scorer.model.ScorerConfig`)."""

    hidden: int = ScorerConfig.hidden
    """Scorer width (token width of the structured scorer, policy.scorer.model; 64 trains about twice as fast
    as 128 on a CPU, at the same imitation accuracy on CookingWorld)."""
    layers: int = 1
    """Self-attention blocks over the state's items and memory."""
    memory: int = StateEncoding.memory
    """Earlier steps of the episode the scorer reads (0: none)."""
    max_items: int = StateEncoding.max_items
    """Items of the current state the scorer reads (models.inputs.state)."""
    facts: int = StateEncoding.facts
    """Distinct pieces of the memory window's responses the scorer reads as items (0: none)."""
    candidate_features: str = TRAIN_CANDIDATE_FEATURES
    """Per-candidate input: 'action' (its sentence embedding) or 'action+arguments' (also its object and
    target, see models.inputs.candidates)."""
    reader: str = TRAINING_READER
    """'tokens': items and candidates as sentence vectors and as token ids, each candidate read against each
    item token by token (policy.scorer.token_reader; bundle format 3); 'vectors': sentence vectors only
    (format 2; on CookingWorld's expert episodes it picks the right 'cook X in Y' 19 % of the time, 'tokens'
    73 %)."""
    token_bits: int = ScorerConfig.token_bits
    """How the token reader's tables are stored in the bundle: 4 (int4 rows with a scale each; the default
    bundle's ``policy.onnx`` is 3.3 MB), 8 (int8: 5.3 MB) or 32 (float32)."""
    reader_width: int = 0
    """Width of the token reader's relation vectors (0: ``hidden``); its two token tables are most of the
    bundle, and its per-(candidate, item) work scales with it."""
    init: str = ""
    """A checkpoint folder whose policy this training starts from (a warm start: ``edgejudge train
    --init``), e.g. the last round's on a log that grew; its scorer must be this config's. Empty: a fresh
    initialisation."""

    @property
    def encoding(self) -> StateEncoding:
        """How many items and memory steps the table and the scorer hold."""
        return StateEncoding(max_items=self.max_items, memory=self.memory, facts=self.facts)


class Batch:
    """Rows of the table as the scorer's inputs (vectors as :class:`policy.scorer.model.Rows`); the next state
    and candidates are gathered only when a trainer reads them. Items, memory and candidates are trimmed to
    the longest in the batch."""

    def __init__(self, table: TorchTable, rows: torch.Tensor):
        self._t, self._rows = table, rows
        t = table
        self.instruction = t.emb[t.instr[rows]]  # [B,D]
        self.state = t.states(t.state[rows])
        self.cands, self.mask = t.candidates(t.cand[rows], t.mask[rows])  # [B,K,P*D], [B,K] bool
        self.action = t.action[rows]  # [B] long
        self.reward = t.reward[rows]  # [B]
        self.done = t.done[rows]  # [B] float (1: no bootstrap)
        self.weight = t.weight[rows]  # [B] stored per-step weight source (e.g. TRCA advantage), 0 if unused
        self.success = t.success[rows]  # [B] float: the step's episode succeeded

    @functools.cached_property
    def taken(self) -> tuple[Rows, torch.Tensor]:
        """The taken action as the only candidate ([B,1,P] rows and an all-true [B,1] mask). The scorer
        scores every candidate on its own (:class:`policy.scorer.model.CandidateScorer`), so its score of this
        one alone equals its score among all the step's candidates, at a fraction of the cost: what a critic
        of the data's actions needs."""
        t = self._t
        index = t.cand[self._rows, self.action].unsqueeze(1)
        return Rows(t.emb, index, t.tokens), torch.ones(len(self._rows), 1, dtype=torch.bool)

    @functools.cached_property
    def next_state(self) -> StateInputs:
        return self._t.states(self._t.next_state[self._rows])

    @functools.cached_property
    def _next(self) -> tuple[Rows, torch.Tensor]:
        return self._t.candidates(self._t.next_cand[self._rows], self._t.next_mask[self._rows])

    @property
    def next_cands(self) -> Rows:
        return self._next[0]

    @property
    def next_mask(self) -> torch.Tensor:
        return self._next[1]


@dataclass
class TransitionTable:
    emb: np.ndarray  # [U,D]
    rec_items: np.ndarray  # [S,T] rows of the records' items (-1 padding)
    rec_kinds: np.ndarray  # [S,T] their kinds (0 padding)
    rec_mem_action: np.ndarray  # [S,M] rows of the memory's actions (-1 padding)
    rec_mem_response: np.ndarray  # [S,M] rows of their responses (-1: none or padding)
    instr: np.ndarray  # [N]
    state: np.ndarray  # [N] record of the step's state
    next_state: np.ndarray  # [N] record of its next state
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
    layouts: list[StateLayout] = field(default_factory=list)
    """The layouts its states were read with (their item kinds must fit the scorer)."""
    tokens: np.ndarray | None = None
    """[U, L] int64: the token ids of each row of ``emb`` (0-padded), for a token-reading scorer."""
    token_table: np.ndarray | None = None
    """[V, E] float32: the frozen token vectors those ids index (policy.scorer.token_reader)."""

    def __len__(self) -> int:
        return len(self.action)

    def subset(self, rows: np.ndarray) -> TransitionTable:
        return TransitionTable(
            emb=self.emb,
            rec_items=self.rec_items,
            rec_kinds=self.rec_kinds,
            rec_mem_action=self.rec_mem_action,
            rec_mem_response=self.rec_mem_response,
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
            layouts=self.layouts,
            tokens=self.tokens,
            token_table=self.token_table,
        )

    def to_torch(self) -> TorchTable:
        return TorchTable(self)


class TorchTable:
    """The table as tensors, with batch gathering."""

    def __init__(self, t: TransitionTable):
        self.n = len(t)
        self.candidate_features = t.candidate_features
        self.layouts = t.layouts
        d = t.emb.shape[1]
        # Row U is an all-zero embedding used for padding.
        self.emb = torch.from_numpy(np.concatenate([t.emb, np.zeros((1, d), np.float32)]))
        pad = len(t.emb)
        self.tokens = None
        if t.tokens is not None:  # the padding row has no token
            self.tokens = torch.from_numpy(
                np.concatenate([t.tokens, np.zeros((1, t.tokens.shape[1]), np.int64)])
            )
        self.token_table = None if t.token_table is None else torch.tensor(t.token_table)

        def idx(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.where(a < 0, pad, a).astype(np.int64))

        self.instr = idx(t.instr)
        self.state = torch.from_numpy(t.state.astype(np.int64))
        self.next_state = torch.from_numpy(t.next_state.astype(np.int64))
        self.rec_items, self.rec_mem_action = idx(t.rec_items), idx(t.rec_mem_action)
        self.rec_mem_response = idx(t.rec_mem_response)
        self.rec_kinds = torch.from_numpy(t.rec_kinds.astype(np.int64))
        self.rec_mem_mask = torch.from_numpy(t.rec_mem_action >= 0)
        self.cand, self.next_cand = idx(t.cand), idx(t.next_cand)
        # A candidate exists where its first part (the action text itself) does.
        self.mask = torch.from_numpy(t.cand[..., 0] >= 0)
        self.next_mask = torch.from_numpy(t.next_cand[..., 0] >= 0)
        self.action = torch.from_numpy(t.action.astype(np.int64))
        self.reward = torch.from_numpy(t.reward.astype(np.float32))
        self.done = torch.from_numpy(t.done.astype(np.float32))
        self.weight = torch.from_numpy(t.weight.astype(np.float32))
        self.success = torch.from_numpy(t.success.astype(np.float32))
        self.episode = torch.from_numpy(t.episode.astype(np.int64))  # [N] the step's trajectory

    def states(self, records: torch.Tensor) -> StateInputs:
        kinds, mem_mask = self.rec_kinds[records], self.rec_mem_mask[records]
        t = max(1, int((kinds > 0).sum(1).max()))
        m = max(1, int(mem_mask.sum(1).max()))
        return StateInputs(
            items=Rows(self.emb, self.rec_items[records][:, :t, None], self.tokens),
            item_kinds=kinds[:, :t],
            memory_actions=Rows(self.emb, self.rec_mem_action[records][:, :m, None]),
            memory_responses=Rows(self.emb, self.rec_mem_response[records][:, :m, None]),
            memory_mask=mem_mask[:, :m],
        )

    def candidates(self, cand: torch.Tensor, mask: torch.Tensor) -> tuple[Rows, torch.Tensor]:
        k = max(1, int(mask.sum(1).max()))
        return Rows(self.emb, cand[:, :k], self.tokens), mask[:, :k]

    def batch(self, rows: torch.Tensor) -> Batch:
        return Batch(self, rows)

    def sample(self, batch_size: int, gen: torch.Generator) -> Batch:
        return self.batch(torch.randint(0, self.n, (batch_size,), generator=gen))


def _pad_candidates(rows: list[list[int]], k: int, parts: int) -> np.ndarray:
    """Each step's candidate rows [N, k, parts], ``-1`` where it has fewer than ``k`` candidates."""
    out = np.full((len(rows), k, parts), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r) // parts] = np.asarray(r, dtype=np.int64).reshape(-1, parts)
    return out


def _record_arrays(
    rec_items: list[list[tuple[int, int]]], rec_memory: list[list[tuple[int, int]]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The state records as padded arrays: items' rows and kinds [R, T], memory actions' and responses' rows
    [R, M] (``-1`` and kind 0 for padding; at least one column each)."""
    t_max = max(1, max(len(r) for r in rec_items))
    m_max = max(1, max(len(r) for r in rec_memory))
    items = np.full((len(rec_items), t_max), -1, dtype=np.int64)
    kinds = np.zeros((len(rec_items), t_max), dtype=np.int64)
    mem_a = np.full((len(rec_items), m_max), -1, dtype=np.int64)
    mem_r = np.full((len(rec_items), m_max), -1, dtype=np.int64)
    for i, (its, mem) in enumerate(zip(rec_items, rec_memory, strict=True)):
        if its:
            kinds[i, : len(its)], items[i, : len(its)] = zip(*its, strict=True)
        if mem:
            mem_a[i, : len(mem)], mem_r[i, : len(mem)] = zip(*mem, strict=True)
    return items, kinds, mem_a, mem_r


def build_table(
    trajectories: Sequence[Trajectory],
    embedder: TextEmbedder,
    reward: RewardSpec,
    *,
    weight_channel: tuple[str, str] | None = None,
    step_weights: Callable[[Trajectory, list[float]], Sequence[float]] | None = None,
    candidate_features: str = TRAIN_CANDIDATE_FEATURES,
    encoding: StateEncoding | None = None,
    token_source: tuple[TokenIds, np.ndarray] | None = None,
) -> TransitionTable:
    """Embed every distinct text once and lay the steps out as index arrays. Each trajectory's states are
    read through the layout it records (``models.state_layout.layout_of``). With ``token_source`` (the
    tokenizer's ids and the frozen token table they index), every text's token ids are kept too. The
    ``weight`` column is ``step_weights(trajectory, its step rewards)``, else the stored ``weight_channel``,
    else 0."""
    encoding = encoding or StateEncoding()
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
    rec_items: list[list[tuple[int, int]]] = []
    rec_memory: list[list[tuple[int, int]]] = []

    layouts: dict[StateLayout, None] = {}

    def records(t: Trajectory) -> int:
        """Add the records of ``t``'s states (each step's, then the last next state); the first's index."""
        layout = t.view.layout
        layouts[layout] = None
        first = len(rec_items)
        observations = [s.observation for s in t.steps]
        observations.append(t.steps[-1].next_observation if t.steps else "")
        pairs = [(s.action, s.next_observation) for s in t.steps]
        for i, obs in enumerate(observations):
            st = state_texts(layout, encoding, obs, pairs[:i])
            rec_items.append([(k, row(x)) for k, x in st.items])
            rec_memory.append([(row(a), row(r)) for a, r in st.memory])
        return first

    def cand_row(cands: list[str]) -> list[int]:
        return [row(x) for x in candidate_texts(candidate_features, cands)]

    for ei, t in enumerate(trajectories):
        rs = step_rewards(t, reward)
        if step_weights is not None:
            ws = list(step_weights(t, rs))
        else:
            ws = step_channel(t, *weight_channel) if weight_channel else [0.0] * len(t.steps)
        n = len(t.steps)
        first = records(t)
        for i, s in enumerate(t.steps):
            if not s.candidates:
                continue  # nothing to choose from: no decision to learn
            instr.append(row(t.instruction))
            state.append(first + i)
            next_state.append(first + i + 1)
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
    items, kinds, mem_a, mem_r = _record_arrays(rec_items, rec_memory)
    emb = embedder.embed(list(texts))
    tokens = token_table = None
    if token_source is not None:
        ids, token_table = token_source
        tokens = pad_ids([ids.ids(x) for x in texts], ids.length)
    return TransitionTable(
        emb=emb,
        rec_items=items,
        rec_kinds=kinds,
        rec_mem_action=mem_a,
        rec_mem_response=mem_r,
        instr=np.array(instr),
        state=np.array(state),
        next_state=np.array(next_state),
        cand=_pad_candidates(cand_rows, k, parts),
        action=np.array(action),
        reward=np.array(rew, dtype=np.float32),
        done=np.array(done, dtype=np.float32),
        next_cand=_pad_candidates(next_cand_rows, k, parts),
        weight=np.array(weight, dtype=np.float32),
        success=np.array(success, dtype=np.float32),
        episode=np.array(episode),
        info={
            "texts": len(texts),
            "max_candidates": k,
            "episodes": len(trajectories),
            "max_items": items.shape[1],
            "max_memory": mem_a.shape[1],
        },
        candidate_features=candidate_features,
        layouts=list(layouts),
        tokens=tokens,
        token_table=token_table,
    )


TOKEN_LENGTH = max(ITEM_TOKENS, CANDIDATE_TOKENS)
"""Token ids kept per text of a training table."""


def scorer_config(table: TransitionTable | TorchTable, cfg: Any, dim: int) -> ScorerConfig:
    """The scorer a trainer builds: width from the algorithm config, candidate features from the table
    (which must be the ones the config asks for)."""
    if table.candidate_features != cfg.candidate_features:
        raise ValueError(
            f"the transition table has {table.candidate_features!r} candidate features, the config asks for "
            f"{cfg.candidate_features!r}: build the table with candidate_features={cfg.candidate_features!r}"
        )
    kinds = ScorerConfig.kinds
    for layout in table.layouts:
        check_kinds(layout, kinds, "training data")
    top = int(table.rec_kinds.max()) if len(table.rec_kinds) else 0
    if top >= kinds:  # a table built without its layouts: the kinds it holds
        raise ValueError(f"the states have {top} item kinds, the scorer has room for {kinds - 1}")
    reader = getattr(cfg, "reader", UNRECORDED_READER)  # ScorerConfig refuses an unknown one
    vocab = dims = 0
    if reader == "tokens":
        if table.tokens is None or table.token_table is None:
            raise ValueError("a token-reading scorer needs a table built with token_source")
        vocab, dims = table.token_table.shape
    return ScorerConfig(
        embedding_dim=dim,
        hidden=cfg.hidden,
        layers=cfg.layers,
        candidate_features=cfg.candidate_features,
        encoding=cfg.encoding,
        reader=reader,
        reader_width=int(getattr(cfg, "reader_width", 0)),
        token_bits=int(getattr(cfg, "token_bits", ScorerConfig.token_bits)),
        vocab=int(vocab),
        token_dims=int(dims),
    )


def new_scorer(table: TransitionTable | TorchTable, cfg: Any, dim: int) -> CandidateScorer:
    """A fresh scorer for ``table`` as ``cfg`` (a trainer's config) asks (with the table's frozen token
    vectors where it reads tokens)."""
    scfg = scorer_config(table, cfg, dim)
    frozen = table.token_table if scfg.reader == "tokens" else None
    if isinstance(frozen, np.ndarray):
        frozen = torch.from_numpy(frozen)
    return CandidateScorer(scfg, frozen)
