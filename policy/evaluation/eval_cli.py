"""``edgejudge eval``: real rollouts of a bundle, a checkpoint, the LLM-as-agent or the random baseline, in
process or through an edge-serve daemon (``--serve`` starts one on the bundle, ``--connect`` reaches one).

Heavy imports happen inside the command: ``eval`` on a bundle never imports torch.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import click

from models.cli_options import (
    env_option,
    fail,
    judge_option,
    progress_option,
    split_option,
    threads_option,
)


@click.command("eval")
@click.argument("policy_path", required=False, type=click.Path())
@click.option(
    "--baseline",
    default=None,
    type=click.Choice(["llm", "random"]),
    help="Evaluate a baseline instead of POLICY_PATH: llm (the judge LLM picks the most likely candidate) or "
    "random (uniform over the admissible actions).",
)
@click.option(
    "--serve",
    is_flag=True,
    help="Start edge-serve on the bundle POLICY_PATH (on a free loopback port) and drive every step through "
    "it with the Python client, as a robot does; the daemon is stopped at the end. Adds the daemon's model, "
    "endpoint and latency (client round trip and the daemon's own time, p50/p99) to the result.",
)
@click.option(
    "--connect",
    "address",
    default=None,
    metavar="ADDRESS",
    help="Drive the episodes through a running edge-serve instead (e.g. tcp://127.0.0.1:5555; no "
    "POLICY_PATH): the environment defaults to the one its bundle was trained in. Same result as --serve.",
)
@judge_option("judge")
@env_option(default=None)
@click.option(
    "--params", default=None, help="The task's parameters, e.g. 'level=medium' (default: the smallest)."
)
@split_option()
@click.option(
    "--episodes", default=20, show_default=True, type=int, help="Episodes (first N seeds of the split)."
)
@click.option("--max-steps", default=40, show_default=True, type=int, help="Step limit per episode.")
@click.option(
    "--seed", default=0, show_default=True, type=int, help="Seed of --baseline random and of --sample."
)
@click.option(
    "--sample",
    "temperature",
    type=float,
    default=None,
    help="Sample from softmax(scores / T) instead of the argmax (an evaluation option; the bundle and "
    "the daemon return the argmax).",
)
@click.option(
    "--loop-guard/--no-loop-guard",
    default=None,
    help="Per-episode memory on the client side (edge.loop_guard, keyed by the environment's world key): an "
    "action that led back to a world state already visited is not taken again from where it was taken, nor "
    "any action twice in the same state; the best-scored allowed one instead. [default: on, in process as "
    "with --serve and --connect: the headline numbers are measured with it; --no-loop-guard takes the argmax "
    "every step; --baseline random and --sample pick by themselves and run without it]",
)
@click.option(
    "--strategy",
    default=None,
    help="An opt-in task strategy of the environment's adapter, composed over the policy instead of the "
    "plain loop guard (it keeps the guard); e.g. placement-search on twx:twc (put-away tasks: the policy "
    "ranks each object's places by hypothetical puts). Not a headline client: see docs/environments.md.",
)
@threads_option()
@click.option(
    "--timeout",
    default=5.0,
    show_default=True,
    type=click.FloatRange(0.01, 600),
    help="With --serve or --connect: the client's timeout per request attempt, seconds.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (with per-episode records).")
@click.option(
    "--trace",
    is_flag=True,
    help="With --json: each episode's record also holds its steps (the action taken, the number of "
    "candidates, the world's feedback and the score after it), to see what the policy did.",
)
@progress_option()
def eval_cmd(
    policy_path,
    baseline,
    serve,
    address,
    judge,
    env_name,
    params,
    split,
    episodes,
    max_steps,
    seed,
    temperature,
    loop_guard,
    strategy,
    threads,
    timeout,
    as_json,
    trace,
    progress,
) -> None:
    """Evaluate a policy by real rollouts: success rate with a 95 % Wilson interval, mean steps,
    invalid-action rate and per-action latency.

    POLICY_PATH is a checkpoint (from 'edgejudge train') or a bundle (from 'edgejudge export'). A bundle runs
    through onnxruntime alone, without torch, exactly as the robot runs it: in process by default, or inside
    edge-serve with --serve (a daemon started for the run) or --connect (a running one). The environment
    defaults to the one the policy was trained in; a policy trained on another state format is refused.
    --threads sets the bundle's onnxruntime threads, in process or in the daemon --serve starts.
    """
    from models.state_layout import policy_world, state_format_of
    from policy.worlds.adapters import adapter_class
    from policy.worlds.adapters.recorded import recorded_world
    from policy.worlds.episode_policy import episode_policy

    kind = baseline or "policy"
    daemon_mode = serve or address is not None
    _check_options(
        kind, policy_path, serve, address, episodes, trace, as_json, temperature, loop_guard, strategy
    )
    guard = loop_guard is not False and not (kind == "random" or temperature is not None)
    world: dict = {}
    spec = None
    if policy_path:
        try:
            world = recorded_world(policy_path)
        except Exception as e:  # noqa: BLE001 - a bundle or checkpoint that cannot be read: one clear line
            fail(f"{policy_path}: {e}")
    if address is None:  # the world is known before any daemon starts
        spec = _world_spec(world, env_name, params, strategy, str(policy_path) if policy_path else None)

    with ExitStack() as stack:
        client = None
        if daemon_mode:
            from edge.client import EdgeClient
            from edge.launch import LaunchError, served

            if serve:
                try:
                    address = stack.enter_context(served(policy_path, threads=threads))
                except LaunchError as e:
                    fail(str(e))
            client = stack.enter_context(EdgeClient(address, timeout=timeout, retries=2))
            if spec is None:
                world = dict(_daemon_call(address, client.info).get("world") or {})
                spec = _world_spec(world, env_name, params, strategy, f"the bundle served at {address}")
        policy, daemon, requests = _open_policy(kind, policy_path, judge, seed, threads, client)

        from edge.policies import Sampled
        from policy.evaluation.evaluate import evaluate

        if temperature is not None:
            policy = Sampled(policy, temperature, seed)
        policy = episode_policy(policy, spec, loop_guard=guard, strategy=strategy)
        stack.callback(policy.close)
        run = partial(
            evaluate,
            policy,
            spec,
            split=split,
            episodes=episodes,
            max_steps=max_steps,
            progress=progress,
            trace=trace,
        )
        result = _daemon_call(address, run) if daemon_mode else run()

    out: dict[str, Any] = {
        **result.to_dict(episodes=True),
        "loop_guard": guard or bool(strategy),
        "strategy": strategy,
        "guard_overrides": getattr(policy, "overrides", 0),
        "searches": getattr(policy, "searches", 0),
        # the format the policy was trained on; a baseline reads the adapter's own texts
        "state_format": (
            state_format_of(policy_world(world))
            if kind == "policy"
            else adapter_class(spec.adapter).state_format
        ),
    }
    if daemon is not None:
        out |= _latency(daemon, requests, address)
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    click.echo(result.summary())
    if daemon is not None:
        lat = out["latency"]
        click.echo(
            f"edge-serve at {address}, per request: round trip p50 {lat['round_trip_ms_p50']:.2f} ms, p99 "
            f"{lat['round_trip_ms_p99']:.2f} ms; in the daemon p50 {lat['server_ms_p50']:.2f} ms, "
            f"p99 {lat['server_ms_p99']:.2f} ms; model {daemon.model[:12]}"
        )


def _check_options(
    kind, policy_path, serve, address, episodes, trace, as_json, temperature, loop_guard, strategy
) -> None:
    """The option combinations that cannot run, each refused with a usage error that says why."""
    daemon_mode = serve or address is not None
    if serve and address is not None:
        raise click.UsageError("give --serve (start a daemon on POLICY_PATH) or --connect ADDRESS, not both")
    if address is not None and policy_path:
        raise click.UsageError("--connect drives the daemon's own bundle: it takes no POLICY_PATH")
    if kind == "policy" and not policy_path and address is None:
        raise click.UsageError(
            "give a checkpoint or bundle folder, --connect ADDRESS, or --baseline llm / --baseline random"
        )
    if kind != "policy" and (policy_path or daemon_mode):
        raise click.UsageError(f"--baseline {kind} takes no POLICY_PATH, --serve or --connect")
    if serve and not (Path(policy_path) / "manifest.json").is_file():
        raise click.UsageError(f"--serve runs a bundle (from 'edgejudge export'): {policy_path} is not one")
    if episodes < 1:
        raise click.UsageError("--episodes must be >= 1")
    if trace and not as_json:
        raise click.UsageError("--trace records the steps in the JSON result: give --json too")
    if temperature is not None and (kind == "random" or not temperature > 0):
        raise click.UsageError("--sample takes a temperature > 0 and a policy or --baseline llm")
    if loop_guard and (kind == "random" or temperature is not None):
        raise click.UsageError("--loop-guard needs a policy or --baseline llm, without --sample")
    if strategy and temperature is not None:
        raise click.UsageError("--strategy ranks by the scores: it does not go with --sample")


def _open_policy(kind: str, policy_path, judge, seed: int, threads, client):
    """(the policy, the daemon's policy or None, its timed requests or None): a baseline, the daemon behind
    ``client``, or a checkpoint or bundle in process."""
    daemon = requests = None
    try:
        if kind == "random":
            from policy.evaluation.evaluate import RandomPolicy

            return RandomPolicy(seed), None, None
        if kind == "llm":
            from policy.evaluation.llm_policy import open_llm_policy

            return open_llm_policy(judge), None, None
        if client is not None:
            from edge.edge_policy import EdgePolicy
            from edge.policies import Timed

            daemon = EdgePolicy(client)
            requests = Timed(daemon)  # the client round trip of every request
            return requests, daemon, requests
        from policy.evaluation.evaluate import open_policy

        return open_policy(policy_path, threads=threads), None, None
    except Exception as e:  # noqa: BLE001 - one clear line for any load failure (bundle, checkpoint, judge)
        fail(str(e))


def _latency(daemon, requests, address: str) -> dict[str, Any]:
    """The JSON result's daemon part: its model, endpoint and per-request latency."""
    from edge.policies import percentile

    return {
        "model": daemon.model,
        "endpoint": address,
        "latency": {
            "n": len(requests.ms),
            "round_trip_ms_p50": requests.percentile(0.5),
            "round_trip_ms_p99": requests.percentile(0.99),
            "server_ms_p50": percentile(daemon.server_ms, 0.5),
            "server_ms_p99": percentile(daemon.server_ms, 0.99),
        },
    }


def _daemon_call(address: str, call):
    """``call()``; a daemon that answers with an error or not at all ends the command with one line."""
    from edge.client import EdgeError, EdgeTimeout

    try:
        return call()
    except (EdgeError, EdgeTimeout) as e:
        fail(f"edge-serve at {address}: {e}")


def _world_spec(
    world: dict, env_name: str | None, params: str | None, strategy: str | None, what: str | None
):
    """The environment to run (the recorded one by default), checked against the state format of the policy
    named ``what`` (None: a baseline, nothing to check)."""
    from policy.worlds.adapters import EnvError, adapter_class, parse_env
    from policy.worlds.adapters.recorded import check_world, default_env
    from policy.worlds.episode_policy import strategy_class

    try:
        if env_name is None:
            env_name, recorded_params = default_env(world)
            params = recorded_params if params is None else params
        spec = parse_env(env_name, params)
        if strategy:
            strategy_class(spec, strategy)
    except EnvError as e:
        raise click.UsageError(str(e)) from None
    if not adapter_class(spec.adapter).needs_simulator:
        fail(f"{spec.name} replays logged episodes: evaluating a policy needs a simulator of the world")
    if what is not None:
        try:
            check_world(world, spec, what=what)
        except EnvError as e:
            fail(str(e))
    return spec
