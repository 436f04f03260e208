"""``edgejudge label spread``: an audit's marks spread to every step of a log, channel ``audit.spread``."""

from __future__ import annotations

import time

import click

from labeler.audit.agreement import MIN_JUDGE_CONSISTENCY
from labeler.audit.marks import UNSURE, MarksError, by_judge, current, default_marks_path, read_marks
from labeler.audit.spread import CHANNEL, METHOD, NAME, spread
from labeler.label_writer import closing_check, write_labeled
from models.trajectory import DatasetError, read_trajectories


@click.command("spread")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False), help="Labeled output (.jsonl or .jsonl.gz)."
)
@click.option(
    "--marks",
    "marks_path",
    type=click.Path(dir_okay=False),
    help="The marks file of 'edgejudge label audit' (default: FILE.audit.jsonl beside FILE).",
)
@click.option(
    "--by",
    help="Whose marks to spread (default: a person's when the file holds any, else the one judge's).",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the cross-fit folds.")
@click.option(
    "--check/--no-check",
    default=True,
    show_default=True,
    help="Print the label check of audit.spread (success flags only; `edgejudge label quality`).",
)
def spread_command(
    file: str, out: str, marks_path: str | None, by: str | None, seed: int, check: bool
) -> None:
    """Spread an audit's marks to every step of FILE and write OUT.

    An audit marks tens to a few hundred sampled steps. Each step of FILE gets labels["audit"]["spread"]:
    how the marked steps that did what it does (the same action, the same kind of response, the same verb
    on something the episode had shown) were marked in other episodes, progress against the rest. Each
    trajectory's values come from the marks of the others (cross-fitted over 5 folds), so the channel's
    agreement with the marks in 'edgejudge label quality OUT --audit MARKS' is a held-out figure: the
    auditor's consistency. A judge's marks under the check's consistency gate are printed as such: the
    check will not take their word for this channel or any other. Train on it with --reward audit.spread.
    """
    t0 = time.perf_counter()
    path = marks_path or str(default_marks_path(file))
    try:
        trajs = read_trajectories(file)
        marks = read_marks(path)
    except (DatasetError, MarksError) as e:
        raise click.ClickException(str(e)) from None
    who = _auditor(marks, by, path)
    standing = {k: m.mark == "progress" for k, m in current(marks, who).items() if m.mark != UNSURE}
    result = spread(trajs, standing, seed)
    if result.consistency is None:
        raise click.ClickException(
            f"{path}: {who}'s {result.marked} marks on {file} hold no progress mark or no other one: "
            "there is nothing to spread (mark more steps: 'edgejudge label audit')"
        )
    consistency = round(result.consistency, 4)
    provenance = {"by": who, "marks": result.marked, "consistency": consistency, "seed": seed}
    channels = ([{NAME: round(v, 6)} for v in values] for values in result.values)
    write_labeled(out, METHOD, ((t, c, provenance) for t, c in zip(trajs, channels, strict=True)))
    steps = sum(len(t.steps) for t in trajs)
    click.echo(
        f"wrote {out}: {len(trajs)} trajectories, {steps} steps, {result.marked} marks of {who} spread "
        f"({time.perf_counter() - t0:.1f} s)"
    )
    click.echo(f"consistency: {who}'s marks predicted from other episodes' at AUROC {result.consistency:.3f}")
    if by_judge(who) and result.consistency < MIN_JUDGE_CONSISTENCY:
        click.echo(
            f"warning: under {MIN_JUDGE_CONSISTENCY:.2f}: the judge marks the same kind of step "
            "differently across episodes; the check takes neither its marks nor this channel as step "
            "credit",
            err=True,
        )
    click.echo(f"next: edgejudge label quality {out} --audit {path}")
    if check:
        click.echo(closing_check(out, CHANNEL, trajs))


def _auditor(marks, by: str | None, path: str) -> str:
    """Whose marks: ``by``, or a person's when the file holds any, else its one judge (said in one line)."""
    names = list(dict.fromkeys(m.by for m in marks))
    if by is not None:
        if by not in names:
            raise click.ClickException(f"{path}: no marks by {by!r} (it holds marks by: {', '.join(names)})")
        return by
    if not names:
        raise click.ClickException(f"{path}: no marks (mark steps first: 'edgejudge label audit')")
    people = [n for n in names if not by_judge(n)]
    pick = people if people else names
    if len(pick) > 1:
        raise click.ClickException(f"{path}: marks by {', '.join(pick)}: name one with --by")
    if len(names) > 1:
        click.echo(f"spreading the marks of {pick[0]} (a person's before a judge's; --by names another)")
    return pick[0]
