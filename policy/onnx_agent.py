"""Run an exported bundle with onnxruntime alone, as the robot does: no torch, no sentence-transformers.

:class:`BundlePolicy` loads a bundle (manifest checked: format version and every file's sha256), tokenizes
with ``tokenizers``, embeds with ``encoder.onnx`` and scores with ``policy.onnx``. Imports: numpy,
onnxruntime, tokenizers, models.bundle (stdlib) and edge.actions. A test asserts that using it leaves torch
out of ``sys.modules``.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from edge.actions import candidate_matrix
from models.bundle import BundleError, load_manifest


def _threads() -> int:
    raw = os.environ.get("EDGEJUDGE_THREADS", "1")
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1


class BundlePolicy:
    """Scores candidate actions with a bundle. ``cache_size`` > 0 keeps an LRU of text embeddings (the
    instruction and recurring candidates repeat across steps); 0 embeds every text on every call."""

    name = "bundle"

    def __init__(
        self, bundle_dir: str | os.PathLike[str], *, cache_size: int = 4096, threads: int | None = None
    ):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:  # pragma: no cover - depends on the install
            raise BundleError(
                f"running a bundle needs onnxruntime and tokenizers (pip install 'edgejudge[edge]'): {e}"
            ) from e
        self.dir = Path(bundle_dir)
        self.manifest = load_manifest(self.dir)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads or _threads()
        so.inter_op_num_threads = 1
        try:
            self._enc = ort.InferenceSession(
                str(self.dir / "encoder.onnx"), sess_options=so, providers=["CPUExecutionProvider"]
            )
            self._pol = ort.InferenceSession(
                str(self.dir / "policy.onnx"), sess_options=so, providers=["CPUExecutionProvider"]
            )
            self._tok = Tokenizer.from_file(str(self.dir / "tokenizer.json"))
        except Exception as e:  # noqa: BLE001 - onnxruntime raises several private exception types
            raise BundleError(
                f"{self.dir}: cannot load the bundle's graphs ({type(e).__name__}: {e})"
            ) from None
        self._tok.enable_truncation(max_length=self.manifest.max_length)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.cache_size = cache_size
        self.skills = list(self.manifest.skills)
        self._skill_emb = np.load(self.dir / "skills.npy") if self.skills else None

    @property
    def model_sha256(self) -> str:
        return self.manifest.model_sha256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 [N, D] unit vectors."""
        texts = list(texts)
        out = np.zeros((len(texts), self.manifest.embedding_dim), dtype=np.float32)
        todo = (
            [i for i, t in enumerate(texts) if t not in self._cache] if self.cache_size else range(len(texts))
        )
        todo = list(todo)
        if todo:
            unique = list(dict.fromkeys(texts[i] for i in todo))
            vecs = self._encode(unique)
            fresh = dict(zip(unique, vecs, strict=True))
            for i in todo:
                out[i] = fresh[texts[i]]
            if self.cache_size:
                for t, v in fresh.items():
                    self._cache[t] = v
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        if self.cache_size:
            for i, t in enumerate(texts):
                if i not in todo:
                    out[i] = self._cache[t]
                    self._cache.move_to_end(t)
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Encode in length buckets: a long state text and short candidates are not padded to one width
        (padding 8 candidates to a 150-token state costs ~8x the encoder time)."""
        encs = self._tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        out = np.zeros((len(texts), self.manifest.embedding_dim), dtype=np.float32)
        start = 0
        while start < len(order):
            end = start + 1
            base = len(encs[order[start]].ids)
            while end < len(order) and len(encs[order[end]].ids) <= 2 * base and end - start < 64:
                end += 1
            group = [encs[i] for i in order[start:end]]
            width = max(len(e.ids) for e in group)

            def padded(attr: str, group=group, width=width) -> np.ndarray:
                arr = np.zeros((len(group), width), dtype=np.int64)
                for j, e in enumerate(group):
                    v = getattr(e, attr)
                    arr[j, : len(v)] = v
                return arr

            feeds = {
                "input_ids": padded("ids"),
                "attention_mask": padded("attention_mask"),
                "token_type_ids": padded("type_ids"),
            }
            out[order[start:end]] = self._enc.run(["embeddings"], feeds)[0]
            start = end
        return out

    def candidate_features(self, candidates: Sequence[str], observation: str = "") -> np.ndarray:
        """float32 [K, C]: what the scorer takes per candidate (the bundle's ``candidate_features``), offered
        in ``observation``."""
        m = self.manifest
        return candidate_matrix(m.candidate_features, candidates, self.embed, m.embedding_dim, observation)

    def scores_from_embeddings(
        self, instruction: np.ndarray, state: np.ndarray, candidates: np.ndarray
    ) -> np.ndarray:
        """The scorer alone on pre-computed features ([D], [D], [K,C]), as the daemon's embedding op."""
        feeds = {
            "instruction": instruction[None].astype(np.float32),
            "state": state[None].astype(np.float32),
            "candidates": candidates[None].astype(np.float32),
            "mask": np.ones((1, len(candidates)), dtype=bool),
        }
        return self._pol.run(["scores"], feeds)[0][0]

    def scores(self, instruction: str, observation: str, candidates: Sequence[str] | None) -> np.ndarray:
        """One score per candidate (``None``: the bundle's skill list)."""
        if candidates is None:
            if self._skill_emb is None:
                raise BundleError(f"{self.dir}: no candidates given and the bundle has no skill list")
            emb = self.embed([instruction, observation])
            cand = self._skill_emb
        else:
            if not candidates:
                raise ValueError("no candidate actions to choose from")
            emb = self.embed([instruction, observation])
            cand = self.candidate_features(candidates, observation)
        feeds = {
            "instruction": emb[0:1],
            "state": emb[1:2],
            "candidates": cand[None],
            "mask": np.ones((1, len(cand)), dtype=bool),
        }
        return self._pol.run(["scores"], feeds)[0][0]

    def act(self, instruction: str, observation: str, candidates: Sequence[str]) -> int:
        return int(np.argmax(self.scores(instruction, observation, candidates)))

    def timed_act(self, instruction: str, observation: str, candidates: Sequence[str]) -> tuple[int, float]:
        t0 = time.perf_counter()
        i = self.act(instruction, observation, candidates)
        return i, time.perf_counter() - t0

    def reset(self) -> None:
        """Nothing per episode: the policy is stateless (history is in the observation text)."""

    def close(self) -> None:
        self._enc = self._pol = None  # type: ignore[assignment]
        self._cache.clear()

    def __enter__(self) -> BundlePolicy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
