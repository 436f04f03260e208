"""The MiniLM encoder graph: ``encoder.onnx`` (transformer + mean pooling + L2 normalisation in one graph),
its tokenizer file, its parity against sentence-transformers, and the on-disk cache of built graphs.

The encoder graph is the slow part of an export, so it is built once per encoder (keyed by the weights'
sha256, the max length and the torch version) in ``$EDGEJUDGE_CACHE/onnx`` (default
``~/.cache/edgejudge/onnx``); its parity result (min cosine >= :data:`ENCODER_MIN_COSINE` on real texts, else
:class:`policy.encoders.onnx_common.ExportError`) is stored beside it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

from models.encoder import EncoderRef, load_sentence_encoder
from policy.encoders.onnx_common import (
    OPSET,
    PARITY_TEXTS,
    ExportError,
    cache_root,
    ort_session,
    publish_folder,
    torchscript_exporter,
)

ENCODER_MIN_COSINE = 0.999
ENCODER_CACHE_TAG = "v1"


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


def encoder_cache_key(enc: EncoderRef) -> str:
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


def export_encoder_graph(enc: EncoderRef, path: Path, st_model) -> None:
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
    with torch.no_grad(), torchscript_exporter():
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

    sess = ort_session(onnx_path)
    tok = Tokenizer.from_file(str(tokenizer_path))
    got = sess.run(["embeddings"], tokenize(tok, texts))[0]
    ref = st_model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True, batch_size=16)
    cos = np.sum(got * ref, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1) + 1e-12)
    return float(np.min(cos))


def cached_encoder_onnx(enc: EncoderRef, *, st_model=None) -> tuple[Path, Path, float, bool]:
    """(encoder.onnx, tokenizer.json, parity min cosine, was cached) of the fp32 graph for ``enc``, built once
    per cache key (the int8 one, opt-in, is built from it: :func:`policy.encoders.int8.cached_encoder`)."""
    root = cache_root()
    key = encoder_cache_key(enc)
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
        export_encoder_graph(enc, tmp / "encoder.onnx", st_model)
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
        publish_folder(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder / "encoder.onnx", folder / "tokenizer.json", cos, False
