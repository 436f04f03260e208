"""Collection throughput per environment adapter: `edgejudge collect`'s pipeline against the bare environment,
in one run.

Baseline, per world: the simulator alone (``BARE``: same game and parameters, same episodes, gold paths
generated, random admissible actions, same step limit, nothing recorded). Measured: policy.worlds.collect
through the adapter (state composition, gold-path replay, ground truth) + validated dataset writing (gzip
JSONL, atomic). Both on one thread of this machine; worlds one after the other.

    python -m tools.bench.bench_collect --episodes 100 --json tools/results/bench_collect.json

Worlds are ``NAME`` or ``NAME@PARAMS`` (``twx:twc@level=medium``), each run with ``--episodes``,
``--max-steps`` and ``--behaviour``. Without ``--world`` the default list runs: the TextWorldExpress ladder
with those options, then ScienceWorld ``find-living-thing`` (one JVM, ~20 steps/s) with its own
``--sw-episodes`` / ``--sw-max-steps`` / ``--sw-behaviour`` (``--no-scienceworld`` leaves it out). Every row
records the 1-minute load average before and after it (the box may be shared). With ``--repeats N`` each side
runs N times, alternating (bare, collect, bare, collect, ...), and the fastest run of each side counts: on a
shared box the best of a few runs is the one least slowed by other work.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click

from models.trajectory import TrajectoryWriter
from policy.worlds.adapters import EnvError, EnvSpec, open_env, parse_env
from policy.worlds.collect import CollectConfig, collect
from tools.bench.benchlib import load_average, write_results

WORLDS = (
    "twx:twc@level=easy",
    "twx:twc@level=medium",
    "twx:twc@level=hard",
    "twx:cookingworld@level=small",
    "twx:cookingworld@level=large",
)
SCIENCEWORLD = "scienceworld:find-living-thing"


def bare_twx(spec: EnvSpec, episodes: int, max_steps: int, seed: int) -> tuple[int, float]:
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


def bare_scienceworld(spec: EnvSpec, episodes: int, max_steps: int, seed: int) -> tuple[int, float]:
    """ScienceWorldEnv alone: each train variation loaded with its gold path, random valid actions except
    ``focus on`` (which ends most random episodes at once) and ``reset task``, nothing recorded."""
    from scienceworld import ScienceWorldEnv

    from policy.worlds.adapters.scienceworld import parse_simplifications

    simpl = parse_simplifications(spec.values["simplifications"])
    env = ScienceWorldEnv("", envStepLimit=10**6)
    env.load(spec.task, 0, simpl)
    variations = list(env.get_variations_train())
    rng = random.Random(seed)
    steps = 0
    t0 = time.perf_counter()
    for i in range(episodes):
        env.load(spec.task, variations[i % len(variations)], simpl, generateGoldPath=True)
        env.get_gold_action_sequence()
        _, infos = env.reset()
        for _ in range(max_steps):
            valid = [a for a in infos["valid"] if not a.startswith("focus on ") and a != "reset task"]
            _, _, done, infos = env.step(rng.choice(valid))
            steps += 1
            if done:
                break
    dt = time.perf_counter() - t0
    env.close()
    return steps, dt


BARE: dict[str, Callable[[EnvSpec, int, int, int], tuple[int, float]]] = {
    "twx": bare_twx,
    "scienceworld": bare_scienceworld,
}
"""Adapter name -> the bare simulator loop of the baseline."""


def edgejudge_collect(
    spec: EnvSpec, episodes: int, max_steps: int, seed: int, behaviour: str
) -> tuple[int, float]:
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


def parse_world(text: str) -> EnvSpec:
    name, _, params = text.partition("@")
    spec = parse_env(name, params or None)
    if spec.adapter not in BARE:
        raise EnvError(f"no bare baseline for {spec.adapter}: expected one of {', '.join(BARE)}")
    return spec


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--world", "worlds", multiple=True, help="NAME or NAME@PARAMS (repeat); default: the TWX ladder."
)
@click.option("--episodes", default=100, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--max-steps", default=60, show_default=True, type=click.IntRange(1, 1000))
@click.option("--behaviour", default="gold-noise=0.3,random=0.7", show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--repeats", default=2, show_default=True, type=click.IntRange(1, 20),
              help="Runs of each side, alternating; the fastest counts.")  # fmt: skip
@click.option("--scienceworld/--no-scienceworld", default=True, show_default=True,
              help=f"Without --world: add {SCIENCEWORLD} after the TWX ladder.")  # fmt: skip
@click.option("--sw-episodes", default=20, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--sw-max-steps", default=40, show_default=True, type=click.IntRange(1, 1000))
@click.option("--sw-behaviour", default="gold-noise", show_default=True)
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the results here.")
def main(
    worlds, episodes, max_steps, behaviour, seed, repeats, scienceworld, sw_episodes, sw_max_steps,
    sw_behaviour, json_out,
):  # fmt: skip
    """Steps/s of the bare environment (baseline) and of edgejudge's collector per world, and their ratio."""
    runs = [(w, episodes, max_steps, behaviour) for w in (worlds or WORLDS)]
    if not worlds and scienceworld:
        runs.append((SCIENCEWORLD, sw_episodes, sw_max_steps, sw_behaviour))
    try:
        specs = [(parse_world(w), w, n, m, b) for w, n, m, b in runs]
    except EnvError as e:
        raise click.UsageError(str(e)) from None
    rows = []
    for spec, text, n, m, beh in specs:
        load_before = load_average()[0]
        base, ours = [], []
        for _ in range(repeats):
            base.append(BARE[spec.adapter](spec, n, m, seed))
            ours.append(edgejudge_collect(spec, n, m, seed, beh))
        base_steps, base_dt = max(base, key=lambda r: r[0] / r[1])
        ej_steps, ej_dt = max(ours, key=lambda r: r[0] / r[1])
        rows.append(
            {
                "world": text,
                "env": spec.name,
                "params": spec.params,
                "episodes": n,
                "max_steps": m,
                "behaviour": beh,
                "baseline_env_steps": base_steps,
                "baseline_env_steps_per_s": round(base_steps / base_dt, 1),
                "collect_steps": ej_steps,
                "collect_steps_per_s": round(ej_steps / ej_dt, 1),
                "ratio_collect_vs_env": round((ej_steps / ej_dt) / (base_steps / base_dt), 3),
                "runs_steps_per_s": {
                    "baseline": [round(a / b, 1) for a, b in base],
                    "collect": [round(a / b, 1) for a, b in ours],
                },
                "load_avg_1min": [load_before, load_average()[0]],
            }
        )
        click.echo(json.dumps(rows[-1]), err=True)
    res = {"seed": seed, "worlds": rows}
    if json_out:
        res = write_results(json_out, res)
    click.echo(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
