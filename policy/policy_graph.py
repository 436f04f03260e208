"""The scorer graph: ``policy.onnx`` export (TorchScript exporter) and its parity against the torch scorer.

Parity: max abs diff <= :data:`POLICY_TOL` on random inputs (several B, K, with padding) and on real inputs
(encoded texts); :class:`policy.export_common.ExportError` on failure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from policy.export_common import OPSET, ExportError, ort_session
from policy.model import CandidateScorer

POLICY_TOL = 1e-4


def export_policy_onnx(model: CandidateScorer, path: Path) -> None:
    model = model.eval()
    d, c = model.cfg.embedding_dim, model.cfg.candidate_dim
    example = (torch.zeros(2, d), torch.zeros(2, d), torch.zeros(2, 3, c), torch.ones(2, 3, dtype=torch.bool))
    with torch.no_grad():
        torch.onnx.export(
            model,
            example,
            str(path),
            dynamo=False,
            opset_version=OPSET,
            input_names=["instruction", "state", "candidates", "mask"],
            output_names=["scores"],
            dynamic_axes={
                "instruction": {0: "batch"},
                "state": {0: "batch"},
                "candidates": {0: "batch", 1: "candidates"},
                "mask": {0: "batch", 1: "candidates"},
                "scores": {0: "batch", 1: "candidates"},
            },
        )


def _policy_diff(model: CandidateScorer, sess, inputs: tuple[np.ndarray, ...]) -> float:
    with torch.no_grad():
        ref = model(*(torch.from_numpy(x) for x in inputs)).numpy()
    got = sess.run(
        ["scores"], dict(zip(("instruction", "state", "candidates", "mask"), inputs, strict=True))
    )[0]
    if got.shape != ref.shape:
        raise ExportError(f"policy.onnx returned shape {got.shape}, torch {ref.shape}")
    return float(np.max(np.abs(got - ref)))


def random_policy_inputs(
    rng: np.random.Generator, b: int, k: int, d: int, parts: int = 1
) -> tuple[np.ndarray, ...]:
    """Unit-vector inputs; candidates have ``parts`` unit parts, the last one zero at random (no target)."""

    def unit(*shape: int) -> np.ndarray:
        x = rng.standard_normal((*shape, d)).astype(np.float32)
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    cands = np.concatenate([unit(b, k) for _ in range(parts)], axis=-1)
    if parts > 1:
        cands[..., (parts - 1) * d :] *= rng.integers(0, 2, size=(b, k, 1)).astype(np.float32)
    mask = np.ones((b, k), dtype=bool)
    lengths = rng.integers(1, k + 1, size=b)
    for i, n in enumerate(lengths):
        mask[i, n:] = False
    return unit(b), unit(b), cands, mask


def check_policy_parity(
    model: CandidateScorer,
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
    diff_random = max(
        _policy_diff(model, sess, random_policy_inputs(rng, b, k, d, parts))
        for b, k in ((1, 1), (1, 7), (4, 12), (3, 40))
    )
    diff_real = float("nan")
    if real_cands is None and real is not None and parts == 1:
        real_cands = real
    if real is not None and real_cands is not None and len(real) >= 3:
        n = len(real_cands)
        cands = np.stack([real_cands[(np.arange(n - 2) + i) % n] for i in range(3)], axis=0)  # [3, n-2, C]
        n = len(real)
        mask = np.ones(cands.shape[:2], dtype=bool)
        mask[0, -1] = False
        inputs = (real[:3].copy(), real[np.arange(1, 4) % n].copy(), cands, mask)
        diff_real = _policy_diff(model, sess, inputs)
    worst = max(diff_random, 0.0 if np.isnan(diff_real) else diff_real)
    if not worst <= POLICY_TOL:
        raise ExportError(f"policy.onnx parity failed: max abs diff {worst:.2e} > {POLICY_TOL:.0e}")
    return diff_random, diff_real
