"""``edgejudge envs``: the registered environment adapters, their tasks and parameters (``envs [NAME]``,
``envs show [NAME]``), and ``envs check NAME``: the adapter contract (:mod:`policy.worlds.collection_check`)
on a few tiny real episodes of any registered adapter."""

from __future__ import annotations

import json
import sys

import click

from policy.worlds.adapters import EnvError, adapter_class, adapters, parse_env
from policy.worlds.adapters.contract import run_contract
from policy.worlds.collection_check import CHECKS


class _EnvsGroup(click.Group):
    """``envs`` with a subcommand; anything else (nothing, a NAME, an option) is ``envs show``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ctx.help_option_names):
            args = ["show", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_EnvsGroup)
def envs() -> None:
    """The environment adapters: list them (edgejudge envs [NAME]) or check one's contract
    (edgejudge envs check NAME)."""


@envs.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def show(name: str | None, as_json: bool) -> None:
    """List the environment adapters (ADAPTER:TASK names); with NAME (an adapter or ADAPTER:TASK), its
    tasks' parameters, splits and state format. The default subcommand: edgejudge envs [NAME]."""
    adapter, _, task = (name or "").partition(":")
    try:
        names = [adapter] if adapter else sorted(adapters())
        out = []
        for a in names:
            try:
                cls = adapter_class(a)
            except EnvError as e:
                if adapter:
                    raise
                out.append({"adapter": a, "error": str(e)})
                continue
            if task and task not in cls.tasks:
                raise EnvError(f"unknown {a} task {task!r}: expected one of {', '.join(cls.tasks)}")
            for t, text in cls.tasks.items():
                if task and t != task:
                    continue
                row = {"env": f"{a}:{t}", "description": text}
                if name:
                    row.update(
                        splits=list(cls.splits),
                        state_format=cls.state_format,
                        strategies=list(cls.strategies),
                        parameters={
                            k: {"default": p.default, "help": p.help, "choices": p.choices}
                            for k, p in cls.parameters(t).items()
                        },
                    )
                out.append(row)
    except EnvError as e:
        raise click.UsageError(str(e)) from None
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    for row in out:
        if "error" in row:
            click.echo(f"{row['adapter']}: unavailable ({row['error']})")
            continue
        click.echo(f"{row['env']:48s} {row['description']}")
        if name:
            click.echo(f"    splits {', '.join(row['splits'])}; state format {row['state_format']}")
            for k, p in row["parameters"].items():
                choices = f" ({', '.join(p['choices'])})" if p["choices"] else ""
                click.echo(f"    --params {k}=...  default {p['default']!r}{choices}: {p['help']}")
            if row["strategies"]:
                click.echo(f"    strategies (opt-in): {', '.join(row['strategies'])}")


@envs.command()
@click.argument("name")
@click.option("--params", default=None, help="The task's parameters, key=value comma-separated.")
@click.option(
    "--max-steps",
    default=30,
    show_default=True,
    type=click.IntRange(min=1),
    help="Step limit of the checks' episodes.",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="CHECK",
    help=f"Run only this check (repeatable): {', '.join(CHECKS)}.",
)
def check(name: str, params: str | None, max_steps: int, only: tuple[str, ...]) -> None:
    """Run the adapter contract on NAME (ADAPTER:TASK, any registered adapter, including one named in
    EDGEJUDGE_ENVS or an entry point) on a few tiny real episodes: one line per check (PASS, FAIL with the
    reason, or SKIP where it does not apply); exit status 1 on any failure.

    The checks (policy/worlds/collection_check.py): it describes itself, reset and step give states composed
    by its compose, gold paths are admissible and succeed, the same actions give the same texts, the splits
    are disjoint, an invalid answer spends a step, collection records the world and the labelers never read
    info, and no state text carries the score or other info ground truth."""
    unknown = [c for c in only if c not in CHECKS]
    try:
        if unknown:
            raise EnvError(f"unknown check {unknown[0]!r}: expected one of {', '.join(CHECKS)}")
        spec = parse_env(name, params)
    except EnvError as e:
        raise click.UsageError(str(e)) from None
    counts = {"pass": 0, "fail": 0, "skip": 0}
    checks = {c: CHECKS[c] for c in only} if only else CHECKS
    for result in run_contract(spec, step_limit=max_steps, checks=checks):
        counts[result.status] += 1
        reason = f": {result.reason}" if result.reason else ""
        click.echo(f"{result.status.upper():4s} {result.name}{reason}")
    click.echo(f"{spec}: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    if counts["fail"]:
        sys.exit(1)
