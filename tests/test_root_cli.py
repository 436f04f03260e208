"""The ``edgejudge`` root group (``models.cli``): every subcommand listed in ``--help`` with its summary, read
from the subcommand's source, so listing them imports none and an edge-only install can list and run
``query``."""

from __future__ import annotations

import subprocess
import sys

import click
import click.testing
import pytest

from labeler.label_cli import LABEL_SUBCOMMANDS, label
from models.cli import SUBCOMMANDS, main
from models.lazy_group import LazyGroup, static_short_help
from tests.conftest import ROOT

GROUPS = [(main, SUBCOMMANDS), (label, LABEL_SUBCOMMANDS)]

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


@pytest.mark.parametrize("group,lazy", GROUPS, ids=["edgejudge", "label"])
def test_summaries_read_from_source_match_the_loaded_commands(group, lazy):
    ctx = click.Context(group)
    for name, target in lazy.items():
        for limit in (45, 120):
            assert static_short_help(target, limit) == group.get_command(ctx, name).get_short_help_str(limit)


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


def test_a_subcommand_whose_dependency_is_missing_says_what_to_install(tmp_path, monkeypatch):
    (tmp_path / "needs_missing.py").write_text(
        'import click\nimport no_such_dependency_xyz\n\n\n@click.command()\ndef cmd():\n    """Do it."""\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    group = LazyGroup(name="g", lazy_subcommands={"x": "needs_missing:cmd"})
    runner = click.testing.CliRunner()
    assert "x  Do it." in runner.invoke(group, ["--help"]).output  # listed from its source
    r = runner.invoke(group, ["x"])
    assert r.exit_code == 1
    assert "'x' needs a dependency that is not installed (no_such_dependency_xyz)" in r.output
    assert "pip install" in r.output


def test_a_lazy_target_that_is_not_a_command_is_a_clear_error():
    group = LazyGroup(name="g", lazy_subcommands={"bad": "models.settings:threads"})
    r = click.testing.CliRunner().invoke(group, ["bad"])
    assert r.exit_code == 1 and "models.settings:threads is not a click command" in r.output


def test_unreadable_sources_fall_back_to_importing():
    assert static_short_help("no_such_package.mod:cmd") is None
    assert static_short_help("models.cli:no_such_function") is None
    assert static_short_help("models.cli:main", 200).startswith("edgejudge: dense rewards")
