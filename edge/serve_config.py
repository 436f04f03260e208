"""edge-serve's settings (what its command line sets): endpoints, batching, workers, limits, metrics, CURVE,
reload permissions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from edge.protocol import DEFAULT_MAX_MESSAGE_BYTES
from edge.runtime import RuntimeConfig


@dataclass
class ServeConfig:
    bundle: Path
    """Bundle directory served (and reloaded by SIGHUP or a ``reload`` op without a path)."""
    binds: list[str] = field(default_factory=lambda: ["tcp://127.0.0.1:5555"])
    """ZeroMQ endpoints to bind (tcp://HOST:PORT, tcp://HOST:* for a free port, ipc://PATH)."""
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    max_batch: int = 32
    """Most act requests scored in one policy call."""
    workers: int = 2
    """Workers scoring act batches concurrently (1: one batch at a time; the loop still answers the other
    ops meanwhile)."""
    worker_processes: bool = False
    """Workers are processes (each its own interpreter and onnxruntime session: the Python work of one
    request does not wait for another's) instead of threads of the daemon (one interpreter lock, one
    session, less memory)."""
    batch_wait_ms: float = 0.5
    """Longest wait for more requests once concurrent clients are seen (0: only what already arrived)."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """ZMQ_MAXMSGSIZE: a peer sending a larger message is disconnected."""
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None
    """Serve Prometheus /metrics on this port (0: a free one; None: off)."""
    curve_secret: Path | None = None
    """The server's secret certificate (from ``edge-serve keygen``); enables CURVE."""
    curve_allowed: Path | None = None
    """Directory of allowed client public certificates (``*.key``); required with CURVE."""
    allow_reload_path: bool = False
    """Let a ``reload`` request name another bundle directory (otherwise only the configured one reloads)."""
    remote_reload: bool = True
    """Accept the ``reload`` op at all (SIGHUP always works)."""
