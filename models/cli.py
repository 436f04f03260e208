"""The ``edgejudge`` command: one click group whose subcommands live beside their code and load lazily.

The subcommands are named by ``"module:attribute"`` strings (:class:`models.lazy_group.LazyGroup`): a
subcommand's module is imported only when that subcommand runs, and ``--help`` reads their summaries from
their source. So the root group sits in ``models`` (installed everywhere, importing no other layer) and a
robot that installed only ``edgejudge[edge]`` runs ``edgejudge query`` and ``edgejudge --help`` without
torch, llama_cpp or sentence-transformers. ``python -m models.cli`` is the same command.
"""

from __future__ import annotations

import click

from models.lazy_group import LazyGroup
from models.quiet import silence_known_noise
from models.settings import SettingError

# name -> "module:attribute"
SUBCOMMANDS: dict[str, str] = {
    "collect": "policy.worlds.collect_cli:collect",
    "envs": "policy.worlds.envs_cli:envs",
    "judge": "labeler.judge_cli:judge",
    "data": "labeler.cli:data",
    "label": "labeler.label_cli:label",
    "rubrics": "labeler.rubrics_cli:rubrics",
    "query": "edge.query_cli:query",
    "export": "policy.export.export_cli:export",
    "train": "policy.training.train_cli:train",
    "eval": "policy.evaluation.eval_cli:eval_cmd",
    "decisions": "policy.evaluation.decisions_cli:decisions",
    "matrix": "policy.matrix.cli:matrix",
}


class RootGroup(LazyGroup):
    """The root group: a bad ``EDGEJUDGE_*`` setting met by any subcommand ends it with ``error:`` and its
    message, like a bad option."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except SettingError as e:
            raise click.ClickException(str(e)) from None


@click.group(
    cls=RootGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(package_name="edgejudge")
def main() -> None:
    """edgejudge: dense rewards for sparse-reward robot logs from a local LLM judge, offline RL, ONNX export,
    and an edge policy daemon.

    \b
    The flow: collect (or your own logs) -> data -> label -> train -> export -> edge-serve + query.
    Run 'edgejudge COMMAND --help' for a command's options.
    """
    silence_known_noise()


if __name__ == "__main__":
    main()
