"""Per-action latency from text, in one run on the same real states: the static-encoder bundle, the MiniLM
bundle and the LLM-as-agent; and edge-serve's embedding input against a bare Python echo + inference server.

States are real TextWorldExpress TWC test-split states (random rollouts) with at least ``--min-candidates``
admissible actions, each with the episode memory that led to it (sent with every request, as a client
does). Every request carries the state text with a fresh step suffix, so the observation is new every step;
the instruction, the candidates and the memory are the same across a state's visits (cached by the runtime's
LRU, as on a robot). One onnxruntime thread everywhere, loopback TCP, one client process that
visits the rows of a group in turn (``--block`` requests each), so every row of a group shares the same
stretches of a shared machine. Rows:

- ``inproc-static`` / ``inproc-minilm``: the in-process bundle runner
  (:class:`edge.bundle_policy.BundlePolicy`, the daemon's own runtime); ``inproc-static-cold``: the same
  with the tokenizer's chunk cache emptied before every call (a state whose every word is new);
  ``inproc-static-paced``: the in-process runner with 1 ms of sleep before every call (untimed), the idle gap
  a daemon's worker has between one client's requests: a core that idled and caches that cooled cost the
  call itself, so this row, not the back-to-back one, is what edge-serve's text rows add to;
- ``edge-text-static`` / ``edge-text-minilm``: edge-serve's text ``act`` through the Python ``EdgeClient``;
- ``edge-text-static-vectors``: the same on a static bundle of format 2 (the scorer without its token
  reader): what reading tokens costs;
- ``edge-text-minilm-flat``: the same on a format-1 MiniLM bundle (one vector of the whole state, no
  memory): the per-action cost before the structured policy, the baseline of the MiniLM rows;
- ``llm-agent``: Gemma 3 270M via llama.cpp choosing among the same candidates (``--llm-states`` states);
- embedding input on a format-1 static bundle's scorer (format-2 bundles take text only):
  ``onnxruntime-inference`` (in-process), ``zmq-echo-infer`` (a bare pyzmq ROUTER that decodes, infers and
  replies), ``edge-embedding`` (edge-serve), ``http`` (FastAPI + uvicorn, JSON) and, when ``openpi-client``
  is installed, ``websocket`` (openpi style).

    python -m tools.bench.bench_text --out tools/results/bench_text

Without ``--static-bundle`` / ``--minilm-bundle`` random-init format-3 bundles with the default training
features (``action+arguments``) are exported, and always the format-1 ones of the baseline rows (latency
does not depend on the weights). Writes ``results.json`` and ``results.md`` into ``--out``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

from models.cli_options import judge_option
from tools.bench import serve_baselines as sb  # the serving benchmark's servers
from tools.bench.benchlib import load_average, write_results
from tools.bench.serve_clients import in_client_process, latency_stats, make_call, take_turns

EMBEDDING_ROWS = ("onnxruntime-inference", "zmq-echo-infer", "edge-embedding", "http", "websocket")
MINILM = "all-MiniLM-L6-v2"
PACE_S = 0.001
"""Sleep before each call of a paced row: about one round trip, the gap a daemon's worker idles."""


def real_states(n: int, min_candidates: int, max_steps: int = 40, seed: int = 0) -> list[tuple]:
    """(instruction, observation, candidates) of real TWC test states with >= min_candidates actions."""
    import random

    from policy.worlds.adapters import open_env, parse_env

    rng = random.Random(seed)
    out: list[tuple] = []
    with open_env(parse_env("twx:twc"), step_limit=max_steps) as env:
        for game in list(env.episodes("test")) * 4:
            st = env.reset(game, "test")
            memory: list[tuple[str, str]] = []
            while not st.done and len(out) < n:
                if len(st.candidates) >= min_candidates and memory:
                    out.append((st.instruction, st.observation, list(st.candidates), list(memory)))
                    break  # one state per game: many rooms and inventories
                action = rng.choice(st.candidates)
                st = env.step(action)
                memory.append((action, st.observation))
            if len(out) >= n:
                break
    if len(out) < n:
        raise click.ClickException(f"found only {len(out)} test states with >= {min_candidates} candidates")
    return out


