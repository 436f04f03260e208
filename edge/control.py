"""edge-serve's control ops, apart from the request loop: ``health``, ``info``, ``reload`` (and SIGHUP), and
the reload's way to the swap.

A reload loads the new bundle in the daemon (:class:`edge.reload.Reloader`, a helper thread: the old model
keeps serving); with worker processes every worker then loads it too, beside the bundle it serves. Only when
all have, and every worker is idle, does the daemon swap: all workers switch together. A bundle the daemon or
any worker refuses leaves every one of them on the old bundle, and the ``reload`` requests get
``reload_failed`` with the reason.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from edge.logs import sd_notify
from edge.protocol import PROTOCOL_VERSION, Code, ProtocolError, ok_reply
from edge.reload import ReloadOutcome, refusal
from edge.scoring import Pending


class Control:
    """The server's control ops; called from the loop's thread only. ``server`` is the
    :class:`edge.server.Server` (its runtime, settings, reloader, pool, metrics, log, ``send``/``refuse``)."""

    def __init__(self, server: Any):
        self.s = server
        self._swap: ReloadOutcome | None = None
        """A loaded bundle waiting for the workers (to load it too, then to be idle)."""
        self._workers_loading = False

    @property
    def reloading(self) -> bool:
        """A bundle is loading, or loaded and waiting for the workers."""
        return self.s.reloader.running or self._swap is not None

    @property
    def holds_batches(self) -> bool:
        """No batch is handed out: a loaded bundle waits for every worker to be idle."""
        return self._swap is not None and not self._workers_loading

    def answer(self, p: Pending) -> None:
        """Answer a ``health``, ``info`` or ``reload`` request."""
        s, req = self.s, p.req
        if req.op == "health":
            reply = ok_reply(
                req.id,
                status="serving",
                model=s.model,
                uptime_s=round(time.time() - s.started, 3),
                reloading=self.reloading,
            )
            s.send(p.envelope, reply, p.t0, req.op)
        elif req.op == "info":
            assert s.rt is not None
            reply = ok_reply(
                req.id,
                protocol=PROTOCOL_VERSION,
                **s.rt.info(),
                max_batch=s.cfg.max_batch,
                batch_wait_ms=s.cfg.batch_wait_ms,
                max_message_bytes=s.cfg.max_message_bytes,
            )
            s.send(p.envelope, reply, p.t0, req.op)
        elif req.op == "reload":
            err = refusal(
                req,
                remote_reload=s.cfg.remote_reload,
                allow_reload_path=s.cfg.allow_reload_path,
                running=self.reloading,
            )
            if err is not None:
                s.refuse(p.envelope, p.t0, err, "reload")
                return
            self.start_reload(Path(req.bundle) if req.bundle else s.cfg.bundle, p)

    def start_reload(self, bundle: Path, waiter: Pending | None) -> None:
        s = self.s
        if waiter is not None:
            s.reloader.wait(waiter)
        if self.reloading:
            return
        sd_notify("RELOADING=1")
        s.log.info("reload_started", bundle=str(bundle))
        s.reloader.start(bundle)

    def step(self) -> None:
        """Move a reload on: collect the daemon's load, have the workers load it, swap when all are idle."""
        s = self.s
        if self._swap is None:
            done = s.reloader.collect()
            if done is None:
                return
            if done.runtime is None:
                self._finish(done)
                return
            self._swap = done
            if s.processes is not None:
                s.processes.load(done.runtime.bundle_dir)
                self._workers_loading = True
        if self._workers_loading:
            assert s.processes is not None
            outcome = s.processes.load_outcome()
            if outcome is False:
                return  # the workers are still loading (and serving the old bundle)
            self._workers_loading = False
            if isinstance(outcome, str):  # a worker refused it: every one keeps the old bundle
                s.processes.abort()
                done, self._swap = self._swap, None
                assert done is not None and done.runtime is not None
                done.runtime.close()
                self._finish(ReloadOutcome(None, outcome, done.waiters))
                return
        if s.pool is not None and not s.pool.all_idle:
            return  # a worker still scores on the old bundle
        done, self._swap = self._swap, None
        assert done is not None and done.runtime is not None
        if s.processes is not None:
            s.processes.commit(done.runtime.bundle_dir)
        self._finish(done)

    def _finish(self, done: ReloadOutcome) -> None:
        s = self.s
        new, err = done.runtime, done.error
        if new is not None:
            old, s.rt = s.rt, new  # the swap: every worker's next batch uses the new model
            if old is not None:
                old.close()
            s.cfg.bundle = new.bundle_dir
            s.metrics.set_model(new.model_sha256)
            s.metrics.reload("ok")
            s.log.info("reload_done", bundle=str(new.bundle_dir), model=new.model_sha256)
            for w in done.waiters:
                reply = ok_reply(w.req.id, model=new.model_sha256, bundle=str(new.bundle_dir))
                s.send(w.envelope, reply, w.t0, "reload")
        else:
            s.metrics.reload("failed")
            s.log.error("reload_failed", error=err, model=s.model)
            for w in done.waiters:
                msg = f"{err}; still serving {s.model}"
                s.refuse(w.envelope, w.t0, ProtocolError(Code.RELOAD_FAILED, msg, w.req.id), "reload")
        sd_notify("READY=1")

    def pending_runtime(self) -> Any:
        """The loaded runtime that waits for the swap (closed with the server), if any."""
        return self._swap.runtime if self._swap is not None else None
