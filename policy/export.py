"""Export a trained (or randomly initialised) scorer as a bundle the robot runs with onnxruntime alone.

``export_bundle(ckpt_or_model, out_dir)`` writes, atomically (temp folder + rename)::

    policy.onnx     the scorer (models.bundle's fixed interface; dynamic batch and candidate count)
    encoder.onnx    MiniLM + mean pooling + L2 normalisation (one graph: the robot runs what was evaluated)
    tokenizer.json  the encoder's tokenizer: truncation at the manifest's max_length, pad to the batch longest
    skills.npy      optional: float32 [S,C] candidate features of a fixed skill list (texts in the manifest)
    manifest.json   sha256 of every file, shapes, provenance (dataset, reward, algorithm, judge, encoder)

Exporter choice: the TorchScript exporter (``torch.onnx.export(..., dynamo=False)``), on purpose. torch 2.13
defaults to the dynamo exporter, which traces with symbolic shapes and needs onnxscript; for these two small,
static-control-flow graphs the TorchScript tracer is the mature path whose ``dynamic_axes`` reliably give
symbolic batch / candidate / token dimensions, and it handles the BERT encoder with no extra dependency.
Parity
against torch is checked after every export, so a wrong trace cannot ship silently.

Parity (run at export, raised as :class:`ExportError` on failure):
- policy.onnx vs the torch scorer: max abs diff <= 1e-4 on random inputs (several B, K, with padding) and on
  real inputs (encoded texts);
- encoder.onnx vs sentence-transformers: cosine >= 0.999 on real texts. The encoder graph is the slow part of
  an
  export, so it is built once per encoder (keyed by the weights' sha256, the max length and the torch version)
  in ``$EDGEJUDGE_CACHE/onnx`` (default ``~/.cache/edgejudge/onnx``); its parity result is stored beside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from edge.actions import candidate_matrix
from models.bundle import write_manifest
from models.encoder import DEFAULT_ENCODER, EncoderRef, load_sentence_encoder, resolve_encoder
from policy.common import atomic_dir, load_checkpoint
from policy.model import CandidateScorer, ScorerConfig, build_scorer

OPSET = 17
POLICY_TOL = 1e-4
ENCODER_MIN_COSINE = 0.999
ENCODER_CACHE_TAG = "v1"

# Real texts for the parity checks: TextWorld-style instructions, states and actions.
PARITY_TEXTS = [
    "Your task is to pick up objects, then place them in their usual locations in the environment.",
    "Feedback: You pick up the dirty socks.\nInventory: dirty socks\nRecent actions: take dirty socks\n"
    "Room: You are in the bathroom. In one part of the room you see a bath mat. There is also a towel rack.",
    "put dirty socks in washing machine",
    "open fridge",
    "take apple from kitchen cupboard",
    "look around",
    "",
]


class ExportError(RuntimeError):
    """An export that must not be used: parity failure, bad input, missing dependency."""


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


def _ort_session(path: Path):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), sess_options=so, providers=["CPUExecutionProvider"])


# ---------------------------------------------------------------------------------------------- policy graph


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
    sess = _ort_session(onnx_path)
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


# --------------------------------------------------------------------------------------------- encoder graph


class PooledEncoder(nn.Module):
    """A transformer + attention-masked mean pooling + L2 normalisation: sentence-transformers' pipeline."""

    def __init__(self, transformer: nn.Module):
        super().__init__()
        self.transformer = transformer

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.transformer(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * m).sum(dim=1) / m.sum(dim=1).clamp(min=1e-9)
        return mean / mean.norm(dim=-1, keepdim=True).clamp(min=1e-12)


def cache_root() -> Path:
    return Path(os.environ.get("EDGEJUDGE_CACHE", Path.home() / ".cache" / "edgejudge")) / "onnx"


