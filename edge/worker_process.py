"""One edge-serve worker process (``edge-serve --worker-processes``): its own onnxruntime session and
interpreter, so the Python work of a request (parsing, tokenising, arrays) runs beside the other workers', not
under one interpreter lock.

Started by :class:`edge.process_pool.ProcessPool` as ``python -m edge.worker_process``; it connects a DEALER
socket to the daemon's ``ipc://`` ROUTER (the zguide load-balancing broker's worker side), loads the bundle,
says ``ready`` (with its pid and memory), then answers what the broker sends, one message at a time:

- ``batch``: the raw act requests of one batch (each: a header with its arrival time and envelope size, the
  client's envelope, the msgpack payload); each is parsed and checked here and the batch scored together
  (:func:`edge.scoring.answer_acts`); one ``done`` message carries every reply;
- ``load PATH``: load another bundle in a helper thread while this one keeps serving, then say ``loaded``
  (or why it was refused); ``commit`` swaps to it (``committed``), ``abort`` drops it: every worker switches
  together, and a bundle one worker refuses leaves all on the old one;
- ``stop``: finish, close, exit 0.

It ignores SIGINT and SIGTERM (the daemon drains and stops its workers) and exits when the daemon is gone.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import struct
import sys
import threading
from pathlib import Path
from typing import Any

import zmq

from edge.logs import JsonLogger
from edge.metrics import Metrics
from edge.protocol import Code, ProtocolError, parse_request
from edge.runtime import Runtime, RuntimeConfig, load_runtime
from edge.scoring import Pending
from edge.workers import DONE, answer_frames

BATCH, LOAD, LOADED, COMMIT, COMMITTED, ABORT, STOP, READY = (
    b"batch",
    b"load",
    b"loaded",
    b"commit",
    b"committed",
    b"abort",
    b"stop",
    b"ready",
)
REQUEST_HEADER = struct.Struct("<dB")
"""A raw request's header frame in a ``batch`` message: its arrival time t0 and the envelope's frame count."""
POLL_MS = 200


def rss_mb() -> float:
    """This process's resident memory in MB (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return 0.0


def batch_frames(requests: list[tuple[list[bytes], float, bytes]]) -> list[bytes]:
    """A ``batch`` message's frames after its kind: each request's header, envelope and payload."""
    out: list[bytes] = []
    for envelope, t0, payload in requests:
        out += [REQUEST_HEADER.pack(t0, len(envelope)), *envelope, payload]
    return out


def read_batch(frames: list[bytes]) -> list[tuple[list[bytes], float, bytes]]:
    """The requests of a ``batch`` message (its frames after the kind)."""
    out, i = [], 0
    while i < len(frames):
        t0, n = REQUEST_HEADER.unpack(frames[i])
        out.append((frames[i + 1 : i + 1 + n], t0, frames[i + 1 + n]))
        i += 2 + n
    return out


