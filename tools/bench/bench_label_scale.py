"""Labeling at scale: COREN steps/s in one process and on 1, 2, ... Ray judge actors, in one run.

Real TWC dev episodes (collected here, seeded) are labeled with the embedded judge (1 thread per judge) from
an empty answer cache each time: once in one process (no Ray), then on a local Ray with as many CPUs as the
largest actor count, once per actor count. Every run labels the same trajectories with the same code; the
script checks that all runs give identical channels and raw distributions.

Reported per run: label seconds (the whole ``CorenLabeler.label``: texts, embeddings, judge units, votes),
steps/s, the time to start the actors (not in the label time), the pool's busy time per actor, evaluated
tokens and queries per step; and the speed-up of each actor count over one actor.

    python -m tools.bench.bench_label_scale --out tools/results/bench_label_scale.json
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

from tools.bench.benchlib import write_results


def _collect(episodes: int, max_steps: int, seed: int, path: Path) -> None:
    from models.trajectory import write_trajectories
    from policy.worlds.adapters import parse_env
    from policy.worlds.collect import CollectConfig, collect

    cfg = CollectConfig(
        env=parse_env("twx:twc"),
        split="dev",
        episodes=episodes,
        behaviour="gold-noise",
        noise=0.3,
        seed=seed,
        max_steps=max_steps,
    )
    write_trajectories(path, collect(cfg))


def _summary(lab: Any, result: Any, seconds: float, stats: dict[str, float]) -> dict[str, Any]:
    steps = lab.report.steps
    return {
        "steps": steps,
        "trajectories": lab.report.trajectories,
        "label_seconds": round(seconds, 2),
        "steps_per_s": round(steps / seconds, 3),
        "queries": lab.report.total_queries,
        "queries_per_step": round(lab.report.total_queries / steps, 2),
        "evaluated_tokens_per_step": round(stats.get("evaluated_tokens", 0) / steps, 1),
        "judge_seconds": round(stats.get("seconds", 0.0), 2),
    }


def _same(a: Any, b: Any) -> bool:
    return bool(np.array_equal(a.rate, b.rate) and np.array_equal(a.channels, b.channels))


def _label_single(trajs: list, cache: Path, coren: tuple) -> tuple[Any, dict[str, Any]]:
    """Label ``trajs`` in this process with one embedded judge: the result and the run's summary."""
    from labeler.coren.pipeline import CorenLabeler
    from labeler.judge import open_judge

    t0 = time.perf_counter()
    with open_judge("gemma3-270m", n_threads=1, cache=cache) as judge:
        load_s = time.perf_counter() - t0
        lab = CorenLabeler(judge, *coren)
        t0, c0 = time.perf_counter(), time.process_time()
        ref = lab.label(trajs)
        return ref, {
            **_summary(lab, ref, time.perf_counter() - t0, judge.stats),
            "cpu_seconds": round(time.process_time() - c0, 2),
            "judge_load_seconds": round(load_s, 2),
        }


def _label_on_ray(n: int, trajs: list, cache: Path, coren: tuple) -> tuple[Any, dict[str, Any]]:
    """Label ``trajs`` on ``n`` Ray judge actors (1 CPU each): the result and the run's summary."""
    from labeler.cluster.options import ClusterConfig
    from labeler.cluster.pool import JudgePool
    from labeler.cluster.workers import DriverJudge, PoolRunner, coren_worker
    from labeler.coren.pipeline import CorenLabeler

    cc = ClusterConfig(judge_actors=n, cpus_per_actor=1)
    t0 = time.perf_counter()
    kwargs = {"model": "gemma3-270m", "n_threads": 1}
    with JudgePool(cc, kwargs, coren_worker(*coren[1:]), cache) as pool:
        start_s = time.perf_counter() - t0
        judge = DriverJudge("gemma3-270m", pool)

        runner = PoolRunner(pool)
        lab = CorenLabeler(judge, *coren, runner=runner)
        runner.merge = lambda c, lab=lab: lab.merge_counts(**c)
        t0, c0 = time.perf_counter(), time.process_time()
        result = lab.label(trajs)
        seconds, driver_cpu = time.perf_counter() - t0, time.process_time() - c0
        rep = pool.report()
        judge.close()
    return result, {
        **_summary(lab, result, seconds, rep["judge_stats"]),
        "actors_start_seconds": round(start_s, 2),
        "pool_seconds": rep["pool_seconds"],
        "busy_seconds_per_actor": rep["busy_seconds_per_actor"],
        "cpu_seconds_per_actor": rep["cpu_seconds_per_actor"],
        "driver_cpu_seconds": round(driver_cpu, 2),
        "units_per_actor": rep["units_per_actor"],
    }


