"""Worker processes (edge.process_pool, ``edge-serve --worker-processes``): a worker killed with a request in
hand is replaced and the request answered with an error, never lost; each worker says what it costs in
memory; a worker that cannot start stops the start with the reason; the workers end with the daemon."""

from __future__ import annotations

import os
import signal
import time

import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge.client import EdgeClient
from edge.process_pool import peek_op
from edge.protocol import ProtocolError, act_text, pack, parse_request, unpack_reply
from tests.edge.test_server import INSTR, OBS, never_seen, slow_bundle, wait_busy
from tests.support.serving import Daemon, build_tiny_bundle

pytestmark = pytest.mark.real


def _ready_pids(d: Daemon) -> list[int]:
    return [r["pid"] for r in d.log_lines if r.get("event") == "worker_ready"]


def test_a_worker_killed_mid_request_is_replaced_and_its_request_answered_with_an_error(tmp_path):
    with Daemon(
        slow_bundle(tmp_path / "slow"), "--worker-processes", "--workers", "1", "--metrics-port", "0"
    ) as d:
        ready = next(r for r in d.log_lines if r.get("event") == "workers_ready")  # logged before "ready"
        assert len(ready["rss_mb"]) == 1 and ready["rss_mb"][0] > 10  # a worker's own interpreter and bundle
        (pid,) = _ready_pids(d)
        s = zmq.Context.instance().socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(d.endpoint)
        try:
            s.send(pack(act_text(INSTR, OBS, never_seen("k"), req_id="doomed")))
            wait_busy(d)
            os.kill(pid, signal.SIGKILL)
            assert s.poll(30000), "the request in the dead worker's hands was lost"
            reply = unpack_reply(s.recv())
        finally:
            s.close(linger=0)
        assert not reply["ok"] and reply["code"] == "internal" and reply["id"] == "doomed"
        assert "died" in reply["message"]
        died = d.wait_event("worker_died")
        assert died["pid"] == pid and died["requests"] == 1
        replaced = d.wait_event("worker_ready")
        assert replaced["pid"] != pid
        with EdgeClient(d.endpoint, timeout=30) as c:
            assert c.act(INSTR, OBS, ["take apple", "look around"])["ok"]
            assert c.health()["status"] == "serving"
    assert d.proc.returncode == 0


def test_a_worker_that_cannot_start_stops_the_start_with_the_reason(tmp_path, monkeypatch):
    """A worker process that exits before it is ready (here a stand-in that exits 3: a half-installed
    package, no memory left) fails the pool's start with the reason, and leaves no socket file behind."""
    import subprocess
    import sys

    from edge.logs import JsonLogger
    from edge.metrics import Metrics
    from edge.process_pool import ProcessPool, WorkerHandle, WorkerStartError
    from edge.runtime import RuntimeConfig

    def failing(self, index, failures=0):
        return WorkerHandle(index, subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"]))

    monkeypatch.setattr(ProcessPool, "_spawn", failing)
    ctx = zmq.Context()
    try:
        with pytest.raises(WorkerStartError, match="worker process 0 did not start: exit code 3"):
            ProcessPool(ctx, 2, tmp_path, RuntimeConfig(), 1 << 20, Metrics(), JsonLogger("error"))
        assert not list(tmp_path.parent.glob("edge-workers-*/workers.sock"))
    finally:
        ctx.term()


def test_workers_share_the_requests_and_stop_with_the_daemon(tmp_path):
    with Daemon(build_tiny_bundle(tmp_path / "b"), "--worker-processes", "--workers", "2") as d:
        pids = _ready_pids(d)
        assert len(pids) == 2 and len(set(pids)) == 2
        with EdgeClient(d.endpoint, timeout=30) as c:
            replies = [c.act(f"i{k}", f"o{k}", ["a", "b"]) for k in range(6)]
        assert all(r["ok"] for r in replies)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids):
        assert time.monotonic() < deadline, "a worker outlived the daemon"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purpose
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


_values = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.text(max_size=12), st.binary(max_size=8),
    st.lists(st.text(max_size=4), max_size=3),
)  # fmt: skip


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.dictionaries(
            st.sampled_from(["v", "op", "id", "instruction", "memory", "x"]), _values, max_size=6
        ),
        st.builds(
            lambda rid, cut: (rid, cut),
            st.one_of(st.integers(0, 99), st.text(max_size=5)),
            st.integers(0, 80),
        ),
    )
)
def test_the_routing_peek_agrees_with_the_full_parse(msg):
    """What the daemon reads to route a request to a worker process (its op and id, the rest skipped) is what
    the full parse reads: a peeked act is an act (or an error the worker gives), a peeked id the echoed id."""
    if isinstance(msg, tuple):  # a real act request, cut anywhere
        rid, cut = msg
        payload = pack(act_text("i", "o", ["a", "b"], req_id=rid))[:cut]
    else:
        payload = pack(msg)
    peeked = peek_op(payload)
    try:
        req = parse_request(payload)
    except ProtocolError as e:
        if peeked is not None and e.req_id is not None:
            assert e.req_id == peeked[1]
        return
    assert peeked is not None and peeked == (req.op, req.id)
