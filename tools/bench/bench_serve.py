"""Serving benchmark: edge-serve against its floor and against HTTP and websocket servers, one bundle.

Every server runs in its own process on loopback with one onnxruntime thread and thread spinning off;
clients are their own processes. With 1 client, one client process visits the rows in turn, ``--block``
requests each, so all rows share the same stretches of a shared machine (their ratios are fair); with 8
clients, each row runs on its own, 8 processes started together behind a barrier. Rows:

- floor: a raw pyzmq DEALER/ROUTER echo of the very payload edge-serve gets (embedding input), and raw
  onnxruntime inference of the bundle's policy.onnx on it (in the client process); floor = echo p50 +
  inference p50;
- diagnostic: ``zmq-echo-infer``, the echo loop plus the policy inference and nothing else (1 client): the
  least a Python ZeroMQ server running this model costs end to end (the sum-of-parts floor misses the
  wake-ups of a client that sleeps through the inference);
- edge-serve, embedding input (``act`` with float32 arrays) and text input (``act`` with texts; the daemon
  runs the encoder), through :class:`edge.client.EdgeClient`; text input also on the same bundle with the
  opt-in int8 encoder (``edge-text-int8``, a second daemon; ``--int8-bundle`` or exported here);
- FastAPI + uvicorn HTTP JSON server (keep-alive http.client) serving the same policy session on embeddings;
- a websocket msgpack server in openpi's style (metadata first, msgpack-numpy arrays, server timing) with the
  PyPI ``openpi-client`` ``WebsocketClientPolicy`` as its client, serving the same policy session;
- optionally the C++ client's ``edge_bench`` (``--cpp-build DIR``).

    python -m tools.bench.bench_serve --bundle BUNDLE --out runs/bench_serve [--json]

Without ``--bundle`` a random-init bundle is exported once with ``edgejudge export --random-init``. Writes
``results.json`` and ``latency_cdf.png`` into ``--out``. Needs ``make bench-deps`` (fastapi, uvicorn,
websockets, openpi-client).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

from tools.bench.benchlib import ROOT, load_average, write_results

ONE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "EDGEJUDGE_THREADS": "1", "MKL_NUM_THREADS": "1"}
INSTRUCTION = "Your task is to pick up objects, then place them in their usual locations in the environment."
OBSERVATION = (
    "Inventory: empty\nRecent actions: open fridge, look around\nRoom: You are in the kitchen. "
    "In one part of the room you see a fridge that is open. There is also a dining table."
)
CANDIDATES = [
    "take apple",
    "open fridge",
    "close fridge",
    "look around",
    "put apple in fridge",
    "take plate",
    "go to the living room",
    "inventory",
]


# ------------------------------------------------------------------------------------------------ inputs


def make_inputs(dim: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)

    def unit(*shape: int) -> np.ndarray:
        x = rng.standard_normal(shape).astype(np.float32)
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    return unit(dim), unit(dim), unit(k, dim)


def policy_session(bundle: Path) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return ort.InferenceSession(
        str(bundle / "policy.onnx"), sess_options=so, providers=["CPUExecutionProvider"]
    )


def run_policy(sess: Any, instr: np.ndarray, state: np.ndarray, cands: np.ndarray) -> np.ndarray:
    k = cands.shape[0]
    (scores,) = sess.run(
        ["scores"],
        {
            "instruction": instr[None].astype(np.float32),
            "state": state[None].astype(np.float32),
            "candidates": cands[None].astype(np.float32),
            "mask": np.ones((1, k), dtype=bool),
        },
    )
    return scores[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------------------------------ servers


def serve_echo(q: Any) -> None:
    """Floor: a ROUTER that sends every payload straight back (same poll loop shape as edge-serve)."""
    import zmq

    ctx = zmq.Context()
    s = ctx.socket(zmq.ROUTER)
    s.setsockopt(zmq.LINGER, 0)
    s.bind("tcp://127.0.0.1:*")
    q.put(s.getsockopt_string(zmq.LAST_ENDPOINT))
    poller = zmq.Poller()
    poller.register(s, zmq.POLLIN)
    while True:
        if poller.poll(1000):
            while True:
                try:
                    frames = s.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                s.send_multipart(frames)


def serve_echo_infer(bundle: str, q: Any) -> None:
    """Diagnostic: the echo loop plus the policy inference and nothing else (no validation, no metrics): the
    least any ZeroMQ server running this model in Python can cost; edge-serve's own overhead is the rest."""
    import msgpack
    import zmq

    sess = policy_session(Path(bundle))
    ctx = zmq.Context()
    s = ctx.socket(zmq.ROUTER)
    s.setsockopt(zmq.LINGER, 0)
    s.bind("tcp://127.0.0.1:*")
    q.put(s.getsockopt_string(zmq.LAST_ENDPOINT))
    poller = zmq.Poller()
    poller.register(s, zmq.POLLIN)

    def arr(m: dict) -> np.ndarray:
        return np.frombuffer(m["data"], np.float32).reshape(m["shape"])

    while True:
        if poller.poll(1000):
            while True:
                try:
                    ident, payload = s.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                r = msgpack.unpackb(payload)
                c = arr(r["candidates_emb"])
                scores = run_policy(sess, arr(r["instruction_emb"]), arr(r["observation_emb"]), c)
                reply = {"v": 1, "ok": True, "id": r.get("id"), "index": int(scores.argmax())}
                reply["scores"] = scores.tolist()
                s.send_multipart([ident, msgpack.packb(reply)])


