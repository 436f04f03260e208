"""Export a trained (or randomly initialised) scorer as a bundle the robot runs with onnxruntime alone.

``export_bundle(ckpt_or_model, out_dir)`` writes, atomically (temp folder + rename)::

    policy.onnx     the scorer (models.bundle's fixed interface; dynamic batch and candidate count)
    encoder.onnx    MiniLM + mean pooling + L2 normalisation (one graph: the robot runs what was evaluated)
    tokenizer.json  the encoder's tokenizer: truncation at the manifest's max_length, pad to the batch longest
    skills.npy      optional: float32 [S,C] candidate features of a fixed skill list (texts in the manifest)
    manifest.json   sha256 of every file, shapes, provenance (dataset, reward, algorithm, judge, encoder)

The graphs come from their own modules: :mod:`policy.export.policy_graph` (the scorer and its parity against
torch) and :mod:`policy.encoders.minilm_graph` (the MiniLM encoder, its parity against sentence-transformers
and the cache of built graphs; :mod:`policy.encoders.int8` for the opt-in int8 one). This module assembles and
checks the bundle.

Exporter choice: the TorchScript exporter (``torch.onnx.export(..., dynamo=False)``), on purpose. torch 2.13
defaults to the dynamo exporter, which traces with symbolic shapes and needs onnxscript; for these two small,
static-control-flow graphs the TorchScript tracer is the mature path whose ``dynamic_axes`` reliably give
symbolic batch / candidate / token dimensions, and it handles the BERT encoder with no extra dependency.
Parity against torch is checked after every export, so a wrong trace cannot ship silently.

Parity (run at export, raised as :class:`ExportError` on failure):
- policy.onnx vs the torch scorer: max abs diff <= 1e-4 on random inputs (several B, K, with padding) and on
  real inputs (encoded texts);
- encoder.onnx vs sentence-transformers: cosine >= 0.999 on real texts (the graph is built once per encoder in
  ``$EDGEJUDGE_CACHE/onnx``, default ``~/.cache/edgejudge/onnx``, with its parity result beside it).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from models.bundle import write_manifest
from models.encoder import DEFAULT_ENCODER
from models.inputs.candidates import candidate_matrix
from models.inputs.tokens import TokenIds, pad_ids
from policy.encoders.int8 import cached_encoder, integer_kernels
from policy.encoders.minilm_graph import (  # noqa: F401 - the exporter's public names
    ENCODER_MIN_COSINE,
    cached_encoder_onnx,
    encoder_parity,
    tokenize,
    write_tokenizer_json,
)
from policy.encoders.onnx_common import OPSET, PARITY_TEXTS, ExportError, cache_root, ort_session  # noqa: F401
from policy.encoders.static import resolve_text_encoder, static_parity, token_source
from policy.export.policy_graph import (  # noqa: F401
    POLICY_TOL,
    check_policy_parity,
    export_policy_onnx,
    format_of,
    random_policy_inputs,
)
from policy.scorer.flat import FlatScorer, FlatScorerConfig, build_flat_scorer
from policy.scorer.model import CandidateScorer, ScorerConfig, build_scorer
from policy.training.common import atomic_dir, load_checkpoint


@dataclass
class ExportReport:
    out_dir: Path
    policy_max_abs_diff_random: float
    policy_max_abs_diff_real: float
    encoder_min_cosine: float
    encoder_cached: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "out_dir": str(self.out_dir),
            "policy_max_abs_diff_random": self.policy_max_abs_diff_random,
            "policy_max_abs_diff_real": self.policy_max_abs_diff_real,
            "encoder_min_cosine": self.encoder_min_cosine,
            "encoder_cached": self.encoder_cached,
        }


def export_bundle(
    model_or_checkpoint: CandidateScorer | FlatScorer | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    encoder: str | os.PathLike[str] | None = None,
    skills: list[str] | None = None,
    provenance: dict[str, Any] | None = None,
    overwrite: bool = True,
    encoder_precision: str = "fp32",
) -> ExportReport:
    """Write a checked bundle to ``out_dir``; raises :class:`ExportError` (nothing written) on failure.
    ``encoder``: default the one the checkpoint was trained on (else all-MiniLM-L6-v2); ``static[:BASE]``
    ships the static kind (policy.encoders.static). ``encoder_precision``: "fp32" (default, cosine >= 0.999)
    or "int8" (opt-in for the transformer kind: policy.encoders.int8)."""
    if isinstance(model_or_checkpoint, CandidateScorer | FlatScorer):
        model, meta = model_or_checkpoint.eval(), {}
    else:
        model, meta = load_checkpoint(model_or_checkpoint)
    trained_on = meta.get("provenance", {})
    enc = resolve_text_encoder(encoder or trained_on.get("encoder") or DEFAULT_ENCODER)
    if trained_on.get("encoder_sha256") not in (None, enc.sha256):
        raise ExportError(
            f"the checkpoint was trained on features of {trained_on.get('encoder')} "
            f"(sha256 {str(trained_on['encoder_sha256'])[:12]}), not {enc.name} ({enc.sha256[:12]}): "
            "a bundle must ship the encoder its policy was trained on"
        )
    if enc.kind == "static" and encoder_precision != "fp32":
        raise ExportError(f"encoder precision {encoder_precision!r} applies to the transformer kind only")
    if model.cfg.embedding_dim != enc.embedding_dim:
        raise ExportError(
            f"scorer expects {model.cfg.embedding_dim}-d embeddings, encoder {enc.name} gives "
            f"{enc.embedding_dim}"
        )
    skills = [s for s in (skills or [])]
    if any(not s.strip() for s in skills):
        raise ExportError("skill texts must be non-empty")
    if len(set(skills)) != len(skills):
        raise ExportError("skill texts must be unique")

    if enc.kind == "static":
        enc_onnx, tok_json, cached = enc.weights, enc.tokenizer_json, True
        cos = static_parity(enc, [*PARITY_TEXTS, " ".join(PARITY_TEXTS * 40)])
        if not cos >= 1 - 1e-5:
            raise ExportError(f"static encoder.onnx parity failed: min cosine {cos:.6f} to its reference")
    else:
        enc_onnx, tok_json, cos, cached = cached_encoder(enc, encoder_precision)
    with atomic_dir(out_dir, overwrite=overwrite) as tmp:
        shutil.copyfile(enc_onnx, tmp / "encoder.onnx")
        shutil.copyfile(tok_json, tmp / "tokenizer.json")
        export_policy_onnx(model, tmp / "policy.onnx")
        # Real inputs for the policy parity check (and skills.npy) come from the exported encoder itself,
        # run as the runtime runs it.
        from edge.text_encoder import TextEncoder

        text_encoder = TextEncoder(
            tmp / "encoder.onnx",
            tmp / "tokenizer.json",
            dim=enc.embedding_dim,
            max_length=enc.max_length,
            allow_padding=enc.kind == "transformer" and encoder_precision == "fp32",
        )

        def embed(texts: list[str]) -> np.ndarray:
            return text_encoder.encode(list(texts))

        kind, d = model.cfg.candidate_features, enc.embedding_dim
        real = embed(PARITY_TEXTS)
        real_cands = candidate_matrix(kind, PARITY_TEXTS, embed, d)
        version = format_of(model)
        real_ids = tokens = None
        if version == 3:
            cfg = model.cfg
            tokens = {"item_tokens": cfg.item_tokens, "candidate_tokens": cfg.candidate_tokens}
            ids = TokenIds(tmp / "tokenizer.json", max(tokens.values()))
            real_ids = pad_ids([ids.ids(t) for t in PARITY_TEXTS])
        diff_random, diff_real = check_policy_parity(
            model, tmp / "policy.onnx", real, real_cands=real_cands, real_ids=real_ids
        )
        if skills:
            np.save(tmp / "skills.npy", candidate_matrix(kind, skills, embed, d).astype(np.float32))
        prov = {
            **{k: v for k, v in meta.get("provenance", {}).items() if k != "world"},
            "algo": meta.get("algo", "random-init"),
            "reward": meta.get("reward"),
            "checkpoint": None
            if isinstance(model_or_checkpoint, CandidateScorer | FlatScorer)
            else str(model_or_checkpoint),
            "encoder": enc.name,
            "encoder_sha256": enc.sha256,
            "encoder_precision": encoder_precision,
            **({"encoder_integer_kernels": integer_kernels(enc_onnx)} if encoder_precision == "int8" else {}),
            "encoder_kind": enc.kind,
            "exporter": f"torch.onnx TorchScript (dynamo=False), opset {OPSET}, torch {torch.__version__}",
            "parity": {
                "policy_max_abs_diff_random": diff_random,
                "policy_max_abs_diff_real": None if np.isnan(diff_real) else diff_real,
                "encoder_min_cosine": cos,
            },
            **(provenance or {}),
        }
        write_manifest(
            tmp,
            embedding_dim=enc.embedding_dim,
            max_length=enc.max_length,
            skills=skills,
            provenance=prov,
            policy=model.cfg.to_dict(),
            candidate_features=model.cfg.candidate_features,
            encoder_kind=enc.kind,
            world=meta.get("provenance", {}).get("world"),
            format_version=version,
            state_encoding=model.cfg.encoding.to_dict() if isinstance(model, CandidateScorer) else None,
            tokens=tokens,
        )
        text_encoder.close()
    return ExportReport(Path(out_dir), diff_random, diff_real, cos, cached)


def export_random_bundle(
    out_dir: str | os.PathLike[str],
    *,
    seed: int = 0,
    hidden: int = ScorerConfig.hidden,
    candidate_features: str = "action",
    bundle_format: int = 3,
    reader_width: int = 0,
    **kwargs: Any,
) -> ExportReport:
    """A bundle with a randomly initialised scorer: for testing the runtime before any training.
    ``bundle_format`` 3 (what training writes) reads tokens too, with the token reader's ``reader_width``
    (:class:`policy.scorer.model.ScorerConfig`); 2 does not read tokens; 1 writes the flat
    scorer of older bundles (one state vector, embedding input)."""
    enc = resolve_text_encoder(kwargs.get("encoder") or DEFAULT_ENCODER)
    model: CandidateScorer | FlatScorer
    if bundle_format == 1:
        flat = FlatScorerConfig(
            embedding_dim=enc.embedding_dim, hidden=hidden, candidate_features=candidate_features
        )
        model = build_flat_scorer(flat, seed=seed)
    elif bundle_format in (2, 3):
        cfg = ScorerConfig(
            embedding_dim=enc.embedding_dim, hidden=hidden, candidate_features=candidate_features
        )
        table = None
        if bundle_format == 3:
            _ids, frozen = token_source(enc, 1)
            table = torch.tensor(frozen)
            cfg = replace(
                cfg,
                reader="tokens",
                vocab=table.shape[0],
                token_dims=table.shape[1],
                reader_width=reader_width,
            )
        model = build_scorer(cfg, seed=seed, token_table=table)
    else:
        raise ExportError(f"unknown bundle format {bundle_format}: expected 1, 2 or 3")
    prov = {"algo": "random-init", "seed": seed, **kwargs.pop("provenance", {})}
    return export_bundle(model, out_dir, provenance=prov, **kwargs)
