"""The edge-serve daemon loop: a ZeroMQ ROUTER socket, micro-batched requests, signals, replies.

One thread serves: it polls the socket with a timeout, drains the requests that arrived together (waiting a
bounded time for more when clients are concurrent), answers ``info``/``health``/errors at once and hands
all ``act`` requests of the batch to :func:`edge.scoring.answer_acts` (one encoder pass, one policy call).
A reload (``reload`` op or SIGHUP) runs in :class:`edge.reload.Reloader` while the old model keeps
serving; the loop swaps models between batches, and a refused bundle leaves the old model in place. CURVE
is set up by :mod:`edge.curve`. SIGTERM/SIGINT stop the loop after the current batch.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq

from edge.curve import enable_curve, reload_allowed_keys
from edge.logs import JsonLogger, sd_notify
from edge.metrics import Metrics, start_metrics_server
from edge.protocol import (
    DEFAULT_MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    Code,
    ProtocolError,
    error_reply,
    ok_reply,
    pack,
    parse_request,
)
from edge.reload import Reloader, refusal
from edge.runtime import Runtime, RuntimeConfig, load_runtime
from edge.scoring import Pending, answer_acts

POLL_MS = 50
DRAIN_QUIET_MS = 50
DRAIN_MAX_S = 2.0


@dataclass
class ServeConfig:
    bundle: Path
    """Bundle directory served (and reloaded by SIGHUP or a ``reload`` op without a path)."""
    binds: list[str] = field(default_factory=lambda: ["tcp://127.0.0.1:5555"])
    """ZeroMQ endpoints to bind (tcp://HOST:PORT, tcp://HOST:* for a free port, ipc://PATH)."""
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    max_batch: int = 32
    """Most act requests scored in one policy call."""
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


class _Shutdown(Exception):
    """Raised by the signal handler while the first bundle loads: exit without serving."""


class Server:
    """Owns the context, socket, authenticator, metrics server and runtime; use :meth:`run`."""

    def __init__(self, cfg: ServeConfig, log: JsonLogger | None = None):
        self.cfg = cfg
        self.log = log or JsonLogger()
        self.metrics = Metrics()
        self.rt: Runtime | None = None
        self.stop_requested = False
        self.reload_requested = False
        self._loading = True
        self.reloader = Reloader(cfg.runtime)
        self._last_batch = 1
        self.started = time.time()
        self.ctx: zmq.Context | None = None
        self.sock: zmq.Socket | None = None
        self.auth: Any = None
        self.http: Any = None
        self.endpoints: list[str] = []

    # ------------------------------------------------------------------------------------------------ signals

    def install_signals(self) -> None:
        def on_stop(signum: int, _frame: Any) -> None:
            self.stop_requested = True
            if self._loading:
                raise _Shutdown(signal.Signals(signum).name)

        def on_hup(_signum: int, _frame: Any) -> None:
            self.reload_requested = True

        signal.signal(signal.SIGTERM, on_stop)
        signal.signal(signal.SIGINT, on_stop)
        signal.signal(signal.SIGHUP, on_hup)

    # ------------------------------------------------------------------------------------------------ setup

    def load(self) -> None:
        t = time.perf_counter()
        self.log.info("loading", bundle=str(self.cfg.bundle), pid=os.getpid())
        self.rt = load_runtime(self.cfg.bundle, self.cfg.runtime)
        self.metrics.set_model(self.rt.model_sha256)
        self.log.info(
            "bundle_loaded",
            bundle=str(self.rt.bundle_dir),
            model=self.rt.model_sha256,
            seconds=round(time.perf_counter() - t, 3),
        )
        if self.rt.portability_warning:
            self.log.warning("bundle_portability", message=self.rt.portability_warning)

    def open(self) -> None:
        self.ctx = zmq.Context()
        sock = self.sock = self.ctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.MAXMSGSIZE, self.cfg.max_message_bytes)
        sock.setsockopt(zmq.SNDTIMEO, 0)
        if self.cfg.curve_secret is not None:
            self.auth = enable_curve(self.ctx, sock, self.cfg.curve_secret, self.cfg.curve_allowed, self.log)
        for addr in self.cfg.binds:
            sock.bind(addr)
            self.endpoints.append(sock.getsockopt_string(zmq.LAST_ENDPOINT))
        if self.cfg.metrics_port is not None:
            self.http = start_metrics_server(self.metrics, self.cfg.metrics_host, self.cfg.metrics_port)

    def close(self) -> None:
        if self.http is not None:
            self.http.shutdown()
            self.http.server_close()
            self.http = None
        if self.sock is not None:
            self.sock.close(linger=0)
            self.sock = None
        if self.auth is not None:
            self.auth.stop()
            self.auth = None
        if self.ctx is not None:
            self.ctx.term()
            self.ctx = None
        self.reloader.join(timeout=30)
        if self.rt is not None:
            self.rt.close()

    # ------------------------------------------------------------------------------------------------ loop

    def run(self) -> int:
        """Load, bind, serve until SIGTERM/SIGINT; returns the exit status."""
        self.install_signals()
        try:
            self.load()
            self._loading = False
        except _Shutdown as e:
            self.log.info("shutdown", reason=f"{e} during bundle load", served=0)
            return 0
        if self.stop_requested:
            self.log.info("shutdown", reason="signal during bundle load", served=0)
            return 0
        try:
            self.open()
        except (zmq.ZMQError, ValueError, OSError) as e:
            self.log.error("startup_failed", error=str(e))
            self.close()
            return 2
        self.log.info(
            "ready",
            endpoints=self.endpoints,
            model=self.rt.model_sha256 if self.rt else None,
            metrics_port=self.http.server_address[1] if self.http else None,
            curve=self.cfg.curve_secret is not None,
            pid=os.getpid(),
        )
        sd_notify("READY=1")
        gc.freeze()  # everything loaded so far is permanent: the collector's passes stay short (p99)
        try:
            self._serve()
        finally:
            # A second SIGTERM while closing must not kill the process half-way (or during interpreter exit).
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            sd_notify("STOPPING=1")
            self.close()
        self.log.info("shutdown", reason="signal", requests=self.metrics.snapshot()["requests"])
        return 0

    def _serve(self) -> None:
        assert self.sock is not None
        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        while not self.stop_requested:
            events = dict(poller.poll(POLL_MS))
            if self.reload_requested:
                self.reload_requested = False
                self._reload_allowed_keys()
                self._start_reload(self.cfg.bundle, None)
            self._finish_reload()
            if self.sock in events:
                self._handle_batch_safely(self._drain(poller))
        # Requests in flight when the signal came are answered: read until the socket has been quiet for
        # DRAIN_QUIET_MS (bounded by DRAIN_MAX_S), so what the kernel already holds is not lost.
        deadline = time.monotonic() + DRAIN_MAX_S
        while time.monotonic() < deadline and self.sock.poll(DRAIN_QUIET_MS):
            self._handle_batch_safely(self._drain(poller))

    def _handle_batch_safely(self, batch: list[tuple[list[bytes], float]]) -> None:
        """Answer a batch; an unexpected failure is logged and the loop goes on (errors are replies and log
        lines, never a dead daemon)."""
        try:
            self._handle_batch(batch)
        except Exception as e:
            import traceback

            self.log.error(
                "batch_failed",
                error=f"{type(e).__name__}: {e}",
                batch=len(batch),
                where=traceback.format_exc(limit=3).splitlines()[-3:],
            )

    def _recv_ready(self, batch: list[tuple[list[bytes], float]]) -> None:
        """Receive what is queued (up to max_batch); the caller has seen POLLIN, so the first receive
        needs no EVENTS query."""
        sock = self.sock
        assert sock is not None
        first = True
        while len(batch) < self.cfg.max_batch and (first or sock.getsockopt(zmq.EVENTS) & zmq.POLLIN):
            first = False
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK, copy=True)
            except zmq.Again:
                return
            batch.append((frames, time.perf_counter()))

    def _drain(self, poller: zmq.Poller) -> list[tuple[list[bytes], float]]:
        batch: list[tuple[list[bytes], float]] = []
        self._recv_ready(batch)
        if self.cfg.batch_wait_ms > 0 and (len(batch) > 1 or self._last_batch > 1):
            deadline = time.perf_counter() + self.cfg.batch_wait_ms / 1000
            while len(batch) < self.cfg.max_batch:
                left = deadline - time.perf_counter()
                if left <= 0 or not poller.poll(left * 1000):
                    break
                self._recv_ready(batch)
        self._last_batch = len(batch)
        return batch

    # ------------------------------------------------------------------------------------------------ replies

    def _send(self, envelope: list[bytes], msg: dict[str, Any], t0: float, op: str) -> None:
        assert self.sock is not None
        try:
            self.sock.send_multipart([*envelope, pack(msg)], zmq.NOBLOCK)
        except zmq.ZMQError:
            self.metrics.drop()
            return
        self.metrics.request(op, time.perf_counter() - t0)
        if not msg["ok"]:
            self.metrics.error(msg["code"])

    def _error(self, envelope: list[bytes], t0: float, err: ProtocolError, op: str = "invalid") -> None:
        self.log.debug("bad_request", code=err.code.value, message=err.message)
        self._send(envelope, error_reply(err.code, err.message, err.req_id), t0, op)

    def _handle_batch(self, batch: list[tuple[list[bytes], float]]) -> None:
        acts: list[Pending] = []
        for frames, t0 in batch:
            # DEALER peers send [payload] (we see [identity, payload]); REQ peers add an empty delimiter.
            if len(frames) == 2:
                envelope, payload = frames[:1], frames[1]
            elif len(frames) == 3 and frames[1] == b"":
                envelope, payload = frames[:2], frames[2]
            else:
                envelope = frames[:2] if len(frames) > 1 and frames[1] == b"" else frames[:1]
                self._error(
                    envelope,
                    t0,
                    ProtocolError(
                        Code.BAD_FRAMES, f"expected one payload frame, got {len(frames) - len(envelope)}"
                    ),
                )
                continue
            try:
                req = parse_request(payload, self.cfg.max_message_bytes)
            except ProtocolError as e:
                self._error(envelope, t0, e)
                continue
            except Exception as e:  # a parser bug must cost one error reply, never the daemon
                self.log.error("parse_failed", error=f"{type(e).__name__}: {e}")
                self._error(
                    envelope, t0, ProtocolError(Code.INTERNAL, "request could not be parsed (logged)")
                )
                continue
            p = Pending(envelope, t0, req)
            if req.op == "act":
                acts.append(p)
            elif req.op == "health":
                self._send(
                    envelope,
                    ok_reply(
                        req.id,
                        status="serving",
                        model=self._model(),
                        uptime_s=round(time.time() - self.started, 3),
                        reloading=self.reloader.running,
                    ),
                    t0,
                    req.op,
                )
            elif req.op == "info":
                assert self.rt is not None
                self._send(
                    envelope,
                    ok_reply(
                        req.id,
                        protocol=PROTOCOL_VERSION,
                        **self.rt.info(),
                        max_batch=self.cfg.max_batch,
                        batch_wait_ms=self.cfg.batch_wait_ms,
                        max_message_bytes=self.cfg.max_message_bytes,
                    ),
                    t0,
                    req.op,
                )
            elif req.op == "reload":
                self._reload_op(p)
        if acts:
            self._act(acts)

    def _model(self) -> str:
        return self.rt.model_sha256 if self.rt is not None else ""

    def _act(self, acts: list[Pending]) -> None:
        assert self.rt is not None
        answer_acts(self.rt, acts, self._send, self._error, self.metrics, self.log)

    # ------------------------------------------------------------------------------------------------ reload

    def _reload_allowed_keys(self) -> None:
        """SIGHUP also re-reads the allowed client keys (a key added to or removed from the directory)."""
        if self.auth is not None and self.cfg.curve_allowed is not None:
            reload_allowed_keys(self.auth, self.cfg.curve_allowed, self.log)

    def _reload_op(self, p: Pending) -> None:
        err = refusal(
            p.req,
            remote_reload=self.cfg.remote_reload,
            allow_reload_path=self.cfg.allow_reload_path,
            running=self.reloader.running,
        )
        if err is not None:
            self._error(p.envelope, p.t0, err, "reload")
            return
        self._start_reload(Path(p.req.bundle) if p.req.bundle else self.cfg.bundle, p)

    def _start_reload(self, bundle: Path, waiter: Pending | None) -> None:
        if waiter is not None:
            self.reloader.wait(waiter)
        if self.reloader.running:
            return
        sd_notify("RELOADING=1")
        self.log.info("reload_started", bundle=str(bundle))
        self.reloader.start(bundle)

    def _finish_reload(self) -> None:
        done = self.reloader.collect()
        if done is None:
            return
        new, err = done.runtime, done.error
        if new is not None:
            old, self.rt = self.rt, new  # the swap: the next batch uses the new model
            if old is not None:
                old.close()
            self.cfg.bundle = new.bundle_dir
            self.metrics.set_model(new.model_sha256)
            self.metrics.reload("ok")
            self.log.info("reload_done", bundle=str(new.bundle_dir), model=new.model_sha256)
            for w in done.waiters:
                self._send(
                    w.envelope,
                    ok_reply(w.req.id, model=new.model_sha256, bundle=str(new.bundle_dir)),
                    w.t0,
                    "reload",
                )
        else:
            self.metrics.reload("failed")
            self.log.error("reload_failed", error=err, model=self._model())
            for w in done.waiters:
                self._error(
                    w.envelope,
                    w.t0,
                    ProtocolError(Code.RELOAD_FAILED, f"{err}; still serving {self._model()}", w.req.id),
                    "reload",
                )
        sd_notify("READY=1")
