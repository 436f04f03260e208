"""The shared command-line options read the same everywhere: one name, one range, one help text.

Every command of ``edgejudge`` (all subcommand groups), ``edge-serve`` and the tools that take these options
is walked; each shared option found must be the one ``models.cli_options`` defines.
"""

from __future__ import annotations

import importlib

import click
import click.testing
import pytest

from models import cli_options as co

FACTORIES = {
    "--judge": [co.judge_option()],
    "--threads": [co.threads_option()],
    "--n-ctx": [co.n_ctx_option()],
    "--gpu-layers": [co.gpu_layers_option()],
    "--cache": [co.cache_option(), co.cache_option(required=True)],
    "--progress": [co.progress_option()],
    "--env": [co.env_option(), co.env_option(default=None)],
    "--split": [co.split_option()],
}


TOOLS = (
    "tools.bench.bench_judge",
    "tools.bench.bench_collect",
)


def _reference(decorator) -> click.Option:
    cmd = decorator(click.command()(lambda **_: None))
    (opt,) = cmd.params
    return opt


REFERENCE = {name: [_reference(d) for d in decorators] for name, decorators in FACTORIES.items()}


def _signature(opt: click.Option) -> tuple[str, str]:
    return (opt.help or "", repr(sorted(opt.type.to_info_dict().items())))


def _walk(cmd: click.Command, path: str):
    yield path, cmd
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            yield from _walk(cmd.get_command(ctx, name), f"{path} {name}")


def _tool_commands():
    for name in TOOLS:
        module = importlib.import_module(name)
        for attr in ("main", "cli"):
            if isinstance(getattr(module, attr, None), click.Command):
                yield from _walk(getattr(module, attr), f"python -m {name}")


def _all_commands():
    from edge.serve import main as edge_serve
    from models.cli import main as edgejudge

    yield from _walk(edgejudge, "edgejudge")
    yield from _walk(edge_serve, "edge-serve")
    yield from _tool_commands()


@pytest.fixture(scope="module")
def found() -> dict[str, list[tuple[str, click.Option]]]:
    out: dict[str, list[tuple[str, click.Option]]] = {name: [] for name in FACTORIES}
    for path, cmd in _all_commands():
        for p in cmd.params:
            if isinstance(p, click.Option):
                for name in FACTORIES:
                    if name in p.opts or "--model" in p.opts and name == "--judge":
                        out[name].append((path, p))
    return out


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_every_shared_option_is_the_shared_definition(found, name):
    assert found[name], f"no command takes {name}"
    allowed = {_signature(o) for o in REFERENCE[name]}
    different = [f"{path}: {_signature(o)}" for path, o in found[name] if _signature(o) not in allowed]
    assert different == [], f"{name} differs from models.cli_options"


def test_old_spellings_are_hidden_aliases_only(found):
    for path, opt in found["--judge"]:
        assert "--judge" in opt.opts, f"{path} still spells the judge option {opt.opts}"
        record = opt.get_help_record(click.Context(click.Command("x")))
        assert record is not None and "--model" not in record[0]


def test_the_hidden_alias_still_works():
    cmd = co.judge_option()(click.command()(lambda judge_ref: click.echo(judge_ref)))
    result = click.testing.CliRunner().invoke(cmd, ["--model", "my.gguf"])
    assert result.exit_code == 0 and result.output.strip() == "my.gguf"
