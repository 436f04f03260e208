"""edge-serve operations with a real daemon: hot reload (op and SIGHUP), CURVE authentication, graceful
SIGTERM (also mid-load), ipc:// endpoints, skill lists, CLI errors, scoring workers (a slow request beside
cheap ones, reload across workers, their metrics)."""

from __future__ import annotations

import io
import json
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from edge.client import EdgeClient, EdgeError, EdgeTimeout
from edge.logs import JsonLogger
from models.bundle import load_manifest
from tests.support.serving import ROOT, Daemon, build_tiny_bundle, exported_bundle

INSTR, OBS, CANDS = "put the apple in the fridge", "Room: kitchen", ["take apple", "open fridge", "look"]


def corrupt(bundle: Path) -> None:
    p = bundle / "policy.onnx"
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))


@pytest.mark.real
def test_reload_success_and_failure_keep_the_right_model(tmp_path):
    a = build_tiny_bundle(tmp_path / "a", seed=0)
    b = build_tiny_bundle(tmp_path / "b", seed=1)
    bad = build_tiny_bundle(tmp_path / "bad", seed=2)
    corrupt(bad)  # checksum no longer matches the manifest
    broken = tmp_path / "broken"  # checksums fine, but the graph does not load
    shutil.copytree(a, broken)
    (broken / "policy.onnx").write_bytes(b"not an onnx graph")
    from models.bundle import write_manifest

    write_manifest(broken, embedding_dim=16, max_length=64)
    sha_a, sha_b = load_manifest(a).model_sha256, load_manifest(b).model_sha256
    with Daemon(a, "--allow-reload-path") as d, EdgeClient(d.endpoint, timeout=10) as c:
        before = c.act(INSTR, OBS, CANDS)
        assert before["model"] == sha_a
        for target, fragment in (
            (bad, "sha256 does not match"),
            (broken, "onnxruntime cannot load"),
            (tmp_path / "missing", "not a bundle directory"),
        ):
            with pytest.raises(EdgeError) as e:
                c.reload(target)
            assert e.value.code == "reload_failed" and fragment in e.value.message
            again = c.act(INSTR, OBS, CANDS)  # the old model still serves, same answers
            assert again["model"] == sha_a and again["scores"] == pytest.approx(before["scores"], abs=1e-6)
        r = c.reload(b)
        assert r["model"] == sha_b
        after = c.act(INSTR, OBS, CANDS)
        assert after["model"] == sha_b and c.info()["model"] == sha_b
        assert after["scores"] != pytest.approx(before["scores"], abs=1e-6)
        assert c.health()["model"] == sha_b
    events = [ln["event"] for ln in d.log_lines]
    assert events.count("reload_failed") == 3 and events.count("reload_done") == 1


@pytest.mark.real
def test_reload_path_needs_permission_and_sighup_reloads_in_place(tmp_path):
    served = build_tiny_bundle(tmp_path / "served", seed=0)
    other = build_tiny_bundle(tmp_path / "other", seed=1)
    with Daemon(served) as d, EdgeClient(d.endpoint, timeout=10) as c:
        with pytest.raises(EdgeError) as e:
            c.reload(other)
        assert e.value.code == "forbidden"
        sha0 = c.info()["model"]
        # replace the served bundle's files by another model and send SIGHUP
        for f in other.iterdir():
            shutil.copy(f, served / f.name)
        d.signal(signal.SIGHUP)
        done = d.wait_event("reload_done", 60)
        assert done["model"] == load_manifest(other).model_sha256 != sha0
        assert c.act(INSTR, OBS, CANDS)["model"] == done["model"]
        corrupt(served)
        d.signal(signal.SIGHUP)
        failed = d.wait_event("reload_failed", 60)
        assert "sha256" in failed["error"]
        assert c.act(INSTR, OBS, CANDS)["model"] == done["model"]  # kept serving the last good model
    assert d.proc.returncode == 0


