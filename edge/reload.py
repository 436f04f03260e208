"""Hot reload for edge-serve: a new bundle loads and test-runs in a helper thread while the old one serves.

The daemon's loop starts a reload (``reload`` op or SIGHUP) with :meth:`Reloader.start`, keeps serving, and
asks :meth:`Reloader.collect` between batches; once the thread has ended it gets the new runtime (or the
reason it was refused) and the ``reload`` requests waiting for an answer, and swaps models itself. Any failure
leaves the old model serving. :func:`refusal` holds the rules for a ``reload`` request.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edge.protocol import Code, ProtocolError, Request
from edge.runtime import Runtime, RuntimeConfig, load_runtime
from models.bundle import BundleError


@dataclass
class ReloadOutcome:
    runtime: Runtime | None
    """The loaded, self-tested runtime; None when the bundle was refused."""
    error: str | None
    """Why the bundle was refused (None on success)."""
    waiters: list[Any] = field(default_factory=list)
    """The ``reload`` requests that wait for this outcome, in arrival order."""


class Reloader:
    """One reload at a time; requests that arrive meanwhile wait for the running one."""

    def __init__(self, cfg: RuntimeConfig):
        self.cfg = cfg
        self._thread: threading.Thread | None = None
        self._result: tuple[Runtime | None, str | None] | None = None
        self._waiters: list[Any] = []

    @property
    def running(self) -> bool:
        """A reload was started and its outcome not yet collected."""
        return self._thread is not None

    def wait(self, waiter: Any) -> None:
        """Answer ``waiter`` with the outcome of the reload running or about to start."""
        self._waiters.append(waiter)

    def start(self, bundle: Path) -> None:
        """Load ``bundle`` in a helper thread (the caller checks :attr:`running` first)."""

        def work() -> None:
            try:
                self._result = (load_runtime(bundle, self.cfg), None)
            except BundleError as e:
                self._result = (None, str(e))
            except Exception as e:  # onnxruntime or tokenizers errors of any kind keep the old model
                self._result = (None, f"{type(e).__name__}: {e}")

        self._result = None
        self._thread = threading.Thread(target=work, name="reload", daemon=True)
        self._thread.start()

    def collect(self) -> ReloadOutcome | None:
        """The outcome once the thread has ended (then the next reload may start); None while it runs."""
        if self._thread is None or self._thread.is_alive():
            return None
        self._thread.join()
        self._thread = None
        new, err = self._result or (None, "reload thread ended without a result")
        waiters, self._waiters = self._waiters, []
        return ReloadOutcome(new, err, waiters)

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout=timeout)


def refusal(
    req: Request, *, remote_reload: bool, allow_reload_path: bool, running: bool
) -> ProtocolError | None:
    """Why a ``reload`` request is refused, or None when it may go ahead."""
    if not remote_reload:
        return ProtocolError(Code.FORBIDDEN, "the reload op is disabled on this server (send SIGHUP)", req.id)
    if req.bundle is not None and not allow_reload_path:
        why = "reloading another bundle path is disabled (start with --allow-reload-path)"
        return ProtocolError(Code.FORBIDDEN, why, req.id)
    if running:
        return ProtocolError(Code.BUSY, "a reload is already running", req.id)
    return None
