"""A click group whose subcommands are named by ``"module:attribute"`` strings and imported only when run.

A command line can then name commands of every layer without importing them: a robot that installed only
``edgejudge[edge]`` runs ``edgejudge query`` without torch or llama_cpp, and ``--help`` lists every command
with its one-line summary read from the command's source (its docstring, or its ``help=``/``short_help=``),
so listing the commands imports none of them and works whatever is installed. Stdlib and click only.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

import click

MISSING_DEPENDENCY = "install the matching extra, e.g. pip install 'edgejudge[label,train,env]'"


def module_source(module_name: str) -> Path | None:
    """The ``.py`` file of ``module_name``, found without importing it or its parent packages (only the
    top-level package is located)."""
    top, *rest = module_name.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if not spec.submodule_search_locations:  # a top-level module
        origin = Path(spec.origin) if not rest and spec.origin else None
        return origin if origin is not None and origin.suffix == ".py" else None
    for root in spec.submodule_search_locations:
        base = Path(root).joinpath(*rest)
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path
    return None


def _constant_keyword(call: ast.expr, name: str) -> str | None:
    """A string keyword of a ``@click.command(...)`` / ``@click.group(...)`` decorator (options' ``help=``
    are not the command's)."""
    if isinstance(call, ast.Call):
        func = call.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called not in ("command", "group"):
            return None
        for kw in call.keywords:
            if kw.arg == name and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                return kw.value.value
    return None


def static_short_help(target: str, limit: int = 45) -> str | None:
    """The one-line summary click would show for the command at ``"module:attribute"``, read from the
    module's source without importing it; ``None`` when the source or the function is not found."""
    module_name, _, attr = target.partition(":")
    path = module_source(module_name)
    if path is None:
        return None
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == attr:
            doc = ast.get_docstring(node, clean=False)
            options: dict[str, str | None] = {"help": doc, "short_help": None}
            for decorator in node.decorator_list:
                for key in options:
                    value = _constant_keyword(decorator, key)
                    if value is not None:
                        options[key] = value
            # click's own shortening, on a stand-in command with the same texts
            return click.Command(attr, **options).get_short_help_str(limit)
    return None


class LazyGroup(click.Group):
    """A group with ``lazy_subcommands``: name -> ``"module:attribute"`` of a click command."""

    def __init__(self, *args: Any, lazy_subcommands: dict[str, str] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_subcommands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy_subcommands:
            return super().get_command(ctx, cmd_name)
        module_name, _, attr = self.lazy_subcommands[cmd_name].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise click.ClickException(
                f"'{cmd_name}' needs a dependency that is not installed ({e.name}); {MISSING_DEPENDENCY}"
            ) from e
        cmd = getattr(module, attr, None)
        if not isinstance(cmd, click.Command):
            raise click.ClickException(f"'{cmd_name}': {module_name}:{attr} is not a click command")
        return cmd

    def command_summary(self, ctx: click.Context, cmd_name: str, limit: int) -> str:
        """``cmd_name``'s summary: from the loaded command when its module is imported already, else from
        its source; a command whose source cannot be read is imported (and named missing if that fails)."""
        target = self.lazy_subcommands.get(cmd_name)
        if target is not None and target.partition(":")[0] not in sys.modules:
            text = static_short_help(target, limit)
            if text is not None:
                return text
        try:
            cmd = self.get_command(ctx, cmd_name)
        except click.ClickException:
            return f"(not installed: {MISSING_DEPENDENCY})"
        return cmd.get_short_help_str(limit) if cmd is not None else ""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Every command with its one-line summary, without importing the lazy ones."""
        names = [
            n
            for n in self.list_commands(ctx)
            if n in self.lazy_subcommands or not getattr(super().get_command(ctx, n), "hidden", False)
        ]
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, self.command_summary(ctx, n, limit)) for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
