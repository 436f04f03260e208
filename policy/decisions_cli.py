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
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@threads_option()
def decisions(policy_path, data, min_decisions, as_json, threads):
    """Per-decision accuracy of a bundle or checkpoint against the actions of DATA (a trajectory file, e.g.
    expert episodes of held-out games), per verb (the first word of the logged action).

    Every step with more than one candidate is a decision: the policy is asked with the episode so far as
    its memory, as in a rollout, and counts as right when it picks the logged action. 'instead' lists the
    verbs it picked when wrong ('cook' under cook: the right verb with other arguments). A policy without
    recovery succeeds with about p^L (p: accuracy, L: path length), so one verb it gets wrong caps a world.
    """
    from labeler.dataset import DatasetError, read_trajectories
    from policy.decisions import decision_accuracy
    from policy.evaluate import open_policy

    try:
        trajectories = read_trajectories(data)
        policy = open_policy(policy_path, threads=threads)
    except (DatasetError, ValueError, OSError) as e:
        fail(str(e))
    with policy:
        report = decision_accuracy(policy, trajectories)
    if report.decisions == 0:
        fail(f"{data}: no step has more than one candidate with the logged action among them")
    if as_json:
        click.echo(json.dumps({"policy": str(policy_path), "data": str(data), **report.to_dict()}, indent=2))
        return
    click.echo(report.table(min_decisions=min_decisions))
    click.echo(
        f"{report.decisions} decisions in {report.episodes} episodes ({report.skipped} steps with one "
        "candidate "
        "or an action not among them)"
    )
