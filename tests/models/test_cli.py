"""The ``edgejudge`` root group (``models.cli``): every subcommand listed in ``--help`` with its summary, read
from the subcommand's source, so listing them imports none and an edge-only install can list and run
``query``."""

from __future__ import annotations

import subprocess
import sys

import click
import click.testing
import pytest

from models.cli import SUBCOMMANDS
from tests.support.cli_groups import GROUPS
from tests.support.paths import ROOT

EDGE_ONLY = """
import importlib.abc, sys
BLOCKED = {"torch", "llama_cpp", "sentence_transformers", "transformers", "textworld_express",
           "scienceworld", "ray", "safetensors", "matplotlib"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
from models.cli import main
try:
    main(sys.argv[1:], prog_name="edgejudge")
except SystemExit as e:
    loaded = sorted({m.split(".")[0] for m in sys.modules} & ({"policy", "labeler"} | BLOCKED))
    print("LOADED", ",".join(loaded))
    raise
"""


def _run_edge_only(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", EDGE_ONLY, *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_help_of_every_command(cli):
    for args in (
        ["--help"],
        ["collect", "--help"],
        ["data", "--help"],
        ["data", "validate", "--help"],
        ["data", "stats", "--help"],
    ):
        proc = cli(*args, check=True)
        assert "Usage:" in proc.stdout and len(proc.stdout) > 200


@pytest.mark.parametrize("group,lazy", GROUPS, ids=["edgejudge", "label"])
def test_help_lists_every_subcommand_with_its_summary(group, lazy):
    out = click.testing.CliRunner().invoke(group, ["--help"], terminal_width=200).output
    commands = out.split("Commands:", 1)[1]
    ctx = click.Context(group)
    for name in lazy:
        line = next((x for x in commands.splitlines() if x.split()[:1] == [name]), None)
        assert line is not None, f"{name} missing from --help:\n{out}"
        summary = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
        assert summary, f"{name} has no summary in --help"
        cmd = group.get_command(ctx, name)
        assert summary == cmd.get_short_help_str(200 - 6 - max(map(len, lazy))).strip()


def test_help_imports_no_subcommand_and_needs_no_heavy_package():
    p = _run_edge_only("--help")
    assert p.returncode == 0, p.stderr
    for name in SUBCOMMANDS:
        assert f"\n  {name} " in p.stdout
    assert "LOADED \n" in p.stdout  # neither policy nor labeler nor a heavy package was imported


def test_query_runs_without_the_training_and_labeling_stacks():
    p = _run_edge_only("query", "--help")
    assert p.returncode == 0, p.stderr
    assert "Usage: edgejudge query" in p.stdout
