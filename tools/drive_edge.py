"""Drive TextWorldExpress episodes through a running (or freshly started) edge-serve daemon.

    python tools/drive_edge.py --bundle out/bundle --episodes 10 --split test   # starts edge-serve itself
    python tools/drive_edge.py --connect tcp://127.0.0.1:5555 --episodes 10     # uses a running daemon

Every step is one ``act`` request through the Python client (:class:`edge.agent.EdgeAgent`), on the composed
state text (the adapter's ``compose``) the policy was trained on. Prints the success rate (Wilson
95 % interval) and p50/p99 of the client round trip and of the daemon's own time; ``--json`` for machines.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--bundle",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Start edge-serve on this bundle (on a free loopback port) for the run.",
)
@click.option("--connect", help="Use a running daemon instead (e.g. tcp://127.0.0.1:5555).")
@click.option("--env", "env_name", default="twx:twc", show_default=True, help="twx:twc or twx:cookingworld.")
@click.option("--params", default=None, help="Game parameters (default: the adapter's small configuration).")
@click.option("--split", default="test", show_default=True, type=click.Choice(["train", "dev", "test"]))
@click.option("--episodes", default=10, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--max-steps", default=40, show_default=True, type=click.IntRange(1, 1000))
@click.option(
    "--threads",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="onnxruntime threads of a daemon started here.",
)
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
    "taken before (edge.loop_guard); --no-loop-guard takes the daemon's argmax every step.",
)
@click.option(
    "--placement-search/--no-placement-search",
    default=False,
    show_default=True,
    help="Put-away tasks: rank each object's places by the daemon's scores of hypothetical puts (closed "
    "containers included) and move to the next best joint placement while the episode goes on "
    "(edge.placement_search; keeps the loop guard).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def main(
    bundle: Path | None,
    connect: str | None,
    env_name: str,
    params: str | None,
    split: str,
    episodes: int,
    max_steps: int,
    threads: int,
    timeout: float,
    loop_guard: bool,
    placement_search: bool,
    as_json: bool,
) -> None:
    """Roll out TWX episodes with edge-serve choosing every action; success rate and latency."""
    from edge.agent import EdgeAgent
    from edge.client import EdgeClient
    from edge.launch import LaunchError, start_daemon
    from policy.envs import EnvError, adapter_class, parse_env
    from policy.evaluate import evaluate

    if (bundle is None) == (connect is None):
        raise click.UsageError(
            "give exactly one of --bundle (start a daemon) or --connect (use a running one)"
        )
    try:
        spec = parse_env(env_name, params)
    except EnvError as e:
        raise click.BadParameter(str(e), param_hint="--env/--params") from None
    proc = None
    if bundle is not None:
        try:
            proc, connect = start_daemon(bundle, threads=threads, cwd=ROOT)
        except LaunchError as e:
            raise click.ClickException(str(e)) from None
    assert connect is not None
    try:
        with EdgeClient(connect, timeout=timeout, retries=2) as client:
            agent = EdgeAgent(
                client,
                loop_guard=loop_guard,
                placement_search=placement_search,
                world_key=adapter_class(spec.adapter).world_key,
            )
            result = evaluate(agent, spec, split=split, episodes=episodes, max_steps=max_steps)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    lat = agent.latency()
    out = {
        **result.to_dict(),
        "model": agent.model,
        "endpoint": connect,
        "latency": lat,
        "loop_guard": loop_guard,
        "guard_overrides": agent.overrides,
        "placement_search": placement_search,
        "searches": agent.searches,
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
        f"p99 {lat['server_ms_p99']:.2f} ms; model {agent.model[:12]}"
    )


if __name__ == "__main__":
    main()
