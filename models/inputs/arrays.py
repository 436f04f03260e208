"""A state and its episode memory as the structured scorer's arrays (bundle format 2), from texts alone.

:func:`state_texts` reads a state text and the memory through the bundle's recorded layout
(:mod:`models.inputs.state`); :func:`state_arrays` turns them into vectors with any ``embed`` function, and
:func:`pad_batch` lays several states out as the ``policy.onnx`` inputs. The runtime, the training
checkpoint's policy and the export parity check all use these, so they build the same inputs. Stdlib, numpy
and ``models`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.inputs.state import Memory, StateEncoding, memory_facts, memory_window, state_items
from models.state_layout import StateLayout


@dataclass
class StateTexts:
    items: list[tuple[int, str]]  # (kind, text) of the state's items
    memory: list[tuple[str, str]]  # (action, response), most recent first

    def texts(self) -> list[str]:
        """Every non-empty text to embed, items first, then memory actions and responses."""
        out = [t for _k, t in self.items]
        for a, r in self.memory:
            out.append(a)
            if r:
                out.append(r)
        return out


@dataclass
class StateArrays:
    items: np.ndarray  # [T,D] f32
    kinds: np.ndarray  # [T] i64
    memory_actions: np.ndarray  # [M,D] f32
    memory_responses: np.ndarray  # [M,D] f32 (zeros: no response)


def state_texts(layout: StateLayout, encoding: StateEncoding, state: str, memory: Memory) -> StateTexts:
    """The state's items followed by the facts of its memory window, and the window's steps (most recent
    first). Only the last ``encoding.horizon`` pairs of ``memory`` are read."""
    items = state_items(layout, state, encoding.max_items)
    steps = memory_window(layout, encoding, memory)
    items += memory_facts(layout, steps, items, encoding.facts)
    return StateTexts(items, steps[::-1])


def state_arrays(st: StateTexts, vectors: np.ndarray, dim: int) -> StateArrays:
    """The arrays of ``st`` from ``vectors`` [len(st.texts()), dim], the embeddings of ``st.texts()``."""
    n_items = len(st.items)
    items = np.asarray(vectors[:n_items], dtype=np.float32).reshape(n_items, dim)
    kinds = np.array([k for k, _t in st.items], dtype=np.int64)
    mem_a = np.zeros((len(st.memory), dim), dtype=np.float32)
    mem_r = np.zeros((len(st.memory), dim), dtype=np.float32)
    pos = n_items
    for i, (_a, r) in enumerate(st.memory):
        mem_a[i] = vectors[pos]
        pos += 1
        if r:
            mem_r[i] = vectors[pos]
            pos += 1
    return StateArrays(items, kinds, mem_a, mem_r)


def pad_batch(states: Sequence[StateArrays], dim: int) -> dict[str, np.ndarray]:
    """``items``, ``item_kinds``, ``memory_actions``, ``memory_responses``, ``memory_mask`` for a batch,
    padded to the longest state and memory (at least one slot each: padding has kind 0 / mask False)."""
    b = len(states)
    t = max(1, max(len(s.kinds) for s in states))
    m = max(1, max(len(s.memory_actions) for s in states))
    items = np.zeros((b, t, dim), dtype=np.float32)
    kinds = np.zeros((b, t), dtype=np.int64)
    mem_a = np.zeros((b, m, dim), dtype=np.float32)
    mem_r = np.zeros((b, m, dim), dtype=np.float32)
    mem_mask = np.zeros((b, m), dtype=bool)
    for i, s in enumerate(states):
        n, k = len(s.kinds), len(s.memory_actions)
        items[i, :n], kinds[i, :n] = s.items, s.kinds
        mem_a[i, :k], mem_r[i, :k], mem_mask[i, :k] = s.memory_actions, s.memory_responses, True
    return {
        "items": items,
        "item_kinds": kinds,
        "memory_actions": mem_a,
        "memory_responses": mem_r,
        "memory_mask": mem_mask,
    }
