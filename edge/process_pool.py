"""The daemon's side of its worker processes (``edge-serve --worker-processes``): the zguide load-balancing
broker's backend, an ``ipc://`` ROUTER that each worker (:mod:`edge.worker_process`) connects a DEALER to.

The loop hands the raw act requests (not parsed: parsing a long memory is the Python work the workers take
off the loop) to idle workers, the last one to finish first, shared among them as for threads
(:class:`edge.workers.WorkerPool`, whose interface this keeps). A worker that dies (``kill -9``, out of
memory) is seen within one turn of the loop: the requests it held are answered with ``internal`` (never lost),
and a new worker on the served bundle takes its place. Reload is two-phase: every worker loads the new bundle
beside the old one and says so; only when all have, and all are idle, do they switch together; one refusal
keeps every worker on the old bundle.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import zmq

from edge.logs import JsonLogger
from edge.metrics import Metrics
from edge.protocol import MAX_ID_CHARS, Code, error_reply
from edge.runtime import RuntimeConfig
from edge.worker_process import ABORT, BATCH, COMMIT, COMMITTED, LOAD, LOADED, READY, STOP, batch_frames
from edge.workers import DONE, WorkerReply, read_worker_message, reply_frames

START_S = 180.0
"""How long the first workers may take to load the bundle."""
HOMES = 4096
"""Clients whose last worker is remembered."""
RESPAWN_LIMIT = 3
"""A worker index that fails to start this many times in a row is not started again (the others serve)."""


class WorkerStartError(RuntimeError):
    """A worker process exited, or was not ready in time, while the daemon started."""


@dataclass
class RawAct:
    """An act request as the loop received it: routed by its op alone, parsed by the worker."""

    envelope: list[bytes]
    t0: float
    payload: bytes
    req_id: int | str | None


@dataclass
class WorkerHandle:
    index: int
    proc: subprocess.Popen
    ready: bool = False
    inflight: list[RawAct] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)
    """What it said when ready: pid, resident memory (rss_mb), the runtime's info."""
    failures: int = 0
    retired: bool = False
    """Not started again after :data:`RESPAWN_LIMIT` failed starts."""


def peek_op(payload: bytes) -> tuple[str, int | str | None] | None:
    """``(op, id)`` of a request read without decoding the rest of it (its other values are skipped, not
    built): how the daemon routes an ``act`` to a worker process that parses it. None when the payload is
    not a small map with a string ``op`` (then it is parsed whole, and refused with the reason)."""
    try:
        up = msgpack.Unpacker(raw=False, max_buffer_size=len(payload) or 1)
        up.feed(payload)
        n = up.read_map_header()
        if n > 64:
            return None
        op, req_id = None, None
        for _ in range(n):
            key = up.unpack()
            if key == "op":
                op = up.unpack()
            elif key == "id":
                req_id = up.unpack()
            else:
                up.skip()
    except Exception:  # malformed: the full parse says why
        return None
    if not isinstance(op, str):
        return None
    ok_id = (isinstance(req_id, int) and not isinstance(req_id, bool)) or (
        isinstance(req_id, str) and len(req_id) <= MAX_ID_CHARS
    )
    return op, req_id if ok_id else None


