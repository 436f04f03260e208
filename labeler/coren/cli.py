"""``edgejudge label coren``: the COREN labeler's command line (work in progress)."""

from __future__ import annotations

import click


@click.command()
@click.argument("in_path", metavar="IN", type=click.Path(dir_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Output .jsonl or .jsonl.gz.")
def coren(in_path: str, out: str) -> None:
    """Add COREN reward channels (contextual, structural, temporal, ensemble) to every step of IN."""
    raise click.ClickException("label coren: not implemented yet")
