"""Does an int8 encoder give the same embeddings on another CPU? The int8 MiniLM graphs, run natively and
under ``qemu-x86_64 -cpu Haswell`` (user-mode emulation of an x86-64 CPU with AVX2 and FMA but no AVX-512 and
no VNNI: onnxruntime picks its AVX2 integer kernels there, as on an AVX2-only robot).

Three graphs: the fp32 export (the baseline: its float kernels differ by instruction set too), and two of the
int8 recipe (``policy.encoders.int8``): the shipped one, uint8 weights (U8U8), and the one with int8 weights
(U8S8, the recipe before v2), whose products saturate in AVX2's ``VPMADDUBSW``. For each, per CPU: min and
mean cosine to sentence-transformers over real TextWorldExpress dev texts plus the export's parity texts, and
how far the emulated embeddings are from the native ones.

    python -m tools.bench.bench_int8_cpus [--out tools/results/bench_int8_cpus.json] [--states 20]

Needs ``qemu-x86_64`` (Debian: ``apt-get install qemu-user``); emulation is slow (about 2 s a text).
ARM is not emulated here: its integer kernels (NEON ``UMULL``/``UADALP``, ``UDOT``/``SDOT``) accumulate into
32 bits without saturating, as VNNI does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click
import numpy as np

from tools.bench.benchlib import ROOT, write_results

EMULATED_CPU = "Haswell"
FP32_EMULATED = 8


def embed_texts(graph: Path, tokenizer: Path, texts: list[str]) -> np.ndarray:
    """One text per run, one thread: as edge.runtime runs an int8 encoder."""
    from tokenizers import Tokenizer

    from tools.bench.bench_encoder import feeds_for, session

    sess = session(graph)
    tok = Tokenizer.from_file(str(tokenizer))
    tok.no_padding()
    tok.enable_truncation(256)
    return np.stack([sess.run(["embeddings"], feeds_for(sess, tok, t))[0][0] for t in texts])


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((x for x in text.splitlines() if x.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=ROOT / "tools" / "results" / "bench_int8_cpus.json",
    show_default=True,
    help="JSON results file.",
)
@click.option("--states", type=click.IntRange(4, 500), default=20, show_default=True, help="TWC dev states.")
@click.option("--seed", default=3, show_default=True, help="Collection and sampling seed.")
@click.pass_context
def main(ctx: click.Context, out: Path, states: int, seed: int) -> None:
    """Cosine of the int8 encoder graphs natively and on an emulated AVX2-only CPU."""
    if ctx.invoked_subcommand is not None:
        return
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        raise click.ClickException("qemu-x86_64 not found: apt-get install qemu-user")
    import logging

    from models.encoder import load_sentence_encoder, resolve_encoder
    from policy.encoders.int8 import integer_kernels, quantize_encoder
    from policy.encoders.minilm_graph import cached_encoder_onnx
    from policy.encoders.onnx_common import PARITY_TEXTS
    from tools.bench.bench_encoder import collect_texts

    logging.disable(logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    enc = resolve_encoder()
    src, tok_json, _, _ = cached_encoder_onnx(enc)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-int8-cpus-") as tmp_name:
        tmp = Path(tmp_name)
        groups = collect_texts(tmp, states, seed)
        texts = [*PARITY_TEXTS, " ".join(PARITY_TEXTS[1:] * 12), *(t for v in groups.values() for t in v)]
        ref = load_sentence_encoder(enc).encode(texts, convert_to_numpy=True, normalize_embeddings=True)
        graphs = {"fp32 (default, the baseline)": src}
        for name, signed in (("int8 u8u8 (shipped)", False), ("int8 u8s8 (before v2)", True)):
            graphs[name] = tmp / f"{'s' if signed else 'u'}8.onnx"
            quantize_encoder(src, graphs[name], tok_json, signed_weights=signed)
        for name, graph in graphs.items():
            got = {}
            # qemu emulates float vector instructions in software (~30x slower than integer ones): the
            # fp32 graph runs on the first FP32_EMULATED texts there
            n = FP32_EMULATED if graph == src else len(texts)
            (tmp / f"texts-{n}.json").write_text(json.dumps(texts[:n]))
            for cpu, prefix in (("native", []), (f"qemu -cpu {EMULATED_CPU}", [qemu, "-cpu", EMULATED_CPU])):
                npy = tmp / f"{graph.stem}-{len(got)}.npy"
                t0 = time.perf_counter()
                cmd = [*prefix, sys.executable, "-m", "tools.bench.bench_int8_cpus", "embed"]
                cmd += [str(graph), str(tok_json), str(tmp / f"texts-{n}.json"), str(npy)]
                subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=3600)
                got[cpu] = np.load(npy)
                cos = np.sum(got[cpu] * ref[:n], axis=1) / np.linalg.norm(got[cpu], axis=1)
                rows.append(
                    {
                        "graph": name,
                        "integer_kernels": integer_kernels(graph),
                        "cpu": cpu,
                        "texts": n,
                        "cos_min": float(cos.min()),
                        "cos_mean": float(cos.mean()),
                        "max_abs_diff_to_native": float(np.abs(got[cpu] - got["native"]).max()),
                        "min_cos_to_native": float(
                            np.min(
                                np.sum(got[cpu] * got["native"], axis=1)
                                / np.linalg.norm(got[cpu], axis=1)
                                / np.linalg.norm(got["native"], axis=1)
                            )
                        ),
                        "seconds": round(time.perf_counter() - t0, 1),
                    }
                )
                click.echo(json.dumps(rows[-1]))
    flags = cpu_flags()
    result = {
        "command": "python -m tools.bench.bench_int8_cpus " + " ".join(sys.argv[1:]),
        "texts": len(texts),
        "native_cpu": {f: f in flags for f in ("avx2", "avx512bw", "avx512_vnni", "avx_vnni")},
        "emulated_cpu": f"qemu-x86_64 -cpu {EMULATED_CPU}: AVX2 + FMA, no AVX-512, no VNNI",
        "rows": rows,
    }
    write_results(out, result, indent=1)
    click.echo(f"wrote {out}")


@main.command("embed", hidden=True)
@click.argument("graph", type=click.Path(path_type=Path))
@click.argument("tokenizer", type=click.Path(path_type=Path))
@click.argument("texts", type=click.Path(path_type=Path))
@click.argument("out", type=click.Path(path_type=Path))
def embed(graph: Path, tokenizer: Path, texts: Path, out: Path) -> None:
    """Embeddings of TEXTS (a JSON list) by GRAPH, saved to OUT (.npy): what runs under emulation."""
    np.save(out, embed_texts(graph, tokenizer, json.loads(texts.read_text())))


if __name__ == "__main__":
    main()