def export(out: Path, encoder: str, bundle_format: int = 3) -> Path:
    """A random-init bundle of what training writes: its candidate features and width."""
    from policy.export.assemble import export_random_bundle
    from policy.training.buffer import ScorerOptions

    train = ScorerOptions()
    export_random_bundle(
        out,
        encoder=encoder,
        candidate_features=train.candidate_features,
        hidden=train.hidden,
        reader_width=train.reader_width,
        bundle_format=bundle_format,
    )
    return out


def text_call(kind: str, target: str, states: list[tuple]):
    """A callable(i) doing one from-text action on state i % len(states), observation new every call."""

    def obs(i: int) -> tuple:
        ins, o, c, memory = states[i % len(states)]
        return ins, f"{o} Step {i}.", c, memory

    if kind.startswith("inproc"):
        from edge.bundle_policy import BundlePolicy

        pol = BundlePolicy(target)
        chunks = pol.runtime.text_encoder.chunked
        if kind.endswith("-paced"):

            def paced(i: int) -> None:
                pol.act(*obs(i))

            paced.pace_s = PACE_S  # type: ignore[attr-defined]
            return paced
        if kind.endswith("-cold"):

            def cold(i: int) -> None:
                if chunks is not None:
                    chunks._chunks.clear()
                pol.act(*obs(i))

            return cold
        return lambda i: pol.act(*obs(i))
    from edge.client import EdgeClient

    c = EdgeClient(target, timeout=60, retries=0)

    def act(i: int) -> None:
        ins, o, cands, memory = obs(i)
        c.act(ins, o, cands, memory=memory)

    return act


def reconnecting(kind: str, target: str, arrays: tuple):
    """An HTTP client that opens a new keep-alive connection when the server closed the idle one (uvicorn
    closes after 5 s; on a loaded box the other rows' blocks can take longer)."""
    import http.client

    state = {"call": make_call(kind, target, *arrays, 0)}

    def call(i: int) -> None:
        try:
            state["call"](i)
        except (BrokenPipeError, ConnectionError, http.client.HTTPException):
            state["call"] = make_call(kind, target, *arrays, 0)
            state["call"](i)

    return call


def client(groups: list[dict[str, Any]], states: list[tuple], arrays: tuple, warmup: int, q: Any) -> None:
    """One client process: for each group, its rows in turn, ``block`` calls at a time, ``n`` calls each."""
    try:
        out: dict[str, list[float]] = {}
        for g in groups:
            calls = {kind: row_call(kind, target, states, arrays) for kind, target in g["targets"].items()}
            lat, cpu = take_turns(calls, g["n"], g["block"], warmup)
            out.update(lat)
            served = ("edge-", "zmq", "http", "websocket")  # CPU time in the client: of in-process rows only
            out.update({f"{kind}:cpu": v for kind, v in cpu.items() if not kind.startswith(served)})
        q.put((out, None))
    except Exception as e:  # reported by the parent
        q.put(({}, f"{type(e).__name__}: {e}"))


def row_call(kind: str, target: str, states: list[tuple], arrays: tuple):
    if kind == "http":
        return reconnecting(kind, target, arrays)
    if kind in EMBEDDING_ROWS:
        return make_call(kind, target, *arrays, 0)
    return text_call(kind, target, states)


