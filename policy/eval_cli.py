"""``edgejudge eval``: real rollouts of a bundle, a checkpoint, the LLM-as-agent or the random baseline.

Heavy imports happen inside the command: ``eval`` on a bundle never imports torch.
"""

from __future__ import annotations

import json

import click

from models.cli_options import env_option, fail, judge_option, progress_option, split_option


@click.command("eval")
@click.argument("policy_path", required=False, type=click.Path())
@click.option(
    "--agent",
    "agent_kind",
    default=None,
    type=click.Choice(["policy", "llm", "random"]),
    help="policy: POLICY_PATH (a checkpoint folder or a bundle folder); llm: the judge LLM picks the "
    "most likely candidate (baseline); random: uniform over admissible actions.",
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
    "--seed", default=0, show_default=True, type=int, help="Seed of --agent random and of --sample."
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
    "--loop-guard",
    is_flag=True,
    help="Per-episode memory (edge.loop_guard): an action that led back to a world state already visited is "
    "not taken again from where it was taken, nor any action twice in the same observation; the best-scored "
    "allowed one instead. What a client with per-episode memory runs (tools/drive_edge.py does).",
)
@click.option(
    "--strategy",
    default=None,
    help="An opt-in task strategy of the environment's adapter, composed over the policy instead of the "
    "plain loop guard (it keeps the guard); e.g. placement-search on twx:twc (put-away tasks: the policy "
    "ranks each object's places by hypothetical puts). Not a headline client: see docs/environments.md.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (with per-episode records).")
@progress_option()
def eval_cmd(
    policy_path,
    temperature,
    loop_guard,
    strategy,
    agent_kind,
    judge,
    env_name,
    params,
    split,
    episodes,
    max_steps,
    seed,
    as_json,
    progress,
) -> None:
    """Evaluate a policy by real rollouts: success rate with a 95 % Wilson interval, mean steps,
    invalid-action rate and per-action latency.

    POLICY_PATH is a checkpoint (from 'edgejudge train') or a bundle (from 'edgejudge export'). A bundle runs
    through onnxruntime alone, without torch, exactly as the robot runs it. The environment defaults to the
    one the policy was trained in; a policy trained on another state format is refused.
    """
    from policy.envs import EnvError, adapter_class, episode_policy, parse_env, strategy_class
    from policy.envs.recorded import check_world, default_env, recorded_world

    kind = agent_kind or "policy"
    if kind == "policy" and not policy_path:
        raise click.UsageError("give a checkpoint or bundle folder, or --agent llm / --agent random")
    if kind != "policy" and policy_path:
        raise click.UsageError(f"--agent {kind} takes no POLICY_PATH")
    if episodes < 1:
        raise click.UsageError("--episodes must be >= 1")
    if temperature is not None and (kind == "random" or not temperature > 0):
        raise click.UsageError("--sample takes a temperature > 0 and a policy or --agent llm")
    if loop_guard and (kind == "random" or temperature is not None):
        raise click.UsageError("--loop-guard needs a policy or --agent llm, without --sample")
    if strategy and temperature is not None:
        raise click.UsageError("--strategy ranks by the scores: it does not go with --sample")
    world: dict = {}
    if policy_path:
        try:
            world = recorded_world(policy_path)
        except Exception as e:  # noqa: BLE001 - a bundle or checkpoint that cannot be read: one clear line
            fail(f"{policy_path}: {e}")
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
    if policy_path:
        try:
            check_world(world, spec, what=str(policy_path))
        except EnvError as e:
            fail(str(e))

    agent = None
    try:
        if kind == "random":
            from policy.evaluate import RandomAgent

            agent = RandomAgent(seed)
        elif kind == "llm":
            from policy.llm_agent import open_llm_agent

            agent = open_llm_agent(judge)
        else:
            from policy.evaluate import open_policy

            agent = open_policy(policy_path)
    except Exception as e:  # noqa: BLE001 - one clear line for any load failure (bundle, checkpoint, judge)
        if isinstance(e, SystemExit):
            raise
        fail(str(e))

    from policy.evaluate import SampledAgent, evaluate

    if temperature is not None:
        agent = SampledAgent(agent, temperature, seed)
    agent = episode_policy(agent, spec, loop_guard=loop_guard, strategy=strategy)
    try:
        result = evaluate(agent, spec, split=split, episodes=episodes, max_steps=max_steps, progress=progress)
    finally:
        agent.close()
    if as_json:
        click.echo(json.dumps(result.to_dict(episodes=True), indent=2))
    else:
        click.echo(result.summary())
