"""The command-line options every layer shares: one name, one range and one help text each.

Each function returns a click decorator. The layers' command lines (``labeler``, ``policy``, ``edge``,
``tools``) use these instead of declaring their own, so ``--judge``, ``--threads``, ``--n-ctx``, ``--cache``,
``--gpu-layers``, ``--progress``, ``--env`` and ``--split`` read and behave the same in every command. Old
spellings stay accepted as hidden aliases (``--model`` for ``--judge``). ``--threads`` is bound to
``$EDGEJUDGE_THREADS`` (``envvar=``) and checked by :mod:`models.settings`, so a bad value is the same error
from the option and from the variable. Stdlib and click only: ``edge`` imports this module, so it must not
pull in anything heavier.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from models import settings
from models.registry import DEFAULT_JUDGE

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class AliasedOption(click.Option):
    """An option whose old spellings (``hidden_aliases``) still work but are left out of ``--help``."""

    def __init__(self, *args: Any, hidden_aliases: tuple[str, ...] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.hidden_aliases = set(hidden_aliases)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown, self.opts = self.opts, [o for o in self.opts if o not in self.hidden_aliases]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = shown


def fail(message: str) -> None:
    """End a command with ``error: MESSAGE`` on stderr and exit status 1 (bad input, not a bug)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


class ThreadCount(click.ParamType):
    """A thread count from 1 to ``MAX_THREADS``, checked by :func:`models.settings.parse_threads`: a bad
    ``$EDGEJUDGE_THREADS`` reads the same here as from :func:`models.settings.threads`."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        raw = str(value).strip()
        from_env = (
            ctx is not None
            and param is not None
            and param.name is not None
            and ctx.get_parameter_source(param.name) is ParameterSource.ENVIRONMENT
        )
        try:
            return settings.parse_threads(raw, settings.THREADS if from_env else "")
        except settings.SettingError as e:
            self.fail(str(e), param, ctx)

    def to_info_dict(self) -> dict[str, Any]:
        return {**super().to_info_dict(), "min": 1, "max": settings.MAX_THREADS}


def judge_option(dest: str = "judge_ref", *, note: str = "") -> Decorator:
    """``--judge`` (alias ``--model``): the embedded judge's name or a path to a .gguf file."""
    return click.option(
        "--judge",
        "--model",
        dest,
        cls=AliasedOption,
        hidden_aliases=("--model",),
        default=DEFAULT_JUDGE,
        show_default=True,
        help=f"Judge model: {DEFAULT_JUDGE} (embedded) or a path to a .gguf file.{note}",
    )


def threads_option(dest: str = "threads") -> Decorator:
    """``--threads`` (``$EDGEJUDGE_THREADS``): CPU threads of the stage's engine (llama.cpp, onnxruntime or
    torch). Always an int: the option, else the variable, else 1."""
    return click.option(
        "--threads",
        dest,
        type=ThreadCount(),
        envvar=settings.THREADS,
        show_envvar=True,
        default=1,
        show_default=True,
        help="CPU threads (more than the free cores slows down).",
    )


def n_ctx_option(dest: str = "n_ctx") -> Decorator:
    """``--n-ctx``: the judge's context size in tokens."""
    return click.option(
        "--n-ctx",
        dest,
        type=click.IntRange(256, 131072),
        default=2048,
        show_default=True,
        help="Judge context size in tokens.",
    )


def gpu_layers_option(dest: str = "n_gpu_layers") -> Decorator:
    """``--gpu-layers``: judge layers offloaded to a GPU."""
    return click.option(
        "--gpu-layers",
        dest,
        type=click.IntRange(min=-1),
        default=0,
        show_default=True,
        help="Judge layers to offload to a GPU (needs a CUDA build of llama-cpp-python; -1: all).",
    )


def cache_option(dest: str = "cache", *, required: bool = False) -> Decorator:
    """``--cache``: the judge answer cache (SQLite), shared by every labeler."""
    default = "" if required else f" [default: $EDGEJUDGE_CACHE/labels.sqlite, {settings.DEFAULT_CACHE}]"
    return click.option(
        "--cache",
        dest,
        type=click.Path(dir_okay=False),
        default=None,
        required=required,
        help=f"Judge answer cache (SQLite): finished queries survive a crash, a rerun reuses them.{default}",
    )


def progress_option(dest: str = "progress") -> Decorator:
    """``--progress/--no-progress``: progress bars on stderr."""
    return click.option(
        "--progress/--no-progress",
        dest,
        default=None,
        help="Progress bars on stderr [default: when stderr is a terminal].",
    )


def env_option(dest: str = "env_name", *, default: str | None = "twx:twc") -> Decorator:
    """``--env``: the environment adapter and task (the names are checked by ``policy.worlds.adapters``).

    ``default=None`` where the policy knows its world: the one it was trained in is used.
    """
    text = (
        "Environment ADAPTER:TASK, e.g. twx:twc, twx:cookingworld, scienceworld:boil (docs/environments.md)."
    )
    if default is None:
        text += " [default: the one the policy was trained in; twx:twc when it does not say]"
    return click.option("--env", dest, default=default, show_default=default is not None, help=text)


def split_option(dest: str = "split", *, default: str = "test") -> Decorator:
    """``--split``: the environment's split (checked by its adapter)."""
    return click.option(
        "--split",
        dest,
        default=default,
        show_default=True,
        help="Split: train, dev or test. TWC's dev and test folds use objects never seen in training.",
    )
