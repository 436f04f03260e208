"""The policy graph's inputs per bundle format: one row per input (name, dtype, dimensions), read by everyone.

The manifest's ``policy_io`` (:mod:`models.bundle`), the export's example inputs and dynamic axes and its
parity inputs (``policy.export.policy_graph``), the runtime's feeds (``edge.runtime``, through
:func:`models.inputs.arrays.pad_batch`) and the trainers' batches all read this table, and every input is
passed by name: adding an input is an edit to its producer, the model and its row here.

Dimensions are named: ``batch``, ``items``, ``memory`` and ``candidates`` vary per call; ``D`` is the
embedding size and ``C`` the candidate feature size (``D`` or ``3D``: :mod:`models.inputs.candidates`).

Format 2 (the structured scorer)::

    instruction      [batch, D]               float32  the task
    items            [batch, items, D]        float32  the state's items (models.inputs.state)
    item_kinds       [batch, items]           int64    each item's kind (0: padding)
    memory_actions   [batch, memory, D]       float32  the memory window, most recent first: the action ...
    memory_responses [batch, memory, D]       float32  ... and its response (zeros: none)
    memory_mask      [batch, memory]          bool     False on padding
    candidates       [batch, candidates, C]   float32  per-candidate features
    mask             [batch, candidates]      bool     False on padding
    -> scores        [batch, candidates]      float32  padded candidates get MASKED_SCORE

Format 3 (the structured scorer that also reads tokens, ``policy.scorer.token_reader``): format 2's inputs
and::

    item_tokens      [batch, items, item_tokens]             int64  each item's token ids (0: padding)
    candidate_tokens [batch, candidates, candidate_tokens]   int64  each candidate's token ids

(``models.inputs.tokens``: the encoder's tokenizer without special tokens, truncated at the bundle's caps.)

Format 1 (the flat scorer): ``instruction``, ``state`` [batch, D] (the whole state text's vector),
``candidates`` and ``mask``. Stdlib and numpy only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

MASKED_SCORE = -1.0e9
"""The score of a padded candidate (mask False)."""


@dataclass(frozen=True)
class Tensor:
    """One input or output of the policy graph."""

    name: str
    dtype: str
    """A numpy dtype name: ``float32``, ``int64`` or ``bool``."""
    dims: tuple[str, ...]
    """Named dimensions (see the module docstring)."""
    state: bool = False
    """Part of the state (the scorer's ``StateInputs`` in format 2)."""

    def shape(self, sizes: Mapping[str, int]) -> tuple[int, ...]:
        return tuple(sizes[d] for d in self.dims)


def _inputs(*state: Tensor, candidates: tuple[Tensor, ...] = ()) -> tuple[Tensor, ...]:
    return (
        Tensor("instruction", "float32", ("batch", "D")),
        *state,
        Tensor("candidates", "float32", ("batch", "candidates", "C")),
        Tensor("mask", "bool", ("batch", "candidates")),
        *candidates,
    )


_STRUCTURED = (
    Tensor("items", "float32", ("batch", "items", "D"), state=True),
    Tensor("item_kinds", "int64", ("batch", "items"), state=True),
    Tensor("memory_actions", "float32", ("batch", "memory", "D"), state=True),
    Tensor("memory_responses", "float32", ("batch", "memory", "D"), state=True),
    Tensor("memory_mask", "bool", ("batch", "memory"), state=True),
)
POLICY_INPUTS: dict[int, tuple[Tensor, ...]] = {
    1: _inputs(Tensor("state", "float32", ("batch", "D"), state=True)),
    2: _inputs(*_STRUCTURED),
    3: _inputs(
        *_STRUCTURED,
        Tensor("item_tokens", "int64", ("batch", "items", "item_tokens"), state=True),
        candidates=(Tensor("candidate_tokens", "int64", ("batch", "candidates", "candidate_tokens")),),
    ),
}
"""The policy graph's inputs per bundle format, in the graph's order."""
POLICY_OUTPUT = Tensor("scores", "float32", ("batch", "candidates"))
FIXED_DIMS = ("D", "C")
"""Dimensions fixed by the bundle (the rest vary per call)."""


def policy_inputs(format_version: int) -> tuple[Tensor, ...]:
    try:
        return POLICY_INPUTS[format_version]
    except KeyError:
        raise ValueError(f"no policy inputs for bundle format {format_version}") from None


def input_names(format_version: int) -> tuple[str, ...]:
    return tuple(t.name for t in policy_inputs(format_version))


def state_names(format_version: int) -> tuple[str, ...]:
    """The inputs that describe the state, in order."""
    return tuple(t.name for t in policy_inputs(format_version) if t.state)


def io_dims(format_version: int, d: int, c: int) -> dict[str, list[str | int]]:
    """Every input's and the output's dimensions, ``D`` and ``C`` as numbers (the manifest's
    ``policy_io``)."""
    fixed = {"D": d, "C": c}
    return {
        t.name: [fixed.get(x, x) for x in t.dims] for t in (*policy_inputs(format_version), POLICY_OUTPUT)
    }


def dynamic_axes(format_version: int) -> dict[str, dict[int, str]]:
    """The axes that vary per call, per input and output (the exporter's ``dynamic_axes``)."""
    return {
        t.name: {i: x for i, x in enumerate(t.dims) if x not in FIXED_DIMS}
        for t in (*policy_inputs(format_version), POLICY_OUTPUT)
    }


def example_inputs(format_version: int, sizes: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Inputs of the shapes ``sizes`` gives (zero vectors, every kind 1, every mask True): an export
    example."""
    out = {}
    for t in policy_inputs(format_version):
        shape = t.shape(sizes)
        out[t.name] = np.ones(shape, dtype=t.dtype) if t.dtype != "float32" else np.zeros(shape, np.float32)
    return out


def check_feeds(format_version: int, feeds: Mapping[str, np.ndarray]) -> None:
    """ValueError unless ``feeds`` holds exactly the format's inputs, each with its dtype and rank."""
    names = input_names(format_version)
    if set(feeds) != set(names):
        raise ValueError(f"policy inputs {sorted(feeds)}, expected {sorted(names)}")
    for t in policy_inputs(format_version):
        a = feeds[t.name]
        if a.dtype != np.dtype(t.dtype) or a.ndim != len(t.dims):
            raise ValueError(
                f"policy input {t.name} is {a.dtype}{list(a.shape)}, expected {t.dtype} {t.dims}"
            )
