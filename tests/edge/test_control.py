"""The control ops (edge.control) and the reload's two phases with worker processes: only when every worker
has loaded the new bundle, and all are idle, do they switch together; a bundle one worker refuses leaves all
of them, and the daemon, on the old one. The pool and runtimes here are test doubles; the real daemon's
reloads are in tests/edge/test_server.py."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

from edge.control import Control
from edge.logs import JsonLogger
from edge.metrics import Metrics
from edge.protocol import Request
from edge.reload import ReloadOutcome
from edge.scoring import Pending


class FakeRuntime:
    def __init__(self, name: str):
        self.model_sha256 = name
        self.bundle_dir = Path(f"/bundles/{name}")
        self.closed = False

    def close(self) -> None:
        self.closed = True


class FakePool:
    """The worker processes as the reload sees them: each answers ``load`` when told, then commit/abort."""

    def __init__(self):
        self.calls: list[tuple] = []
        self.outcome: str | None | bool = False
        self.all_idle = False

    def load(self, bundle):
        self.calls.append(("load", bundle))

    def load_outcome(self):
        return self.outcome

    def commit(self, bundle):
        self.calls.append(("commit", bundle))

    def abort(self):
        self.calls.append(("abort",))


class FakeReloader:
    def __init__(self, outcome):
        self.outcome, self.running = outcome, True

    def collect(self):
        out, self.outcome, self.running = self.outcome, None, False
        return out


def _server(new: FakeRuntime | None, pool: FakePool):
    sent: list[tuple] = []
    waiter = Pending([b"client"], 0.0, Request(op="reload", id=7))
    s = SimpleNamespace(
        rt=FakeRuntime("old"),
        cfg=SimpleNamespace(bundle=Path("/bundles/old")),
        metrics=Metrics(),
        log=JsonLogger("error", io.StringIO()),
        reloader=FakeReloader(ReloadOutcome(new, None if new else "refused", [waiter])),
        processes=pool,
        pool=pool,
        model="old",
        send=lambda env, msg, t0, op: sent.append(("send", msg)),
        refuse=lambda env, t0, err, op: sent.append(("refuse", err.code.value, err.message)),
    )
    return s, sent


def test_the_workers_switch_together_once_all_loaded_and_idle():
    pool, new = FakePool(), FakeRuntime("new")
    s, sent = _server(new, pool)
    control = Control(s)
    control.step()  # the daemon's load is done: the workers are told to load it
    assert pool.calls == [("load", new.bundle_dir)] and control.reloading and not control.holds_batches
    control.step()  # still loading: nothing changes, batches still go out on the old bundle
    assert s.rt.model_sha256 == "old" and sent == []
    pool.outcome = None  # every worker loaded it
    control.step()  # but a worker still scores on the old one: no batch goes out, no switch yet
    assert control.holds_batches and s.rt.model_sha256 == "old"
    pool.all_idle = True
    control.step()
    assert pool.calls[-1] == ("commit", new.bundle_dir) and s.rt is new and not control.reloading
    assert sent == [("send", sent[0][1])] and sent[0][1]["ok"] and sent[0][1]["model"] == "new"


def test_a_bundle_one_worker_refuses_leaves_every_one_on_the_old_bundle():
    pool, new = FakePool(), FakeRuntime("new")
    s, sent = _server(new, pool)
    control = Control(s)
    control.step()
    pool.outcome = "worker 1: BundleError: policy.onnx: checksum mismatch"
    control.step()
    assert pool.calls[-1] == ("abort",) and new.closed and s.rt.model_sha256 == "old"
    assert sent == [
        (
            "refuse",
            "reload_failed",
            "worker 1: BundleError: policy.onnx: checksum mismatch; still serving old",
        )
    ]
    assert not control.reloading
