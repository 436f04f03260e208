"""edge-serve's answers to the ``act`` requests of one batch: one encoder pass and one policy call for all,
in one of the daemon's worker threads (embedding requests: in its loop).

Each request is checked against the bundle first (embedding sizes, a skill list when candidates are omitted);
a refused request gets its error reply and the others are scored together. A failing inference answers every
request of the batch with ``internal`` and the daemon goes on.

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
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import zmq

from edge.logs import JsonLogger
from edge.metrics import Metrics
from edge.protocol import Code, ProtocolError, Request, error_reply, ok_reply, pack
from edge.runtime import Item, Runtime, TextRequest

Send = Callable[[list[bytes], dict[str, Any], float, str], None]
"""send(envelope, reply, t0, op): answer one request."""
Refuse = Callable[[list[bytes], float, ProtocolError, str], None]
"""refuse(envelope, t0, error, op): answer one request with an error."""


@dataclass
class Pending:
    envelope: list[bytes]
    t0: float
    req: Request


def _check(rt: Runtime, r: Request) -> ProtocolError | None:
    if r.is_embedding and rt.structured:
        return ProtocolError(
            Code.BAD_REQUEST,
            f"this bundle (format {rt.format_version}) scores a structured state with the episode memory: "
            "send text (instruction, observation, memory), not embeddings",
            r.id,
        )
    if r.is_embedding:
        assert r.instruction_emb is not None and r.candidates_emb is not None
        if r.instruction_emb.shape[0] != rt.dim or r.candidates_emb.shape[1] != rt.cand_dim:
            return ProtocolError(
                Code.BAD_ARRAY,
                f"embedding dimension {r.instruction_emb.shape[0]} and candidate features "
                f"{r.candidates_emb.shape[1]}, the bundle's are {rt.dim} and {rt.cand_dim} "
                f"({rt.manifest.candidate_features})",
                r.id,
            )
    elif r.candidates is None and not rt.skills:
        return ProtocolError(Code.NO_SKILLS, "candidates omitted but the bundle has no skill list", r.id)
    return None


def answer_acts(
    rt: Runtime, acts: list[Pending], send: Send, refuse: Refuse, metrics: Metrics, log: JsonLogger
) -> None:
    """Check, score and answer ``acts`` (all of one batch)."""
    ready: list[Pending] = []
    items: list[Item | None] = []
    texts: list[TextRequest] = []
    text_pos: list[int] = []
    for p in acts:
        r = p.req
        err = _check(rt, r)
        if err is not None:
            refuse(p.envelope, p.t0, err, "act")
            continue
        if r.is_embedding:
            assert r.instruction_emb is not None and r.observation_emb is not None
            assert r.candidates_emb is not None
            items.append(Item(r.instruction_emb, r.observation_emb, r.candidates_emb, r.candidates))
        else:
            assert r.instruction is not None and r.observation is not None
            text_pos.append(len(items))
            items.append(None)
            texts.append(TextRequest(r.instruction, r.observation, r.candidates, r.memory or ()))
        ready.append(p)
    if not ready:
        return
    t_inf = time.perf_counter()
    try:
        if texts:
            for pos, item in zip(text_pos, rt.items_from_text(texts), strict=False):
                items[pos] = item
        scores = rt.score([it for it in items if it is not None])
    except Exception as e:  # never let one bad batch take the daemon down
        log.error("inference_failed", error=f"{type(e).__name__}: {e}", batch=len(ready))
        for p in ready:
            err = ProtocolError(Code.INTERNAL, "inference failed (logged)", p.req.id)
            refuse(p.envelope, p.t0, err, "act")
        return
    infer_ms = (time.perf_counter() - t_inf) * 1000
    metrics.batch_size(len(ready))
    model = rt.model_sha256
    for p, item, s in zip(ready, items, scores, strict=False):
        assert item is not None
        idx = int(s.argmax())
        send(
            p.envelope,
            ok_reply(
                p.req.id,
                index=idx,
                action=item.texts[idx] if item.texts is not None else None,
                scores=s.tolist(),
                model=model,
                timing={
                    "server_ms": round((time.perf_counter() - p.t0) * 1000, 4),
                    "infer_ms": round(infer_ms, 4),
                    "batch": len(ready),
                },
            ),
            p.t0,
            "act",
        )


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
        """The frames of the batch's replies (those made before a bug cut it short, which is logged)."""
        out: list[bytes] = []

        def send(envelope: list[bytes], msg: dict[str, Any], t0: float, op: str) -> None:
            out.extend(reply_frames(envelope, msg, t0, op))

        def refuse(envelope: list[bytes], t0: float, err: ProtocolError, op: str) -> None:
            self.log.debug("bad_request", code=err.code.value, message=err.message)
            send(envelope, error_reply(err.code, err.message, err.req_id), t0, op)

        try:
            answer_acts(rt, batch, send, refuse, self.metrics, self.log)
        except Exception as e:  # a bug costs this batch's replies (logged), never the worker
            import traceback

            self.log.error(
                "batch_failed",
                error=f"{type(e).__name__}: {e}",
                batch=len(batch),
                where=traceback.format_exc(limit=3).splitlines()[-3:],
            )
        return out
