"""What a request's memory costs the daemon: a max-size memory against a full window of new text, and an
honest client's latency while another client sends max-size memories.

A format-2 bundle reads the last ``info['horizon']`` pairs of a request's memory and nothing older, so 512
never-seen pairs (the most a request may carry) must cost no more than a full window of never-seen pairs, and
a client that sends them must not slow down the others much (text requests are scored on ``--workers``
threads, or worker processes with a ``p`` after the count; each value given is measured in turn, 1 being the
single-threaded baseline). The flood comes from a process of its own, so the clients' own Python work does
not share an interpreter lock. The texts are real TWC medium states and responses, each line made new with a
unique word.

    python -m tools.bench.bench_memory_window --out tools/results/bench_memory_window.json

Writes one JSON object (with the machine, load average and commit): per request kind the median and p99
server time, and the honest client's round trip p50/p99 alone and during the flood, per --workers count.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import tempfile
import time
from pathlib import Path

import click
import numpy as np

from edge.client import EdgeClient
from edge.launch import served
from tools.bench.benchlib import write_results


def _episodes(n: int) -> list:
    """Real TWC medium episodes (random behaviour: they run to the step limit)."""
    from policy.worlds.adapters import parse_env
    from policy.worlds.collect import CollectConfig, collect

    env = parse_env("twx:twc", "level=medium")
    return list(collect(CollectConfig(env=env, episodes=n, behaviour="random", max_steps=60, seed=7)))


def _never_seen(pairs: list[tuple[str, str]], tag: str) -> list[tuple[str, str]]:
    """The pairs with a new word in every line: no text of theirs is in the daemon's cache."""
    return [
        (f"{a} {tag}{i}", "\n".join(f"{ln} {tag}{i}" for ln in o.splitlines()))
        for i, (a, o) in enumerate(pairs)
    ]


def _server_ms(client: EdgeClient, steps, memory: list[tuple[str, str]], n: int, tag: str) -> list[float]:
    out = []
    for i in range(n):
        s = steps[i % len(steps)]
        reply = client.act("tidy up", s.observation, s.candidates, memory=_never_seen(memory, f"{tag}{i}x"))
        out.append(float(reply["timing"]["server_ms"]))
    return out


def _honest(c: EdgeClient, episodes, horizon: int) -> list[float]:
    """Round trips of a client (one connection, as a robot keeps) acting through real episodes, sending the
    window of its memory."""
    out = []
    for t in episodes:
        memory: list[tuple[str, str]] = []
        for s in t.steps:
            t0 = time.perf_counter()
            c.act(t.instruction, s.observation, s.candidates, memory=memory[-horizon:])
            out.append((time.perf_counter() - t0) * 1000)
            memory.append((s.action, s.next_observation))
    return out


def _pct(xs: list[float]) -> dict[str, float]:
    return {"p50": float(np.percentile(xs, 50)), "p99": float(np.percentile(xs, 99)), "n": len(xs)}


@click.command()
@click.option("--bundle", type=click.Path(file_okay=False), help="A format-2 bundle (default: a random-init "
              "MiniLM one, exported first).")  # fmt: skip
@click.option("--encoder", default="all-MiniLM-L6-v2", show_default=True,
              help="The random-init bundle's encoder (all-MiniLM-L6-v2, or static).")  # fmt: skip
@click.option("--requests", default=20, show_default=True, help="Requests per memory kind.")
@click.option("--honest", default=5, show_default=True, help="Episodes (60 steps each) of the honest client, "
              "alone and during the flood.")  # fmt: skip
@click.option("--workers", default="1,2,2p", show_default=True,
              help="edge-serve --workers values, comma-separated, measured in turn in this run (1: the "
              "single-threaded baseline; 2p: two worker processes).")  # fmt: skip
