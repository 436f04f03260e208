"""The edge-serve daemon loop: a ZeroMQ ROUTER socket, micro-batched requests, worker threads, signals.

The loop (the main thread) is a load-balancing broker (zguide's lbbroker): it polls the clients' ROUTER and
its workers' inproc ROUTER, drains the requests that arrived together (waiting a bounded time for more when
clients are concurrent), answers errors and the control ops (``info``/``health``/``reload``,
:mod:`edge.control`) itself at once, and ``act`` requests with embeddings too (one scorer run, no encoder:
cheaper than the hop to a worker), and queues the text ``act`` requests for ``--workers`` scoring threads
(:class:`edge.workers.Worker`). With ``--worker-processes`` the workers are processes
(:mod:`edge.process_pool`): every ``act`` is routed by its op alone and parsed by the worker. An idle worker
takes the waiting requests as one batch (shared among the idle workers when several are), scores it (one
encoder pass, one policy call) and sends the replies back through the loop, the one thread that uses the
clients' socket. A request heavy in never-seen text thus holds up its own worker only.

A reload (``reload`` op or SIGHUP) runs in :class:`edge.reload.Reloader` while the old model keeps serving;
once it is loaded the loop hands out no batch until every worker is idle, then swaps the runtime for all of
them and closes the old one (no worker uses it any more); a refused bundle leaves the old model in place.
CURVE is set up by :mod:`edge.curve`. SIGTERM/SIGINT stop the loop: what was received is answered, then the
workers stop and are joined.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from typing import Any

import zmq

from edge.control import Control
from edge.curve import enable_curve, reload_allowed_keys
from edge.logs import JsonLogger, sd_notify
from edge.metrics import Metrics, start_metrics_server
from edge.process_pool import ProcessPool, RawAct, WorkerStartError, peek_op
from edge.protocol import Code, ProtocolError, error_reply, pack, parse_request
from edge.reload import Reloader
from edge.runtime import Runtime, load_runtime
from edge.scoring import Pending, answer_acts
from edge.serve_config import ServeConfig
from edge.workers import WorkerPool

POLL_MS = 50
DRAIN_QUIET_MS = 50
DRAIN_MAX_S = 2.0
WORKER_JOIN_S = 30.0


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
        self.control = Control(self)
        self._last_batch = 1
        self.started = time.time()
        self.ctx: zmq.Context | None = None
        self.sock: zmq.Socket | None = None
        self.pool: WorkerPool | ProcessPool | None = None
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
        if self.cfg.worker_processes:
            self.pool = ProcessPool(
                self.ctx,
                self.cfg.workers,
                self.cfg.bundle,
                self.cfg.runtime,
                self.cfg.max_message_bytes,
                self.metrics,
                self.log,
                self.log.level_name,
            )
            self.log.info("workers_ready", processes=self.cfg.workers, rss_mb=self.pool.memory_mb)
        else:
            self.pool = WorkerPool(self.ctx, self.cfg.workers, self.metrics, self.log)
        if self.cfg.metrics_port is not None:
            self.http = start_metrics_server(self.metrics, self.cfg.metrics_host, self.cfg.metrics_port)

    def close(self) -> None:
        if self.http is not None:
            self.http.shutdown()
            self.http.server_close()
            self.http = None
        joined = self.pool.stop(WORKER_JOIN_S) if self.pool is not None else True
        self.pool = None
        if self.sock is not None:
            self.sock.close(linger=0)
            self.sock = None
        if self.auth is not None:
            self.auth.stop()
            self.auth = None
        if self.ctx is not None and joined:  # term() would wait for a stuck worker's socket forever
            self.ctx.term()
        self.ctx = None
        self.reloader.join(timeout=30)
        for rt in (self.rt, self.control.pending_runtime()):
            if rt is not None and joined:
                rt.close()

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
        except (zmq.ZMQError, ValueError, OSError, WorkerStartError) as e:
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
        assert self.sock is not None and self.pool is not None
        pool = self.pool
        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        poller.register(pool.socket, zmq.POLLIN)
        while not self.stop_requested:
            events = dict(poller.poll(POLL_MS))
            if self.reload_requested:
                self.reload_requested = False
                self._reload_allowed_keys()
                self.control.start_reload(self.cfg.bundle, None)
            self._step(events)
        # Requests in flight when the signal came are answered: read until the socket has been quiet for
        # DRAIN_QUIET_MS (bounded by DRAIN_MAX_S), so what the kernel already holds is not lost ...
        deadline = time.monotonic() + DRAIN_MAX_S
        quiet_until = time.monotonic() + DRAIN_QUIET_MS / 1000
        while time.monotonic() < min(quiet_until, deadline):
            events = dict(poller.poll(DRAIN_QUIET_MS))
            if self.sock in events:
                quiet_until = time.monotonic() + DRAIN_QUIET_MS / 1000
            self._step(events)
        # ... then the workers finish everything received (the caller stops and joins them).
        poller.unregister(self.sock)
        while pool.busy:
            self._step(dict(poller.poll(POLL_MS)))

    def _step(self, events: dict[Any, int]) -> None:
        """One turn of the broker: pass the workers' replies on, swap a reloaded bundle when they are idle,
        answer or queue what the clients sent, hand the queued act requests to idle workers."""
        assert self.pool is not None
        if self.pool.socket in events:
            for r in self.pool.replies():
                self._deliver(r.frames, r.t0, r.op, r.code)
        elif isinstance(self.pool, ProcessPool):
            for r in self.pool.check():  # a worker that died: its requests are answered, it is replaced
                self._deliver(r.frames, r.t0, r.op, r.code)
        self.control.step()
        if self.sock in events:
            self._handle_batch_safely(self._drain())
        self._dispatch()

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

    def _drain(self) -> list[tuple[list[bytes], float]]:
        assert self.sock is not None
        batch: list[tuple[list[bytes], float]] = []
        self._recv_ready(batch)
        if self.cfg.batch_wait_ms > 0 and (len(batch) > 1 or self._last_batch > 1):
            deadline = time.perf_counter() + self.cfg.batch_wait_ms / 1000
            while len(batch) < self.cfg.max_batch:
                left = deadline - time.perf_counter()
                if left <= 0 or not self.sock.poll(left * 1000):
                    break
                self._recv_ready(batch)
        self._last_batch = len(batch)
        return batch

    # ------------------------------------------------------------------------------------------------ replies

    def send(self, envelope: list[bytes], msg: dict[str, Any], t0: float, op: str) -> None:
        self._deliver([*envelope, pack(msg)], t0, op, "" if msg["ok"] else msg["code"])

    def _deliver(self, frames: list[bytes], t0: float, op: str, code: str) -> None:
        """Send a reply (envelope and payload) to its client and count it (``code``: empty when ok)."""
        assert self.sock is not None
        try:
            self.sock.send_multipart(frames, zmq.NOBLOCK)
        except zmq.ZMQError:
            self.metrics.drop()
            return
        self.metrics.request(op, time.perf_counter() - t0)
        if code:
            self.metrics.error(code)

    def refuse(self, envelope: list[bytes], t0: float, err: ProtocolError, op: str = "invalid") -> None:
        self.log.debug("bad_request", code=err.code.value, message=err.message)
        self.send(envelope, error_reply(err.code, err.message, err.req_id), t0, op)

    def _handle_batch(self, batch: list[tuple[list[bytes], float]]) -> None:
        acts: list[Pending] = []
        scorer_only: list[Pending] = []
        for frames, t0 in batch:
            # DEALER peers send [payload] (we see [identity, payload]); REQ peers add an empty delimiter.
            if len(frames) == 2:
                envelope, payload = frames[:1], frames[1]
            elif len(frames) == 3 and frames[1] == b"":
                envelope, payload = frames[:2], frames[2]
            else:
                envelope = frames[:2] if len(frames) > 1 and frames[1] == b"" else frames[:1]
                self.refuse(
                    envelope,
                    t0,
                    ProtocolError(
                        Code.BAD_FRAMES, f"expected one payload frame, got {len(frames) - len(envelope)}"
                    ),
                )
                continue
            if isinstance(self.pool, ProcessPool) and (peek := peek_op(payload)) and peek[0] == "act":
                self.pool.submit(RawAct(envelope, t0, payload, peek[1]))  # parsed by the worker process
                continue
            try:
                req = parse_request(payload, self.cfg.max_message_bytes)
            except ProtocolError as e:
                self.refuse(envelope, t0, e)
                continue
            except Exception as e:  # a parser bug must cost one error reply, never the daemon
                self.log.error("parse_failed", error=f"{type(e).__name__}: {e}")
                self.refuse(
                    envelope, t0, ProtocolError(Code.INTERNAL, "request could not be parsed (logged)")
                )
                continue
            p = Pending(envelope, t0, req)
            if req.op != "act":
                self.control.answer(p)
            elif isinstance(self.pool, ProcessPool):  # an act the peek could not read: the worker says why
                self.pool.submit(RawAct(envelope, t0, payload, req.id))
            else:
                (scorer_only if req.is_embedding else acts).append(p)
        if isinstance(self.pool, WorkerPool):
            self.pool.waiting.extend(acts)
        self._dispatch()  # the workers start before the loop scores embeddings
        if scorer_only:
            # Embeddings skip the encoder: one scorer run, about what the hop to a worker and back would cost.
            assert self.rt is not None
            answer_acts(self.rt, scorer_only, self.send, self.refuse, self.metrics, self.log)

    @property
    def model(self) -> str:
        return self.rt.model_sha256 if self.rt is not None else ""

    @property
    def processes(self) -> ProcessPool | None:
        """The worker processes (``--worker-processes``); None with worker threads."""
        return self.pool if isinstance(self.pool, ProcessPool) else None

    # ------------------------------------------------------------------------------------------------ workers

    def _dispatch(self) -> None:
        """Hand the waiting act requests to idle workers; none while a reloaded bundle waits for the
        workers to finish on the old one."""
        assert self.pool is not None and self.rt is not None
        if not self.control.holds_batches:
            self.pool.dispatch(self.rt, self.cfg.max_batch)
        else:
            self.metrics.set_waiting(len(self.pool.waiting))

    # ------------------------------------------------------------------------------------------------ reload

    def _reload_allowed_keys(self) -> None:
        """SIGHUP also re-reads the allowed client keys (a key added to or removed from the directory)."""
        if self.auth is not None and self.cfg.curve_allowed is not None:
            reload_allowed_keys(self.auth, self.cfg.curve_allowed, self.log)
