"""Collection throughput: `edgejudge collect`'s pipeline against the bare environment, in one run.

Baseline: TextWorldExpressEnv alone, same game, same episodes (gold paths generated, random admissible
actions, same step limit), nothing recorded. Measured: policy.collect + state composition + validated
dataset writing (gzip JSONL, atomic). Both on one thread of this machine.

    .venv/bin/python tools/bench_collect.py --episodes 200 --json tools/results/bench_collect.json
"""

from __future__ import annotations

import json
import platform
import random
import tempfile
import time
from pathlib import Path

import click

from labeler.dataset import TrajectoryWriter
from policy.collect import CollectConfig, collect
from policy.envs import open_env, parse_env


def bare_env(spec, episodes: int, max_steps: int, seed: int) -> tuple[int, float]:
    from textworld_express import TextWorldExpressEnv

    env = TextWorldExpressEnv(envStepLimit=max_steps + 1)
    env.load(gameName=spec.task, gameParams=spec.params)
    rng = random.Random(seed)
    seeds = list(env.getValidSeedsTrain())
    steps = 0
    t0 = time.perf_counter()
    for i in range(episodes):
        _, infos = env.reset(seed=seeds[i % len(seeds)], gameFold="train", generateGoldPath=True)
        env.getGoldActionSequence()
        for _ in range(max_steps):
            _, _, done, infos = env.step(rng.choice(infos["validActions"]))
            steps += 1
            if done:
                break
    dt = time.perf_counter() - t0
    env.close()
    return steps, dt


def edgejudge_collect(spec, episodes: int, max_steps: int, seed: int, behaviour: str) -> tuple[int, float]:
    cfg = CollectConfig(
        env=spec, episodes=episodes, behaviour=behaviour, noise=0.3, seed=seed, max_steps=max_steps
    )
    with open_env(spec, step_limit=max_steps) as env, tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        steps = 0
        with TrajectoryWriter(Path(d) / "bench.jsonl.gz") as w:
            for traj in collect(cfg, env):
                w.write(traj)
                steps += len(traj.steps)
        return steps, time.perf_counter() - t0


@click.command()
@click.option("--env", "env_name", default="twx:twc", show_default=True)
@click.option("--episodes", default=200, show_default=True)
@click.option("--max-steps", default=40, show_default=True)
@click.option("--behaviour", default="gold-noise=0.3,random=0.7", show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the results here.")
def main(env_name, episodes, max_steps, behaviour, seed, json_out):
    """Steps/s of the bare environment (baseline) and of edgejudge's collector, and their ratio."""
    spec = parse_env(env_name)
    base_steps, base_dt = bare_env(spec, episodes, max_steps, seed)
    ej_steps, ej_dt = edgejudge_collect(spec, episodes, max_steps, seed, behaviour)
    res = {
        "env": spec.name,
        "params": spec.params,
        "episodes": episodes,
        "behaviour": behaviour,
        "baseline_env_steps": base_steps,
        "baseline_env_steps_per_s": base_steps / base_dt,
        "collect_steps": ej_steps,
        "collect_steps_per_s": ej_steps / ej_dt,
        "ratio_collect_vs_env": (ej_steps / ej_dt) / (base_steps / base_dt),
        "machine": f"{platform.machine()} {platform.processor() or ''} {platform.python_version()}".strip(),
    }
    click.echo(json.dumps(res, indent=2))
    if json_out:
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(json_out).write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