@click.option("--out", type=click.Path(dir_okay=False), default="tools/results/bench_memory_window.json")
def main(bundle: str | None, encoder: str, requests: int, honest: int, workers: str, out: str) -> None:
    counts = [w.strip() for w in workers.split(",") if w.strip()]
    episodes = _episodes(honest)
    steps = [s for t in episodes for s in t.steps]
    pairs = [(s.action, s.next_observation) for s in steps]
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        if bundle is None:
            from policy.export.assemble import export_random_bundle

            bundle = str(Path(tmp) / "bundle")
            export_random_bundle(bundle, bundle_format=2, encoder=encoder)
        for n in counts:
            rows[n] = _measure(bundle, n, requests, episodes, steps, pairs)
    first = rows[counts[0]]
    result = {"encoder": first["encoder"], "horizon": first["horizon"], "workers": rows}
    write_results(out, result)
    click.echo(json.dumps({n: r["ratios"] for n, r in rows.items()}))


def _flood(endpoint: str, steps, pairs, stop) -> None:
    """Max-size memories of never-seen text, back to back, until ``stop`` is set (in a process of its own)."""
    with EdgeClient(endpoint, timeout=120) as f:
        k = 0
        while not stop.is_set():
            _server_ms(f, steps, (pairs * 16)[:512], 1, f"x{k}")
            k += 1


def _rss_mb(module: str) -> list[float]:
    """The resident memory (MB) of every running ``python -m MODULE`` process (the daemon, its workers)."""
    out = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"-m" in argv and argv[argv.index(b"-m") + 1] == module.encode():
                status = (proc / "status").read_text()
                out.append(int(status.split("VmRSS:")[1].split()[0]) / 1000)
        except (OSError, IndexError, ValueError):
            continue
    return sorted(out)


def _measure(bundle: str, workers: str, requests: int, episodes, steps, pairs) -> dict:
    mode = ["--worker-processes"] if workers.endswith("p") else []
    with (
        contextlib.ExitStack() as stack,
        served(bundle, extra=["--workers", workers.removesuffix("p"), *mode]) as endpoint,
        EdgeClient(endpoint, timeout=120) as c,
    ):
        info = c.info()
        horizon, kind = int(info["horizon"]), info["encoder_kind"]
        memory = {"daemon_mb": _rss_mb("edge.serve"), "worker_processes_mb": _rss_mb("edge.worker_process")}
        # the same last `horizon` pairs, alone and after 512 - horizon older ones
        window = _server_ms(c, steps, pairs[-horizon:], requests, "w")
        full = _server_ms(c, steps, (pairs * 16)[: 512 - horizon] + pairs[-horizon:], requests, "f")
        honest = stack.enter_context(EdgeClient(endpoint, timeout=120))
        _honest(honest, episodes, horizon)  # warm-up: alone and during the flood both see warm caches
        alone = _honest(honest, episodes, horizon)
        spawn = multiprocessing.get_context("spawn")
        stop = spawn.Event()
        flood = spawn.Process(target=_flood, args=(endpoint, steps[:40], pairs, stop), daemon=True)
        flood.start()
        time.sleep(2.0)  # the flood process is up and sending
        during = _honest(honest, episodes, horizon)
        stop.set()
        flood.join(timeout=120)
    result = {
        "workers": workers,
        "worker_processes": bool(mode),
        "memory_at_start": memory,
        "encoder": kind,
        "horizon": horizon,
        "server_ms": {"window_of_new_text": _pct(window), "max_size_memory_512": _pct(full)},
        "honest_round_trip_ms": {"alone": _pct(alone), "during_max_size_flood": _pct(during)},
    }
    honest = result["honest_round_trip_ms"]
    result["ratios"] = {
        "max_size_vs_window_p50": result["server_ms"]["max_size_memory_512"]["p50"]
        / result["server_ms"]["window_of_new_text"]["p50"],
        "honest_p50_during_vs_alone": honest["during_max_size_flood"]["p50"] / honest["alone"]["p50"],
        "honest_p99_during_vs_alone": honest["during_max_size_flood"]["p99"] / honest["alone"]["p99"],
    }
    return result


if __name__ == "__main__":
    main()
