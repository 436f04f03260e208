"""``edgejudge data ...``: validate and inspect trajectory datasets, cut a success-scarce subset, rewrite a
log as a response-only log."""

from __future__ import annotations

import json

import click

from labeler.dataset_summary import dataset_stats, layout_summary
from models.log_layout import INFERRED_KEY
from models.state_layout import PLAIN_LAYOUT, StateLayout
from models.trajectory import (
    DatasetError,
    ReadReport,
    TrajectoryWriter,
    file_layout,
    iter_trajectories,
)


@click.group()
def data() -> None:
    """Validate, inspect and reshape trajectory datasets (JSONL or JSONL.gz, one trajectory per line)."""


@data.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option("--max-errors", default=20, show_default=True, help="Print at most this many errors.")
def validate(file: str, max_errors: int) -> None:
    """Check every line of FILE; print each problem as file:line: field: problem.

    Exits 0 when the file is valid, 1 otherwise.
    """
    report = ReadReport()
    try:
        for _ in iter_trajectories(file, skip_invalid=True, report=report, layouts=False):
            pass
    except DatasetError as e:  # file-level problems: missing, empty, corrupt gzip
        report.errors.append(e)
    for err in report.errors[:max_errors]:
        click.echo(str(err), err=True)
    if len(report.errors) > max_errors:
        click.echo(f"... and {len(report.errors) - max_errors} more", err=True)
    if report.errors:
        click.echo(
            f"{file}: INVALID ({len(report.errors)} problem(s), {report.read} valid trajectories)", err=True
        )
        raise SystemExit(1)
    click.echo(f"{file}: OK ({report.read} trajectories)")
    click.echo(f"state layout: {layout_summary(file)}")


@data.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as one JSON object.")
@click.option(
    "--skip-invalid", is_flag=True, help="Skip invalid lines (counted and reported) instead of failing."
)
def stats(file: str, as_json: bool, skip_invalid: bool) -> None:
    """Trajectories, steps, success rate, lengths, candidates per step, task types and label channels."""
    try:
        s = dataset_stats(file, skip_invalid=skip_invalid)
        s["state_layout"] = layout_summary(file)
    except DatasetError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps(s, indent=2))
        return
    click.echo(format_stats(s))


def format_stats(s: dict) -> str:
    lines = [
        f"dataset          {s['path']}",
        f"trajectories     {s['trajectories']}",
        f"steps            {s['steps']}",
        f"success rate     {s['success_rate']:.1%} ({s['successes']}/{s['trajectories']})",
        f"length           mean {s['mean_length']:.1f}, max {s['max_length']}",
        f"candidates/step  {s['mean_candidates']:.1f}",
        f"task types       {', '.join(f'{k}: {v}' for k, v in s['task_types'].items())}",
        f"label channels   {', '.join(s['label_channels']) or 'none'}",
    ]
    if s["skipped_lines"]:
        lines.append(f"skipped lines    {s['skipped_lines']}")
    if s.get("state_layout"):
        lines.append(f"state layout     {s['state_layout']}")
    return "\n".join(lines)


def _read_layout(path: str) -> StateLayout:
    """A layout file: JSON ``{"parts": [{"name", "label", "world", "unordered", "items"}, ...]}`` (no parts:
    plain text), or the word ``plain``."""
    if path == "plain":
        return PLAIN_LAYOUT
    try:
        with open(path, encoding="utf-8") as f:
            return StateLayout.from_dict(json.load(f))
    except (OSError, json.JSONDecodeError, ValueError) as e:
        raise click.ClickException(f"{path}: not a state layout ({e})") from None


@data.command()
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=str))
@click.option(
    "--set",
    "declared",
    metavar="LAYOUT",
    help="Declare the layout: a JSON file {\"parts\": [...]} (as printed by --json) or 'plain'.",
)
@click.option(
    "--write",
    is_flag=True,
    help="Record the layout (declared, or else inferred) in every trajectory's meta of FILE (rewritten "
    "atomically); without it nothing is written.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the layout as JSON (a file for --set).")
