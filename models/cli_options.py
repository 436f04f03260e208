"""The command-line options every layer shares: one name, one range and one help text each.

Each function returns a click decorator. The layers' command lines (``labeler``, ``policy``, ``edge``,
``tools``) use these instead of declaring their own, so ``--judge``, ``--threads``, ``--n-ctx``, ``--cache``,
``--gpu-layers``, ``--progress``, ``--env`` and ``--split`` read and behave the same in every command. Old
spellings stay accepted as hidden aliases (``--model`` for ``--judge``). Stdlib and click only: ``edge``
imports this module, so it must not pull in anything heavier.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from models.registry import DEFAULT_JUDGE

MAX_THREADS = 64

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


def env_threads() -> int:
    """``$EDGEJUDGE_THREADS`` when it is a positive integer, else 1."""
    raw = os.environ.get("EDGEJUDGE_THREADS", "1")
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1


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
    """``--threads``: CPU threads of the stage's engine (llama.cpp, onnxruntime or torch)."""
    return click.option(
        "--threads",
        dest,
        type=click.IntRange(1, MAX_THREADS),
        default=None,
        help="CPU threads [default: $EDGEJUDGE_THREADS or 1; more than the free cores slows down].",
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
    default = "" if required else " [default: $EDGEJUDGE_CACHE/labels.sqlite, ~/.cache/edgejudge]"
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
    """``--env``: the environment adapter and task (the names are checked by ``policy.envs``).

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
