"""A bundle format's inputs, built from texts: one builder per format, read by every runner.

The runtime (``edge.runtime``, behind edge-serve and ``edgejudge eval BUNDLE``) and the checkpoint policy
(``policy.evaluation.torch_policy``) both turn a state text, its episode memory and the candidate texts into
the policy's named inputs (:mod:`models.inputs.schema`) through the builder of their format, so a checkpoint
and its bundle read a state alike. :func:`input_format` picks the builder. A builder works in three steps so
that a runner can batch and cache the encoder's work: :meth:`prepare` a request's texts, embed the ``texts``
it lists (the first list through a cache, the second not), :meth:`build` the state's arrays from those
vectors; then :meth:`feeds` of a batch of states and :meth:`candidate_feeds` of their candidates' texts.

- format 1 (:class:`FlatInputs`): one vector of the whole state text, new every step; no memory;
- format 2 (:class:`StructuredInputs`): the state's items and the memory window (:mod:`models.inputs.arrays`);
- format 3 (:class:`TokenInputs`): format 2 and the token ids of the items and of the candidates
  (:mod:`models.inputs.tokens`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from models.inputs.arrays import StateArrays, StateTexts, pad_batch, state_arrays, state_texts
from models.inputs.state import Memory, StateEncoding
from models.inputs.tokens import TokenIds, id_grid
from models.state_layout import StateLayout


class FlatInputs:
    """Format 1: one vector of the whole state text, not cached (new every step); the memory is not read."""

    version = 1

    def prepare(self, observation: str, memory: Memory = ()) -> str:
        return observation

    def texts(self, prepared: str) -> tuple[list[str], list[str]]:
        """The texts to encode: through the cache, and not."""
        return [], [prepared]

    def build(self, prepared: str, cached: np.ndarray, uncached: np.ndarray) -> np.ndarray:
        return uncached[0]

    def feeds(self, states: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        return {"state": np.stack(states).astype(np.float32, copy=False)}

    def candidate_feeds(self, candidates: Sequence[Sequence[str]], k: int) -> dict[str, np.ndarray]:
        """What the graph reads of the candidates' texts besides their features: nothing."""
        return {}


class StructuredInputs:
    """Format 2: the state's items and the memory window (:mod:`models.inputs.arrays`), every text through
    the cache (most of them repeat from one step to the next)."""

    version = 2

    def __init__(self, dim: int, layout: StateLayout, encoding: StateEncoding):
        self.dim, self.layout, self.encoding = dim, layout, encoding

    def prepare(self, observation: str, memory: Memory = ()) -> StateTexts:
        return state_texts(self.layout, self.encoding, observation, memory)

    def texts(self, prepared: StateTexts) -> tuple[list[str], list[str]]:
        return prepared.texts(), []

    def build(self, prepared: StateTexts, cached: np.ndarray, uncached: np.ndarray) -> StateArrays:
        return state_arrays(prepared, cached, self.dim)

    def feeds(self, states: Sequence[StateArrays]) -> dict[str, np.ndarray]:
        return pad_batch(states, self.dim)

    def candidate_feeds(self, candidates: Sequence[Sequence[str]], k: int) -> dict[str, np.ndarray]:
        return {}


@dataclass
class TokenStateArrays(StateArrays):
    """A format-3 state: the format-2 arrays and its items' texts (whose token ids the graph reads)."""

    item_texts: list[str] = field(default_factory=list)


class TokenInputs(StructuredInputs):
    """Format 3: the format-2 inputs, the token ids of the state's items and of the candidates, each text
    read up to its cap (``caps``: items, candidates)."""

    version = 3

    def __init__(
        self, dim: int, layout: StateLayout, encoding: StateEncoding, ids: TokenIds, caps: tuple[int, int]
    ):
        super().__init__(dim, layout, encoding)
        self.ids, self.caps = ids, caps

    def build(self, prepared: StateTexts, cached: np.ndarray, uncached: np.ndarray) -> TokenStateArrays:
        a = state_arrays(prepared, cached, self.dim)
        return TokenStateArrays(
            a.items, a.kinds, a.memory_actions, a.memory_responses, [t for _k, t in prepared.items]
        )

    def feeds(self, states: Sequence[StateArrays]) -> dict[str, np.ndarray]:
        texts = [s.item_texts for s in states]  # type: ignore[attr-defined]
        return {**pad_batch(states, self.dim), "item_tokens": id_grid(self.ids, texts, self.caps[0])}

    def candidate_feeds(self, candidates: Sequence[Sequence[str]], k: int) -> dict[str, np.ndarray]:
        """``candidate_tokens`` [B, k, L]: each request's candidate texts, padded to ``k`` candidates."""
        ids = id_grid(self.ids, [list(c) for c in candidates], self.caps[1])
        if ids.shape[1] < k:
            ids = np.pad(ids, ((0, 0), (0, k - ids.shape[1]), (0, 0)))
        return {"candidate_tokens": ids}


class InputFormat(Protocol):
    """What every format's builder does (the prepared state and its arrays are the format's own types)."""

    version: int

    def prepare(self, observation: str, memory: Memory = ()) -> Any: ...

    def texts(self, prepared: Any) -> tuple[list[str], list[str]]: ...

    def build(self, prepared: Any, cached: np.ndarray, uncached: np.ndarray) -> Any: ...

    def feeds(self, states: Sequence[Any]) -> dict[str, np.ndarray]: ...

    def candidate_feeds(self, candidates: Sequence[Sequence[str]], k: int) -> dict[str, np.ndarray]: ...


def input_format(
    version: int,
    *,
    dim: int = 0,
    layout: StateLayout | None = None,
    encoding: StateEncoding | None = None,
    token_ids: TokenIds | None = None,
    caps: tuple[int, int] | None = None,
) -> InputFormat:
    """The builder of bundle format ``version``: 1 needs nothing; 2 the embedding size, the layout and the
    state encoding; 3 also the token ids and their caps (items, candidates)."""
    if version == 1:
        return FlatInputs()
    if version not in (2, 3) or layout is None or encoding is None or dim < 1:
        raise ValueError(f"format {version}: needs the embedding size, the state layout and encoding")
    if version == 2:
        return StructuredInputs(dim, layout, encoding)
    if token_ids is None or caps is None:
        raise ValueError("format 3: needs the token ids and their caps")
    return TokenInputs(dim, layout, encoding, token_ids, caps)


def embed_inputs(
    fmt: InputFormat, observation: str, memory: Memory, embed: Callable[[list[str]], np.ndarray], dim: int
) -> Any:
    """One state's arrays with every text embedded by ``embed`` (no cache, no batching across requests):
    what a runner of one request at a time does."""
    prepared = fmt.prepare(observation, memory)
    cached, uncached = fmt.texts(prepared)
    texts = cached + uncached
    vectors = embed(texts) if texts else np.zeros((0, dim), dtype=np.float32)
    return fmt.build(prepared, vectors[: len(cached)], vectors[len(cached) :])