def serve_http(bundle: str, port: int) -> None:
    """FastAPI + uvicorn: JSON in (float lists), JSON out, the same policy session."""
    import uvicorn
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    sess = policy_session(Path(bundle))
    app = FastAPI()

    async def act(request: Any) -> JSONResponse:  # a plain Starlette route: no pydantic in the way
        body = await request.json()
        scores = run_policy(
            sess,
            np.asarray(body["instruction"], np.float32),
            np.asarray(body["state"], np.float32),
            np.asarray(body["candidates"], np.float32),
        )
        return JSONResponse({"index": int(np.argmax(scores)), "scores": scores.tolist()})

    app.router.add_route("/act", act, methods=["POST"])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def serve_websocket(bundle: str, port: int) -> None:
    """openpi-style websocket server: metadata first, then msgpack-numpy requests/replies, server timing."""
    import asyncio

    import websockets.asyncio.server as ws_server
    from openpi_client import msgpack_numpy

    sess = policy_session(Path(bundle))
    packer = msgpack_numpy.Packer()

    async def handler(ws: Any) -> None:
        await ws.send(packer.pack({"policy": "edgejudge scorer", "dim": int(sess.get_inputs()[0].shape[1])}))
        while True:
            try:
                obs = msgpack_numpy.unpackb(await ws.recv())
            except websockets_closed():
                return
            t = time.monotonic()
            scores = run_policy(sess, obs["instruction"], obs["state"], obs["candidates"])
            await ws.send(
                packer.pack(
                    {
                        "index": int(np.argmax(scores)),
                        "scores": scores,
                        "server_timing": {"infer_ms": (time.monotonic() - t) * 1000},
                    }
                )
            )

    async def main() -> None:
        async with ws_server.serve(handler, "127.0.0.1", port, compression=None, max_size=None) as server:
            await server.serve_forever()

    asyncio.run(main())


def websockets_closed() -> type[BaseException]:
    import websockets

    return websockets.ConnectionClosed


# ------------------------------------------------------------------------------------------------ clients


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


def interleaved_worker(
    targets: dict[str, str], n: int, warmup: int, dim: int, k: int, block: int, q: Any
) -> None:
    """One client process visiting every row in turn, ``block`` requests at a time: all 1-client rows share
    the same stretches of a shared machine (load that comes and goes skews no ratio), while each row still
    runs warm, back to back, as a robot's control loop calls its policy."""
    try:
        instr, state, cands = make_inputs(dim, k, 0)
        calls = {kind: make_call(kind, target, instr, state, cands, 0) for kind, target in targets.items()}
        for i in range(warmup):
            for call in calls.values():
                call(i)
        lat: dict[str, list[float]] = {kind: [] for kind in calls}
        i = warmup
        while len(lat[next(iter(calls))]) < n:
            for kind, call in calls.items():
                for _ in range(min(block, n - len(lat[kind]))):
                    t = time.perf_counter()
                    call(i)
                    lat[kind].append(time.perf_counter() - t)
                    i += 1
        q.put((lat, None))
    except Exception as e:  # reported by the parent
        q.put(({}, f"{type(e).__name__}: {e}"))


