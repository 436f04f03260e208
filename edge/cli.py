"""The ``edgejudge`` command: one click group whose subcommands live beside their code and load lazily.

Subcommands are imported only when run (or when ``--help`` lists them), so a robot that installed only
``edgejudge[edge]`` can run ``edgejudge query`` without torch, llama_cpp or sentence-transformers.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from models.quiet import silence_known_noise

# name -> "module:attribute"
SUBCOMMANDS: dict[str, str] = {
    "collect": "policy.cli:collect",
    "envs": "policy.envs.cli:envs",
    "judge": "labeler.judge_cli:judge",
    "data": "labeler.cli:data",
    "label": "labeler.label_cli:label",
    "rubrics": "labeler.rubrics_cli:rubrics",
    "query": "edge.query_cli:query",
    "export": "policy.export_cli:export",
    "train": "policy.train_cli:train",
    "eval": "policy.eval_cli:eval_cmd",
}


class LazyGroup(click.Group):
    def __init__(self, *args: Any, lazy_subcommands: dict[str, str] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = lazy_subcommands or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_subcommands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_subcommands:
            module_name, attr = self.lazy_subcommands[cmd_name].split(":")
            try:
                module = importlib.import_module(module_name)
            except ImportError as e:
                raise click.ClickException(
                    f"'{cmd_name}' needs a dependency that is not installed ({e.name}); "
                    "install the matching extra, e.g. pip install 'edgejudge[label,train,env]'"
                ) from e
            cmd = getattr(module, attr)
            assert isinstance(cmd, click.Command)
            return cmd
        return super().get_command(ctx, cmd_name)


@click.group(
    cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(package_name="edgejudge")
def main() -> None:
    """edgejudge: dense rewards for sparse-reward robot logs from a local LLM judge, offline RL, ONNX export,
    and an edge policy daemon.

    \b
    Pipeline:
      collect  → trajectories.jsonl        (any environment adapter: edgejudge envs; or your own logs)
      data     → validate / inspect a trajectory dataset
    """
    silence_known_noise()


if __name__ == "__main__":
    main()
