"""The scorer graph: ``policy.onnx`` export (TorchScript exporter) and its parity against the torch scorer.

The structured scorer (:class:`policy.model.CandidateScorer`) is exported through
:class:`policy.model.PolicyGraph` with the bundle-format-2 inputs; the flat scorer
(:class:`policy.model_flat.FlatScorer`) with the format-1 inputs.

Parity: max abs diff <= :data:`POLICY_TOL` on random inputs (several B, K, T, M, with padding) and on real
inputs (encoded texts); :class:`policy.export_common.ExportError` on failure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from models.bundle import POLICY_INPUTS_V1, POLICY_INPUTS_V2
from policy.export_common import OPSET, ExportError, ort_session
from policy.model import CandidateScorer, PolicyGraph, StateInputs
from policy.model_flat import FlatScorer

POLICY_TOL = 1e-4

Scorer = CandidateScorer | FlatScorer


def format_of(model: Scorer) -> int:
    """The bundle format a scorer is exported in."""
    return 1 if isinstance(model, FlatScorer) else 2


def input_names(model: Scorer) -> tuple[str, ...]:
    return POLICY_INPUTS_V1 if isinstance(model, FlatScorer) else POLICY_INPUTS_V2


def export_policy_onnx(model: Scorer, path: Path) -> None:
    model = model.eval()
    d, c = model.cfg.embedding_dim, model.cfg.candidate_dim
    cands, mask = torch.zeros(2, 3, c), torch.ones(2, 3, dtype=torch.bool)
    if isinstance(model, FlatScorer):
        graph: torch.nn.Module = model
        example: tuple[torch.Tensor, ...] = (torch.zeros(2, d), torch.zeros(2, d), cands, mask)
        axes = {"instruction": {0: "batch"}, "state": {0: "batch"}}
    else:
        graph = PolicyGraph(model).eval()
        example = (
            torch.zeros(2, d),
            torch.zeros(2, 4, d),
            torch.ones(2, 4, dtype=torch.int64),
            torch.zeros(2, 5, d),
            torch.zeros(2, 5, d),
            torch.ones(2, 5, dtype=torch.bool),
            cands,
            mask,
        )
        axes = {
            "instruction": {0: "batch"},
            "items": {0: "batch", 1: "items"},
            "item_kinds": {0: "batch", 1: "items"},
            "memory_actions": {0: "batch", 1: "memory"},
            "memory_responses": {0: "batch", 1: "memory"},
            "memory_mask": {0: "batch", 1: "memory"},
        }
    axes.update(
        {
            "candidates": {0: "batch", 1: "candidates"},
            "mask": {0: "batch", 1: "candidates"},
            "scores": {0: "batch", 1: "candidates"},
        }
    )
    with torch.no_grad():
        torch.onnx.export(
            graph,
            example,
            str(path),
            dynamo=False,
            opset_version=OPSET,
            input_names=list(input_names(model)),
            output_names=["scores"],
            dynamic_axes=axes,
        )


def torch_scores(model: Scorer, inputs: tuple[np.ndarray, ...]) -> np.ndarray:
    """The torch scorer on ``policy.onnx``'s inputs (in :func:`input_names` order)."""
    t = [torch.from_numpy(x) for x in inputs]
    with torch.no_grad():
        if isinstance(model, FlatScorer):
            return model(*t).numpy()
        return model(t[0], StateInputs(*t[1:6]), t[6], t[7]).numpy()


def _policy_diff(model: Scorer, sess, inputs: tuple[np.ndarray, ...]) -> float:
    ref = torch_scores(model, inputs)
    got = sess.run(["scores"], dict(zip(input_names(model), inputs, strict=True)))[0]
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