@pytest.mark.real
def test_curve_unknown_key_refused_known_key_served(tmp_path, cli):
    keys, allowed = tmp_path / "keys", tmp_path / "allowed"
    allowed.mkdir()
    for name in ("server", "robot", "intruder"):
        cli_run = subprocess.run(
            [sys.executable, "-m", "edge.serve", "keygen", "--out", str(keys), "--name", name],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert cli_run.returncode == 0, cli_run.stderr
    assert (keys / "server.key_secret").stat().st_mode & 0o077 == 0
    again = subprocess.run(
        [sys.executable, "-m", "edge.serve", "keygen", "--out", str(keys), "--name", "robot"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 1 and "--force" in again.stderr
    shutil.copy(keys / "robot.key", allowed / "robot.key")
    bundle = build_tiny_bundle(tmp_path / "b")
    with Daemon(
        bundle, "--curve-secret", str(keys / "server.key_secret"), "--curve-allowed", str(allowed)
    ) as d:
        with EdgeClient(
            d.endpoint,
            timeout=10,
            curve_server_key=keys / "server.key",
            curve_client_cert=keys / "robot.key_secret",
        ) as c:
            assert c.act(INSTR, OBS, CANDS)["action"] in CANDS
        with (
            EdgeClient(
                d.endpoint,
                timeout=1,
                retries=0,
                curve_server_key=keys / "server.key",
                curve_client_cert=keys / "intruder.key_secret",
            ) as c,
            pytest.raises(EdgeTimeout),
        ):
            c.health()
        with EdgeClient(d.endpoint, timeout=1, retries=0) as c, pytest.raises(EdgeTimeout):
            c.health()  # no CURVE at all
        d.wait_event("auth_denied", 10)
        # allow the intruder's key and send SIGHUP: the allowed-keys directory is read again
        shutil.copy(keys / "intruder.key", allowed / "intruder.key")
        d.signal(signal.SIGHUP)
        d.wait_event("reload_done", 60)
        with EdgeClient(
            d.endpoint,
            timeout=10,
            curve_server_key=keys / "server.key",
            curve_client_cert=keys / "intruder.key_secret",
        ) as c:
            assert c.health()["status"] == "serving"
        proc = cli(
            "query",
            "--connect",
            d.endpoint,
            "--op",
            "health",
            "--curve-server-key",
            str(keys / "server.key"),
            "--curve-client-cert",
            str(keys / "robot.key_secret"),
            timeout=60,
            check=True,
        )
        assert json.loads(proc.stdout)["status"] == "serving"


@pytest.mark.real
def test_sigterm_mid_load_exits_cleanly():
    d = Daemon(exported_bundle(), wait_ready=False)
    d.wait_event("loading", 120)
    d.signal(signal.SIGTERM)
    assert d.stop(timeout=60) == 0
    events = [ln["event"] for ln in d.log_lines]
    assert "shutdown" in events and "ready" not in events, events
    assert not any(ln.get("event") == "text" and "Traceback" in ln.get("text", "") for ln in d.log_lines)


@pytest.mark.real
def test_sigterm_answers_queued_requests_then_exits_zero(tmp_path):
    import zmq

    from edge.protocol import act_text, pack, unpack_reply

    bundle = build_tiny_bundle(tmp_path / "b")
    d = Daemon(bundle)
    s = zmq.Context.instance().socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(d.endpoint)
    try:
        s.send(pack(act_text(INSTR, OBS, CANDS, req_id="warm-up")))  # connected before the burst
        assert s.poll(10000) and unpack_reply(s.recv())["id"] == "warm-up"
        for i in range(50):
            s.send(pack(act_text(INSTR, f"{OBS} {i}", CANDS, req_id=i)))
        d.signal(signal.SIGTERM)
        got = set()
        deadline = time.monotonic() + 20
        while len(got) < 50 and time.monotonic() < deadline and s.poll(2000):
            got.add(unpack_reply(s.recv())["id"])
        assert d.stop(timeout=30) == 0
        assert got == set(range(50))
    finally:
        s.close(linger=0)
    assert d.log_lines[-1]["event"] == "shutdown"


@pytest.mark.real
def test_sigint_and_ipc_endpoint(tmp_path):
    bundle = build_tiny_bundle(tmp_path / "b")
    sock = tmp_path / "edge.sock"
    d = Daemon(bundle, bind=f"ipc://{sock}")
    try:
        assert d.endpoint == f"ipc://{sock}"
        with EdgeClient(d.endpoint, timeout=10) as c:
            assert c.act(INSTR, OBS, CANDS)["action"] in CANDS
        d.signal(signal.SIGINT)
        assert d.proc.wait(timeout=30) == 0
    finally:
        d.stop()


@pytest.mark.real
def test_skill_list_bundle_scores_all_skills(tmp_path):
    skills = ["go north", "go south", "take apple", "open fridge"]
    bundle = build_tiny_bundle(tmp_path / "s", skills=skills)
    with Daemon(bundle) as d, EdgeClient(d.endpoint, timeout=10) as c:
        r = c.act(INSTR, OBS)
        assert r["action"] in skills and len(r["scores"]) == len(skills)
        assert c.info()["skills"] == skills
        explicit = c.act(INSTR, OBS, skills)  # the same texts as candidates: the same scores
        np.testing.assert_allclose(explicit["scores"], r["scores"], atol=1e-5)


@pytest.mark.real
def test_bad_bundle_and_bad_options_fail_with_one_line(tmp_path):
    def serve(*args):
        return subprocess.run(
            [sys.executable, "-m", "edge.serve", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
        )

    bad = build_tiny_bundle(tmp_path / "bad")
    corrupt(bad)
    p = serve("--bundle", str(bad), "--bind", "tcp://127.0.0.1:*")
    assert p.returncode == 1 and "sha256 does not match" in p.stderr and "Traceback" not in p.stderr
    p = serve("--bind", "tcp://127.0.0.1:*")
    assert p.returncode == 2 and "--bundle is required" in p.stderr
    p = serve("--bundle", str(bad), "--bogus")
    assert p.returncode == 2 and "No such option" in p.stderr
    p = serve("--bundle", str(bad), "--bind", "127.0.0.1:5555")
    assert p.returncode == 2 and "expected tcp://" in p.stderr
    good = build_tiny_bundle(tmp_path / "good")
    p = serve("--bundle", str(good), "--bind", "tcp://256.1.1.1:1")
    assert p.returncode == 2 and "startup_failed" in p.stderr


@pytest.mark.real
def test_sd_notify_ready_reloading_stopping(tmp_path):
    import socket

    addr = str(tmp_path / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.bind(addr)
        s.settimeout(30)
        d = Daemon(build_tiny_bundle(tmp_path / "b"), env={"NOTIFY_SOCKET": addr})
        try:
            assert s.recv(64) == b"READY=1"
            d.signal(signal.SIGHUP)
            assert s.recv(64) == b"RELOADING=1"
            assert s.recv(64) == b"READY=1"
        finally:
            assert d.stop() == 0
        assert s.recv(64) == b"STOPPING=1"


def test_inference_failure_is_an_internal_error_reply_and_serving_goes_on(tmp_path):
    """A runtime that fails once (test double for a broken session) costs one error reply, not the daemon."""
    import threading

    from edge.serve_config import ServeConfig
    from edge.server import Server

    server = Server(
        ServeConfig(bundle=build_tiny_bundle(tmp_path / "b"), binds=["tcp://127.0.0.1:*"]),
        JsonLogger("error", io.StringIO()),
    )
    server.load()
    server._loading = False
    server.open()
    assert server.rt is not None
    real_score, calls = server.rt.score, []

    def flaky(items):
        calls.append(len(items))
        if len(calls) == 1:
            raise RuntimeError("simulated onnxruntime failure")
        return real_score(items)

    server.rt.score = flaky  # type: ignore[method-assign]
    t = threading.Thread(target=server._serve, daemon=True)
    t.start()
    try:
        with EdgeClient(server.endpoints[0], timeout=10) as c:
            with pytest.raises(Exception) as e:
                c.act("i", "o", ["a", "b"])
            assert getattr(e.value, "code", None) == "internal"
            assert c.act("i", "o", ["a", "b"])["action"] in ("a", "b")
    finally:
        server.stop_requested = True
        t.join(timeout=10)
        server.close()
    assert server.metrics.snapshot()["errors"] == {"internal": 1}


# ---------------------------------------------------------------------------------------------------- workers

HEAVY_CANDIDATES = 128


def slow_bundle(out: Path, *, seed: int = 0, hidden: int = 1024) -> Path:
    """A tiny bundle whose encoder does real work per token (dense layers of width ``hidden`` between the
    token table and the pooling): a request of many never-seen texts takes most of a second, one whose
    texts are cached (all but a format-1 observation) about a millisecond. Slow by its graph, not a hook."""
    import onnx
    from onnx import helper, numpy_helper

    from models.bundle import write_manifest

    build_tiny_bundle(out, seed=seed)
    model = onnx.load(out / "encoder.onnx")
    graph, rng = model.graph, np.random.default_rng(seed)
    at = next(i for i, n in enumerate(graph.node) if n.op_type == "Gather")
    graph.node[at].output[0] = "tok_table"
    x, dims = "tok_table", (16, hidden, hidden, 16)
    for j, (a, b) in enumerate(zip(dims, dims[1:], strict=False)):
        w = (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
        graph.initializer.append(numpy_helper.from_array(w, f"dense{j}"))
        y = "tok" if b == dims[-1] and j == len(dims) - 2 else f"hidden{j}"
        graph.node.insert(at + 1 + 2 * j, helper.make_node("MatMul", [x, f"dense{j}"], [f"{y}_lin"]))
        graph.node.insert(at + 2 + 2 * j, helper.make_node("Relu", [f"{y}_lin"], [y]))
        x = y
    onnx.save(model, out / "encoder.onnx")
    write_manifest(out, embedding_dim=16, max_length=64, provenance={"algo": "slow-test"}, format_version=1)
    return out


def never_seen(tag: str) -> list[str]:
    """Candidates of 64 never-seen tokens each: every one goes through the encoder."""
    return [" ".join(f"{tag}w{i}x{j}" for j in range(40)) for i in range(HEAVY_CANDIDATES)]


def metric(d: Daemon, name: str) -> dict[str, int]:
    """The values of a metric by its ``worker`` label ("" for none), from the daemon's /metrics."""
    url = f"http://127.0.0.1:{d.metrics_port}/metrics"
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    pattern = rf'^{name}(?:{{worker="(\d+)"}})? (\d+)$'
    return {w: int(v) for w, v in re.findall(pattern, text, re.MULTILINE)}


def wait_busy(d: Daemon) -> None:
    """Until a worker scores the slow request sent before (alone in its batch)."""
    deadline = time.monotonic() + 30
    while not any((busy := metric(d, "edge_worker_busy")).values()):
        assert time.monotonic() < deadline, "no worker got the slow request"
        time.sleep(0.01)
    assert [n for w, n in metric(d, "edge_worker_queue_depth").items() if busy[w]] == [1]


def during_slow(d: Daemon, tag: str, *requests: dict) -> list[dict]:
    """Send a slow request, then ``requests`` once a worker scores it, all on one socket: the replies in the
    order the daemon sent them."""
    import zmq

    from edge.protocol import act_text, pack, unpack_reply

    s = zmq.Context.instance().socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(d.endpoint)
    try:
        s.send(pack(act_text(INSTR, OBS, never_seen(tag), req_id="slow")))
        wait_busy(d)
        for r in requests:
            s.send(pack(r))
        out = []
        for _ in range(1 + len(requests)):
            assert s.poll(60000), f"replies so far: {[r.get('id') for r in out]}"
            out.append(unpack_reply(s.recv()))
        return out
    finally:
        s.close(linger=0)


MODES = pytest.mark.parametrize("mode", ["--worker-threads", "--worker-processes"])
"""The worker tests hold for worker threads and worker processes alike."""


@pytest.mark.real
@MODES
@pytest.mark.parametrize(
    ("workers", "order"), [(2, ["health", "cheap", "slow"]), (1, ["health", "slow", "cheap"])]
)
def test_a_slow_request_holds_up_a_cheap_one_only_without_a_free_worker(tmp_path, workers, order, mode):
    """With two workers the cheap act sent during the slow one is answered first; with one it waits for it
    (as the single-threaded daemon did). The loop answers health meanwhile either way."""
    from edge.protocol import act_text, make_request

    with Daemon(slow_bundle(tmp_path / "slow"), "--workers", str(workers), "--metrics-port", "0", mode) as d:
        with EdgeClient(d.endpoint, timeout=30) as c:
            reference = c.act(INSTR, OBS, CANDS)  # from now on the cheap request's texts are cached
        assert metric(d, "edge_worker_busy") == {str(i): 0 for i in range(workers)}
        replies = during_slow(
            d, "a", make_request("health", "health"), act_text(INSTR, OBS, CANDS, req_id="cheap")
        )
        assert metric(d, "edge_worker_busy") == {str(i): 0 for i in range(workers)}
        assert metric(d, "edge_waiting_requests") == {"": 0}
    by_id = {r["id"]: r for r in replies}
    assert [r["id"] for r in replies] == order and all(r["ok"] for r in replies)
    assert by_id["cheap"]["scores"] == pytest.approx(reference["scores"], abs=1e-6)
    assert len(by_id["slow"]["scores"]) == HEAVY_CANDIDATES


@pytest.mark.real
@MODES
def test_reload_waits_for_the_workers_then_switches_all_of_them(tmp_path, mode):
    a, b = slow_bundle(tmp_path / "a"), slow_bundle(tmp_path / "b", seed=1)
    bad = build_tiny_bundle(tmp_path / "bad", seed=2)
    corrupt(bad)
    sha_a, sha_b = load_manifest(a).model_sha256, load_manifest(b).model_sha256
    from edge.protocol import act_text, make_request

    with Daemon(a, "--allow-reload-path", "--metrics-port", "0", "--workers", "2", mode) as d:
        slow, reload = during_slow(d, "r", make_request("reload", "reload", bundle=str(b)))
        assert slow["ok"] and slow["model"] == sha_a  # the swap waited: its runtime was not closed under it
        assert reload["ok"] and reload["model"] == sha_b
        for tag in ("x", "y"):  # a slow and a cheap act at once: one on each worker
            batches = metric(d, "edge_worker_batches_total")
            replies = during_slow(d, tag, act_text(INSTR, OBS, CANDS, req_id="cheap"))
            assert [(r["id"], r["model"]) for r in replies] == [("cheap", sha_b), ("slow", sha_b)]
            assert metric(d, "edge_worker_batches_total") == {w: n + 1 for w, n in batches.items()}
            with EdgeClient(d.endpoint, timeout=30) as c, pytest.raises(EdgeError) as e:
                c.reload(bad)  # refused: every worker stays on the last good bundle
            assert e.value.code == "reload_failed"


@pytest.mark.real
@MODES
def test_sigterm_answers_what_the_workers_score_then_joins_them(tmp_path, mode):
    import zmq

    from edge.protocol import act_text, pack, unpack_reply

    d = Daemon(slow_bundle(tmp_path / "slow"), "--metrics-port", "0", mode)
    s = zmq.Context.instance().socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(d.endpoint)
    try:
        s.send(pack(act_text(INSTR, OBS, never_seen("t"), req_id="slow")))
        wait_busy(d)
        d.signal(signal.SIGTERM)
        assert s.poll(60000)
        slow = unpack_reply(s.recv())
        assert slow["ok"] and len(slow["scores"]) == HEAVY_CANDIDATES
        assert d.stop(timeout=30) == 0
    finally:
        s.close(linger=0)
        d.stop()
    assert d.log_lines[-1]["event"] == "shutdown"
