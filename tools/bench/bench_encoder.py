"""Encoder graph variants: latency on one thread and cosine to sentence-transformers on real TWX texts.

Variants of the exported MiniLM encoder (all from the cached fp32 graph of ``policy.export.assemble``):

- ``fp32``: the exported graph (the default bundle encoder);
- ``fp32-fused``: onnxruntime's transformer optimizer (EmbedLayerNormalization, Attention, SkipLayerNorm,
  BiasGelu fusions), fp32;
- ``int8-dynamic``: plain ``quantize_dynamic`` (per-channel int8 MatMul weights, per-tensor uint8
  activations), for comparison;
- ``int8``: the shipped opt-in recipe (``policy.encoders.int8``: SmoothQuant + [CLS]-row split + dynamic int8,
  uint8 weights: exact integer products on every CPU);
- ``int8-u8s8``: the same with int8 weights (the recipe before v2): faster on a VNNI CPU, saturating without
  VNNI (``tools/bench/bench_int8_cpus.py``).

Texts: TWC and CookingWorld *dev*-split episodes collected here (the int8 calibration texts come from the
train splits): composed state texts, candidate actions, instructions. Each text runs alone (no padding), as
edge-serve runs an observation. Latency: p50 wall and CPU per run for the serving benchmark's 47-token
observation and a 150-token TWC state, 1 onnxruntime thread, spinning off.

    python -m tools.bench.bench_encoder [--out tools/results/bench_encoder.json] [--states 200]
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

from tools.bench.benchlib import ROOT, write_results

BENCH_OBS = (  # tools/bench/bench_serve.py's observation with its step suffix: 47 tokens
    "Inventory: empty\nRecent actions: open fridge, look around\nRoom: You are in the kitchen. "
    "In one part of the room you see a fridge that is open. There is also a dining table. Step 0-1."
)


def collect_texts(tmp: Path, n_states: int, seed: int) -> dict[str, list[str]]:
    from models.trajectory import read_trajectories

    rng = random.Random(seed)
    out: dict[str, list[str]] = {}
    for env, episodes in (("twx:twc", 40), ("twx:cookingworld", 10)):
        path = tmp / f"{env.split(':')[1]}.jsonl.gz"
        cmd = [sys.executable, "-m", "models.cli", "collect", "--env", env, "--split", "dev"]
        cmd += ["--episodes", str(episodes), "--behaviour", "gold-noise=0.5,random=0.5", "--noise", "0.3"]
        cmd += ["--seed", str(seed), "--out", str(path)]
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=600)
        states, cands, instr = set(), set(), set()
        for t in read_trajectories(path):
            instr.add(t.instruction)
            for s in t.steps:
                states.add(s.observation)
                cands.update(s.candidates or [])
        name = env.split(":")[1]
        k = n_states if name == "twc" else n_states // 3
        out[f"{name}_state"] = rng.sample(sorted(states), min(k, len(states)))
        out[f"{name}_candidate"] = rng.sample(sorted(cands), min(k, len(cands)))
        out[f"{name}_instruction"] = sorted(instr)
    return out


def session(path: Path) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def feeds_for(sess: Any, tok: Any, text: str) -> dict[str, np.ndarray]:
    ids = np.array([tok.encode(text).ids], dtype=np.int64)
    f = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    names = {i.name for i in sess.get_inputs()}
    return {k: v for k, v in f.items() if k in names}


def latency(sess: Any, feeds: dict[str, np.ndarray], n: int) -> dict[str, float]:
    for _ in range(5):
        sess.run(None, feeds)
    wall = []
    c0 = time.process_time()
    for _ in range(n):
        t = time.perf_counter()
        sess.run(None, feeds)
        wall.append(time.perf_counter() - t)
    return {"p50_ms": 1000 * float(np.median(wall)), "cpu_ms": 1000 * (time.process_time() - c0) / n}


def build_variants(src: Path, tok_json: Path, out: Path) -> dict[str, Path]:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    from policy.encoders.int8 import quantize_encoder

    v = {"fp32": src}
    fused = optimizer.optimize_model(str(src), model_type="bert", num_heads=12, hidden_size=384, opt_level=0)
    fused.save_model_to_file(str(out / "fused.onnx"))
    v["fp32-fused"] = out / "fused.onnx"
    quantize_dynamic(
        str(src),
        str(out / "dyn.onnx"),
        per_channel=True,
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul"],
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    v["int8-dynamic"] = out / "dyn.onnx"
    quantize_encoder(src, out / "int8.onnx", tok_json)
    v["int8"] = out / "int8.onnx"
    quantize_encoder(src, out / "int8-u8s8.onnx", tok_json, signed_weights=True)
    v["int8-u8s8"] = out / "int8-u8s8.onnx"
    return v


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=ROOT / "tools" / "results" / "bench_encoder.json",
    show_default=True,
    help="JSON results file.",
)
@click.option("--states", type=click.IntRange(10, 2000), default=200, show_default=True, help="TWC states.")
@click.option("--n", type=click.IntRange(5, 10_000), default=60, show_default=True, help="Timed runs.")
@click.option("--seed", default=3, show_default=True, help="Collection and sampling seed.")
def main(out: Path, states: int, n: int, seed: int) -> None:
    """Latency and cosine of encoder graph variants (fp32, fused, int8) on real TWX texts, 1 thread."""
    import logging

    from tokenizers import Tokenizer

    from models.encoder import load_sentence_encoder, resolve_encoder
    from models.progress import progress
    from policy.export.assemble import cached_encoder_onnx

    logging.disable(logging.WARNING)  # the quantiser's pre-processing advice
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    enc = resolve_encoder()
    src, tok_json, _, _ = cached_encoder_onnx(enc)
    tok = Tokenizer.from_file(str(tok_json))
    tok.no_padding()
    with tempfile.TemporaryDirectory(prefix="bench-encoder-") as tmp:
        texts = collect_texts(Path(tmp), states, seed)
        st = load_sentence_encoder(enc)
        ref = {k: st.encode(v, convert_to_numpy=True, normalize_embeddings=True) for k, v in texts.items()}
        variants = build_variants(src, tok_json, Path(tmp))
        long_state = min(texts["twc_state"], key=lambda t: abs(len(tok.encode(t).ids) - 150))
        rows = []
        with progress(total=len(variants), desc="variants") as bar:
            for name, path in variants.items():
                sess = session(path)
                cos = []
                for k, v in texts.items():
                    got = np.stack([sess.run(None, feeds_for(sess, tok, t))[0][0] for t in v])
                    cos.append(np.sum(got * ref[k], axis=1) / np.linalg.norm(got, axis=1))
                c = np.concatenate(cos)
                row = {
                    "variant": name,
                    "mb": round(path.stat().st_size / 1e6, 1),
                    "cos_min": float(c.min()),
                    "cos_p1": float(np.percentile(c, 1)),
                    "cos_mean": float(c.mean()),
                }
                for label, text in (("obs47", BENCH_OBS), ("state150", long_state)):
                    f = feeds_for(sess, tok, text)
                    row[f"tokens_{label}"] = int(f["input_ids"].shape[1])
                    row.update({f"{k}_{label}": round(v, 3) for k, v in latency(sess, f, n).items()})
                rows.append(row)
                bar.update()
    base = rows[0]
    for r in rows:
        r["speedup_cpu_obs47"] = round(base["cpu_ms_obs47"] / r["cpu_ms_obs47"], 2)
        r["speedup_cpu_state150"] = round(base["cpu_ms_state150"] / r["cpu_ms_state150"], 2)
    result = {
        "command": "python -m tools.bench.bench_encoder " + " ".join(sys.argv[1:]),
        "texts": {k: len(v) for k, v in texts.items()},
        "rows": rows,
    }
    write_results(out, result, indent=1)
    cols = ("variant", "mb", "cos_min", "cos_mean", "p50_ms_obs47", "cpu_ms_obs47", "cpu_ms_state150")
    click.echo("  ".join(f"{c:>14}" for c in cols))
    for r in rows:
        click.echo("  ".join(f"{r[c]:>14.5f}" if isinstance(r[c], float) else f"{r[c]!s:>14}" for c in cols))
    click.echo(f"wrote {out}")


if __name__ == "__main__":
    main()
