"""Start an ``edge-serve`` subprocess on a free loopback port; its endpoint comes from the ``ready`` log line.

For commands and tools that need a daemon for the length of a run (``edgejudge eval --serve``, the serving
benchmark). Stdlib only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


class LaunchError(RuntimeError):
    """The daemon exited, logged an error or did not become ready in time."""


def _drain(stream) -> None:  # type: ignore[no-untyped-def]
    for _ in stream:
        pass


def start_daemon(
    bundle: str | os.PathLike[str],
    *,
    threads: int = 1,
    extra: Sequence[str] = (),
    timeout: float = 300.0,
    cwd: str | os.PathLike[str] | None = None,
) -> tuple[subprocess.Popen[str], str]:
    """Run ``edge-serve --bundle BUNDLE --bind tcp://127.0.0.1:*``; return the process and its endpoint.

    The daemon's stderr (JSON log lines) is read until the ``ready`` event, then drained by a daemon thread so
    the pipe never fills. On failure the process is killed and :class:`LaunchError` says why.
    """
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "edge.serve",
            "--bundle",
            str(Path(bundle)),
            "--bind",
            "tcp://127.0.0.1:*",
            "--threads",
            str(threads),
            *extra,
        ],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": str(threads), "EDGEJUDGE_THREADS": str(threads)},
    )
    assert p.stderr is not None
    deadline = time.monotonic() + timeout
    reason = f"not ready within {timeout:.0f} s"
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:
            reason = f"exited with code {p.wait(timeout=10)}"
            break
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("event") == "ready":
            threading.Thread(target=_drain, args=(p.stderr,), daemon=True).start()
            return p, str(rec["endpoints"][0])
        if rec.get("level") == "error":
            reason = f"failed: {rec.get('error') or rec.get('msg') or rec}"
            break
    if p.poll() is None:
        p.kill()
        p.wait(timeout=10)
    raise LaunchError(f"edge-serve on {bundle} {reason}")


@contextmanager
def served(
    bundle: str | os.PathLike[str], *, threads: int = 1, extra: Sequence[str] = (), timeout: float = 300.0
) -> Iterator[str]:
    """edge-serve on ``bundle`` (:func:`start_daemon`, ``extra`` its further options) for the length of the
    block, which gets its endpoint; the daemon is stopped (SIGTERM, then killed after 30 s) when the block
    ends."""
    proc, endpoint = start_daemon(bundle, threads=threads, extra=extra, timeout=timeout)
    try:
        yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
