"""edge-serve end to end: a real daemon (subprocess, real ZeroMQ sockets on random loopback ports, real
onnxruntime) serving a bundle from the policy exporter; Python client, query CLI, metrics, signals."""

from __future__ import annotations

import json
import signal
import threading
import urllib.request

import numpy as np
import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge.client import EdgeClient, EdgeError, EdgeTimeout
from edge.protocol import Code, act_text, make_request, pack, unpack_reply
from tests.support.serving import Daemon, exported_bundle

pytestmark = pytest.mark.real


CODES = {c.value for c in Code}


INSTR = "Your task is to pick up objects, then place them in their usual locations in the environment."


OBS = "Inventory: empty\nRecent actions: none\nRoom: You are in the kitchen. You see a fridge and an apple."


CANDS = ["take apple", "open fridge", "look around", "put apple in fridge"]


@pytest.fixture(scope="module", params=["--worker-threads", "--worker-processes"])
def daemon(request):
    """The daemon with worker threads and with worker processes: every test of the wire holds for both."""
    with Daemon(exported_bundle(), "--metrics-port", "0", "--max-message-bytes", "65536", request.param) as d:
        yield d


@pytest.fixture(scope="module")
def reference(daemon):
    with EdgeClient(daemon.endpoint, timeout=10) as c:
        return c.act(INSTR, OBS, CANDS)


def raw_socket(endpoint: str) -> zmq.Socket:
    s = zmq.Context.instance().socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(endpoint)
    return s


garbage = st.one_of(
    st.binary(max_size=200).map(lambda b: [b]),
    st.integers(0, 200).map(lambda n: [pack(act_text(INSTR, OBS, CANDS, req_id=1))[:n]]),
    st.lists(st.binary(max_size=30), min_size=2, max_size=4),
    st.dictionaries(
        st.text(max_size=8),
        st.one_of(st.integers(-(2**63), 2**64 - 1), st.text(max_size=8), st.none()),
        max_size=4,
    ).map(lambda d: [pack({"v": 1, **d})]),
    st.sampled_from(["jump", "", "ACT", "reload2"]).map(lambda op: [pack({"v": 1, "op": op, "id": 3})]),
)


def test_act_text_reply_shape(daemon, reference):
    r = reference
    assert r["ok"] and r["v"] == 1 and isinstance(r["id"], int)
    assert len(r["scores"]) == len(CANDS) and all(np.isfinite(r["scores"]))
    assert r["index"] == int(np.argmax(r["scores"])) and r["action"] == CANDS[r["index"]]
    assert len(r["model"]) == 64 and r["timing"]["server_ms"] > 0


def test_embedding_input_matches_text_input(daemon, reference):
    """The same texts, encoded client-side through the bundle's encoder, give the same scores."""
    from edge.runtime import Runtime, RuntimeConfig

    rt = Runtime(exported_bundle(), RuntimeConfig(cache_size=0))
    try:
        embs = rt.encode([INSTR, OBS, *CANDS], cache=False)
    finally:
        rt.close()
    with EdgeClient(daemon.endpoint, timeout=10) as c:
        r = c.act_embeddings(embs[0], embs[1], embs[2:], CANDS)
        r_no_text = c.act_embeddings(embs[0], embs[1], embs[2:])
    np.testing.assert_allclose(r["scores"], reference["scores"], atol=1e-4)
    assert r["action"] == reference["action"] and r_no_text["action"] is None
    assert r_no_text["index"] == reference["index"]


def test_info_health_and_no_skills_error(daemon):
    with EdgeClient(daemon.endpoint, timeout=10) as c:
        info = c.info()
        assert info["embedding_dim"] == 384 and info["protocol"] == 1 and info["threads"] == 1
        assert info["spinning"] is False
        assert c.health()["status"] == "serving"
        with pytest.raises(EdgeError) as e:
            c.act(INSTR, OBS, None)  # this bundle has no skill list
        assert e.value.code == "no_skills"
        with pytest.raises(EdgeError) as e:
            c.act_embeddings(np.ones(16), np.ones(16), np.ones((2, 16)))
        assert e.value.code == "bad_array"
        assert info["candidate_features"] == "action" and info["candidate_dim"] == 384
        with pytest.raises(EdgeError) as e:  # 3D rows are argument features; this bundle takes D
            c.act_embeddings(np.ones(384), np.ones(384), np.ones((2, 3 * 384)))
        assert e.value.code == "bad_array" and "candidate features" in str(e.value)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(frames=garbage)
