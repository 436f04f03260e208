"""``edgejudge collect``: record trajectories in a real environment (any adapter of
:mod:`policy.worlds.adapters`)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import click

from models.cli_options import env_option, progress_option, split_option
from models.trajectory import TrajectoryWriter
from policy.worlds.adapters import EnvError, open_env, parse_env
from policy.worlds.collect import BehaviourError, CollectConfig, pilot_mixture
from policy.worlds.collect import collect as collect_episodes


@click.command()
@env_option()
@click.option(
    "--params",
    default=None,
    help="The task's parameters, key=value comma-separated, e.g. 'level=medium' for twx:twc "
    "(default: the task's smallest configuration).",
)
@split_option(default="train")
@click.option("--episodes", default=10, show_default=True, type=int, help="Number of episodes.")
@click.option(
    "--behaviour",
    default="gold-noise",
    show_default=True,
    help="gold-noise | random | a mixture such as 'gold-noise=0.3,random=0.7' (chosen per episode).",
)
@click.option(
    "--noise",
    default=0.3,
    show_default=True,
    type=float,
    help="gold-noise: probability of replacing a gold step by a random admissible action.",
)
@click.option(
    "--target-success",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Choose the behaviour mixture (gold-noise vs random) for this share of successful episodes by a "
    "short pilot of each behaviour first (instead of --behaviour).",
)
@click.option(
    "--pilot-episodes",
    default=8,
    show_default=True,
    type=click.IntRange(min=1),
    help="--target-success: pilot episodes per behaviour.",
)
@click.option(
    "--policy",
    "bundle",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Act with this bundle (from 'edgejudge export') instead of a scripted behaviour, as a deployed "
    "robot does, with the client's loop guard; its episodes are appended to OUT through the robot's episode "
    "log writer (OUT is plain .jsonl and grows round after round).",
)
@click.option(
    "--serve", is_flag=True, help="--policy: act through edge-serve (a daemon started for the run)."
)
@click.option(
    "--temperature",
    type=click.FloatRange(0.0, min_open=True),
    default=None,
    help="--policy: explore with a draw from softmax(scores / T) at every step.",
)
@click.option(
    "--epsilon",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="--policy: explore with a uniform draw among the candidates with this probability at every step.",
)
@click.option(
    "--loop-guard/--no-loop-guard", default=True, show_default=True, help="--policy: the client's loop guard."
)
@click.option("--max-steps", default=40, show_default=True, type=int, help="Step limit per episode.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed: same seed, same dataset.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Output .jsonl or .jsonl.gz.")
@progress_option()
@click.pass_context
def collect(
    ctx: click.Context,
    env_name,
    params,
    split,
    episodes,
    behaviour,
    noise,
    target_success,
    pilot_episodes,
    bundle,
    serve,
    temperature,
    epsilon,
    loop_guard,
    max_steps,
    seed,
    out,
    progress,
) -> None:
    """Collect EPISODES trajectories with a scripted behaviour and write them atomically to OUT, or with a
    deployed bundle (--policy) and append them to OUT.

    Candidates are the environment's admissible actions. Ground truth (score, score progress, gold-path
    membership) is stored under each step's info, for measuring label quality only. With --target-success
    RATE, a pilot of --pilot-episodes per behaviour measures their success rates and the mixture closest to
    RATE is collected (one line says the measured rates and the choice). With --policy BUNDLE the bundle acts
    (in process, or through edge-serve with --serve) with the loop guard and the exploration --temperature or
    --epsilon sets, and each finished episode is appended to OUT by the robot's episode log writer.
    """
    if bundle is not None:
        _collect_deployed(ctx, spec_args=(env_name, params), split=split, episodes=episodes, bundle=bundle,
                          serve=serve, temperature=temperature, epsilon=epsilon, loop_guard=loop_guard,
                          max_steps=max_steps, seed=seed, out=out, progress=progress)  # fmt: skip
        return
    if serve or temperature is not None or epsilon or not loop_guard:
        raise click.UsageError("--serve, --temperature, --epsilon and --no-loop-guard go with --policy")
    if target_success is not None and (
        ctx.get_parameter_source("behaviour") != click.core.ParameterSource.DEFAULT
    ):
        raise click.UsageError("--target-success chooses the behaviour mixture: leave out --behaviour")
    try:
        spec = parse_env(env_name, params)
        cfg = CollectConfig(
            env=spec,
            split=split,
            episodes=episodes,
            behaviour=behaviour,
            noise=noise,
            seed=seed,
            max_steps=max_steps,
        )
        cfg.validate()
        world = open_env(spec, step_limit=max_steps)
    except (EnvError, BehaviourError, ValueError) as e:
        raise click.UsageError(str(e)) from None

    from models.progress import progress as progress_bar

    steps = successes = 0
    with (
        world as env,
        TrajectoryWriter(out) as writer,
        progress_bar(episodes, enabled=progress, unit="ep", desc="collect") as bar,
    ):
        if target_success is not None:
            pilot = pilot_mixture(cfg, target_success, pilot_episodes, env)
            click.echo(pilot.line())
            cfg = dataclasses.replace(cfg, behaviour=pilot.behaviour)
        t0 = time.perf_counter()
        for done, traj in enumerate(collect_episodes(cfg, env), start=1):
            writer.write(traj)
            steps += len(traj.steps)
            successes += traj.success
            bar.update(1)
            bar.set_postfix(steps=steps, success=f"{successes / done:.0%}")
    dt = time.perf_counter() - t0
    click.echo(
        f"wrote {out}: {episodes} episodes, {steps} steps, success {successes / episodes:.1%}, "
        f"{steps / dt:.0f} steps/s ({dt:.1f} s)"
    )


def _collect_deployed(ctx: click.Context, *, spec_args, bundle: Path, out: str, progress, **kw: Any) -> None:
    """``collect --policy``: the bundle acts, the episodes are appended through the robot's log writer."""
    from edge.episode_log import EpisodeLog, EpisodeLogError
    from models.progress import progress as progress_bar
    from policy.worlds.adapters.recorded import recorded_world
    from policy.worlds.deployed import DeployedConfig, collect_deployed

    scripted = [o for o in ("behaviour", "noise", "target_success") if _given(ctx, o)]
    if scripted:
        raise click.UsageError(f"--policy acts instead of a scripted behaviour: leave out --{scripted[0]}")
    try:
        cfg = DeployedConfig(env=parse_env(*spec_args), bundle=bundle, **kw)
        cfg.validate()
        log = EpisodeLog(out, world=recorded_world(bundle), task_type=cfg.env.task)
    except (EnvError, ValueError, EpisodeLogError) as e:
        raise click.UsageError(str(e)) from None
    steps = successes = 0
    t0 = time.perf_counter()
    try:
        with progress_bar(cfg.episodes, enabled=progress, unit="ep", desc="collect") as bar:
            for done, traj in enumerate(collect_deployed(cfg, log), start=1):
                steps += len(traj.steps)
                successes += traj.success
                bar.update(1)
                bar.set_postfix(steps=steps, success=f"{successes / done:.0%}")
    except EnvError as e:
        raise click.ClickException(str(e)) from None
    dt = time.perf_counter() - t0
    click.echo(
        f"appended to {out}: {cfg.episodes} episodes of {bundle}, {steps} steps, success "
        f"{successes / cfg.episodes:.1%}, {steps / dt:.0f} steps/s ({dt:.1f} s)"
    )


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) != click.core.ParameterSource.DEFAULT