def llm_latency(judge: str, states: list[tuple]) -> dict[str, Any]:
    from policy.evaluation.llm_policy import open_llm_policy

    agent = open_llm_policy(judge)
    try:
        agent.act(*states[0][:3])
        lat, cpu = [], []
        for ins, o, c, _memory in states:
            c0, t = time.process_time(), time.perf_counter()
            agent.act(ins, o, c)
            lat.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c0)
    finally:
        agent.close()
    return {**latency_stats(lat), "cpu": latency_stats(cpu)}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("runs/bench_text")
)
@click.option("--states", "n_states", type=click.IntRange(1, 1000), default=40, show_default=True)
@click.option("--min-candidates", type=click.IntRange(1, 100), default=15, show_default=True)
@click.option(
    "--n", type=click.IntRange(10, 10**6), default=2000, show_default=True, help="Calls per fast row."
)
@click.option(
    "--n-minilm", type=click.IntRange(5, 10**5), default=40, show_default=True, help="Calls per MiniLM row."
)
@click.option("--llm-states", type=click.IntRange(0, 1000), default=8, show_default=True)
@click.option("--block", type=click.IntRange(1, 10**5), default=100, show_default=True)
@click.option("--warmup", type=click.IntRange(1, 10**4), default=50, show_default=True)
@judge_option("judge")
@click.option("--static-bundle", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--minilm-bundle", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--skip", default="", help="Comma-separated: minilm, llm, http, websocket.")
def main(
    out_dir, n_states, min_candidates, n, n_minilm, llm_states, block, warmup, judge, static_bundle,
    minilm_bundle, skip,
) -> None:  # fmt: skip
    """Measure per-action latency from text and the embedding-input serving overheads in one run."""
    os.environ.update(sb.ONE_THREAD_ENV)
    skipped = {s.strip() for s in skip.split(",") if s.strip()}
    load_start = load_average()
    click.echo(f"sampling {n_states} real TWC test states with >= {min_candidates} candidates ...", err=True)
    states = real_states(n_states, min_candidates)
    tmp = tempfile.TemporaryDirectory(prefix="bench-text-")
    servers: list[sb.Proc] = []
    try:
        bundles = export_bundles(Path(tmp.name), static_bundle, minilm_bundle, skipped)
        arrays = embedding_inputs(bundles["static-flat"], states)
        groups = start_groups(servers, bundles, skipped, n, n_minilm, block)
        click.echo(f"measuring {sum(len(g['targets']) for g in groups)} rows ...", err=True)
        lat, err = in_client_process(client, groups, states, arrays, warmup, timeout=7200)
        if err:
            raise click.ClickException(f"client: {err}")
    finally:
        for s in reversed(servers):
            s.stop()
    rows = {kind: latency_stats(v) for kind, v in lat.items() if not kind.endswith(":cpu")}
    for kind, v in lat.items():
        if kind.endswith(":cpu"):
            rows[kind[: -len(":cpu")]]["cpu"] = latency_stats(v)
    if llm_states and "llm" not in skipped:
        click.echo(f"LLM-as-agent on {llm_states} of the same states ...", err=True)
        rows["llm-agent"] = llm_latency(judge, states[:llm_states])
    tmp.cleanup()
    static_bundle, minilm_bundle = bundles["static"], bundles["minilm"]
    result = {
        "load_average_start": load_start,
        "command": "python -m tools.bench.bench_text " + " ".join(sys.argv[1:]),
        "states": describe(states, static_bundle),
        "bundles": {"static": str(static_bundle), "minilm": str(minilm_bundle) if minilm_bundle else None},
        "rows": rows,
        "ratios": ratios(rows),
    }
    result = write_results(out_dir / "results.json", result, indent=1)
    md = markdown(result)
    (out_dir / "results.md").write_text(md)
    click.echo(md)


def export_bundles(
    tmp: Path, static_bundle: Path | None, minilm_bundle: Path | None, skipped: set[str]
) -> dict[str, Path | None]:
    """The bundles of the rows: the given ones or random-init exports (format 3), the format-2 static one and
    the format-1 ones of the baseline rows."""
    if static_bundle is None:
        click.echo("exporting a random-init static bundle ...", err=True)
        static_bundle = export(tmp / "static", "static")
    if minilm_bundle is None and "minilm" not in skipped:
        click.echo("exporting a random-init MiniLM bundle ...", err=True)
        minilm_bundle = export(tmp / "minilm", MINILM)
    click.echo("exporting the format-1 bundles of the baseline rows and a format-2 static one ...", err=True)
    return {
        "static": static_bundle,
        "minilm": minilm_bundle,
        "static-vectors": export(tmp / "static-vectors", "static", bundle_format=2),
        "static-flat": export(tmp / "static-flat", "static", bundle_format=1),
        "minilm-flat": None if "minilm" in skipped else export(tmp / "minilm-flat", MINILM, bundle_format=1),
    }


def embedding_inputs(bundle: Path, states: list[tuple]) -> tuple[np.ndarray, ...]:
    """Unit-norm (instruction, state, candidates) embeddings of ``bundle``'s sizes, as many candidates as
    the states have on average: the input of the embedding rows."""
    from models.bundle import load_manifest

    man = load_manifest(bundle)
    rng = np.random.default_rng(0)
    k = round(statistics.fmean(len(s[2]) for s in states))
    unit = [rng.standard_normal(s).astype(np.float32) for s in ((man.embedding_dim,),) * 2]
    cands = rng.standard_normal((k, man.candidate_dim)).astype(np.float32)
    return (*[u / np.linalg.norm(u) for u in unit], cands / np.linalg.norm(cands, axis=1, keepdims=True))


