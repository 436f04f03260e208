"""Do two labeled files carry the same labels of one method? Exit 0 when every step's labels are equal.

    python -m tools.setup.compare_labels coren a.jsonl.gz b.jsonl.gz \\
        [--channels contextual,structural,temporal]

Compares, step by step, ``labels[METHOD]`` (all channels, or only ``--channels``); prints the first
differences and the number of steps that differ.
"""

from __future__ import annotations

import click

from models.trajectory import DatasetError, read_trajectories


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("method")
@click.argument("a", type=click.Path(exists=True, dir_okay=False))
@click.argument("b", type=click.Path(exists=True, dir_okay=False))
@click.option("--channels", default="", help="Comma-separated channels to compare [default: all].")
def main(method: str, a: str, b: str, channels: str) -> None:
    """Compare METHOD's labels in files A and B step by step."""
    try:
        ta, tb = read_trajectories(a), read_trajectories(b)
    except DatasetError as e:
        raise click.ClickException(str(e)) from None
    if [t.id for t in ta] != [t.id for t in tb]:
        raise click.ClickException(f"{a} and {b} hold different trajectories")
    keep = [c.strip() for c in channels.split(",") if c.strip()]
    steps = differ = 0
    for x, y in zip(ta, tb, strict=True):
        for i, (sx, sy) in enumerate(zip(x.steps, y.steps, strict=True)):
            steps += 1
            lx, ly = sx.labels.get(method), sy.labels.get(method)
            if lx is None or ly is None:
                raise click.ClickException(f"{x.id} step {i}: no {method!r} labels in both files")
            if keep:
                lx, ly = {k: lx.get(k) for k in keep}, {k: ly.get(k) for k in keep}
            if lx != ly:
                differ += 1
                if differ <= 5:
                    diff = {
                        k: (lx.get(k), ly.get(k)) for k in sorted(set(lx) | set(ly)) if lx.get(k) != ly.get(k)
                    }
                    click.echo(f"{x.id} step {i}: {diff}", err=True)
    click.echo(f"{method}: {steps - differ} of {steps} steps identical")
    if differ:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
