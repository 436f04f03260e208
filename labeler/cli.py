"""``edgejudge data ...``: validate and inspect trajectory datasets."""

from __future__ import annotations

import json

import click

from labeler.dataset import DatasetError, ReadReport, dataset_stats, iter_trajectories


@click.group()
def data() -> None:
    """Validate and inspect trajectory datasets (JSONL or JSONL.gz, one trajectory per line)."""


@data.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option("--max-errors", default=20, show_default=True, help="Print at most this many errors.")
def validate(file: str, max_errors: int) -> None:
    """Check every line of FILE; print each problem as file:line: field: problem.

    Exits 0 when the file is valid, 1 otherwise.
    """
    report = ReadReport()
    try:
        for _ in iter_trajectories(file, skip_invalid=True, report=report):
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
    return "\n".join(lines)
