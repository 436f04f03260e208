"""The scorer graph: ``policy.onnx`` export (TorchScript exporter) and its parity against the torch scorer.

The structured scorer (:class:`policy.scorer.model.CandidateScorer`) is exported through
:class:`policy.scorer.model.PolicyGraph` with the bundle-format-2 inputs, or format 3 where it reads tokens
(its token table baked with its projection first, quantised rows,
:meth:`policy.scorer.token_reader.TokenReader.bake`; the parity check compares with the same baked scorer);
the flat scorer (:class:`policy.scorer.flat.FlatScorer`) with the format-1 inputs.

Parity: max abs diff <= :data:`POLICY_TOL` on random inputs (several B, K, T, M, with padding) and on real
inputs (encoded texts); :class:`policy.encoders.onnx_common.ExportError` on failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch

from models.inputs.schema import dynamic_axes, example_inputs, input_names, state_names
from policy.encoders.onnx_common import OPSET, ExportError, ort_session, torchscript_exporter
from policy.scorer.flat import FlatScorer
from policy.scorer.model import CandidateScorer, PolicyGraph, StateInputs

POLICY_TOL = 1e-4

Scorer = CandidateScorer | FlatScorer


Inputs = dict[str, np.ndarray]
"""``policy.onnx``'s inputs by name (``models.inputs.schema``)."""


def format_of(model: Scorer) -> int:
    """The bundle format a scorer is exported in."""
    return 1 if isinstance(model, FlatScorer) else model.cfg.format_version


def export_policy_onnx(model: Scorer, path: Path) -> None:
    model = model.eval()
    version = format_of(model)
    sizes = {"batch": 2, "items": 4, "memory": 5, "candidates": 3, "item_tokens": 6, "candidate_tokens": 4}
    sizes.update(D=model.cfg.embedding_dim, C=model.cfg.candidate_dim)
    example = example_inputs(version, sizes)
    graph: torch.nn.Module = model if version == 1 else PolicyGraph(model).eval()
    with baked(model):
        _export(graph, example, version, path)


@contextmanager
def baked(model: Scorer) -> Iterator[None]:
    """The scorer as ``policy.onnx`` computes it: a token reader's tables baked (quantised rows), for the
    export and for the torch side of the parity check."""
    reader = getattr(model, "reader", None)
    if reader is not None:
        reader.bake()
    try:
        yield
    finally:
        if reader is not None:
            reader.unbake()


def _export(graph: torch.nn.Module, example: Inputs, version: int, path: Path) -> None:
    with torch.no_grad(), torchscript_exporter():
        torch.onnx.export(
            graph,
            tuple(torch.from_numpy(example[name]) for name in input_names(version)),
            str(path),
            dynamo=False,
            opset_version=OPSET,
            input_names=list(input_names(version)),
            output_names=["scores"],
            dynamic_axes=dynamic_axes(version),
            # Nothing folded into the file: a token reader's quantised tables would be stored dequantised
            # (4-8x the size); onnxruntime folds the constant parts when it loads the graph.
            do_constant_folding=False,
        )


def torch_scores(model: Scorer, inputs: Inputs) -> np.ndarray:
    """The torch scorer on ``policy.onnx``'s inputs."""
    t = {name: torch.from_numpy(a) for name, a in inputs.items()}
    version = format_of(model)
    with torch.no_grad():
        if version == 1:
            return model(*(t[name] for name in input_names(version))).numpy()
        state = StateInputs(**{name: t[name] for name in state_names(version)})
        return model(t["instruction"], state, t["candidates"], t["mask"], t.get("candidate_tokens")).numpy()


def _policy_diff(model: Scorer, sess, inputs: Inputs) -> float:
    ref = torch_scores(model, inputs)
    got = sess.run(["scores"], inputs)[0]
    if got.shape != ref.shape:
        raise ExportError(f"policy.onnx returned shape {got.shape}, torch {ref.shape}")
    return float(np.max(np.abs(got - ref)))