def test_garbage_gets_error_reply_and_daemon_keeps_serving(daemon, reference, frames):
    s = raw_socket(daemon.endpoint)
    try:
        s.send_multipart(frames)
        assert s.poll(5000), f"no reply to {frames!r}"
        reply = unpack_reply(s.recv_multipart()[-1])
        if not reply["ok"]:  # (a random map can be a valid request by chance)
            assert reply["code"] in CODES and reply["message"]
        # and a correct request on the same socket still gets the correct answer
        s.send(pack(act_text(INSTR, OBS, CANDS, req_id=77)))
        assert s.poll(5000)
        ok = unpack_reply(s.recv_multipart()[-1])
        assert ok["id"] == 77 and ok["action"] == reference["action"]
        np.testing.assert_allclose(ok["scores"], reference["scores"], atol=1e-5)
    finally:
        s.close(linger=0)


def test_oversized_frame_is_dropped_and_daemon_keeps_serving(daemon, reference):
    s = raw_socket(daemon.endpoint)
    try:
        s.send(pack(act_text(INSTR, "x" * 70_000, CANDS, req_id=1)))  # > --max-message-bytes 65536
        assert not s.poll(500), "an oversized message must be dropped (ZMQ_MAXMSGSIZE), not answered"
    finally:
        s.close(linger=0)
    with EdgeClient(daemon.endpoint, timeout=10) as c:
        assert c.act(INSTR, OBS, CANDS)["scores"] == pytest.approx(reference["scores"], abs=1e-5)
    s = raw_socket(daemon.endpoint)  # under the socket limit, over the protocol's text limit: an error reply
    try:
        s.send(pack(act_text(INSTR, "x" * 9000, CANDS, req_id=2)))
        assert s.poll(5000)
        assert unpack_reply(s.recv())["code"] == "bad_field"
    finally:
        s.close(linger=0)


def test_req_socket_envelope_is_supported(daemon, reference):
    s = zmq.Context.instance().socket(zmq.REQ)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(daemon.endpoint)
    try:
        s.send(pack(act_text(INSTR, OBS, CANDS, req_id="req-1")))
        assert s.poll(5000)
        r = unpack_reply(s.recv())
        assert r["id"] == "req-1" and r["action"] == reference["action"]
    finally:
        s.close(linger=0)


def test_eight_concurrent_clients_get_their_own_replies(daemon):
    rng = np.random.default_rng(1)
    jobs = {
        n: [[f"action {n} {i} {j}" for j in range(int(rng.integers(1, 6)))] for i in range(15)]
        for n in range(8)
    }
    expected = {}
    with EdgeClient(daemon.endpoint, timeout=10) as c:  # sequential answers first
        for n, lists in jobs.items():
            for i, cands in enumerate(lists):
                expected[(n, i)] = c.act(f"task {n}", f"obs {n} {i}", cands)["scores"]
    errors: list[str] = []
    batches: list[int] = []
    barrier = threading.Barrier(8, timeout=30)

    def worker(n: int) -> None:
        try:
            with EdgeClient(daemon.endpoint, timeout=20, retries=0) as c:
                barrier.wait()
                for i, cands in enumerate(jobs[n]):
                    r = c.act(f"task {n}", f"obs {n} {i}", cands)
                    batches.append(r["timing"]["batch"])
                    if r["action"] not in cands or len(r["scores"]) != len(cands):
                        errors.append(f"client {n} request {i}: got {r['action']!r}")
                    elif not np.allclose(r["scores"], expected[(n, i)], atol=1e-4):
                        errors.append(f"client {n} request {i}: scores differ from the sequential answer")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"client {n}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert len(batches) == 8 * 15


def test_stale_reply_on_the_same_socket_is_discarded(daemon, reference):
    with EdgeClient(daemon.endpoint, timeout=10) as c:
        assert c.sock is not None
        c.sock.send(pack(make_request("health", 12345)))  # its reply arrives before the next call's reply
        r = c.act(INSTR, OBS, CANDS)
        assert r["action"] == reference["action"] and "status" not in r
        assert c.stale_dropped == 1