class ProcessPool:
    """Worker processes and the loop's side of them; used by the loop's thread only."""

    def __init__(
        self,
        ctx: zmq.Context,
        n: int,
        bundle: Path,
        runtime: RuntimeConfig,
        max_message_bytes: int,
        metrics: Metrics,
        log: JsonLogger,
        log_level: str = "info",
    ):
        self.metrics, self.log = metrics, log
        self.bundle, self.runtime = bundle, runtime
        self.max_message_bytes, self.log_level = max_message_bytes, log_level
        self._dir = Path(tempfile.mkdtemp(prefix="edge-workers-"))
        self.endpoint = f"ipc://{self._dir / 'workers.sock'}"
        self.socket = ctx.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.RCVHWM, 0)
        self.socket.setsockopt(zmq.SNDHWM, 0)
        self.socket.setsockopt(zmq.ROUTER_HANDOVER, 1)  # a replaced worker takes over its index
        self.socket.bind(self.endpoint)
        self.workers = [self._spawn(i) for i in range(n)]
        self.idle: deque[int] = deque()
        self.waiting: deque[RawAct] = deque()
        self._home: dict[bytes, int] = {}
        """The worker that last served each client (its ROUTER identity), in the order they were set."""
        self._loads: dict[int, dict[str, Any]] | None = None
        """During a reload: each worker's answer to ``load`` so far."""
        self._reload_bundle: Path = bundle
        metrics.set_workers(n)
        self._await_ready(START_S)

    # ------------------------------------------------------------------------------------------------ workers

    def _spawn(self, index: int, failures: int = 0) -> WorkerHandle:
        cmd = [
            sys.executable, "-m", "edge.worker_process", "--endpoint", self.endpoint, "--index", str(index),
            "--bundle", str(self.bundle), "--runtime", json.dumps(dataclasses.asdict(self.runtime)),
            "--max-message-bytes", str(self.max_message_bytes), "--log-level", self.log_level,
        ]  # fmt: skip
        return WorkerHandle(index, subprocess.Popen(cmd, stdin=subprocess.DEVNULL), failures=failures)

    def _await_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not all(w.ready for w in self.workers):
            dead = [w for w in self.workers if not w.ready and w.proc.poll() is not None]
            if dead or time.monotonic() > deadline:
                self.stop(5.0)
                why = f"exit code {dead[0].proc.returncode}" if dead else f"not ready within {timeout:.0f} s"
                raise WorkerStartError(
                    f"worker process {(dead or self.workers)[0].index} did not start: {why}"
                )
            if self.socket.poll(100):
                self._receive(self.socket.recv_multipart())

    @property
    def memory_mb(self) -> list[float]:
        """Each worker's resident memory when it became ready."""
        return [float(w.status.get("rss_mb", 0.0)) for w in self.workers]

    @property
    def all_idle(self) -> bool:
        return len(self.idle) == sum(w.ready for w in self.workers)

    @property
    def busy(self) -> bool:
        """Requests wait or a worker scores, and some worker is alive to answer them."""
        alive = any(w.proc.poll() is None for w in self.workers)
        return bool(self.waiting or any(w.inflight for w in self.workers)) and alive

    def submit(self, act: RawAct) -> None:
        self.waiting.append(act)

    def dispatch(self, _rt: Any, max_batch: int) -> None:
        """Hand the waiting act requests to idle workers, shared among them as
        :meth:`edge.workers.WorkerPool.dispatch` does, but each client's to the worker that served it last
        when that one is idle, and the others to the worker idle longest: a worker's embedding cache holds
        the texts of the clients it serves (each process has its own), so a client's next state mostly
        repeats what its worker has encoded, and a new client is given a worker of its own where one is
        free."""
        for index in [i for i in self.idle if any(self._home.get(a.envelope[0]) == i for a in self.waiting)]:
            mine = [a for a in self.waiting if self._home.get(a.envelope[0]) == index][:max_batch]
            for a in mine:
                self.waiting.remove(a)
            self.idle.remove(index)
            self._send_batch(self.workers[index], mine)
        while self.waiting and self.idle:  # the others: the worker idle longest (a new client to a new home)
            n = min(max_batch, -(-len(self.waiting) // len(self.idle)))
            self._send_batch(self.workers[self.idle.popleft()], [self.waiting.popleft() for _ in range(n)])
        self.metrics.set_waiting(len(self.waiting))

    def _send_batch(self, w: WorkerHandle, batch: list[RawAct]) -> None:
        w.inflight = batch
        for a in batch:
            self._home.pop(a.envelope[0], None)  # to the end: the most recently served
            self._home[a.envelope[0]] = w.index
        if len(self._home) > HOMES:  # clients come and go: forget the oldest
            for key in list(self._home)[: len(self._home) - HOMES]:
                del self._home[key]
        self.metrics.worker_took(w.index, len(batch))
        self.metrics.batch_size(len(batch))
        frames = batch_frames([(a.envelope, a.t0, a.payload) for a in batch])
        self.socket.send_multipart([str(w.index).encode(), BATCH, *frames])

    def replies(self) -> list[WorkerReply]:
        """The replies of every batch the workers finished (each such worker is idle again), and the error
        replies of the requests a dead worker held."""
        out = self.check()
        while True:
            try:
                frames = self.socket.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return out
            out += self._receive(frames)

    def check(self) -> list[WorkerReply]:
        """Replace the workers that died; their requests are answered with ``internal``."""
        out: list[WorkerReply] = []
        for i, w in enumerate(self.workers):
            code = w.proc.poll()
            if code is None or w.retired:
                continue
            self.log.error(
                "worker_died", worker=w.index, exit_code=code, requests=len(w.inflight), pid=w.proc.pid
            )
            for a in w.inflight:
                msg = error_reply(
                    Code.INTERNAL,
                    "the worker scoring this request died (it was replaced); send it again",
                    a.req_id,
                )
                frames = reply_frames(a.envelope, msg, a.t0, "act")
                out.append(WorkerReply(frames[1:], a.t0, "act", Code.INTERNAL.value))
            if w.index in self.idle:
                self.idle.remove(w.index)
            self.metrics.worker_done(w.index)
            if self._loads is not None:
                self._loads[w.index] = {"ok": False, "error": f"worker {w.index} died while loading"}
            failures = w.failures + (0 if w.ready else 1)
            if failures >= RESPAWN_LIMIT:
                self.log.error("worker_not_restarted", worker=w.index, failures=failures)
                self.workers[i] = WorkerHandle(w.index, w.proc, failures=failures, retired=True)
                continue
            self.workers[i] = self._spawn(w.index, failures)
        return out

    def _receive(self, frames: list[bytes]) -> list[WorkerReply]:
        index, kind = int(frames[0]), frames[1]
        w = self.workers[index]
        if kind == DONE:
            w.inflight = []
            self.idle.append(index)
            self.metrics.worker_done(index)
            return read_worker_message(frames)[1]
        status = json.loads(frames[2]) if len(frames) > 2 else {}
        if kind == READY:
            if "error" in status:
                self.log.error("worker_start_failed", worker=index, error=status["error"])
                return []
            w.ready, w.status, w.failures = True, status, 0
            self.idle.append(index)
            self.log.info("worker_ready", worker=index, pid=status.get("pid"), rss_mb=status.get("rss_mb"))
            if self._loads is not None:  # a replacement started during a reload loads the new bundle too
                self.socket.send_multipart([frames[0], LOAD, str(self._reload_bundle).encode()])
        elif kind == LOADED and self._loads is not None:
            self._loads[index] = status
        elif kind == COMMITTED:
            w.status = status
        return []

    # ------------------------------------------------------------------------------------------------ reload

    def load(self, bundle: Path) -> None:
        """Every ready worker loads ``bundle`` beside the one it serves."""
        self._loads, self._reload_bundle = {}, bundle
        for w in self.workers:
            if w.ready:
                self.socket.send_multipart([str(w.index).encode(), LOAD, str(bundle).encode()])

    def load_outcome(self) -> str | None | bool:
        """While loading: False; then None when every ready worker loaded it, or why one did not."""
        if self._loads is None:
            return None
        expected = {w.index for w in self.workers if w.ready}
        if not expected <= set(self._loads):
            return False
        bad = [f"worker {i}: {r.get('error')}" for i, r in sorted(self._loads.items()) if not r.get("ok")]
        return "; ".join(bad) or None

    def commit(self, bundle: Path, timeout: float = 30.0) -> None:
        """Every worker (all idle) switches to the bundle it loaded; a worker started later loads it."""
        self._loads = None
        self.bundle = bundle
        targets = [w for w in self.workers if w.ready]
        for w in targets:
            self.socket.send_multipart([str(w.index).encode(), COMMIT])
        deadline = time.monotonic() + timeout
        pending = {w.index for w in targets}
        while pending and time.monotonic() < deadline:
            if self.socket.poll(100):
                frames = self.socket.recv_multipart()
                if frames[1] == COMMITTED:
                    pending.discard(int(frames[0]))
                self._receive(frames)
            pending -= {w.index for w in self.workers if w.proc.poll() is not None}

    def abort(self) -> None:
        """Every worker drops the bundle it loaded and keeps serving its own."""
        self._loads = None
        for w in self.workers:
            if w.ready:
                self.socket.send_multipart([str(w.index).encode(), ABORT])

    # ------------------------------------------------------------------------------------------------ stop

    def stop(self, timeout: float) -> bool:
        """Stop the workers after their batches and close the socket; False if one had to be killed."""
        for w in self.workers:
            if w.proc.poll() is None:
                try:
                    self.socket.send_multipart([str(w.index).encode(), STOP], zmq.NOBLOCK)
                except zmq.ZMQError:
                    pass
        deadline = time.monotonic() + timeout
        clean = True
        for w in self.workers:
            try:
                w.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait(timeout=10)
                clean = False
        self.socket.close(linger=0)
        shutil.rmtree(self._dir, ignore_errors=True)
        return clean
