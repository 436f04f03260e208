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
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import click
import numpy as np

from tools.bench import serve_baselines as sb  # the servers
from tools.bench.benchlib import ROOT, load_average, write_results
from tools.bench.serve_clients import cpp_row, measure, measure_interleaved

ROWS = {"http", "websocket", "text", "int8", "cpp"}  # what --skip may leave out
CONCURRENT_ROWS = ("zmq-echo", "edge-embedding", "http", "websocket")  # besides the text rows


def export_bundle(out: Path, encoder_precision: str = "fp32") -> Path:
    """A random-init bundle (seed 0): ``edgejudge export --random-init``, or with the int8 encoder through
    ``policy.export.assemble.export_random_bundle(encoder_precision="int8")`` (same scorer weights)."""
    if encoder_precision == "fp32":
        cmd = [sys.executable, "-m", "models.cli", "export", "--random-init", "--out", str(out)]
    else:
        code = (
            "import sys; from policy.export.assemble import export_random_bundle; "
            "export_random_bundle(sys.argv[1], encoder_precision=sys.argv[2])"
        )
        cmd = [sys.executable, "-c", code, str(out), encoder_precision]
    env = {**os.environ, **sb.ONE_THREAD_ENV, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env)
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
            us, label = np.asarray(r["latencies_us"]), f"{r['name']} (p50 {r['p50_us'] / 1000:.2f} ms)"
            ax.plot(us / 1000, np.arange(1, us.size + 1) / us.size, label=label, color=COLORS.get(r["name"]))
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
    bundle: Path | None, out_dir: Path, n: int, n_text: int, warmup: int, k: int, block: int,
    client_counts: str, skip: str, int8_bundle: Path | None, cpp_build: Path | None, as_json: bool,
) -> None:  # fmt: skip
    """Measure edge-serve against its floor and against HTTP and websocket servers on loopback."""
    from models.bundle import load_manifest
    from models.progress import progress

    counts, skipped = _parse_rows(client_counts, skip)
    load_start = load_average()  # the machine is shared: the load says how far to trust absolute numbers
    tmp = tempfile.TemporaryDirectory(prefix="bench-serve-") if bundle is None else None
    if tmp is not None:
        bundle, int8_bundle = _export_bundles(Path(tmp.name), int8_bundle, skipped)
    if {"text", "int8"} & skipped:
        int8_bundle = None
    manifest = load_manifest(bundle)
    dim = manifest.embedding_dim
    out_dir.mkdir(parents=True, exist_ok=True)
    servers: list[sb.Proc] = []
    try:
        with progress(total=3, desc="bench_serve") as bar:  # start servers, 1 client, concurrent clients
            targets, text_eps = start_servers(servers, bundle, int8_bundle, skipped)
            bar.update()
            cpp_build = None if "cpp" in skipped else cpp_build
            rows = measure_rows(targets, text_eps, counts, cpp_build, bar, n, n_text, warmup, dim, k, block)
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
    slim = {**result, "rows": [{k: v for k, v in r.items() if k != "latencies_us"} for r in rows]}
    if as_json:
        click.echo(json.dumps(slim, indent=1))
    else:
        click.echo(table(slim["rows"]))
        click.echo(json.dumps(summary, indent=1))
        click.echo(f"wrote {out_dir / 'results.json'} and {out_dir / 'latency_cdf.png'}")


def _parse_rows(client_counts: str, skip: str) -> tuple[list[int], set[str]]:
    """--clients and --skip: the concurrency levels and the rows left out."""
    try:
        counts = [int(c) for c in client_counts.split(",") if c.strip()]
    except ValueError:
        raise click.BadParameter(f"{client_counts!r}: expected e.g. 1,8", param_hint="--clients") from None
    skipped = {s.strip() for s in skip.split(",") if s.strip()}
    if skipped - ROWS:
        raise click.BadParameter(f"unknown rows {sorted(skipped - ROWS)}", param_hint="--skip")
    return counts, skipped


def _export_bundles(tmp: Path, int8_bundle: Path | None, skipped: set[str]) -> tuple[Path, Path | None]:
    """No --bundle: a random-init bundle, and its scorer with the int8 encoder (unless given or skipped)."""
    click.echo("exporting a random-init bundle (edgejudge export --random-init) ...", err=True)
    bundle = export_bundle(tmp / "bundle")
    if int8_bundle is None and not {"text", "int8"} & skipped:
        click.echo("exporting the same scorer with the int8 encoder ...", err=True)
        int8_bundle = export_bundle(tmp / "bundle-int8", "int8")
    return bundle, int8_bundle


def start_servers(
    servers: list[sb.Proc], bundle: Path, int8_bundle: Path | None, skipped: set[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Every server up first, each added to ``servers`` as it starts: the targets of the embedding rows (by
    row) and the edge-serve endpoints of the text rows."""
    targets = {
        "onnxruntime-inference": str(bundle),
        "zmq-echo": sb.start_zmq_server(servers, sb.serve_echo, timeout=60),
        "zmq-echo-infer": sb.start_zmq_server(servers, sb.serve_echo_infer, str(bundle), timeout=120),
        "edge-embedding": sb.start_edge_serve(servers, bundle),
    }
    text_eps = {} if "text" in skipped else {"edge-text": targets["edge-embedding"]}
    if int8_bundle is not None:
        text_eps["edge-text-int8"] = sb.start_edge_serve(servers, int8_bundle)
    for kind, serve in (("http", sb.serve_http), ("websocket", sb.serve_websocket)):
        if kind not in skipped:
            targets[kind] = sb.start_port_server(servers, serve, bundle)
    return targets, text_eps


def measure_rows(
    targets: dict[str, str], text_eps: dict[str, str], counts: list[int], cpp_build: Path | None, bar: Any,
    n: int, n_text: int, warmup: int, dim: int, k: int, block: int,
) -> list[dict[str, Any]]:  # fmt: skip
    """1 client: all embedding rows interleaved in one client process, then the text rows (and the C++
    client's); more clients: one row at a time (every client of a row hits the same server)."""
    rows: list[dict[str, Any]] = []
    text_warmup = min(warmup, 20)
    if 1 in counts:
        rows += measure_interleaved(targets, n, warmup, dim, k, block)
        rows += [measure(kind, ep, 1, n_text, text_warmup, dim, k) for kind, ep in text_eps.items()]
        if cpp_build is not None:
            rows.append(cpp_row(cpp_build, targets["edge-embedding"], n, k, warmup))
    bar.update()
    for c in (c for c in counts if c > 1):
        rows += [
            measure(kind, targets[kind], c, n, warmup, dim, k) for kind in CONCURRENT_ROWS if kind in targets
        ]
        rows += [measure(kind, ep, c, n_text, text_warmup, dim, k) for kind, ep in text_eps.items()]
    bar.update()
    return rows


def row(rows: list[dict[str, Any]], name: str, clients: int) -> dict[str, Any] | None:
    return next((r for r in rows if r["name"] == name and r["clients"] == clients), None)


def summarize_targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The headline ratios (edge-serve against its floor, HTTP and websocket), measured in this run."""
    out: dict[str, Any] = {}
    inf, echo, emb = (row(rows, name, 1) for name in ("onnxruntime-inference", "zmq-echo", "edge-embedding"))
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