def test_timeout_and_retry_never_return_a_stale_reply(daemon, reference):
    """The daemon is frozen (SIGSTOP) so the first attempt times out; the retry on a rebuilt socket gets the
    answer to the retry, and the late answer to the first attempt is never returned."""
    with EdgeClient(daemon.endpoint, timeout=0.3, retries=0) as c:
        daemon.signal(signal.SIGSTOP)
        try:
            with pytest.raises(EdgeTimeout):
                c.health()
        finally:
            daemon.signal(signal.SIGCONT)
        r = c.act(INSTR, OBS, CANDS, timeout=10)
        assert r["action"] == reference["action"] and "status" not in r
    with EdgeClient(daemon.endpoint, timeout=0.3, retries=3) as c:
        daemon.signal(signal.SIGSTOP)
        timer = threading.Timer(0.5, daemon.signal, args=(signal.SIGCONT,))
        timer.start()
        try:
            r = c.act(INSTR, OBS, CANDS)
        finally:
            timer.join()
        assert r["action"] == reference["action"] and c.reconnects >= 1


def test_metrics_endpoint(daemon, reference):
    assert daemon.metrics_port
    with EdgeClient(daemon.endpoint, timeout=10) as c:  # one error of its own: the suite's order varies
        with pytest.raises(EdgeError):
            c.act(INSTR, OBS, None)
    body = (
        urllib.request.urlopen(f"http://127.0.0.1:{daemon.metrics_port}/metrics", timeout=10).read().decode()
    )
    assert 'edge_requests_total{op="act"}' in body
    assert 'edge_request_latency_seconds_bucket{le="0.0001"}' in body
    assert 'edge_request_latency_seconds_bucket{le="0.00025"}' in body
    assert 'edge_errors_total{code="' in body
    acts = [ln for ln in body.splitlines() if ln.startswith('edge_requests_total{op="act"}')]
    assert int(acts[0].split()[-1]) >= 1


def test_query_cli(daemon, cli, reference):
    args = ["query", "--connect", daemon.endpoint, "--instruction", INSTR, "--observation", OBS]
    for cand in CANDS:
        args += ["--candidate", cand]
    proc = cli(*args, timeout=60, check=True)
    reply = json.loads(proc.stdout)
    assert reply["action"] == reference["action"]
    bad = cli("query", "--connect", daemon.endpoint, "--op", "info", "--instruction", "x", timeout=60)
    assert bad.returncode == 2 and "takes no" in bad.stderr
    err = cli("query", "--connect", daemon.endpoint, "--instruction", INSTR, "--observation", OBS, timeout=60)
    assert err.returncode == 1 and json.loads(err.stdout)["code"] == "no_skills"


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(size=st.integers(65_537, 400_000), parts=st.integers(1, 3))
def test_oversized_frames_property(daemon, reference, size, parts):
    """Any message part over --max-message-bytes (65536 here; ZMQ_MAXMSGSIZE is per part), alone or in a
    multi-part message, is dropped by ZeroMQ with its connection; the daemon goes on answering correctly."""
    s = raw_socket(daemon.endpoint)
    try:
        s.send_multipart([b"\x00" * (size // parts)] * parts if size // parts > 65_536 else [b"\x00" * size])
        assert not s.poll(300), "an oversized message must not be answered"
    finally:
        s.close(linger=0)
    with EdgeClient(daemon.endpoint, timeout=10) as c:
        assert c.act(INSTR, OBS, CANDS)["scores"] == pytest.approx(reference["scores"], abs=1e-5)


def test_a_memoryful_bundle_reads_the_memory_sent_and_refuses_embeddings():
    """Format 2 (what training writes): the client's memory changes the scores, the reply is what the
    in-process runner gives for the same texts and memory, and embedding input is refused by its code."""
    from edge.bundle_policy import BundlePolicy

    bundle = exported_bundle(2)
    memory = [("open fridge", "Feedback: You open the fridge.\n" + OBS), ("look around", OBS)]
    with Daemon(bundle) as d, EdgeClient(d.endpoint, timeout=10) as c:
        info = c.info()
        assert info["bundle_format"] == 2 and info["horizon"] == 33  # 32 steps and the pair before them
        assert info["memory"] == info["horizon"]  # the old name of the number, kept one release
        plain, remembered = c.act(INSTR, OBS, CANDS), c.act(INSTR, OBS, CANDS, memory=memory)
        assert not np.allclose(plain["scores"], remembered["scores"])
        with pytest.raises(EdgeError) as e:
            c.act_embeddings(np.ones(384, np.float32) / 20, np.ones(384, np.float32) / 20, np.eye(2, 384))
        assert e.value.code == "bad_request" and "send text" in str(e.value)
        assert c.health()["status"] == "serving"  # a refused request never stops the daemon
    with BundlePolicy(bundle) as local:
        np.testing.assert_allclose(local.scores(INSTR, OBS, CANDS, memory), remembered["scores"], atol=1e-5)
