from __future__ import annotations

import click
import click.testing
import pytest

from models.lazy_group import LazyGroup, static_short_help
from tests.support.cli_groups import GROUPS


@pytest.mark.parametrize("group,lazy", GROUPS, ids=["edgejudge", "label"])
def test_summaries_read_from_source_match_the_loaded_commands(group, lazy):
    ctx = click.Context(group)
    for name, target in lazy.items():
        for limit in (45, 120):
            assert static_short_help(target, limit) == group.get_command(ctx, name).get_short_help_str(limit)


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
