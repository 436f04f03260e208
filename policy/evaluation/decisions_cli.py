"""``edgejudge decisions``: how often a policy picks the logged action, per action verb.

Heavy imports happen inside the command: on a bundle it never imports torch.
"""

from __future__ import annotations

import json

import click

from models.cli_options import fail, threads_option


@click.command()
@click.argument("policy_path", type=click.Path())
@click.argument("data", type=click.Path(dir_okay=False))
@click.option(
    "--min-decisions",
    default=5,
    show_default=True,
    type=click.IntRange(min=1),
    help="Verbs with fewer decisions are summed in one row of the table.",
)
@click.option(
    "--replay",
    is_flag=True,
    help="Replay every miss in the episode's world (the file's episodes must name one, as edgejudge collect "
    "writes): the policy's pick instead of the logged action, then the policy with the loop guard to the "
    "end. Says which misses the episode recovers from and which cost it.",
)
@click.option(
    "--max-steps",
    default=40,
    show_default=True,
    type=click.IntRange(min=1),
    help="With --replay: the step limit of a replayed episode, counted from its start.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@threads_option()
def decisions(policy_path, data, min_decisions, replay, max_steps, as_json, threads):
    """Per-decision accuracy of a bundle or checkpoint against the actions of DATA (a trajectory file, e.g.
    expert episodes of held-out games), per verb (the first word of the logged action).

    Every step with more than one candidate is a decision: the policy is asked with the episode so far as
    its memory, as in a rollout, and counts as right when it picks the logged action. 'instead' lists the
    verbs it picked when wrong ('cook' under cook: the right verb with other arguments); 'later' counts the
    misses that pick an action the episode takes at a later step (another order, which may cost nothing:
    --replay tells). A policy without
    recovery succeeds with about p^L (p: accuracy, L: path length), so one verb it gets wrong caps a world.
    """
    from models.trajectory import DatasetError, read_trajectories
    from policy.evaluation.decisions import decision_accuracy
    from policy.evaluation.evaluate import open_policy
    from policy.evaluation.replay_misses import world_of

    try:
        trajectories = read_trajectories(data)
        policy = open_policy(policy_path, threads=threads)
    except (DatasetError, ValueError, OSError) as e:
        fail(str(e))
    if replay and all(world_of(t.meta) is None for t in trajectories):
        fail("--replay: the file's episodes name no simulated world (meta env, split, env_seed)")
    with policy:
        report = decision_accuracy(policy, trajectories)
        if report.decisions == 0:
            fail(f"{data}: no step has more than one candidate with the logged action among them")
        outcomes = replayed(policy, trajectories, report, max_steps) if replay else None
    if as_json:
        extra = {"replay": {v: o.to_dict() for v, o in outcomes.items()}} if outcomes is not None else {}
        payload = {"policy": str(policy_path), "data": str(data), **report.to_dict(), **extra}
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(report.table(min_decisions=min_decisions))
    click.echo(
        f"{report.decisions} decisions in {report.episodes} episodes ({report.skipped} steps with one "
        "candidate or an action not among them)"
    )
    if outcomes is not None:
        from policy.evaluation.replay_misses import outcome_table

        click.echo("")
        click.echo(outcome_table(outcomes, {v: (t.decisions, t.right) for v, t in report.verbs.items()}))


def replayed(policy, trajectories, report, max_steps):
    """The outcome of every miss of ``report`` (:mod:`policy.evaluation.replay_misses`); the CLI's error on a
    world that cannot be opened."""
    from policy.evaluation.replay_misses import replay_misses
    from policy.worlds.adapters import EnvError, open_env, parse_env
    from policy.worlds.episode_policy import episode_policy

    guarded: dict = {}

    def policy_for(env: str, params: str):
        if (env, params) not in guarded:
            guarded[(env, params)] = episode_policy(policy, parse_env(env, params), loop_guard=True)
        return guarded[(env, params)]

    try:
        return replay_misses(
            policy_for,
            trajectories,
            report.misses,
            lambda env, params: open_env(parse_env(env, params), step_limit=max_steps),
        )
    except EnvError as e:
        fail(f"--replay: {e}")
