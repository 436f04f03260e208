"""``edgejudge envs``: the registered environment adapters, their tasks and parameters."""

from __future__ import annotations

import json

import click

from policy.envs.base import EnvError
from policy.envs.registry import adapter_class, adapters


@click.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def envs(name: str | None, as_json: bool) -> None:
    """List the environment adapters (ADAPTER:TASK names); with NAME (an adapter or ADAPTER:TASK), its
    tasks' parameters, splits and state format."""
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
