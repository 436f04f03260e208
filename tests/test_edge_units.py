"""Unit tests of the edge runtime pieces: batched scoring equals one-by-one scoring, the bounded LRU, the
metrics text, the JSON log, client argument checks. Runs the real onnxruntime on a tiny bundle."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from edge.client import EdgeClient
from edge.logs import JsonLogger, sd_notify
from edge.metrics import Metrics
from edge.runtime import LRU, Item, RuntimeConfig, load_runtime
from models.bundle import BundleError
from tests.support.serving import build_tiny_bundle


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    r = load_runtime(build_tiny_bundle(tmp_path_factory.mktemp("b") / "b"), RuntimeConfig(cache_size=8))
    yield r
    r.close()


def test_batched_scores_equal_single_scores_with_padding(rt):
    reqs = [
        ("task a", "obs a", ["x"]),
        ("task b", "obs b", ["p", "q", "r", "s"]),
        ("task a", "obs c", ["x", "y"]),
    ]
    items = rt.items_from_text(reqs)
    together = rt.score(items)
    for it, s in zip(items, together, strict=True):
        (alone,) = rt.score([it])
        assert s.shape == (len(it.candidates),)
        np.testing.assert_allclose(s, alone, atol=1e-6)


def test_text_and_embedding_items_agree(rt):
    (item,) = rt.items_from_text([("put apple", "Room: kitchen", ["take apple", "look"])])
    embs = rt.encode(["put apple", "Room: kitchen", "take apple", "look"], cache=False)
    (a,) = rt.score([item])
    (b,) = rt.score([Item(embs[0], embs[1], embs[2:], None)])
    np.testing.assert_allclose(a, b, atol=1e-6)
    assert np.allclose(np.linalg.norm(embs, axis=1), 1.0, atol=1e-5)  # normalisation is inside the graph


def test_cache_is_bounded_and_observations_are_not_cached(rt):
    rt.items_from_text([("i", f"observation {n}", [f"cand {n}"]) for n in range(20)])
    assert len(rt.cache) <= 8
    assert rt.cache.get("observation 19") is None and rt.cache.get("cand 19") is not None


def test_lru_order_and_zero_capacity():
    lru = LRU(2)
    a, b, c = (np.full(2, v, np.float32) for v in (1, 2, 3))
    lru.put("a", a)
    lru.put("b", b)
    assert lru.get("a") is a  # a is now the most recent
    lru.put("c", c)
    assert lru.get("b") is None and lru.get("a") is a and len(lru) == 2
    off = LRU(0)
    off.put("a", a)
    assert off.get("a") is None


def test_runtime_refuses_bad_bundles(tmp_path):
    with pytest.raises(BundleError, match="not a bundle directory"):
        load_runtime(tmp_path / "missing")
    b = build_tiny_bundle(tmp_path / "b")
    (b / "tokenizer.json").write_text("{}")
    with pytest.raises(BundleError, match="tokenizer.json has 2 bytes"):
        load_runtime(b)


def test_metrics_text_format():
    m = Metrics()
    m.request("act", 0.0003)
    m.request("act", 0.002)
    m.error("bad_msgpack")
    m.batch_size(3)
    m.set_model("abc")
    text = m.render()
    assert 'edge_requests_total{op="act"} 2' in text
    assert 'edge_request_latency_seconds_bucket{le="0.00025"} 0' in text
    assert 'edge_request_latency_seconds_bucket{le="0.0005"} 1' in text
    assert 'edge_request_latency_seconds_bucket{le="+Inf"} 2' in text
    assert 'edge_errors_total{code="bad_msgpack"} 1' in text and 'edge_model_info{sha256="abc"} 1' in text


def test_json_logger_levels_and_sd_notify_without_socket(monkeypatch):
    buf = io.StringIO()
    log = JsonLogger("info", buf)
    log.debug("hidden")
    log.info("shown", n=1)
    (line,) = buf.getvalue().splitlines()
    assert json.loads(line)["event"] == "shown"
    with pytest.raises(ValueError):
        JsonLogger("verbose")
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sd_notify("READY=1") is False


def test_client_rejects_bad_arguments():
    with pytest.raises(ValueError, match="timeout"):
        EdgeClient("tcp://127.0.0.1:1", timeout=0)
    with pytest.raises(ValueError, match="retries"):
        EdgeClient("tcp://127.0.0.1:1", retries=-1)
    with pytest.raises(ValueError, match="both"):
        EdgeClient("tcp://127.0.0.1:1", curve_server_key="x" * 40)


def test_edge_never_imports_heavy_libraries(tmp_path):
    """A robot installs only edgejudge[edge]: loading and running everything in edge/ must not pull in torch,
    llama_cpp, sentence_transformers or transformers."""
    import subprocess
    import sys

    from tests.support.serving import ROOT

    bundle = build_tiny_bundle(tmp_path / "b")
    code = (
        "import sys\n"
        "import edge.serve, edge.server, edge.client, edge.query_cli, edge.edge_policy\n"
        "import edge.protocol_vectors\n"
        "from edge.runtime import load_runtime\n"
        f"rt = load_runtime({str(bundle)!r})\n"
        "rt.score(rt.items_from_text([('i', 'o', ['a', 'b'])]))\n"
        "heavy = ('torch', 'llama_cpp', 'sentence_transformers', 'transformers')\n"
        "bad = [m for m in heavy if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "", f"edge/ imported {p.stdout.strip()}"


def test_inference_failure_is_an_internal_error_reply_and_serving_goes_on(tmp_path):
    """A runtime that fails once (test double for a broken session) costs one error reply, not the daemon."""
    import threading

    from edge.server import ServeConfig, Server

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


def test_length_groups_cover_every_text_once_and_respect_limits():
    from edge.text_encoder import RUN_COST_TOKENS, length_groups

    rng = np.random.default_rng(0)
    for _ in range(50):
        lengths = [int(x) for x in rng.integers(2, 60, size=int(rng.integers(0, 40)))]
        for pad in (True, False):
            groups = length_groups(lengths, 8, allow_padding=pad)
            assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
            assert all(1 <= len(g) <= 8 for g in groups)
            if not pad:
                assert all(len({lengths[i] for i in g}) == 1 for g in groups)
            cost = sum(RUN_COST_TOKENS + len(g) * max(lengths[i] for i in g) for g in groups)
            one_each = sum(RUN_COST_TOKENS + n for n in lengths)
            assert cost <= one_each  # never worse than one run per text
    # a long observation is not padded together with short candidates
    assert length_groups([47, 5, 6, 5], 64) == [[1, 3, 2], [0]]
