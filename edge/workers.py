"""edge-serve's scoring threads and the loop's side of them.

A :class:`Worker` is one scoring thread behind the daemon's loop (:mod:`edge.server`, the broker): the loop
hands it a batch with the runtime to score it on, and the worker sends the batch's replies in one message
through its own DEALER socket to the loop's inproc ROUTER (a ZeroMQ socket is used by one thread only),
which also says the worker is idle again; the loop passes the replies on to the clients. One message per
batch, the worker's last act before it waits again: the loop wakes once per batch, not once per reply (a
refused request's error waits for its batch's inference).
Several workers score concurrently: one onnxruntime session runs from several threads at once and releases
the GIL while it runs, so a batch heavy in never-seen text holds up only its own worker.
"""

from __future__ import annotations

import queue
import struct
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

import zmq

from edge.logs import JsonLogger
from edge.metrics import Metrics
from edge.protocol import ProtocolError, error_reply, pack
from edge.runtime import Runtime
from edge.scoring import Pending, answer_acts

DONE = b"done"
"""The first frame of a worker's message: its batch is answered (the replies follow)."""
_HEADER = struct.Struct("<dB")
"""A reply's header frame in a worker's message: t0, the number of frames that follow (envelope and
payload), then ``op code`` (code empty for an ok reply)."""


@dataclass
class WorkerReply:
    """A reply a worker scored, for the loop to send and count (the metrics of :meth:`Metrics.request`)."""

    frames: list[bytes]
    """The client's envelope and the packed reply."""
    t0: float
    op: str
    code: str
    """The error code; empty for an ok reply."""


def reply_frames(envelope: list[bytes], msg: dict[str, Any], t0: float, op: str) -> list[bytes]:
    """One reply as it goes in a worker's message: its header, the envelope, the packed reply."""
    code = "" if msg["ok"] else msg["code"]
    header = _HEADER.pack(t0, len(envelope) + 1) + f"{op} {code}".encode()
    return [header, *envelope, pack(msg)]


def read_worker_message(frames: list[bytes]) -> tuple[int, list[WorkerReply]]:
    """The worker index and the replies of its batch, from a message received on the loop's ROUTER
    ([identity, DONE, then each reply's :func:`reply_frames`])."""
    replies, i = [], 2
    while i < len(frames):
        t0, n = _HEADER.unpack_from(frames[i])
        op, code = frames[i][_HEADER.size :].decode().split(" ")
        replies.append(WorkerReply(frames[i + 1 : i + 1 + n], t0, op, code))
        i += 1 + n
    return int(frames[0]), replies


