"""``edgejudge label audit``: mark sampled steps of a log in the terminal, one keystroke each."""

from __future__ import annotations

import click

from labeler.audit.marks import UNDONE, Mark, MarksError, append_mark, current, default_marks_path, read_marks
from labeler.audit.sample import StepRef, audited_channels, sample_steps
from labeler.audit.view import HELP, KEYS, render
from models.cli_options import cache_option, judge_option
from models.trajectory import DatasetError, read_trajectories


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--marks",
    "marks_path",
    type=click.Path(dir_okay=False),
    help="The marks file (default: FILE.audit.jsonl beside FILE). Marks are appended and synced one by one: "
    "a session resumes where the last one stopped.",
)
@click.option(
    "--steps",
    default=40,
    show_default=True,
    type=click.IntRange(1),
    help="Steps to audit: sampled across successful and failed episodes and where the label channels "
    "disagree most (about ten minutes for 40).",
)
@click.option(
    "--seed", default=0, show_default=True, help="Seed of the sample (the same seed, the same steps)."
)
@click.option(
    "--by", default="person", show_default=True, help="The person's name, recorded with each of their marks."
)
@click.option(
    "--auditor",
    type=click.Choice(["person", "judge"]),
    default="person",
    show_default=True,
    help="Who marks: a person in this terminal, or the local judge (--judge; no terminal: two prompts per "
    "step, a step marked only where they agree).",
)
@judge_option()
@cache_option()
def audit(
    file: str,
    marks_path: str | None,
    steps: int,
    seed: int,
    by: str,
    auditor: str,
    judge_ref: str,
    cache: str | None,
) -> None:
    """Mark sampled steps of FILE: did each move the episode toward its task?

    Each step shows the task, the episode so far in short, the state, the action and what followed (not the
    episode's outcome, nor the labels). One key per step: p progress, h harmful, n neither, s skip, u undo
    the last mark, q quit. Then 'edgejudge label quality FILE --audit MARKS' compares every label channel's
    step credit with the marks and names the channel they support.
    """
    try:
        trajs = read_trajectories(file)
    except DatasetError as e:
        raise click.ClickException(str(e)) from None
    path = marks_path or str(default_marks_path(file))
    if auditor == "judge":
        from labeler.audit.judge_audit import auditor_name

        by = auditor_name(judge_ref)
    try:
        done = current(read_marks(path), by)
    except MarksError as e:
        raise click.ClickException(str(e)) from None
    sample = sample_steps(trajs, steps, seed, audited_channels(trajs))
    todo = [r for r in sample if (r.id, r.step) not in done]
    if auditor == "judge":
        if todo:
            _judge_session(trajs, todo, path, judge_ref, by, cache, file)
        else:
            click.echo(f"{by} was asked every one of the {len(sample)} sampled steps already; {path}")
            click.echo(f"next: edgejudge label quality {file} --audit {path}")
        return
    made = _session(trajs, todo, path, by, already=len(sample) - len(todo), total=len(sample))
    marked = len(current(read_marks(path), by))
    click.echo(f"\n{made} marks made, {marked} steps marked by {by} in {path}")
    click.echo(f"next: edgejudge label quality {file} --audit {path}")


def _session(trajs, todo: list[StepRef], path: str, by: str, *, already: int, total: int) -> int:
    """Show each step of ``todo`` and record its key; returns the marks made (undos taken off)."""
    history: list[StepRef] = []
    i = made = 0
    note = ""
    while i < len(todo):
        ref = todo[i]
        click.clear()
        click.echo(f"step {already + i + 1} of {total} ({already + made} marked)  {note}".rstrip())
        click.echo(render(trajs[ref.traj], ref.step))
        try:
            key = click.getchar().lower()
        except (KeyboardInterrupt, EOFError):
            key = "q"
        answer = KEYS.get(key)
        note = ""
        if answer is None:
            note = f"(press one key: {HELP})"
        elif answer == "quit":
            break
        elif answer == "skip":
            i += 1
        elif answer == "undo":
            if not history:
                note = "(nothing to undo)"
                continue
            last = history.pop()
            append_mark(path, Mark(last.id, last.step, UNDONE, by))
            made -= 1
            i = todo.index(last)
            note = "(undone)"
        else:
            append_mark(path, Mark(ref.id, ref.step, answer, by))
            history.append(ref)
            made += 1
            i += 1
    return made


def _judge_session(
    trajs, todo: list[StepRef], path: str, judge_ref: str, by: str, cache: str | None, file: str
) -> None:
    """The judge's marks of the steps ``todo`` (those it has not marked yet), appended to ``path``."""
    import time

    from labeler.audit.judge_audit import judge_audit
    from labeler.judge import JudgeError, open_judge
    from labeler.trca.pipeline import default_cache

    t0 = time.perf_counter()
    try:
        with open_judge(judge_ref, cache=cache or default_cache()) as judge:
            result = judge_audit(trajs, todo, judge, by)
    except JudgeError as e:
        raise click.ClickException(str(e)) from None
    for m in result.marks:
        append_mark(path, m)
    progress = sum(m.mark == "progress" for m in result.marks)
    seconds = time.perf_counter() - t0
    click.echo(
        f"{by}: {result.agreed} of {result.asked} steps marked (its two prompts agreed; the others unsure), "
        f"{progress} "
        f"progress; {result.queries} queries ({result.cached} cached), {seconds:.1f} s; {path}"
    )
    click.echo(f"next: edgejudge label quality {file} --audit {path}")
