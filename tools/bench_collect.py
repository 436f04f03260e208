"""Collection throughput per environment adapter: `edgejudge collect`'s pipeline against the bare environment,
in one run.

Baseline, per world: the simulator alone (``BARE``: same game and parameters, same episodes, gold paths
generated, random admissible actions, same step limit, nothing recorded). Measured: policy.collect through the
adapter (state composition, gold-path replay, ground truth) + validated dataset writing (gzip JSONL, atomic).
Both on one thread of this machine; worlds one after the other.

    python tools/bench_collect.py --episodes 100 --json tools/results/bench_collect.json

Worlds are ``NAME`` or ``NAME@PARAMS`` (``twx:twc@level=medium``); the default is the TextWorldExpress ladder.
ScienceWorld (one JVM; ~20 steps/s, so fewer episodes):

    python tools/bench_collect.py --world scienceworld:find-living-thing --episodes 20 --max-steps 40 \\
        --behaviour gold-noise --json tools/results/bench_collect_scienceworld.json
"""

from __future__ import annotations

import json
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchlib import portable_paths  # noqa: E402  (tools/ is sys.path[0])

from labeler.dataset import TrajectoryWriter  # noqa: E402
from policy.collect import CollectConfig, collect  # noqa: E402
from policy.envs import EnvError, EnvSpec, open_env, parse_env  # noqa: E402

WORLDS = (
    "twx:twc@level=easy",
    "twx:twc@level=medium",
    "twx:twc@level=hard",
    "twx:cookingworld@level=small",
    "twx:cookingworld@level=large",
)


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

    from policy.envs.scienceworld import parse_simplifications

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
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the results here.")
def main(worlds, episodes, max_steps, behaviour, seed, json_out):
    """Steps/s of the bare environment (baseline) and of edgejudge's collector per world, and their ratio."""
    try:
        specs = [(w, parse_world(w)) for w in (worlds or WORLDS)]
    except EnvError as e:
        raise click.UsageError(str(e)) from None
    rows = []
    for text, spec in specs:
        base_steps, base_dt = BARE[spec.adapter](spec, episodes, max_steps, seed)
        ej_steps, ej_dt = edgejudge_collect(spec, episodes, max_steps, seed, behaviour)
        rows.append(
            {
                "world": text,
                "env": spec.name,
                "params": spec.params,
                "baseline_env_steps": base_steps,
                "baseline_env_steps_per_s": round(base_steps / base_dt, 1),
                "collect_steps": ej_steps,
                "collect_steps_per_s": round(ej_steps / ej_dt, 1),
                "ratio_collect_vs_env": round((ej_steps / ej_dt) / (base_steps / base_dt), 3),
            }
        )
        click.echo(json.dumps(rows[-1]), err=True)
    res = {
        "episodes": episodes,
        "max_steps": max_steps,
        "behaviour": behaviour,
        "machine": f"{platform.machine()} {platform.processor() or ''} {platform.python_version()}".strip(),
        "worlds": rows,
    }
    click.echo(json.dumps(res, indent=2))
    if json_out:
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(json_out).write_text(json.dumps(portable_paths(res), indent=2) + "\n")


if __name__ == "__main__":
    main()
