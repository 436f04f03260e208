"""The ``EDGEJUDGE_*`` environment settings, read here and nowhere else, and the one atomic file write.

- ``EDGEJUDGE_THREADS`` (:func:`threads`): CPU threads of every engine (llama.cpp, onnxruntime, torch);
  default 1, anything but an integer from 1 to :data:`MAX_THREADS` is a :class:`SettingError`.
- ``EDGEJUDGE_CACHE`` (:func:`cache_dir`): the cache folder, default ``~/.cache/edgejudge``; ``~`` is
  expanded.
- ``EDGEJUDGE_ENVS`` (:func:`env_adapters`): extra environment adapters, ``name=module:Class`` entries
  separated by commas (parsed by ``policy.worlds.adapters.registry``).
- ``EDGEJUDGE_SCIENCEWORLD_HEAP`` (:func:`scienceworld_heap`): the ScienceWorld JVM's heap, default ``1g``.
- ``EDGEJUDGE_TRAIN_REFERENCE`` (:func:`train_reference`): ``1`` makes training take the reference
  computation instead of its fast paths (``CandidateScorer.fast``, read when a scorer is built); unset or
  ``0``: the fast paths; anything else is a :class:`SettingError`.

Every function reads the environment when called (tests and child processes may change it). Command-line
options that take a setting bind its variable with click's ``envvar=`` (``models.cli_options``).

:func:`atomic_write` and :class:`AtomicFile` write a file through a temporary file in the same folder, fsync
and a rename: readers see the old file or the complete new one, never a half-written file, and a failed
write leaves no temporary file behind. Stdlib only: ``edge`` imports this module.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import TracebackType

THREADS = "EDGEJUDGE_THREADS"
CACHE = "EDGEJUDGE_CACHE"
ENVS = "EDGEJUDGE_ENVS"
SCIENCEWORLD_HEAP = "EDGEJUDGE_SCIENCEWORLD_HEAP"
TRAIN_REFERENCE = "EDGEJUDGE_TRAIN_REFERENCE"

MAX_THREADS = 64
DEFAULT_CACHE = "~/.cache/edgejudge"


class SettingError(ValueError):
    """An ``EDGEJUDGE_*`` variable (or an option bound to one) with a value that cannot be used."""


def _read(name: str) -> str:
    """The variable's value, stripped; empty when unset."""
    return os.environ.get(name, "").strip()


def parse_threads(raw: str, source: str = THREADS) -> int:
    """``raw`` as a thread count from 1 to :data:`MAX_THREADS`; ``source`` (a variable's name, or empty)
    names it in the error."""
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_THREADS:
        named = f"{source}={raw!r}" if source else repr(raw)
        raise SettingError(f"{named}: expected an integer from 1 to {MAX_THREADS}")
    return n


def threads() -> int:
    """``$EDGEJUDGE_THREADS``, default 1 (llama.cpp, onnxruntime and torch slow down with more threads than
    free cores)."""
    raw = _read(THREADS)
    return parse_threads(raw) if raw else 1


def cache_dir() -> Path:
    """``$EDGEJUDGE_CACHE`` or ``~/.cache/edgejudge``, ``~`` expanded."""
    return Path(_read(CACHE) or DEFAULT_CACHE).expanduser()


def env_adapters() -> str:
    """``$EDGEJUDGE_ENVS`` as written (empty when unset)."""
    return _read(ENVS)


def scienceworld_heap() -> str:
    """``$EDGEJUDGE_SCIENCEWORLD_HEAP``: the ScienceWorld JVM's ``-Xmx`` value, default ``1g``."""
    return _read(SCIENCEWORLD_HEAP) or "1g"


def train_reference() -> bool:
    """``$EDGEJUDGE_TRAIN_REFERENCE``: ``1`` for the reference computation, unset or ``0`` for the fast
    paths."""
    raw = _read(TRAIN_REFERENCE)
    if raw not in ("", "0", "1"):
        raise SettingError(f"{TRAIN_REFERENCE}={raw!r}: expected 0 or 1")
    return raw == "1"


# -------------------------------------------------------------------------------------------- atomic writes


def _file_mode() -> int:
    """What ``open(path, "w")`` would give a new file under the process's umask (``mkstemp`` makes 0600)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


_FILE_MODE = _file_mode()


class AtomicFile:
    """A temporary file beside ``path`` that replaces ``path`` on :meth:`commit` (fsync, then rename).

    As a context manager it yields the temporary file's path, commits on a clean exit and removes the
    temporary file on an exception::

        with AtomicFile(out) as tmp:
            fig.savefig(tmp)

    The folder is created when missing. The new file gets the usual permissions (0666 less the umask).
    """

    def __init__(self, path: str | os.PathLike[str], *, suffix: str = ".tmp"):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=suffix, dir=self.path.parent)
        os.close(fd)
        self.tmp = Path(tmp)
        self._done = False

    def commit(self) -> None:
        """Flush the temporary file to disk and rename it onto ``path``."""
        if self._done:
            return
        self._done = True
        try:
            fd = os.open(self.tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.chmod(self.tmp, _FILE_MODE)
            os.replace(self.tmp, self.path)
        except BaseException:
            self.tmp.unlink(missing_ok=True)
            raise

    def discard(self) -> None:
        """Remove the temporary file; ``path`` is left as it was."""
        self._done = True
        self.tmp.unlink(missing_ok=True)

    def __enter__(self) -> Path:
        return self.tmp

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def atomic_write(path: str | os.PathLike[str], data: str | bytes, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` (text in ``encoding``, or bytes) to ``path`` atomically; returns the path."""
    raw = data.encode(encoding) if isinstance(data, str) else data
    with AtomicFile(path) as tmp:
        tmp.write_bytes(raw)
    return Path(path).expanduser()