def measure_interleaved(
    targets: dict[str, str], n: int, warmup: int, dim: int, k: int, block: int
) -> list[dict[str, Any]]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=interleaved_worker, args=(targets, n, warmup, dim, k, block, q), daemon=True)
    p.start()
    lat, err = q.get(timeout=3600)
    p.join(timeout=30)
    if err:
        raise RuntimeError(f"interleaved 1-client run: {err}")
    return [summarize(kind, 1, np.asarray(v), None) for kind, v in lat.items()]


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
    cmd = [
        str(cpp_build / "edge_bench"),
        "--connect",
        endpoint,
        "--n",
        str(n),
        "--k",
        str(k),
        "--warmup",
        str(warmup),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise click.ClickException(f"edge_bench failed: {p.stderr}")
    r = json.loads(p.stdout)
    return {
        "name": "edge-embedding-cpp",
        "clients": 1,
        "n": r["n"],
        "p50_us": r["p50_us"],
        "p99_us": r["p99_us"],
        "mean_us": r["mean_us"],
        "rps": r["rps"],
    }


def summarize(kind: str, clients: int, lat_s: np.ndarray, wall_s: float | None) -> dict[str, Any]:
    us = np.sort(lat_s) * 1e6
    return {
        "name": kind,
        "clients": clients,
        "n": int(us.size),
        "p50_us": float(np.percentile(us, 50)),
        "p99_us": float(np.percentile(us, 99)),
        "mean_us": float(us.mean()),
        "rps": float(us.size / wall_s) if wall_s else float(1e6 / us.mean()),
        "latencies_us": us.tolist(),
    }


# ---------------------------------------------------------------------------------------------- orchestration


class Proc:
    """A server process (subprocess.Popen or multiprocessing.Process) stopped on exit."""

    def __init__(self, p: Any):
        self.p = p

    def stop(self) -> None:
        if isinstance(self.p, subprocess.Popen):
            if self.p.poll() is None:
                self.p.terminate()
                try:
                    self.p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.p.kill()
                    self.p.wait(timeout=10)
        else:
            if self.p.is_alive():
                self.p.terminate()
                self.p.join(timeout=20)


def start_edge_serve(bundle: Path, extra: list[str]) -> tuple[Proc, str]:
    from edge.launch import start_daemon

    p, endpoint = start_daemon(bundle, threads=1, extra=extra, cwd=ROOT)
    return Proc(p), endpoint


def wait_port(port: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"no server on 127.0.0.1:{port} after {timeout} s")


def export_bundle(out: Path, encoder_precision: str = "fp32") -> Path:
    """A random-init bundle (seed 0): ``edgejudge export --random-init``, or with the int8 encoder through
    ``policy.export.export_random_bundle(encoder_precision="int8")`` (same scorer weights)."""
    if encoder_precision == "fp32":
        cmd = [sys.executable, "-m", "models.cli", "export", "--random-init", "--out", str(out)]
    else:
        code = (
            "import sys; from policy.export import export_random_bundle; "
            "export_random_bundle(sys.argv[1], encoder_precision=sys.argv[2])"
        )
        cmd = [sys.executable, "-c", code, str(out), encoder_precision]
    proc = subprocess.run(
        cmd,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, **ONE_THREAD_ENV, "HF_HUB_OFFLINE": "1"},
    )
    if proc.returncode != 0:
        raise click.ClickException(
            f"random-init export ({encoder_precision} encoder) failed:\n{proc.stderr[-2000:]}"
        )
    return out


COLORS = {
    "onnxruntime-inference": "tab:gray",
    "zmq-echo": "tab:blue",
    "zmq-echo-infer": "tab:cyan",
    "edge-embedding": "tab:green",
    "edge-text": "tab:olive",
    "edge-text-int8": "tab:orange",
    "http": "tab:red",
    "websocket": "tab:purple",
}