def start_groups(
    servers: list[sb.Proc], bundles: dict[str, Any], skipped: set[str], n: int, n_minilm: int, block: int
) -> list[dict[str, Any]]:
    """Every server up, each added to ``servers`` as it starts; the groups of rows the client visits in turn
    (static text, embedding input, MiniLM text), each with its rows' targets, calls per row and block."""
    static, flat = bundles["static"], bundles["static-flat"]
    ep_static = sb.start_edge_serve(servers, static)
    ep_flat = sb.start_edge_serve(servers, flat)
    ep_vectors = sb.start_edge_serve(servers, bundles["static-vectors"])
    emb_targets = {
        "onnxruntime-inference": str(flat),
        "zmq-echo-infer": sb.start_zmq_server(servers, sb.serve_echo_infer, str(flat), timeout=120),
        "edge-embedding": ep_flat,
    }
    for kind, serve in (("http", sb.serve_http), ("websocket", sb.serve_websocket)):
        if kind not in skipped and (kind != "websocket" or _has("openpi_client")):
            emb_targets[kind] = sb.start_port_server(servers, serve, flat)
    static_targets = {
        "inproc-static": str(static),
        "inproc-static-paced": str(static),
        "edge-text-static": ep_static,
        "edge-text-static-vectors": ep_vectors,
        "inproc-static-cold": str(static),
    }
    groups = [{"targets": t, "n": n, "block": block} for t in (static_targets, emb_targets)]
    if bundles["minilm"] is not None:
        minilm_targets = {
            "inproc-minilm": str(bundles["minilm"]),
            "edge-text-minilm": sb.start_edge_serve(servers, bundles["minilm"]),
        }
        if bundles["minilm-flat"] is not None:
            minilm_targets["edge-text-minilm-flat"] = sb.start_edge_serve(servers, bundles["minilm-flat"])
        groups.append({"targets": minilm_targets, "n": n_minilm, "block": max(1, n_minilm // 4)})
    return groups


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def describe(states: list[tuple], bundle: Path) -> dict[str, Any]:
    from tokenizers import Tokenizer

    from models.encoder import resolve_encoder

    tok = Tokenizer.from_file(str(resolve_encoder().tokenizer_json))
    tok.no_truncation()
    tok.no_padding()
    return {
        "n": len(states),
        "env": "twx:twc test split",
        "mean_candidates": statistics.fmean(len(s[2]) for s in states),
        "mean_memory_steps": statistics.fmean(len(s[3]) for s in states),
        "mean_observation_tokens": statistics.fmean(len(tok.encode(s[1]).ids) for s in states),
    }


def ratios(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    llm = rows.get("llm-agent")
    for kind in ("inproc-static", "edge-text-static", "inproc-minilm", "edge-text-minilm"):
        if llm and kind in rows:
            out[f"llm_over_{kind}_mean"] = llm["mean_us"] / rows[kind]["mean_us"]
            out[f"llm_over_{kind}_p50"] = llm["p50_us"] / rows[kind]["p50_us"]
            if "cpu" in llm and "cpu" in rows[kind]:
                out[f"llm_over_{kind}_cpu_mean"] = llm["cpu"]["mean_us"] / rows[kind]["cpu"]["mean_us"]
    inf, ei, edge = (rows.get(k) for k in ("onnxruntime-inference", "zmq-echo-infer", "edge-embedding"))
    if ei and edge:
        out["edge_embedding_p50_over_echo_infer_p50"] = edge["p50_us"] / ei["p50_us"]
    if inf:
        for kind in ("zmq-echo-infer", "edge-embedding", "http", "websocket"):
            if kind in rows:
                out[f"{kind}_p50_overhead_us"] = rows[kind]["p50_us"] - inf["p50_us"]
    if edge and "http" in rows:
        out["http_p50_over_edge_embedding_p50"] = rows["http"]["p50_us"] / edge["p50_us"]
    for name, new, old, stats in (
        ("minilm_structured_over_flat", "edge-text-minilm", "edge-text-minilm-flat", ("mean", "p50")),
        ("static_tokens_over_vectors", "edge-text-static", "edge-text-static-vectors", ("p50", "p99")),
    ):
        if new in rows and old in rows:
            out.update({f"{name}_{s}": rows[new][f"{s}_us"] / rows[old][f"{s}_us"] for s in stats})
    for base in ("inproc-static", "inproc-static-paced"):
        if "edge-text-static" in rows and base in rows:
            added = rows["edge-text-static"]["p50_us"] - rows[base]["p50_us"]
            out[f"edge_text_static_over_{base}_p50_us"] = added
    t, worst_tokens = rows.get("edge-text-static"), None
    if "static_tokens_over_vectors_p50" in out:
        worst_tokens = max(out["static_tokens_over_vectors_p50"], out["static_tokens_over_vectors_p99"])
    # (target, measured, test): a target whose rows were not run (--skip) is left out, not called missed.
    checks: list[tuple[str, Any, Any]] = [
        ("format 3 over format 2 through edge-serve <= 1.1x (p50 and p99)", worst_tokens, lambda v: v <= 1.1),
        (
            "edge-serve adds <= 0.3 ms to the in-process call (paced, p50)",
            out.get("edge_text_static_over_inproc-static-paced_p50_us"),
            lambda v: v <= 300,
        ),
        ("edge-text-static p50 <= 1 ms", t and t["p50_us"], lambda v: v <= 1000),
        ("edge-text-static p99 <= 3 ms", t and t["p99_us"], lambda v: v <= 3000),
        (
            "MiniLM structured <= 1.2x the flat bundle's per-action cost (mean)",
            out.get("minilm_structured_over_flat_mean"),
            lambda v: v <= 1.2,
        ),
        (
            "inproc-static >= 1000x faster than the LLM agent (mean)",
            out.get("llm_over_inproc-static_mean"),
            lambda v: v >= 1000,
        ),
        (
            "edge-embedding p50 <= 1.3x zmq-echo-infer",
            out.get("edge_embedding_p50_over_echo_infer_p50"),
            lambda v: v <= 1.3,
        ),
        ("edge-embedding p99 <= 1 ms", edge and edge["p99_us"], lambda v: v <= 1000),
    ]
    out["targets"] = {name: bool(test(v)) for name, v, test in checks if v is not None}
    return out


ROW_NAMES = {
    "inproc-static": "static bundle, in-process runner",
    "inproc-static-cold": "static bundle, in-process, every word new (chunk cache emptied)",
    "inproc-static-paced": "static bundle, in-process, 1 ms idle before each call",
    "edge-text-static": "static bundle, edge-serve text act (Python client)",
    "edge-text-static-vectors": "static bundle of format 2 (no token reader), edge-serve text act",
    "inproc-minilm": "MiniLM bundle, in-process runner",
    "edge-text-minilm": "MiniLM bundle, edge-serve text act (Python client)",
    "edge-text-minilm-flat": "MiniLM format-1 bundle (flat, no memory), edge-serve text act",
    "llm-agent": "LLM-as-agent (llama.cpp)",
    "onnxruntime-inference": "embedding input: scorer inference alone (in-process)",
    "zmq-echo-infer": "embedding input: bare pyzmq echo + inference server",
    "edge-embedding": "embedding input: edge-serve (Python client)",
    "http": "embedding input: FastAPI + uvicorn, JSON",
    "websocket": "embedding input: websocket + msgpack (openpi style)",
}


def markdown(r: dict[str, Any]) -> str:
    s = r["states"]
    lines = [
        f"{s['n']} real {s['env']} states, {s['mean_candidates']:.1f} candidates, "
        f"{s['mean_observation_tokens']:.0f} observation tokens, {s.get('mean_memory_steps', 0):.1f} memory "
        f"steps on average; {r['machine']}; load "
        f"{r['load_average_start'][0]:.1f} -> {r['load_average'][0]:.1f}.",
        "",
        "| row | n | p50 ms | p99 ms | mean ms | CPU ms per call (mean) |",
        "|---|---|---|---|---|---|",
    ]
    for kind, row in r["rows"].items():
        cpu = f"{row['cpu']['mean_us'] / 1000:.3f}" if "cpu" in row else "-"
        lines.append(
            f"| {ROW_NAMES.get(kind, kind)} | {row['n']} | {row['p50_us'] / 1000:.3f} | "
            f"{row['p99_us'] / 1000:.3f} | {row['mean_us'] / 1000:.3f} | {cpu} |"
        )
    lines += ["", "Ratios (same run):", ""]
    for key, v in r["ratios"].items():
        if key == "targets":
            continue
        lines.append(f"- {key}: {v:.3g}")
    for key, ok in r["ratios"].get("targets", {}).items():
        lines.append(f"- target {key}: {'met' if ok else 'not met'}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