def _encoder_cache_key(enc: EncoderRef) -> str:
    raw = f"{enc.sha256}|{enc.max_length}|{torch.__version__}|{OPSET}|{ENCODER_CACHE_TAG}"
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def write_tokenizer_json(enc: EncoderRef, path: Path) -> None:
    """The encoder's tokenizer.json with truncation at ``enc.max_length`` and padding to the batch longest
    (the shipped file pads every text to a fixed 128 and truncates at 128, unlike sentence-transformers)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(enc.tokenizer_json))
    tok.enable_truncation(max_length=enc.max_length)
    pad_id = tok.token_to_id("[PAD]") or 0
    tok.enable_padding(pad_id=pad_id, pad_token="[PAD]")
    tok.save(str(path))


def tokenize(tokenizer, texts: list[str]) -> dict[str, np.ndarray]:
    encs = tokenizer.encode_batch(list(texts))
    return {
        "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
    }


def _export_encoder_graph(enc: EncoderRef, path: Path, st_model) -> None:
    transformer = st_model[0].auto_model
    # Eager attention traces to plain MatMul/Softmax ops; SDPA's fused path does not trace cleanly.
    if hasattr(transformer, "set_attn_implementation"):
        try:
            transformer.set_attn_implementation("eager")
        except Exception:  # noqa: BLE001 - older transformers: the config attribute below is enough
            pass
    transformer.config._attn_implementation = "eager"
    wrapped = PooledEncoder(transformer).eval()
    ids = torch.tensor([[101, 2000, 2001, 102], [101, 2002, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    with torch.no_grad():
        torch.onnx.export(
            wrapped,
            (ids, mask, torch.zeros_like(ids)),
            str(path),
            dynamo=False,
            opset_version=OPSET,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["embeddings"],
            dynamic_axes={
                "input_ids": {0: "texts", 1: "tokens"},
                "attention_mask": {0: "texts", 1: "tokens"},
                "token_type_ids": {0: "texts", 1: "tokens"},
                "embeddings": {0: "texts"},
            },
        )


def encoder_parity(onnx_path: Path, tokenizer_path: Path, st_model, texts: list[str]) -> float:
    """Minimum cosine between encoder.onnx (through tokenizer.json) and sentence-transformers on ``texts``."""
    from tokenizers import Tokenizer

    sess = _ort_session(onnx_path)
    tok = Tokenizer.from_file(str(tokenizer_path))
    got = sess.run(["embeddings"], tokenize(tok, texts))[0]
    ref = st_model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True, batch_size=16)
    cos = np.sum(got * ref, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1) + 1e-12)
    return float(np.min(cos))


def cached_encoder_onnx(
    enc: EncoderRef, *, st_model=None, precision: str = "fp32"
) -> tuple[Path, Path, float, bool]:
    """(encoder.onnx, tokenizer.json, parity min cosine, was cached) for ``enc``, built once per cache key.
    ``precision="int8"``: the quantised graph of :mod:`policy.encoder_opt` (opt-in, lower parity floor)."""
    if precision != "fp32":
        from policy.encoder_opt import cached_quantized_encoder

        return cached_quantized_encoder(enc, precision, st_model=st_model)
    root = cache_root()
    key = _encoder_cache_key(enc)
    folder = root / f"encoder-{key}"
    meta_path = folder / "meta.json"
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text())
            onnx_path, tok_path = folder / "encoder.onnx", folder / "tokenizer.json"
            if (
                onnx_path.is_file()
                and tok_path.is_file()
                and meta.get("encoder_sha256") == enc.sha256
                and onnx_path.stat().st_size == meta.get("onnx_bytes")
            ):
                return onnx_path, tok_path, float(meta["min_cosine"]), True
        except (OSError, ValueError, KeyError):
            pass  # a broken cache entry is rebuilt below
    root.mkdir(parents=True, exist_ok=True)
    st_model = st_model or load_sentence_encoder(enc)
    tmp = Path(tempfile.mkdtemp(prefix=".encoder-", dir=root))
    try:
        _export_encoder_graph(enc, tmp / "encoder.onnx", st_model)
        write_tokenizer_json(enc, tmp / "tokenizer.json")
        long_text = " ".join(PARITY_TEXTS[1:] * 12)  # longer than max_length: checks truncation too
        cos = encoder_parity(
            tmp / "encoder.onnx", tmp / "tokenizer.json", st_model, [*PARITY_TEXTS, long_text]
        )
        if not cos >= ENCODER_MIN_COSINE:
            raise ExportError(f"encoder.onnx parity failed: min cosine {cos:.5f} < {ENCODER_MIN_COSINE}")
        (tmp / "meta.json").write_text(
            json.dumps(
                {
                    "encoder": enc.name,
                    "encoder_sha256": enc.sha256,
                    "max_length": enc.max_length,
                    "torch": torch.__version__,
                    "opset": OPSET,
                    "min_cosine": cos,
                    "onnx_bytes": (tmp / "encoder.onnx").stat().st_size,
                },
                indent=2,
            )
        )
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.replace(tmp, folder)
        except OSError:  # another process won the race: use its entry
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder / "encoder.onnx", folder / "tokenizer.json", cos, False


# ------------------------------------------------------------------------------------------------ bundle


def export_bundle(
    model_or_checkpoint: CandidateScorer | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    encoder: str | os.PathLike[str] = DEFAULT_ENCODER,
    skills: list[str] | None = None,
    provenance: dict[str, Any] | None = None,
    overwrite: bool = True,
    encoder_precision: str = "fp32",
) -> ExportReport:
    """Write a checked bundle to ``out_dir``; raises :class:`ExportError` (nothing written) on failure.
    ``encoder_precision``: "fp32" (default, cosine >= 0.999) or "int8" (opt-in: policy.encoder_opt)."""
    if isinstance(model_or_checkpoint, CandidateScorer):
        model, meta = model_or_checkpoint.eval(), {}
    else:
        model, meta = load_checkpoint(model_or_checkpoint)
    enc = resolve_encoder(encoder)
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

    st_model = None
    enc_onnx, tok_json, cos, cached = cached_encoder_onnx(enc, precision=encoder_precision)
    with atomic_dir(out_dir, overwrite=overwrite) as tmp:
        shutil.copyfile(enc_onnx, tmp / "encoder.onnx")
        shutil.copyfile(tok_json, tmp / "tokenizer.json")
        export_policy_onnx(model, tmp / "policy.onnx")
        # Real inputs for the policy parity check come from the exported encoder itself.
        from tokenizers import Tokenizer

        enc_sess, tok = _ort_session(tmp / "encoder.onnx"), Tokenizer.from_file(str(tmp / "tokenizer.json"))

        def embed(texts: list[str]) -> np.ndarray:
            return enc_sess.run(["embeddings"], tokenize(tok, texts))[0]

        kind, d = model.cfg.candidate_features, enc.embedding_dim
        real = embed(PARITY_TEXTS)
        real_cands = candidate_matrix(kind, PARITY_TEXTS, embed, d)
        diff_random, diff_real = check_policy_parity(model, tmp / "policy.onnx", real, real_cands=real_cands)
        if skills:
            np.save(tmp / "skills.npy", candidate_matrix(kind, skills, embed, d).astype(np.float32))
        prov = {
            **{k: v for k, v in meta.get("provenance", {}).items() if k != "world"},
            "algo": meta.get("algo", "random-init"),
            "reward": meta.get("reward"),
            "checkpoint": None
            if isinstance(model_or_checkpoint, CandidateScorer)
            else str(model_or_checkpoint),
            "encoder": enc.name,
            "encoder_sha256": enc.sha256,
            "encoder_precision": encoder_precision,
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
            world=meta.get("provenance", {}).get("world"),
        )
    del st_model
    return ExportReport(Path(out_dir), diff_random, diff_real, cos, cached)


def export_random_bundle(
    out_dir: str | os.PathLike[str],
    *,
    seed: int = 0,
    hidden: int = 128,
    candidate_features: str = "action",
    **kwargs: Any,
) -> ExportReport:
    """A bundle with a randomly initialised scorer: for testing the runtime before any training."""
    enc = resolve_encoder(kwargs.get("encoder", DEFAULT_ENCODER))
    cfg = ScorerConfig(embedding_dim=enc.embedding_dim, hidden=hidden, candidate_features=candidate_features)
    model = build_scorer(cfg, seed=seed)
    prov = {"algo": "random-init", "seed": seed, **kwargs.pop("provenance", {})}
    return export_bundle(model, out_dir, provenance=prov, **kwargs)