def _unit(rng: np.random.Generator, *shape: int) -> np.ndarray:
    x = rng.standard_normal(shape).astype(np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _lengths_mask(rng: np.random.Generator, b: int, n: int, low: int = 1) -> np.ndarray:
    mask = np.ones((b, n), dtype=bool)
    for i, length in enumerate(rng.integers(low, n + 1, size=b)):
        mask[i, length:] = False
    return mask


def _token_ids(rng: np.random.Generator, shape: tuple[int, ...], length: int, vocab: int) -> np.ndarray:
    """Random ids [*shape, length] from a small range (so candidates and items share tokens), each row
    0-padded after a random length."""
    ids = rng.integers(1, min(vocab, 40), size=(*shape, length)).astype(np.int64)
    lengths = rng.integers(0, length + 1, size=shape)
    return np.where(np.arange(length) < lengths[..., None], ids, 0)


def random_policy_inputs(
    rng: np.random.Generator,
    b: int,
    k: int,
    d: int,
    parts: int = 1,
    t: int = 0,
    m: int = 0,
    kinds: int = 0,
    vocab: int = 0,
) -> Inputs:
    """Unit-vector inputs; candidates have ``parts`` unit parts, the last one zero at random (no target).
    With ``kinds`` > 0, format-2 inputs with ``t`` items and ``m`` memory steps (padding at random, kinds
    below ``kinds``); with ``vocab`` > 0 too, format-3 inputs (random token ids below ``vocab``); else
    format-1 inputs."""
    cands = np.concatenate([_unit(rng, b, k, d) for _ in range(parts)], axis=-1)
    if parts > 1:
        cands[..., (parts - 1) * d :] *= rng.integers(0, 2, size=(b, k, 1)).astype(np.float32)
    mask = _lengths_mask(rng, b, k)
    if not kinds:
        return {"instruction": _unit(rng, b, d), "state": _unit(rng, b, d), "candidates": cands, "mask": mask}
    item_mask = _lengths_mask(rng, b, t, low=0)
    item_kinds = np.where(item_mask, rng.integers(1, kinds, size=(b, t)), 0).astype(np.int64)
    mem_mask = _lengths_mask(rng, b, m, low=0)
    responses = _unit(rng, b, m, d) * rng.integers(0, 2, size=(b, m, 1)).astype(np.float32)
    out = {
        "instruction": _unit(rng, b, d),
        "items": _unit(rng, b, t, d),
        "item_kinds": item_kinds,
        "memory_actions": _unit(rng, b, m, d),
        "memory_responses": responses,
        "memory_mask": mem_mask,
        "candidates": cands,
        "mask": mask,
    }
    if vocab:
        out["item_tokens"] = _token_ids(rng, (b, t), 7, vocab)
        out["candidate_tokens"] = _token_ids(rng, (b, k), 5, vocab)
    return out


def _real_inputs(
    model: Scorer, real: np.ndarray, real_cands: np.ndarray, real_ids: np.ndarray | None = None
) -> Inputs:
    """Three states of real vectors: rotations of ``real`` as instruction, state items and memory."""
    n = len(real_cands)
    cands = np.stack([real_cands[(np.arange(n - 2) + i) % n] for i in range(3)], axis=0)  # [3, n-2, C]
    mask = np.ones(cands.shape[:2], dtype=bool)
    mask[0, -1] = False
    n = len(real)
    instr = real[:3].copy()
    if isinstance(model, FlatScorer):
        return {
            "instruction": instr,
            "state": real[np.arange(1, 4) % n].copy(),
            "candidates": cands,
            "mask": mask,
        }
    t, m = min(n, 6), min(n, 4)
    items = np.stack([real[(np.arange(t) + i) % n] for i in range(3)])
    kinds = np.tile((np.arange(t) % (model.cfg.kinds - 1) + 1).astype(np.int64), (3, 1))
    kinds[1, -2:] = 0
    mem_a = np.stack([real[(np.arange(m) + 2 * i + 1) % n] for i in range(3)])
    mem_r = np.stack([real[(np.arange(m) + 2 * i + 2) % n] for i in range(3)])
    mem_r[0, 0] = 0.0
    mem_mask = np.ones((3, m), dtype=bool)
    mem_mask[2, 1:] = False
    out = {
        "instruction": instr,
        "items": items,
        "item_kinds": kinds,
        "memory_actions": mem_a,
        "memory_responses": mem_r,
        "memory_mask": mem_mask,
        "candidates": cands,
        "mask": mask,
    }
    if format_of(model) == 3:
        if real_ids is None:
            raise ExportError("real parity inputs of a token-reading scorer need the texts' token ids")
        n_c = len(real_cands)
        out["item_tokens"] = np.stack([real_ids[(np.arange(t) + i) % n] for i in range(3)])
        out["candidate_tokens"] = np.stack([real_ids[(np.arange(n_c - 2) + i) % n_c] for i in range(3)])
    return out


def check_policy_parity(
    model: Scorer,
    onnx_path: Path,
    real: np.ndarray | None,
    seed: int = 0,
    real_cands: np.ndarray | None = None,
    real_ids: np.ndarray | None = None,
):
    """Max abs diff (random inputs, real inputs) between policy.onnx and the torch scorer. ``real`` [n,D] are
    real text embeddings, ``real_cands`` [n,C] real candidate features (default: ``real`` when C == D) and
    ``real_ids`` [n,L] the token ids (format 3) of the same texts."""
    with baked(model):
        return _parity(model, ort_session(onnx_path), real, seed, real_cands, real_ids)


def _parity(model, sess, real, seed, real_cands, real_ids) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    d = model.cfg.embedding_dim
    parts = model.cfg.candidate_dim // d
    kinds = 0 if isinstance(model, FlatScorer) else model.cfg.kinds
    vocab = model.cfg.vocab if format_of(model) == 3 else 0
    shapes = ((1, 1, 1, 1), (1, 7, 3, 1), (4, 12, 9, 5), (3, 40, 20, 12))
    diff_random = max(
        _policy_diff(model, sess, random_policy_inputs(rng, b, k, d, parts, t, m, kinds, vocab))
        for b, k, t, m in shapes
    )
    diff_real = float("nan")
    if real_cands is None and real is not None and parts == 1:
        real_cands = real
    if real is not None and real_cands is not None and len(real) >= 3:
        diff_real = _policy_diff(model, sess, _real_inputs(model, real, real_cands, real_ids))
    worst = max(diff_random, 0.0 if np.isnan(diff_real) else diff_real)
    if not worst <= POLICY_TOL:
        raise ExportError(f"policy.onnx parity failed: max abs diff {worst:.2e} > {POLICY_TOL:.0e}")
    return diff_random, diff_real