class WorkerProcess:
    def __init__(
        self, endpoint: str, index: int, bundle: Path, cfg: RuntimeConfig, max_bytes: int, log: JsonLogger
    ):
        self.endpoint, self.index, self.bundle, self.cfg = endpoint, index, bundle, cfg
        self.max_bytes, self.log = max_bytes, log
        self.metrics = Metrics()  # answer_acts counts here; the daemon counts the replies it passes on
        self.rt: Runtime | None = None
        self._next: Runtime | None = None
        self._loading: threading.Thread | None = None
        self._loaded: tuple[Runtime | None, str | None] | None = None
        self.parent = os.getppid()

    def run(self) -> int:
        ctx = zmq.Context()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.IDENTITY, str(self.index).encode())
        sock.setsockopt(zmq.LINGER, 1000)
        sock.connect(self.endpoint)
        try:
            try:
                self.rt = load_runtime(self.bundle, self.cfg)
            except Exception as e:  # the daemon loaded it first: a failure here is this process's (memory)
                sock.send_multipart([READY, json.dumps({"error": f"{type(e).__name__}: {e}"}).encode()])
                return 1
            sock.send_multipart([READY, self._status()])
            while True:
                if sock.poll(POLL_MS):
                    kind, *rest = sock.recv_multipart()
                    if kind == STOP:
                        return 0
                    if kind in (BATCH, COMMIT):
                        sock.send_multipart(self._handle(kind, rest))
                    else:
                        self._control(kind, rest)
                if self._loading is not None and not self._loading.is_alive():
                    sock.send_multipart([LOADED, self._collect_load()])
                if os.getppid() != self.parent:  # the daemon is gone
                    return 0
        finally:
            for rt in (self.rt, self._next):
                if rt is not None:
                    rt.close()
            sock.close()
            ctx.term()

    def _status(self, **extra: Any) -> bytes:
        assert self.rt is not None
        return json.dumps(
            {"pid": os.getpid(), "rss_mb": round(rss_mb(), 1), **self.rt.info(), **extra}
        ).encode()

    def _handle(self, kind: bytes, rest: list[bytes]) -> list[bytes]:
        if kind == COMMIT:
            old, self.rt, self._next = self.rt, self._next, None
            if old is not None and self.rt is not old:
                old.close()
            return [COMMITTED, self._status()]
        return [DONE, *self._answer(read_batch(rest))]

    def _control(self, kind: bytes, rest: list[bytes]) -> None:
        if kind == LOAD:
            bundle = Path(rest[0].decode())

            def work() -> None:
                try:
                    self._loaded = (load_runtime(bundle, self.cfg), None)
                except Exception as e:  # any failure keeps the old model
                    self._loaded = (None, f"{type(e).__name__}: {e}")

            self._loaded = None
            self._loading = threading.Thread(target=work, name="reload", daemon=True)
            self._loading.start()
        elif kind == ABORT and self._next is not None:
            self._next.close()
            self._next = None

    def _collect_load(self) -> bytes:
        assert self._loading is not None
        self._loading.join()
        self._loading = None
        new, err = self._loaded or (None, "the load thread ended without a result")
        self._next = new
        if new is None:
            return json.dumps({"ok": False, "error": err}).encode()
        return json.dumps({"ok": True, "model": new.model_sha256}).encode()

    def _answer(self, requests: list[tuple[list[bytes], float, bytes]]) -> list[bytes]:
        """The frames of a batch's replies: every request parsed and checked here, the acts scored
        together."""
        acts: list[Pending] = []
        refused: list[tuple[list[bytes], float, ProtocolError, str]] = []
        for envelope, t0, payload in requests:
            try:
                req = parse_request(payload, self.max_bytes)
            except ProtocolError as e:
                refused.append((envelope, t0, e, "invalid"))
                continue
            except Exception as e:  # a parser bug costs one error reply, never the worker
                self.log.error("parse_failed", error=f"{type(e).__name__}: {e}")
                err = ProtocolError(Code.INTERNAL, "request could not be parsed (logged)")
                refused.append((envelope, t0, err, "invalid"))
                continue
            if req.op != "act":  # the daemon routes only acts here
                err = ProtocolError(Code.INTERNAL, f"{req.op} reached a worker", req.id)
                refused.append((envelope, t0, err, req.op))
                continue
            acts.append(Pending(envelope, t0, req))
        assert self.rt is not None
        return answer_frames(self.rt, acts, self.metrics, self.log, refused)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m edge.worker_process", description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--index", type=int, required=True)
    ap.add_argument("--bundle", type=Path, required=True)
    ap.add_argument("--runtime", required=True, help="RuntimeConfig as JSON")
    ap.add_argument("--max-message-bytes", type=int, required=True)
    ap.add_argument("--log-level", default="info")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the daemon drains, then stops its workers
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    log = JsonLogger(args.log_level, worker=args.index)
    cfg = RuntimeConfig(**json.loads(args.runtime))
    return WorkerProcess(args.endpoint, args.index, args.bundle, cfg, args.max_message_bytes, log).run()


if __name__ == "__main__":
    sys.exit(main())
