"""``edgejudge label quality``: AUROC of every label channel against ground truth (work in progress)."""

from __future__ import annotations

import click


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
def quality(file: str) -> None:
    """AUROC of each label channel in FILE vs score progress, gold-path membership and success."""
    raise click.ClickException("label quality: not implemented yet")
