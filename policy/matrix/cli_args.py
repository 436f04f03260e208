"""What the matrix's two commands share: the command line a run records, where its full rows go, the
comma-separated options read, and the worlds' adapters checked before any work."""

from __future__ import annotations

import os
from pathlib import Path

import click

PRESET_HELP = (
    "twc-easy, twc-medium, twc-hard, cookingworld-small, cookingworld-large, scienceworld-find-animal, "
    "scienceworld-lifespan-longest-lived"
)


class RecordedCommand(click.Command):
    """A command that keeps its own arguments (``ctx.meta["argv"]``): the results record the command line
    that made them, whichever way the command was started."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["argv"] = list(args)
        return super().parse_args(ctx, args)


class RecordedGroup(click.Group):
    """:class:`RecordedCommand` for the group: ``edgejudge matrix`` runs the policy matrix itself, and its
    subcommand ``labels`` the label grid (which records its own arguments in turn)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["argv"] = list(args)
        return super().parse_args(ctx, args)


def recorded_args(argv: list[str]) -> list[str]:
    """The command line without the options that only say where rows come from (--merge, --report-only,
    --work-dir): the command that makes the same rows."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--merge", "--work-dir"):
            skip = True
        elif a != "--report-only" and not a.startswith(("--merge=", "--work-dir=")):
            out.append(a)
    return out


def full_rows(work_dir: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Where a run keeps its full rows (with the per-episode arrays the rows file leaves out): beside its
    work, named after the rows file."""
    return Path(work_dir) / "rows" / f"{Path(out).name}.full.json"


def ints(text: str | None, option: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        msg = f"{text!r}: expected integers separated by commas"
        raise click.BadParameter(msg, param_hint=option) from None


def words(text: str | None) -> tuple[str, ...] | None:
    return tuple(x.strip() for x in text.split(",") if x.strip()) if text else None


def check_adapters(worlds) -> None:
    """Every world's adapter is registered (a typo fails here, not after an hour of other worlds)."""
    from policy.worlds.adapters.registry import HOW_TO_REGISTER, adapters

    try:
        known = adapters()
    except Exception as e:  # a bad EDGEJUDGE_ENVS entry
        raise click.ClickException(str(e)) from None
    for w in worlds:
        name = w.env.split(":")[0]
        if name not in known:
            raise click.BadParameter(
                f"{w.label}: unknown environment adapter {name!r}: expected one of "
                f"{', '.join(sorted(known))}; {HOW_TO_REGISTER}",
                param_hint="--world",
            )
