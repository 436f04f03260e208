"""The servers of the serving benchmarks (:mod:`tools.bench.bench_serve`, :mod:`tools.bench.bench_text`), each
in its own process on loopback with one onnxruntime thread and thread spinning off: the pyzmq floor
(echo, echo + inference), the FastAPI + uvicorn HTTP and the openpi-style websocket baselines serving the
bundle's policy session, and edge-serve itself; how they are started and stopped."""

from __future__ import annotations

import multiprocessing as mp
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tools.bench.benchlib import ROOT

ONE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "EDGEJUDGE_THREADS": "1", "MKL_NUM_THREADS": "1"}


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


# ------------------------------------------------------------------------------------------------ servers


def _router(q: Any) -> tuple[Any, Any]:
    """A ROUTER bound to a free loopback port (its endpoint put on ``q``) and a poller on it."""
    import zmq

    s = zmq.Context().socket(zmq.ROUTER)
    s.setsockopt(zmq.LINGER, 0)
    s.bind("tcp://127.0.0.1:*")
    q.put(s.getsockopt_string(zmq.LAST_ENDPOINT))
    poller = zmq.Poller()
    poller.register(s, zmq.POLLIN)
    return s, poller


def _serve_router(q: Any, reply: Callable[[list[bytes]], list[bytes]]) -> None:
    """The poll loop of edge-serve's shape: every request's frames answered by ``reply(frames)``."""
    import zmq

    s, poller = _router(q)
    while True:
        if poller.poll(1000):
            while True:
                try:
                    frames = s.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                s.send_multipart(reply(frames))


def serve_echo(q: Any) -> None:
    """Floor: a ROUTER that sends every payload straight back (same poll loop shape as edge-serve)."""
    _serve_router(q, lambda frames: frames)


def serve_echo_infer(bundle: str, q: Any) -> None:
    """Diagnostic: the echo loop plus the policy inference and nothing else (no validation, no metrics): the
    least any ZeroMQ server running this model in Python can cost; edge-serve's own overhead is the rest."""
    import msgpack

    sess = policy_session(Path(bundle))

    def arr(m: dict) -> np.ndarray:
        return np.frombuffer(m["data"], np.float32).reshape(m["shape"])

    def reply(frames: list[bytes]) -> list[bytes]:
        ident, payload = frames
        r = msgpack.unpackb(payload)
        c = arr(r["candidates_emb"])
        scores = run_policy(sess, arr(r["instruction_emb"]), arr(r["observation_emb"]), c)
        answer = {"v": 1, "ok": True, "id": r.get("id"), "index": int(scores.argmax())}
        answer["scores"] = scores.tolist()
        return [ident, msgpack.packb(answer)]

    _serve_router(q, reply)


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

    import websockets
    import websockets.asyncio.server as ws_server
    from openpi_client import msgpack_numpy

    sess = policy_session(Path(bundle))
    packer = msgpack_numpy.Packer()

    async def handler(ws: Any) -> None:
        await ws.send(packer.pack({"policy": "edgejudge scorer", "dim": int(sess.get_inputs()[0].shape[1])}))
        while True:
            try:
                obs = msgpack_numpy.unpackb(await ws.recv())
            except websockets.ConnectionClosed:
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


# ------------------------------------------------------------------------------------------- processes


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


def start_edge_serve(servers: list[Proc], bundle: Path) -> str:
    """edge-serve on ``bundle`` (one thread), added to ``servers``; its endpoint."""
    from edge.launch import start_daemon

    p, endpoint = start_daemon(bundle, threads=1, extra=[], cwd=ROOT)
    servers.append(Proc(p))
    return endpoint


def _spawn(servers: list[Proc], serve: Callable[..., None], *args: Any) -> None:
    p = mp.get_context("spawn").Process(target=serve, args=args, daemon=True)
    p.start()
    servers.append(Proc(p))


def start_zmq_server(servers: list[Proc], serve: Callable[..., None], *args: Any, timeout: float) -> str:
    """``serve(*args, q)`` (:func:`serve_echo`, :func:`serve_echo_infer`) in its own process, added to
    ``servers``; the endpoint it bound."""
    q = mp.get_context("spawn").Queue()
    _spawn(servers, serve, *args, q)
    return q.get(timeout=timeout)


def start_port_server(servers: list[Proc], serve: Callable[[str, int], None], bundle: Path) -> str:
    """``serve(bundle, port)`` (:func:`serve_http`, :func:`serve_websocket`) on a free loopback port in a
    process of its own, added to ``servers``; ``host:port`` once it accepts connections."""
    port = free_port()
    _spawn(servers, serve, str(bundle), port)
    wait_port(port)
    return f"127.0.0.1:{port}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"no server on 127.0.0.1:{port} after {timeout} s")