def layout(file: str, declared: str | None, write: bool, as_json: bool) -> None:
    """Show the state layout FILE's trajectories are read with and why; declare or record one.

    A state layout names the "Label: value" lines of a state text and their roles (the response to the last
    action, held items, recent actions, the world state). A file that records none gets one inferred from
    its texts (said in one line by every command that reads it); --write records it (or the one given with
    --set) so that the file says how it is laid out.
    """
    try:
        if declared is not None:
            chosen, why = _read_layout(declared), f"declared ({declared})"
        else:
            inferred = file_layout(file)
            if inferred is None:
                first = next(iter_trajectories(file, layouts=False))
                chosen, why = first.view.layout, layout_summary(file)
            else:
                chosen, why = inferred[0], f"inferred: {inferred[1]}"
        if as_json:
            click.echo(json.dumps(chosen.to_dict(), indent=2))
        else:
            click.echo(f"{file}: {why}")
            for p in chosen.parts:
                roles = [r for r, on in (("world", p.world), ("bag", p.unordered), ("list", p.items)) if on]
                click.echo(f"  {p.label + ':':<20} {p.name}" + (f" ({', '.join(roles)})" if roles else ""))
            if chosen.plain:
                click.echo(
                    "  (plain text: the whole state is the world state; a step's response is what its "
                    "next state adds)"
                )
        if write:
            n = 0
            with TrajectoryWriter(file) as w:  # a temp file that replaces FILE once all is written
                for t in iter_trajectories(file, layouts=False):
                    t.meta["state_layout"] = chosen.to_dict()
                    t.meta.pop(INFERRED_KEY, None)
                    w.write(t)
                    n += 1
            click.echo(f"recorded the layout in {n} trajectories of {file}", err=True)
    except DatasetError as e:
        raise click.ClickException(str(e)) from None


@data.command()
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=str))
@click.option(
    "--episodes",
    type=click.IntRange(1),
    help="Episodes to keep (the subset's size). Default: as many as the rate allows, every failed episode "
    "and the first successful ones.",
)
@click.option(
    "--max-success-rate",
    default=0.3,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="At most this share of the kept episodes successful.",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=str), help="File to write.")
def subset(file: str, episodes: int | None, max_success_rate: float, out: str) -> None:
    """Keep --episodes episodes of FILE of which at most --max-success-rate succeed: a success-scarce log.

    The first successful episodes (floor(rate x EPISODES), or all there are when fewer) and the first
    failed ones fill the subset, in file order: the same file always gives the same subset, and the subset
    of fewer episodes is inside the subset of more. Fails when FILE has too few failed episodes.

    \b
      edgejudge data subset pool.jsonl.gz --episodes 120 --max-success-rate 0.3 --out train120.jsonl.gz
    """
    from labeler.subset import SubsetError, most_episodes, scarce_subset
    from models.trajectory import read_trajectories, write_trajectories

    try:
        trajs = read_trajectories(file)
        n = episodes if episodes is not None else most_episodes(trajs, max_success_rate)
        kept = scarce_subset(trajs, n, max_success_rate)
    except (DatasetError, SubsetError) as e:
        raise click.ClickException(f"{file}: {e}") from None
    n = write_trajectories(out, kept)
    succ = sum(t.success for t in kept)
    click.echo(f"wrote {out}: {n} episodes of {file}, {succ} successful ({succ / n:.0%})")


@data.command()
@click.argument("logs", nargs=-1, required=True, type=click.Path(exists=True, path_type=str))
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=str), help="File to write.")
def merge(logs: tuple[str, ...], out: str) -> None:
    """Write LOGS (files, or folders of .jsonl / .jsonl.gz logs) as one log: a fleet's files, round after
    round, to label together (TRCA's episode-relative advantages and the potential's fit read the whole
    set).

    Episodes keep their labels and their order (files in the order given, a folder's by path); an episode
    id in two files is an error (the same episode twice would count twice). 'edgejudge train' also reads
    several logs at once.

    \b
      edgejudge data merge round-0.jsonl.gz robot-logs/ --out all.jsonl.gz
    """
    from models.log_set import log_files, read_logs
    from models.trajectory import write_trajectories

    try:
        files = log_files(logs)
        trajs = read_logs(files)
    except DatasetError as e:
        raise click.ClickException(str(e)) from None
    n = write_trajectories(out, trajs)
    succ = sum(t.success for t in trajs)
    click.echo(f"wrote {out}: {n} episodes of {len(files)} files, {succ} successful ({succ / n:.0%})")


@data.command("response-only")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True, path_type=str))
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=str), help="File to write.")
def response_only_cmd(files: tuple[str, ...], out: str) -> None:
    """Rewrite FILES (logs that record their state layout) as one response-only log.

    Each state becomes what many agent loggers record: the world's response to the previous action and the
    inventory line; next_observation is the bare response. The layout, environment and every info key but
    the ground truth (score, progress, gold) are dropped, so labelers read the log as plain text. Episodes
    are written in the order of FILES.
    """
    from labeler.response_only import response_only
    from models.trajectory import read_trajectories, write_trajectories

    kept = []
    for f in files:
        try:
            trajs = read_trajectories(f)
        except DatasetError as e:
            raise click.ClickException(str(e)) from None
        plain = [t.id for t in trajs if t.view.layout.plain]
        if plain:
            raise click.ClickException(
                f"{f}: {len(plain)} trajectories (first {plain[0]!r}) record no state layout: nothing tells "
                "their response from the rest of a state (see 'edgejudge data layout')"
            )
        kept += trajs
    n = write_trajectories(out, [response_only(t) for t in kept])
    click.echo(f"wrote {out}: {n} trajectories ({sum(t.success for t in kept)} successful), response-only")
