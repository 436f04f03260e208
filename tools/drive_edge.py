"""Drive episodes of any environment adapter through a running (or freshly started) edge-serve daemon.

    python tools/drive_edge.py --bundle out/bundle --episodes 10 --split test   # starts edge-serve itself
    python tools/drive_edge.py --connect tcp://127.0.0.1:5555 --episodes 10     # uses a running daemon

Every step is one ``act`` request through the Python client (:class:`edge.agent.EdgeAgent`), on the state
text the adapter composes, with the episode wrappers composed over it as a robot's client would (the loop
guard keyed by the adapter's world key; an adapter's opt-in ``--strategy``). The environment defaults to the
one the bundle was trained in; a bundle trained on another state format is refused. Prints the success rate
(Wilson 95 % interval) and p50/p99 of the client round trip and of the daemon's own time; ``--json`` for
machines.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from models.cli_options import env_option, split_option, threads_option  # noqa: E402


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--bundle",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Start edge-serve on this bundle (on a free loopback port) for the run.",
)
@click.option("--connect", help="Use a running daemon instead (e.g. tcp://127.0.0.1:5555).")
@env_option(default=None)
@click.option("--params", default=None, help="The task's parameters, e.g. 'level=medium'.")
@split_option()
@click.option("--episodes", default=10, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--max-steps", default=40, show_default=True, type=click.IntRange(1, 1000))
@threads_option()
@click.option(
    "--timeout",
    default=5.0,
    show_default=True,
    type=click.FloatRange(0.01, 600),
    help="Client timeout per attempt, seconds.",
)
@click.option(
    "--loop-guard/--no-loop-guard",
    default=True,
    show_default=True,
    help="Keep per-episode memory in the client and never repeat an action in an observation where it was "
    "taken before (edge.loop_guard, keyed by the adapter's world key); --no-loop-guard takes the daemon's "
    "argmax every step.",
)
@click.option(
    "--strategy",
    default=None,
    help="An opt-in task strategy of the adapter instead of the plain guard (it keeps the guard), e.g. "
    "placement-search on twx:twc. Not a headline client.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def main(
    bundle: Path | None,
    connect: str | None,
    env_name: str | None,
    params: str | None,
    split: str,
    episodes: int,
    max_steps: int,
    threads: int | None,
    timeout: float,
    loop_guard: bool,
    strategy: str | None,
    as_json: bool,
) -> None:
    """Roll out episodes with edge-serve choosing every action; success rate and latency."""
    from edge.agent import EdgeAgent
    from edge.client import EdgeClient
    from edge.launch import LaunchError, start_daemon
    from models.bundle import BundleError, load_manifest
    from policy.envs import EnvError, episode_policy, parse_env, strategy_class
    from policy.envs.recorded import check_world, default_env
    from policy.evaluate import evaluate

    if (bundle is None) == (connect is None):
        raise click.UsageError(
            "give exactly one of --bundle (start a daemon) or --connect (use a running one)"
        )

    def world_spec(world: dict, what: str):
        """The environment to drive (the recorded one by default), checked against the bundle's format."""
        name, recorded_params = (env_name, params) if env_name else default_env(world)
        try:
            spec = parse_env(name, recorded_params if params is None else params)
            if strategy:
                strategy_class(spec, strategy)
            check_world(world, spec, what=what)
        except EnvError as e:
            raise click.ClickException(str(e)) from None
        return spec

    world: dict = {}
    proc = None
    if bundle is not None:
        try:
            world = load_manifest(bundle, verify=False).world
        except BundleError as e:
            raise click.ClickException(str(e)) from None
        spec = world_spec(world, f"bundle {bundle}")
        try:
            proc, connect = start_daemon(bundle, threads=threads, cwd=ROOT)
        except LaunchError as e:
            raise click.ClickException(str(e)) from None
    assert connect is not None
    try:
        with EdgeClient(connect, timeout=timeout, retries=2) as client:
            if bundle is None:
                world = dict(client.info().get("world") or {})
                spec = world_spec(world, f"the bundle served at {connect}")
            daemon = EdgeAgent(client)
            agent = episode_policy(daemon, spec, loop_guard=loop_guard, strategy=strategy)
            result = evaluate(agent, spec, split=split, episodes=episodes, max_steps=max_steps)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    lat = daemon.latency()
    out = {
        **result.to_dict(episodes=True),
        "model": daemon.model,
        "endpoint": connect,
        "latency": lat,
        "loop_guard": loop_guard or bool(strategy),
        "strategy": strategy,
        "guard_overrides": getattr(agent, "overrides", 0),
        "searches": getattr(agent, "searches", 0),
        "state_format": world.get("state_format", "twx/1"),
    }
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    lo, hi = result.ci95
    click.echo(
        f"edge-serve on {spec.name} {split}: success {result.success_rate:.1%} [{lo:.1%}, {hi:.1%}] over "
        f"{episodes} episodes ({result.actions} actions, invalid {result.invalid_action_rate:.1%})"
    )
    click.echo(
        f"latency per action: round trip p50 {lat['round_trip_ms_p50']:.2f} ms, p99 "
        f"{lat['round_trip_ms_p99']:.2f} ms; in the daemon p50 {lat['server_ms_p50']:.2f} ms, "
        f"p99 {lat['server_ms_p99']:.2f} ms; model {daemon.model[:12]}"
    )


if __name__ == "__main__":
    main()