def random_policy_inputs(
    rng: np.random.Generator, b: int, k: int, d: int, parts: int = 1, t: int = 0, m: int = 0, kinds: int = 0
) -> tuple[np.ndarray, ...]:
    """Unit-vector inputs; candidates have ``parts`` unit parts, the last one zero at random (no target).
    With ``kinds`` > 0, format-2 inputs with ``t`` items and ``m`` memory steps (padding at random, kinds
    below ``kinds``); else format-1 inputs."""
    cands = np.concatenate([_unit(rng, b, k, d) for _ in range(parts)], axis=-1)
    if parts > 1:
        cands[..., (parts - 1) * d :] *= rng.integers(0, 2, size=(b, k, 1)).astype(np.float32)
    mask = _lengths_mask(rng, b, k)
    if not kinds:
        return _unit(rng, b, d), _unit(rng, b, d), cands, mask
    item_mask = _lengths_mask(rng, b, t, low=0)
    item_kinds = np.where(item_mask, rng.integers(1, kinds, size=(b, t)), 0).astype(np.int64)
    mem_mask = _lengths_mask(rng, b, m, low=0)
    responses = _unit(rng, b, m, d) * rng.integers(0, 2, size=(b, m, 1)).astype(np.float32)
    return (
        _unit(rng, b, d),
        _unit(rng, b, t, d),
        item_kinds,
        _unit(rng, b, m, d),
        responses,
        mem_mask,
        cands,
        mask,
    )


def _real_inputs(model: Scorer, real: np.ndarray, real_cands: np.ndarray) -> tuple[np.ndarray, ...]:
    """Three states of real vectors: rotations of ``real`` as instruction, state items and memory."""
    n = len(real_cands)
    cands = np.stack([real_cands[(np.arange(n - 2) + i) % n] for i in range(3)], axis=0)  # [3, n-2, C]
    mask = np.ones(cands.shape[:2], dtype=bool)
    mask[0, -1] = False
    n = len(real)
    instr = real[:3].copy()
    if isinstance(model, FlatScorer):
        return instr, real[np.arange(1, 4) % n].copy(), cands, mask
    t, m = min(n, 6), min(n, 4)
    items = np.stack([real[(np.arange(t) + i) % n] for i in range(3)])
    kinds = np.tile((np.arange(t) % (model.cfg.kinds - 1) + 1).astype(np.int64), (3, 1))
    kinds[1, -2:] = 0
    mem_a = np.stack([real[(np.arange(m) + 2 * i + 1) % n] for i in range(3)])
    mem_r = np.stack([real[(np.arange(m) + 2 * i + 2) % n] for i in range(3)])
    mem_r[0, 0] = 0.0
    mem_mask = np.ones((3, m), dtype=bool)
    mem_mask[2, 1:] = False
    return instr, items, kinds, mem_a, mem_r, mem_mask, cands, mask


def check_policy_parity(
    model: Scorer,
    onnx_path: Path,
    real: np.ndarray | None,
    seed: int = 0,
    real_cands: np.ndarray | None = None,
):
    """Max abs diff (random inputs, real inputs) between policy.onnx and the torch scorer. ``real`` [n,D] are
    real text embeddings, ``real_cands`` [n,C] real candidate features (default: ``real`` when C == D)."""
    sess = ort_session(onnx_path)
    rng = np.random.default_rng(seed)
    d = model.cfg.embedding_dim
    parts = model.cfg.candidate_dim // d
    kinds = 0 if isinstance(model, FlatScorer) else model.cfg.kinds
    shapes = ((1, 1, 1, 1), (1, 7, 3, 1), (4, 12, 9, 5), (3, 40, 20, 12))
    diff_random = max(
        _policy_diff(model, sess, random_policy_inputs(rng, b, k, d, parts, t, m, kinds))
        for b, k, t, m in shapes
    )
    diff_real = float("nan")
    if real_cands is None and real is not None and parts == 1:
        real_cands = real
    if real is not None and real_cands is not None and len(real) >= 3:
        diff_real = _policy_diff(model, sess, _real_inputs(model, real, real_cands))
    worst = max(diff_random, 0.0 if np.isnan(diff_real) else diff_real)
    if not worst <= POLICY_TOL:
        raise ExportError(f"policy.onnx parity failed: max abs diff {worst:.2e} > {POLICY_TOL:.0e}")
    return diff_random, diff_real
