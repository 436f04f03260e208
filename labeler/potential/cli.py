"""``edgejudge label potential``: the success-model potential's ΔΦ on every step (no judge, no GPU)."""

from __future__ import annotations

import time

import click

from labeler.label_writer import closing_check, write_labeled
from labeler.potential.model import PotentialConfig, PotentialError, StepPotential, crossfit
from models.trajectory import DatasetError, read_trajectories

METHOD = "potential"


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False), help="Labeled output (.jsonl or .jsonl.gz)."
)
@click.option(
    "--folds",
    default=PotentialConfig.folds,
    show_default=True,
    type=click.IntRange(2),
    help="Cross-fitting folds (fewer when the log has fewer successes or failures).",
)
@click.option(
    "--l2",
    default=PotentialConfig.l2,
    show_default=True,
    type=click.FloatRange(0.0, min_open=True),
    help="L2 penalty on the model's weights (larger: smoother, closer to zero).",
)
@click.option("--seed", default=PotentialConfig.seed, show_default=True, help="Seed of the fold split.")
@click.option(
    "--check/--no-check",
    default=True,
    show_default=True,
    help="Print the label check of potential.delta (success flags only; `edgejudge label quality`).",
)
def potential(file, out, folds, l2, seed, check) -> None:
    """Label FILE with the success-model potential and write OUT.

    A logistic model over episode prefixes, fit on FILE's own success flags, gives each prefix a potential
    Φ (the log-odds that the episode succeeds); a step's reward labels["potential"]["delta"] is ΔΦ, what
    the step's new evidence moved it, and labels["potential"]["phi"] is Φ after the step;
    labels["potential"]["support"] scores the step by how much more often the successful trajectories than
    the failed ones also did what it does (--reward potential.support). Each trajectory is
    labeled by a model fit without it (cross-fitted over --folds folds). A step is read from its text and
    the episode so far (the action, the response, where the action's argument was named), so a log whose
    states show only the last response is read as well as a full-state one. Train on it with
    --reward potential. Needs at least 2 successful and 2 failed trajectories; all task types are fit
    together (shared and per-task features).
    """
    t0 = time.perf_counter()
    try:
        trajs = read_trajectories(file)
        cfg = PotentialConfig(folds=folds, l2=l2, seed=seed)
        labels = crossfit(trajs, cfg)
    except (DatasetError, PotentialError) as e:
        raise click.ClickException(str(e)) from None
    provenance = {"folds": cfg.folds, "l2": cfg.l2, "seed": cfg.seed, "fitted_on": "success flags"}
    write_labeled(out, METHOD, ((t, _channels(p), provenance) for t, p in zip(trajs, labels, strict=True)))
    steps = sum(len(t.steps) for t in trajs)
    click.echo(f"wrote {out}: {len(trajs)} trajectories, {steps} steps ({time.perf_counter() - t0:.1f} s)")
    if check:
        click.echo(closing_check(out, f"{METHOD}.delta", trajs))


def _channels(steps: list[StepPotential]) -> list[dict[str, float]]:
    """``labels["potential"]`` of a trajectory's steps."""
    return [
        {"delta": round(p.delta, 6), "phi": round(p.phi, 6), "support": round(p.support, 6)} for p in steps
    ]
