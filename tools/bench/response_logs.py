"""Response-only logs: what many agent and robot loggers write, made from an adapter's log.

A raw agent log often records only what the agent was told at each step: **the response to its previous
action plus an inventory line**. The scene is described only when an action asks for it (ScienceWorld's
``look around``); ``next_observation`` is the bare response. :func:`response_only` rewrites an adapter's
trajectory into that shape from what the world itself returned:

- the response is the raw text the environment answered (``info["feedback"]`` when the adapter kept it,
  else the state's ``feedback`` part); the first state's is the scene the episode started in (the ``room``
  part, what the simulator's reset returns);
- the inventory line is ``Inventory: <the inventory part>``;
- the layout, state format, environment and parameters are removed from ``meta``; ``info`` keeps only the
  ground truth the quality measure reads (score, progress, gold).

Nothing the adapter composed (the room at every step, the recent actions, the focus line) is left.

    python -m tools.bench.response_logs ADAPTER_LOG... --out OUT [--episodes N --max-success-rate 0.3]
"""

from __future__ import annotations

import copy
from pathlib import Path

import click

from labeler.dataset import Trajectory, read_trajectories, write_trajectories
from models.state_layout import layout_of

GROUND_TRUTH = ("score", "progress", "gold", "gold_index")
"""The ``info`` keys kept: what :func:`labeler.quality.measure` reads, never a labeler."""


def _state(response: str, inventory: str | None) -> str:
    return response.strip() if inventory is None else f"{response.strip()}\nInventory: {inventory}"


def response_only(traj: Trajectory) -> Trajectory:
    """``traj`` as a response-only log records it (see the module docstring)."""
    out = copy.deepcopy(traj)
    layout = layout_of(traj.meta)
    first = layout.parse(traj.steps[0].observation) if traj.steps else {}
    previous = first.get("feedback") or first.get("room") or ""
    for s in out.steps:
        after = layout.parse(s.next_observation)
        response = str(s.info.get("feedback") or after.get("feedback", ""))
        s.observation = _state(previous, layout.parse(s.observation).get("inventory"))
        s.next_observation = response.strip()
        s.info = {k: v for k, v in s.info.items() if k in GROUND_TRUTH}
        previous = response
    for key in ("state_layout", "state_format", "env", "params"):
        out.meta.pop(key, None)
    return out


@click.command()
@click.argument(
    "sources", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path)
)
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The log to write."
)
@click.option("--episodes", type=click.IntRange(1), default=None, help="Keep this many of each source.")
@click.option(
    "--max-success-rate",
    type=click.FloatRange(0, 1),
    default=1.0,
    show_default=True,
    help="With --episodes: at most this share successful (the first of each kind kept).",
)
def main(sources: tuple[Path, ...], out: Path, episodes: int | None, max_success_rate: float) -> None:
    """Write SOURCES (adapters' logs) as one response-only log (see the module docstring)."""
    from tools.bench.matrix_store import scarce_subset

    kept = []
    for src in sources:
        trajs = read_trajectories(src)
        if episodes is not None:
            try:
                trajs = scarce_subset(trajs, episodes, max_success_rate)
            except ValueError as e:
                raise click.ClickException(f"{src}: {e}") from None
        kept += trajs
    n = write_trajectories(out, [response_only(t) for t in kept])
    click.echo(f"wrote {out}: {n} trajectories ({sum(t.success for t in kept)} successful), response-only")


if __name__ == "__main__":
    main()
