"""tools.bench.serve_clients: rows taking turns in one client, latency rows, a worker in its own process."""

from __future__ import annotations

import numpy as np
import pytest

from tools.bench.serve_clients import in_client_process, latency_stats, summarize, take_turns


def test_rows_take_turns_in_blocks_after_a_warm_up_and_every_call_is_timed():
    seen: list[tuple[str, int]] = []
    calls = {kind: (lambda i, kind=kind: seen.append((kind, i))) for kind in ("a", "b")}
    lat, cpu = take_turns(calls, n=5, block=2, warmup=1)
    assert seen[:2] == [("a", 0), ("b", 0)]  # the warm-up: every row once
    assert [k for k, _ in seen[2:]] == list("aabbaabbab")  # blocks of 2, the last one short
    assert [i for _, i in seen[2:]] == list(range(1, 11))  # request ids go on from the warm-up
    assert {k: len(v) for k, v in lat.items()} == {"a": 5, "b": 5} == {k: len(v) for k, v in cpu.items()}
    assert all(t >= 0 for v in (*lat.values(), *cpu.values()) for t in v)


def test_latency_rows_in_microseconds():
    lat = [0.003, 0.001, 0.002]
    assert latency_stats(lat) == {
        "n": 3,
        "p50_us": pytest.approx(2000),
        "p99_us": pytest.approx(2980),
        "mean_us": pytest.approx(2000),
    }
    row = summarize("zmq-echo", 2, np.asarray(lat), 0.5)
    assert list(row) == ["name", "clients", "n", "p50_us", "p99_us", "mean_us", "rps", "latencies_us"]
    assert row["rps"] == 6.0 and row["latencies_us"] == pytest.approx([1000, 2000, 3000])
    assert summarize("x", 1, np.asarray(lat), None)["rps"] == pytest.approx(500)  # 1 client: 1 / mean


def _worker(x: int, q) -> None:
    q.put((x + 1, None))


def test_a_worker_runs_in_a_client_process_of_its_own():
    assert in_client_process(_worker, 41, timeout=120) == (42, None)