def plot_cdf(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = sorted({r["clients"] for r in rows if r.get("latencies_us")})
    fig, axes = plt.subplots(1, len(levels), figsize=(6 * len(levels), 4.5), sharey=True, squeeze=False)
    for ax, clients in zip(axes[0], levels, strict=True):
        for r in rows:
            if r["clients"] != clients or not r.get("latencies_us"):
                continue
            us = np.asarray(r["latencies_us"])
            color = COLORS.get(r["name"])
            ax.plot(
                us / 1000,
                np.arange(1, us.size + 1) / us.size,
                label=f"{r['name']} (p50 {r['p50_us'] / 1000:.2f} ms)",
                color=color,
            )
        ax.set_xscale("log")
        ax.set_xlabel("round-trip latency (ms, log)")
        ax.set_title(f"{clients} concurrent client{'s' if clients > 1 else ''}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[0][0].set_ylabel("fraction of requests")
    fig.suptitle("edge-serve vs floor, HTTP (FastAPI) and websocket (openpi-style), loopback")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--bundle",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Bundle to serve (default: export a random-init bundle once).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs/bench_serve"),
    show_default=True,
    help="Folder for results.json and latency_cdf.png.",
)
@click.option(
    "--n",
    "n",
    type=click.IntRange(10, 1_000_000),
    default=2000,
    show_default=True,
    help="Timed requests per embedding-input row (split over the clients).",
)
@click.option(
    "--n-text",
    type=click.IntRange(10, 1_000_000),
    default=400,
    show_default=True,
    help="Timed requests per text-input row.",
)
@click.option(
    "--warmup",
    type=click.IntRange(0, 10_000),
    default=50,
    show_default=True,
    help="Untimed requests per client first.",
)
@click.option(
    "--k", type=click.IntRange(1, 256), default=8, show_default=True, help="Candidates per request."
)
@click.option(
    "--block",
    type=click.IntRange(1, 100_000),
    default=50,
    show_default=True,
    help="1 client: requests per row before moving on to the next row (rows take turns).",
)
@click.option("--clients", "client_counts", default="1,8", show_default=True, help="Concurrency levels.")
@click.option(
    "--int8-bundle",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Bundle with the int8 encoder for the edge-text-int8 rows (default: exported here without --bundle; "
    "with --bundle and no --int8-bundle the rows are left out).",
)
@click.option(
    "--skip", default="", help="Comma-separated rows to leave out: http, websocket, text, int8, cpp."
)
@click.option(
    "--cpp-build",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="CMake build folder with edge_bench: adds the C++ client row (1 client).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary (without raw latencies) as JSON.")
def main(
    bundle: Path | None,
    out_dir: Path,
    n: int,
    n_text: int,
    warmup: int,
    k: int,
    block: int,
    client_counts: str,
    skip: str,
    int8_bundle: Path | None,
    cpp_build: Path | None,
    as_json: bool,
) -> None:
    """Measure edge-serve against its floor and against HTTP and websocket servers on loopback."""
    from labeler.progress import progress
    from models.bundle import load_manifest

    try:
        counts = [int(c) for c in client_counts.split(",") if c.strip()]
    except ValueError:
        raise click.BadParameter(f"{client_counts!r}: expected e.g. 1,8", param_hint="--clients") from None
    skipped = {s.strip() for s in skip.split(",") if s.strip()}
    unknown = skipped - {"http", "websocket", "text", "int8", "cpp"}
    if unknown:
        raise click.BadParameter(f"unknown rows {sorted(unknown)}", param_hint="--skip")
    load_start = load_average()  # the machine is shared: the load says how far to trust absolute numbers
    tmp = None
    if bundle is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-serve-")
        click.echo("exporting a random-init bundle (edgejudge export --random-init) ...", err=True)
        bundle = export_bundle(Path(tmp.name) / "bundle")
        if int8_bundle is None and not {"text", "int8"} & skipped:
            click.echo("exporting the same scorer with the int8 encoder ...", err=True)
            int8_bundle = export_bundle(Path(tmp.name) / "bundle-int8", "int8")
    if {"text", "int8"} & skipped:
        int8_bundle = None
    manifest = load_manifest(bundle)
    dim = manifest.embedding_dim
    out_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    servers: list[Proc] = []
    ctx = mp.get_context("spawn")
    plan = ["start servers", "1 client", "concurrent clients"]
    try:
        with progress(total=len(plan), desc="bench_serve") as bar:
            # every server up first
            q = ctx.Queue()
            echo = ctx.Process(target=serve_echo, args=(q,), daemon=True)
            echo.start()
            servers.append(Proc(echo))
            targets = {"onnxruntime-inference": str(bundle), "zmq-echo": q.get(timeout=60)}
            q2 = ctx.Queue()
            echo_infer = ctx.Process(target=serve_echo_infer, args=(str(bundle), q2), daemon=True)
            echo_infer.start()
            servers.append(Proc(echo_infer))
            targets["zmq-echo-infer"] = q2.get(timeout=120)
            proc, ep = start_edge_serve(bundle, [])
            servers.append(proc)
            targets["edge-embedding"] = ep
            ep8 = None
            if int8_bundle is not None:
                proc8, ep8 = start_edge_serve(int8_bundle, [])
                servers.append(proc8)
            if "http" not in skipped:
                port = free_port()
                hp = ctx.Process(target=serve_http, args=(str(bundle), port), daemon=True)
                hp.start()
                servers.append(Proc(hp))
                wait_port(port)
                targets["http"] = f"127.0.0.1:{port}"
            if "websocket" not in skipped:
                port = free_port()
                wp = ctx.Process(target=serve_websocket, args=(str(bundle), port), daemon=True)
                wp.start()
                servers.append(Proc(wp))
                wait_port(port)
                targets["websocket"] = f"127.0.0.1:{port}"
            bar.update()
            # 1 client: all rows interleaved request by request in one client process
            if 1 in counts:
                rows.extend(measure_interleaved(targets, n, warmup, dim, k, block))
                if "text" not in skipped:
                    rows.append(measure("edge-text", ep, 1, n_text, min(warmup, 20), dim, k))
                if ep8 is not None:
                    rows.append(measure("edge-text-int8", ep8, 1, n_text, min(warmup, 20), dim, k))
                if cpp_build is not None and "cpp" not in skipped:
                    rows.append(cpp_row(cpp_build, ep, n, k, warmup))
            bar.update()
            # more clients: one row at a time (every client of a row hits the same server)
            for c in (c for c in counts if c > 1):
                for kind in ("zmq-echo", "edge-embedding", "http", "websocket"):
                    if kind in targets:
                        rows.append(measure(kind, targets[kind], c, n, warmup, dim, k))
                if "text" not in skipped:
                    rows.append(measure("edge-text", ep, c, n_text, min(warmup, 20), dim, k))
                if ep8 is not None:
                    rows.append(measure("edge-text-int8", ep8, c, n_text, min(warmup, 20), dim, k))
            bar.update()
    finally:
        for s in reversed(servers):
            s.stop()
        if tmp is not None:
            tmp.cleanup()
    summary = summarize_targets(rows)
    result = {
        "load_average_start": load_start,
        "bundle": {"path": str(bundle), "model": manifest.model_sha256, "embedding_dim": dim, "k": k},
        "command": "python -m tools.bench.bench_serve " + " ".join(sys.argv[1:]),
        "rows": rows,
        "targets": summary,
    }
    result = write_results(out_dir / "results.json", result, indent=1)
    plot_cdf(rows, out_dir / "latency_cdf.png")
    slim = {**result, "rows": [{k2: v for k2, v in r.items() if k2 != "latencies_us"} for r in rows]}
    if as_json:
        click.echo(json.dumps(slim, indent=1))
    else:
        click.echo(table(slim["rows"]))
        click.echo(json.dumps(summary, indent=1))
        click.echo(f"wrote {out_dir / 'results.json'} and {out_dir / 'latency_cdf.png'}")


def row(rows: list[dict[str, Any]], name: str, clients: int) -> dict[str, Any] | None:
    return next((r for r in rows if r["name"] == name and r["clients"] == clients), None)


def summarize_targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The headline ratios (edge-serve against its floor, HTTP and websocket), measured in this run."""
    out: dict[str, Any] = {}
    inf, echo, emb = (
        row(rows, "onnxruntime-inference", 1),
        row(rows, "zmq-echo", 1),
        row(rows, "edge-embedding", 1),
    )
    if inf and echo and emb:
        floor = inf["p50_us"] + echo["p50_us"]
        out["floor_p50_us"] = floor
        out["embedding_p50_over_floor"] = emb["p50_us"] / floor
        out["embedding_p50_over_floor_ok (<= 1.3)"] = emb["p50_us"] / floor <= 1.3
        out["embedding_p99_us"] = emb["p99_us"]
        out["embedding_p99_ok (<= 1000 us)"] = emb["p99_us"] <= 1000
    echo_infer = row(rows, "zmq-echo-infer", 1)
    if echo_infer and emb:
        out["echo_infer_p50_us"] = echo_infer["p50_us"]
        out["embedding_p50_over_echo_infer_p50"] = emb["p50_us"] / echo_infer["p50_us"]
    text = row(rows, "edge-text", 1)
    if text:
        out["text_p50_us"] = text["p50_us"]
        out["text_p50_ok (<= 5000 us)"] = text["p50_us"] <= 5000
    text8 = row(rows, "edge-text-int8", 1)
    if text8:
        out["text_int8_p50_us"] = text8["p50_us"]
        out["text_int8_p50_ok (<= 5000 us; opt-in encoder, cosine < 0.999)"] = text8["p50_us"] <= 5000
        if text:
            out["text_fp32_p50_over_int8_p50"] = text["p50_us"] / text8["p50_us"]
    for other in ("http", "websocket"):
        o = row(rows, other, 1)
        if o and emb:
            out[f"{other}_p50_over_edge_embedding_p50"] = o["p50_us"] / emb["p50_us"]
            out[f"{other}_ratio_ok (>= 10)"] = o["p50_us"] / emb["p50_us"] >= 10
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'row':<24} {'clients':>7} {'n':>6} {'p50 us':>10} {'p99 us':>10} {'req/s':>9}"]
    for r in rows:
        lines.append(
            f"{r['name']:<24} {r['clients']:>7} {r['n']:>6} {r['p50_us']:>10.1f} {r['p99_us']:>10.1f} "
            f"{r['rps']:>9.0f}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