def _speedups(runs: dict[str, Any], counts: list[int]) -> dict[str, dict[str, float]]:
    """Each actor count over the first: on label time, on the judge phases' time and from CPU time (what a
    quiet box would give, with one core per actor and the driver's work serial: the run's CPU work over its
    critical path, the driver's CPU plus the busiest actor's CPU)."""

    def critical(run: dict[str, Any]) -> float:
        return run["driver_cpu_seconds"] + max(run["cpu_seconds_per_actor"])

    base = runs[f"ray_{counts[0]}_actors"]
    measures = {
        "speedup_label": lambda run: run["steps_per_s"] / base["steps_per_s"],
        "speedup_judge_phases": lambda run: base["pool_seconds"] / run["pool_seconds"],
        "speedup_from_cpu_time": lambda run: critical(base) / critical(run),
    }
    return {
        name: {f"{n}_over_{counts[0]}_actors": round(f(runs[f"ray_{n}_actors"]), 3) for n in counts[1:]}
        for name, f in measures.items()
    }


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--episodes", type=click.IntRange(min=1), default=8, show_default=True, help="TWC dev episodes."
)
@click.option(
    "--max-steps", type=click.IntRange(min=1), default=6, show_default=True, help="Steps per episode."
)
@click.option("--prompts", type=click.IntRange(1, 4), default=2, show_default=True, help="COREN prompts.")
@click.option("--actors", default="1,2", show_default=True, help="Judge actor counts, comma-separated.")
@click.option("--seed", type=int, default=0, show_default=True, help="Collection seed.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the JSON result here.")
def main(episodes: int, max_steps: int, prompts: int, actors: str, seed: int, out: str | None) -> None:
    """COREN labeling steps/s in one process and on N Ray judge actors (same data, same labels)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import ray

    from labeler.coren.pipeline import CorenConfig
    from labeler.coren.prompts import load_prompts, load_templates
    from models.encoder import load_sentence_encoder
    from models.trajectory import read_trajectories

    counts = sorted({int(x) for x in actors.split(",") if x.strip()})
    if not counts or counts[0] < 1:
        raise click.BadParameter("expected positive integers, e.g. 1,2", param_hint="--actors")
    t_start = time.perf_counter()
    ps = load_prompts(prompts)
    coren = (load_sentence_encoder(), ps, load_templates(), CorenConfig(qa_size=8))  # a labeler's arguments
    runs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        data = Path(tmp) / "twc-dev.jsonl"
        _collect(episodes, max_steps, seed, data)
        trajs = read_trajectories(data)
        ref, runs["single_process"] = _label_single(trajs, Path(tmp) / "single.sqlite", coren)
        click.echo(f"single process: {runs['single_process']['steps_per_s']} steps/s", err=True)
        identical = True
        ray.init(
            address="local",
            num_cpus=max(counts),
            include_dashboard=False,
            object_store_memory=100 * 1024**2,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
        try:
            for n in counts:
                result, runs[f"ray_{n}_actors"] = _label_on_ray(n, trajs, Path(tmp) / f"ray{n}.sqlite", coren)
                identical = identical and _same(result, ref)
                click.echo(f"{n} judge actor(s): {runs[f'ray_{n}_actors']['steps_per_s']} steps/s", err=True)
        finally:
            ray.shutdown()
    r = {
        "benchmark": "label_scale",
        "command": "python -m tools.bench.bench_label_scale " + " ".join(sys.argv[1:]),
        "judge": "gemma3-270m (embedded Gemma 3 270M Q4_K_M), 1 thread per judge, n_ctx 2048",
        "data": {
            "env": "twx:twc",
            "split": "dev",
            "episodes": episodes,
            "max_steps": max_steps,
            "seed": seed,
        },
        "prompts": [p.name for p in ps],
        "runs": runs,
        **_speedups(runs, counts),
        "identical_labels": identical,
        "total_seconds": round(time.perf_counter() - t_start, 1),
    }
    if out:
        r = write_results(out, r)
    click.echo(json.dumps(r, indent=2))
    if not identical:
        raise SystemExit("the runs' labels differ")


if __name__ == "__main__":
    main()
