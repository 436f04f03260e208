"""A bundle's text encoder run with onnxruntime: tokenizer.json + encoder.onnx -> float32 [N, D] embeddings.

:class:`TextEncoder` is the one place texts become embeddings at run time: the daemon's
:class:`edge.runtime.Runtime` uses it, and so does training for encoders whose features are computed by the
shipped graph itself (the static kind, ``docs/encoders.md``), so training and serving run the same code.
Texts are tokenized one by one and encoded in runs of similar length (:func:`length_groups`); graphs that
must not see padding (int8 activation scales, the static kind's exact sums) batch only equal lengths.
A tokenizer without special-token template (the static kind's) tokenizes through :class:`ChunkTokenizer`:
the same ids, from a cache of space-separated chunks (a 150-token state: ~20 µs instead of ~200 µs).
Imports: numpy, onnxruntime, tokenizers and ``models``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.bundle import ENCODER_INPUTS, ENCODER_OUTPUT, BundleError

# Fixed cost of one encoder run, in tokens of work: ~2.4 ms of an fp32 MiniLM run on one thread streams the
# weights whatever the batch, against ~0.22 ms per token (measured; BENCHMARKS.md "Serving").
RUN_COST_TOKENS = 11


@dataclass(frozen=True)
class SessionConfig:
    threads: int = 1
    """onnxruntime intra-op threads per session (1 keeps a robot's other processes on their cores)."""
    spinning: bool = False
    """Let onnxruntime's worker threads spin while idle (lower latency, burns CPU); off by default."""


def ort_session(path: Path, cfg: SessionConfig | Any) -> Any:
    """A CPU onnxruntime session with ``cfg.threads`` intra-op threads, sequential, spinning per config."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = max(1, cfg.threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    spin = "1" if cfg.spinning else "0"
    so.add_session_config_entry("session.intra_op.allow_spinning", spin)
    so.add_session_config_entry("session.inter_op.allow_spinning", spin)
    return ort.InferenceSession(str(path), sess_options=so, providers=["CPUExecutionProvider"])


def length_groups(lengths: list[int], max_group: int, *, allow_padding: bool = True) -> list[list[int]]:
    """Partition text indices into encoder runs with least work: texts sorted by token count, cut where
    padding everything to the group's longest would cost more than another run (RUN_COST_TOKENS).
    ``allow_padding=False``: only texts of equal length share a run."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    n = len(order)
    best = [0.0] + [float("inf")] * n  # best[j]: cost of the first j sorted texts
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        longest = lengths[order[j - 1]]
        for i in range(j - 1, max(-1, j - 1 - max_group), -1):
            if not allow_padding and lengths[order[i]] != longest:
                break
            cost = best[i] + RUN_COST_TOKENS + (j - i) * longest
            if cost < best[j]:
                best[j], cut[j] = cost, i
    groups: list[list[int]] = []
    j = n
    while j > 0:
        groups.append(order[cut[j] : j])
        j = cut[j]
    return groups[::-1]


def chunkable(tokenizer: Any) -> bool:
    """A WordPiece tokenizer with BERT's pre-tokenizer and no template: :class:`ChunkTokenizer` is exact."""
    import json

    spec = json.loads(tokenizer.to_str())
    return (
        spec.get("post_processor") is None
        and (spec.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
        and (spec.get("model") or {}).get("type") == "WordPiece"
        and (spec.get("normalizer") or {}).get("type") in (None, "BertNormalizer")
    )


class ChunkTokenizer:
    """Token ids of a text as the concatenation of its space-separated chunks' ids, each chunk tokenized once
    by ``tokenizer`` and cached (at most ``capacity`` chunks; the cache is emptied when full).

    Exact for BERT-style tokenizers without a template: their normalizer works per character and their
    pre-tokenizer splits at every space, so no token spans a space and a chunk's ids do not depend on its
    neighbours (a property test checks this on arbitrary text). Truncation keeps the first ``max_length``."""

    def __init__(self, tokenizer: Any, max_length: int, capacity: int = 1 << 16):
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.capacity = capacity
        self._chunks: dict[str, list[int]] = {}

    def ids(self, text: str) -> list[int]:
        out: list[int] = []
        cache = self._chunks
        for chunk in text.split(" "):
            got = cache.get(chunk)
            if got is None:
                if len(cache) >= self.capacity:
                    cache.clear()
                got = cache[chunk] = self.tokenizer.encode(chunk, add_special_tokens=False).ids
            out += got
        return out[: self.max_length]


class TextEncoder:
    """``encoder.onnx`` + ``tokenizer.json`` (truncation at ``max_length``); :meth:`encode` -> [N, D]."""

    def __init__(
        self,
        encoder_onnx: Path,
        tokenizer_json: Path,
        *,
        dim: int,
        max_length: int,
        allow_padding: bool = True,
        max_group: int = 64,
        session: SessionConfig | Any = None,
    ):
        from tokenizers import Tokenizer

        self.dim = dim
        self.allow_padding = allow_padding
        self.max_group = max(1, max_group)
        where = Path(encoder_onnx).parent
        try:
            self.session = ort_session(Path(encoder_onnx), session or SessionConfig())
        except Exception as e:  # onnxruntime raises its own exception types
            raise BundleError(f"{where}: onnxruntime cannot load {Path(encoder_onnx).name} ({e})") from None
        self.inputs = [i.name for i in self.session.get_inputs()]
        if not {"input_ids", "attention_mask"} <= set(self.inputs) or set(self.inputs) - set(ENCODER_INPUTS):
            raise BundleError(f"{where}: encoder.onnx inputs {self.inputs} are not {ENCODER_INPUTS}")
        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        except Exception as e:
            raise BundleError(f"{where}: tokenizer.json cannot be read ({e})") from None
        self.tokenizer.enable_truncation(max_length=max_length)
        self.tokenizer.no_padding()
        self.chunked = ChunkTokenizer(self.tokenizer, max_length) if chunkable(self.tokenizer) else None

    def token_ids(self, text: str) -> list[int]:
        return self.chunked.ids(text) if self.chunked is not None else self.tokenizer.encode(text).ids

    def encode(self, texts: list[str]) -> np.ndarray:
        """One encoder run per group of similar-length texts (see :func:`length_groups`)."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # one text at a time: encode_batch would start tokenizers' thread pool for a handful of short texts.
        ids = [self.token_ids(t) for t in texts]
        for group in length_groups([len(i) for i in ids], self.max_group, allow_padding=self.allow_padding):
            length = max(1, max(len(ids[i]) for i in group))
            batch = np.zeros((len(group), length), dtype=np.int64)
            att = np.zeros_like(batch)
            for row, i in enumerate(group):
                batch[row, : len(ids[i])] = ids[i]
                att[row, : len(ids[i])] = 1
            feeds = {"input_ids": batch, "attention_mask": att}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(batch)
            (emb,) = self.session.run([ENCODER_OUTPUT], feeds)
            out[group] = emb
        return out

    def close(self) -> None:
        self.session = None
