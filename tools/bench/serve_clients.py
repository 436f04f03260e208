"""The clients of the serving benchmarks (:mod:`tools.bench.bench_serve`, :mod:`tools.bench.bench_text`), each
a process of its own: one call of every row kind (:func:`make_call`), rows taking turns in one client
(:func:`take_turns`) or several clients on one row at once (:func:`measure`), and their latency rows."""

from __future__ import annotations

import json
import multiprocessing as mp
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np

from tools.bench.serve_baselines import policy_session, run_policy

INSTRUCTION = "Your task is to pick up objects, then place them in their usual locations in the environment."
OBSERVATION = (
    "Inventory: empty\nRecent actions: open fridge, look around\nRoom: You are in the kitchen. "
    "In one part of the room you see a fridge that is open. There is also a dining table."
)
CANDIDATES = [
    "take apple", "open fridge", "close fridge", "look around", "put apple in fridge", "take plate",
    "go to the living room", "inventory",
]  # fmt: skip


def make_inputs(dim: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)

    def unit(*shape: int) -> np.ndarray:
        x = rng.standard_normal(shape).astype(np.float32)
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    return unit(dim), unit(dim), unit(k, dim)


def make_call(kind: str, target: str, instr: np.ndarray, state: np.ndarray, cands: np.ndarray, seed: int):
    if kind == "onnxruntime-inference":  # target: the bundle folder; in-process, nothing on the wire
        sess = policy_session(Path(target))
        return lambda i: run_policy(sess, instr, state, cands)
    if kind in ("zmq-echo", "zmq-echo-infer"):
        import zmq

        from edge.protocol import act_embeddings, pack

        s = zmq.Context.instance().socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(target)

        def echo(i: int) -> None:
            s.send(pack(act_embeddings(instr, state, cands, req_id=i)))  # the same payload edge-serve gets
            if not s.poll(10_000):
                raise TimeoutError("echo server did not answer")
            s.recv()

        return echo
    if kind in ("edge-embedding", "edge-text", "edge-text-int8"):
        from edge.client import EdgeClient

        c = EdgeClient(target, timeout=30, retries=0)
        if kind == "edge-embedding":
            return lambda i: c.act_embeddings(instr, state, cands)
        return lambda i: c.act(INSTRUCTION, f"{OBSERVATION} Step {seed}-{i}.", CANDIDATES)
    if kind == "http":
        import http.client

        host, port = target.split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        body = {"instruction": instr.tolist(), "state": state.tolist(), "candidates": cands.tolist()}

        def post(i: int) -> None:
            conn.request("POST", "/act", body=json.dumps(body), headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            if resp.status != 200:
                raise RuntimeError(f"HTTP {resp.status}: {data[:200]!r}")
            json.loads(data)

        return post
    if kind == "websocket":
        from openpi_client.websocket_client_policy import WebsocketClientPolicy

        host, port = target.split(":")
        policy = WebsocketClientPolicy(host=host, port=int(port))
        obs = {"instruction": instr, "state": state, "candidates": cands}
        return lambda i: policy.infer(obs)
    raise ValueError(f"unknown client kind {kind!r}")


# ------------------------------------------------------------------------------------------- measuring


def take_turns(
    calls: dict[str, Callable[[int], Any]], n: int, block: int, warmup: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """``warmup`` untimed calls of every row, then the rows in turn, ``block`` calls at a time, until each has
    ``n``: all rows share the same stretches of a shared machine (load that comes and goes skews no ratio),
    while each row still runs warm, back to back, as a robot's control loop calls its policy. Per row, every
    call's wall seconds and process-CPU seconds. A call with a ``pace_s`` attribute is preceded by that many
    seconds of sleep, not timed (the idle gap a daemon's worker has between a client's requests)."""
    for i in range(warmup):  # warm-up: inference sessions, instruction/candidate LRU, sockets
        for call in calls.values():
            call(i)
    lat: dict[str, list[float]] = {kind: [] for kind in calls}
    cpu: dict[str, list[float]] = {kind: [] for kind in calls}
    i = warmup
    while len(lat[next(iter(calls))]) < n:
        for kind, call in calls.items():
            pace = getattr(call, "pace_s", 0.0)
            for _ in range(min(block, n - len(lat[kind]))):
                if pace:
                    time.sleep(pace)
                c, t = time.process_time(), time.perf_counter()
                call(i)
                lat[kind].append(time.perf_counter() - t)
                cpu[kind].append(time.process_time() - c)
                i += 1
    return lat, cpu


def in_client_process(worker: Callable[..., None], *args: Any, timeout: float) -> Any:
    """``worker(*args, q)`` in one client process of its own; what it put on ``q``: (result, error)."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=worker, args=(*args, q), daemon=True)
    p.start()
    out = q.get(timeout=timeout)
    p.join(timeout=30)
    return out


def interleaved_worker(
    targets: dict[str, str], n: int, warmup: int, dim: int, k: int, block: int, q: Any
) -> None:
    """One client process visiting every row in turn, ``block`` requests at a time (:func:`take_turns`)."""
    try:
        instr, state, cands = make_inputs(dim, k, 0)
        calls = {kind: make_call(kind, target, instr, state, cands, 0) for kind, target in targets.items()}
        q.put((take_turns(calls, n, block, warmup)[0], None))
    except Exception as e:  # reported by the parent
        q.put(({}, f"{type(e).__name__}: {e}"))


def measure_interleaved(
    targets: dict[str, str], n: int, warmup: int, dim: int, k: int, block: int
) -> list[dict[str, Any]]:
    lat, err = in_client_process(interleaved_worker, targets, n, warmup, dim, k, block, timeout=3600)
    if err:
        raise RuntimeError(f"interleaved 1-client run: {err}")
    return [summarize(kind, 1, np.asarray(v), None) for kind, v in lat.items()]


def client_worker(
    kind: str, target: str, n: int, warmup: int, dim: int, k: int, seed: int, barrier: Any, q: Any
) -> None:
    """One client process: warm up, wait for the others, time ``n`` calls; puts (latencies_s, t0, t1)."""
    try:
        instr, state, cands = make_inputs(dim, k, seed)
        call = make_call(kind, target, instr, state, cands, seed)
        for i in range(warmup):
            call(i)
        barrier.wait(timeout=120)
        lat = np.empty(n)
        t0 = time.perf_counter()
        for i in range(n):
            t = time.perf_counter()
            call(warmup + i)
            lat[i] = time.perf_counter() - t
        q.put((kind, lat.tolist(), t0, time.perf_counter(), None))
    except Exception as e:  # reported by the parent
        q.put((kind, [], 0.0, 0.0, f"{type(e).__name__}: {e}"))


def measure(
    kind: str, target: str, clients: int, n_total: int, warmup: int, dim: int, k: int
) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    barrier, q = ctx.Barrier(clients), ctx.Queue()
    per = max(1, n_total // clients)
    procs = [
        ctx.Process(
            target=client_worker, args=(kind, target, per, warmup, dim, k, j, barrier, q), daemon=True
        )
        for j in range(clients)
    ]
    for p in procs:
        p.start()
    results = [q.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    errors = [r[4] for r in results if r[4]]
    if errors:
        raise RuntimeError(f"{kind} x{clients}: {errors[0]}")
    lat = np.concatenate([np.asarray(r[1]) for r in results])
    wall = max(r[3] for r in results) - min(r[2] for r in results)
    return summarize(kind, clients, lat, wall)


def cpp_row(cpp_build: Path, endpoint: str, n: int, k: int, warmup: int) -> dict[str, Any]:
    """The C++ client's edge_bench against the same daemon (1 client)."""
    cmd = [str(cpp_build / "edge_bench"), "--connect", endpoint]
    cmd += ["--n", str(n), "--k", str(k), "--warmup", str(warmup)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise click.ClickException(f"edge_bench failed: {p.stderr}")
    r = json.loads(p.stdout)
    keep = ("n", "p50_us", "p99_us", "mean_us", "rps")
    return {"name": "edge-embedding-cpp", "clients": 1, **{f: r[f] for f in keep}}


def latency_stats(lat_s: Any) -> dict[str, Any]:
    us = np.sort(np.asarray(lat_s)) * 1e6
    return {
        "n": int(us.size),
        "p50_us": float(np.percentile(us, 50)),
        "p99_us": float(np.percentile(us, 99)),
        "mean_us": float(us.mean()),
    }


def summarize(kind: str, clients: int, lat_s: np.ndarray, wall_s: float | None) -> dict[str, Any]:
    us = np.sort(lat_s) * 1e6
    return {
        "name": kind,
        "clients": clients,
        **latency_stats(lat_s),
        "rps": float(us.size / wall_s) if wall_s else float(1e6 / us.mean()),
        "latencies_us": us.tolist(),
    }
