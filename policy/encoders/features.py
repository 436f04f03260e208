"""Text features for the policy: sentence embeddings with an on-disk cache keyed by text hash.

:class:`EmbeddingCache` is an append-only store per encoder (keyed by the encoder weights' sha256), so a
dataset
is embedded once and every later run (training with another reward, evaluation, benchmarks) reads it back::

    $EDGEJUDGE_CACHE/embeddings/<encoder sha256[:16]>/
        keys.txt       one sha256(text)[:32] per line, row i of vectors.f32
        vectors.f32    float32 rows of size D, appended
        .lock          writers take an exclusive flock: parallel runs append safely

Rows are appended before their keys, and a reader uses only rows that have a key, so an interrupted write
never yields a wrong vector. :class:`TextEmbedder` combines the cache with a sentence-transformers model
(loaded only when some text is missing from the cache). For the static encoder kind (``static[:BASE]``,
:mod:`policy.encoders.static`) it runs the shipped ``encoder.onnx`` through the runtime's own text encoder,
with no disk cache (a text costs microseconds): the features a policy trains on are the ones it is served.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from models import settings
from models.encoder import DEFAULT_ENCODER, EncoderRef
from policy.encoders.static import resolve_text_encoder, static_text_encoder, token_source

FLUSH_TEXTS = 256
"""Texts computed between two writes to the disk cache."""


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def default_cache_dir() -> Path:
    return settings.cache_dir() / "embeddings"


class EmbeddingCache:
    """Text-hash -> float32 [D] vector store for one encoder (see the module docstring for the layout)."""

    def __init__(self, folder: str | os.PathLike[str], dim: int):
        self.folder = Path(folder)
        self.dim = dim
        self.folder.mkdir(parents=True, exist_ok=True)
        self._keys_path = self.folder / "keys.txt"
        self._vec_path = self.folder / "vectors.f32"
        self._index: dict[str, int] = {}
        self._rows = np.zeros((0, dim), dtype=np.float32)
        self._loaded_keys = 0
        self.refresh()

    def refresh(self) -> None:
        """Re-read what other processes appended."""
        if not self._keys_path.exists():
            return
        keys = self._keys_path.read_text().split()
        if len(keys) == self._loaded_keys:
            return
        nbytes = self._vec_path.stat().st_size if self._vec_path.exists() else 0
        rows = min(len(keys), nbytes // (4 * self.dim))
        data = np.fromfile(self._vec_path, dtype=np.float32, count=rows * self.dim).reshape(rows, self.dim)
        self._rows = data
        self._index = {k: i for i, k in enumerate(keys[:rows])}
        self._loaded_keys = len(keys)

    def __len__(self) -> int:
        return len(self._index)

    def get(self, keys: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        """(vectors [N,D] with zeros where missing, positions of the missing keys)."""
        out = np.zeros((len(keys), self.dim), dtype=np.float32)
        missing = []
        for i, k in enumerate(keys):
            row = self._index.get(k)
            if row is None:
                missing.append(i)
            else:
                out[i] = self._rows[row]
        return out, missing

    def put(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(keys), self.dim):
            raise ValueError(f"expected vectors of shape ({len(keys)}, {self.dim}), got {vectors.shape}")
        with open(self.folder / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self.refresh()
                new = [(k, v) for k, v in zip(keys, vectors, strict=True) if k not in self._index]
                if not new:
                    return
                # Keep the two files aligned even after a crash between the two appends.
                n_keys = len(self._keys_path.read_text().split()) if self._keys_path.exists() else 0
                with open(self._vec_path, "r+b" if self._vec_path.exists() else "wb") as f:
                    f.truncate(n_keys * 4 * self.dim)
                    f.seek(0, os.SEEK_END)
                    f.write(np.stack([v for _, v in new]).astype(np.float32).tobytes())
                    f.flush()
                    os.fsync(f.fileno())
                with open(self._keys_path, "a") as f:
                    f.write("".join(k + "\n" for k, _ in new))
                    f.flush()
                    os.fsync(f.fileno())
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        self.refresh()


class TextEmbedder:
    """Embeds texts with the encoder, through the on-disk cache. ``cache=False`` disables the disk cache."""

    def __init__(
        self,
        encoder: str | os.PathLike[str] | EncoderRef = DEFAULT_ENCODER,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        cache: bool = True,
        batch_size: int = 16,
        progress: bool | None = None,
    ):
        self.encoder = resolve_text_encoder(encoder, progress=progress)
        self.dim = self.encoder.embedding_dim
        self.static = self.encoder.kind == "static"
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        use_disk = cache and not self.static
        self.cache = EmbeddingCache(root / self.encoder.sha256[:16], self.dim) if use_disk else None
        self.batch_size = batch_size
        self.progress = progress
        self._memory: dict[str, np.ndarray] = {}
        self._model = None
        self.computed = 0  # texts that went through the encoder (not served by a cache)

    def _load_model(self):
        if self._model is None:
            from models.encoder import load_sentence_encoder

            enc = self.encoder
            self._model = static_text_encoder(enc) if self.static else load_sentence_encoder(enc)
        return self._model

    def _encode(self, texts: list[str], keys: list[str] | None = None) -> np.ndarray:
        """Embeddings of ``texts``; with ``keys`` (and the disk cache) written to the cache every
        :data:`FLUSH_TEXTS` texts, so an interrupted run keeps what it computed."""
        from models.progress import progress

        model = self._load_model()
        if self.static:
            self.computed += len(texts)
            return model.encode(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Longest first: batches of similar length pad less.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        pending: list[int] = []
        with progress(len(texts), enabled=self.progress, unit="text", desc="embed") as bar:
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                if keys is not None and self.cache is not None and len(pending) >= FLUSH_TEXTS:
                    self.cache.put([keys[i] for i in pending], out[pending])
                    pending = []
                pending += idx
                out[idx] = model.encode(
                    [texts[i] for i in idx],
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    batch_size=self.batch_size,
                    show_progress_bar=False,
                )
                bar.update(len(idx))
        if keys is not None and self.cache is not None and pending:
            self.cache.put([keys[i] for i in pending], out[pending])
        self.computed += len(texts)
        return out

    def token_source(self, length: int):
        """The token ids of this encoder's tokenizer (the first ``length``) and the frozen token vectors they
        index, for a token-reading scorer (:func:`policy.encoders.static.token_source`)."""
        return token_source(self.encoder, length)

    def embed(self, texts: Iterable[str]) -> np.ndarray:
        """float32 [N, D] unit vectors, one per text (duplicates embedded once)."""
        texts = list(texts)
        unique = list(dict.fromkeys(texts))
        keys = [text_key(t) for t in unique]
        vecs = np.zeros((len(unique), self.dim), dtype=np.float32)
        todo = []
        for i, k in enumerate(keys):
            v = self._memory.get(k)
            if v is None:
                todo.append(i)
            else:
                vecs[i] = v
        if todo and self.cache is not None:
            got, missing = self.cache.get([keys[i] for i in todo])
            for j, i in enumerate(todo):
                vecs[i] = got[j]
            todo = [todo[j] for j in missing]
        if todo:
            new = self._encode([unique[i] for i in todo], [keys[i] for i in todo])
            vecs[todo] = new  # _encode wrote them to the disk cache
        for k, v in zip(keys, vecs, strict=True):
            self._memory[k] = v
        pos = {t: i for i, t in enumerate(unique)}
        return vecs[[pos[t] for t in texts]] if texts else np.zeros((0, self.dim), dtype=np.float32)
