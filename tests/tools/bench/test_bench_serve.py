"""tools.bench.bench_serve on a tiny bundle and tiny counts: real servers and clients, results and CDF
written. (The HTTP/websocket rows need `make bench-deps`; they are left out here.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.serving import ROOT, build_tiny_bundle

pytestmark = pytest.mark.real


def test_bench_serve_smoke(tmp_path):
    bundle = build_tiny_bundle(tmp_path / "b")
    out = tmp_path / "out"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.bench.bench_serve",
            "--bundle",
            str(bundle),
            "--int8-bundle",  # the rows' plumbing only: a tiny bundle stands in for the int8 one
            str(bundle),
            "--out",
            str(out),
            "--n",
            "40",
            "--n-text",
            "10",
            "--warmup",
            "2",
            "--block",
            "10",
            "--clients",
            "1,2",
            "--skip",
            "http,websocket",
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    summary = json.loads(p.stdout)
    names = {(r["name"], r["clients"]) for r in summary["rows"]}
    assert {
        ("onnxruntime-inference", 1),
        ("zmq-echo", 1),
        ("zmq-echo-infer", 1),
        ("edge-embedding", 1),
        ("edge-text", 1),
        ("zmq-echo", 2),
        ("edge-embedding", 2),
        ("edge-text", 2),
        ("edge-text-int8", 1),
        ("edge-text-int8", 2),
    } <= names
    for r in summary["rows"]:
        assert 0 < r["p50_us"] <= r["p99_us"] and r["rps"] > 0
    t = summary["targets"]
    assert t["floor_p50_us"] > 0 and t["embedding_p50_over_floor"] > 0 and t["text_p50_us"] > 0
    assert t["text_int8_p50_us"] > 0 and t["text_fp32_p50_over_int8_p50"] > 0
    assert t["echo_infer_p50_us"] > 0 and t["embedding_p50_over_echo_infer_p50"] > 0
    assert (out / "latency_cdf.png").stat().st_size > 10_000
    full = json.loads((out / "results.json").read_text())
    assert len(next(r for r in full["rows"] if r["name"] == "edge-embedding")["latencies_us"]) == 40
    # Results are committed: the temporary bundle is named, not located on this machine.
    assert full["bundle"]["path"] == bundle.name and str(tmp_path) not in (out / "results.json").read_text()