class Worker:
    """One scoring thread. The loop calls :meth:`submit` only while the worker is idle; the thread answers
    the batch and says ``done``; ``stop`` ends it after the batch it has."""

    def __init__(self, index: int, ctx: zmq.Context, endpoint: str, metrics: Metrics, log: JsonLogger):
        self.index = index
        self.metrics, self.log = metrics, log
        # A Python queue, not the socket, carries the batches: the requests are already parsed objects (a
        # 512-pair memory is not packed again), and the thread blocks in get() without holding the GIL.
        self._jobs: queue.SimpleQueue[tuple[Runtime, list[Pending]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._run, args=(ctx, endpoint), name=f"edge-worker-{index}", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def submit(self, rt: Runtime, batch: list[Pending]) -> None:
        self._jobs.put((rt, batch))

    def stop(self) -> None:
        self._jobs.put(None)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float) -> bool:
        """Wait for the thread to end; False if it still runs after ``timeout`` seconds."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self, ctx: zmq.Context, endpoint: str) -> None:
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.IDENTITY, str(self.index).encode())
        sock.setsockopt(zmq.SNDHWM, 0)  # never wait to send: the loop reads every message
        sock.connect(endpoint)
        try:
            while (job := self._jobs.get()) is not None:
                rt, batch = job
                sock.send_multipart([DONE, *self._answer(rt, batch)])
        finally:
            sock.close(linger=0)  # the loop stops a worker once it has read its last batch

    def _answer(self, rt: Runtime, batch: list[Pending]) -> list[bytes]:
        return answer_frames(rt, batch, self.metrics, self.log)


def answer_frames(
    rt: Runtime,
    batch: list[Pending],
    metrics: Metrics,
    log: JsonLogger,
    refused: list[tuple[list[bytes], float, ProtocolError, str]] = (),  # type: ignore[assignment]
) -> list[bytes]:
    """The frames of a batch's replies, as a worker sends them: ``refused`` (envelope, t0, error, op) answered
    with their errors, then the acts of ``batch`` scored together (the replies made before a bug cut the
    batch short, which is logged: a bug costs a batch, never the worker)."""
    out: list[bytes] = []

    def send(envelope: list[bytes], msg: dict[str, Any], t0: float, op: str) -> None:
        out.extend(reply_frames(envelope, msg, t0, op))

    def refuse(envelope: list[bytes], t0: float, err: ProtocolError, op: str) -> None:
        log.debug("bad_request", code=err.code.value, message=err.message)
        send(envelope, error_reply(err.code, err.message, err.req_id), t0, op)

    for envelope, t0, err, op in refused:
        refuse(envelope, t0, err, op)
    try:
        answer_acts(rt, batch, send, refuse, metrics, log)
    except Exception as e:
        import traceback

        log.error(
            "batch_failed",
            error=f"{type(e).__name__}: {e}",
            batch=len(batch),
            where=traceback.format_exc(limit=3).splitlines()[-3:],
        )
    return out


class WorkerPool:
    """The workers and the loop's side of them: their inproc ROUTER, which are idle (the last one to finish
    first), and the act requests waiting for one. Used by the loop's thread only."""

    def __init__(self, ctx: zmq.Context, n: int, metrics: Metrics, log: JsonLogger):
        self.metrics = metrics
        self.socket = ctx.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.RCVHWM, 0)
        endpoint = f"inproc://edge-workers-{id(self)}"
        self.socket.bind(endpoint)  # before the workers connect their DEALERs
        self.workers = [Worker(i, ctx, endpoint, metrics, log) for i in range(n)]
        for w in self.workers:
            w.start()
        self.idle: deque[int] = deque(range(n))
        self.waiting: deque[Pending] = deque()
        metrics.set_workers(n)

    @property
    def all_idle(self) -> bool:
        return len(self.idle) == len(self.workers)

    @property
    def busy(self) -> bool:
        """Requests wait or a worker scores, and every worker thread is still running."""
        return bool(self.waiting or not self.all_idle) and all(w.alive for w in self.workers)

    def dispatch(self, rt: Runtime, max_batch: int) -> None:
        """Hand the waiting act requests to idle workers, the most recently used first (unlike lbbroker's
        least recently used: any idle worker is as free as another, and the last one's thread and caches
        are warm). The requests are shared among the idle workers (a slow request and a cheap one that
        arrived together are scored side by side), each share one micro-batch of at most ``max_batch``."""
        while self.waiting and self.idle:
            n = min(max_batch, -(-len(self.waiting) // len(self.idle)))
            batch = [self.waiting.popleft() for _ in range(n)]
            i = self.idle.pop()
            self.metrics.worker_took(i, n)
            self.workers[i].submit(rt, batch)
        self.metrics.set_waiting(len(self.waiting))

    def replies(self) -> list[WorkerReply]:
        """The replies of every batch the workers finished; each such worker is idle again."""
        out: list[WorkerReply] = []
        while True:
            try:
                frames = self.socket.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return out
            i, replies = read_worker_message(frames)
            self.idle.append(i)
            self.metrics.worker_done(i)
            out += replies

    def stop(self, timeout: float) -> bool:
        """Stop the workers after their batches and close the socket; False if one still runs after
        ``timeout`` seconds (then nothing it may still use is to be closed)."""
        for w in self.workers:
            w.stop()
        joined = all([w.join(timeout) for w in self.workers])
        self.socket.close(linger=0)
        return joined
