"""The ``EDGEJUDGE_*`` settings are read in one module (``models.settings``), with one error per bad value,
and every file written whole goes through its atomic write."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import click
import click.testing
import pytest

from models import settings
from models.cli_options import threads_option
from tests.support.paths import ROOT

LAYERS = ("edge", "labeler", "policy", "models", "tools")


def _threads_command():
    @click.command()
    @threads_option()
    def show(threads: int) -> None:
        click.echo(threads)

    return show


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _env_reads(path: Path) -> list[tuple[int, str]]:
    """(line, what) of every read of an ``EDGEJUDGE_*`` variable, or of a variable named by a non-literal,
    from ``os.environ`` / ``os.getenv`` in ``path`` (setting variables, e.g. for a child process, is fine)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def is_environ(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
            isinstance(node, ast.Name) and node.id == "environ"
        )

    def suspicious(arg: ast.AST) -> bool:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value.startswith("EDGEJUDGE_")
        return True  # a name or an expression: could be an EDGEJUDGE_ variable

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            f = node.func
            getter = isinstance(f, ast.Attribute) and (
                (f.attr == "get" and is_environ(f.value)) or f.attr == "getenv"
            )
            if getter and suspicious(node.args[0]):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and is_environ(node.value):
            if suspicious(node.slice):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Compare) and any(is_environ(c) for c in node.comparators):
            if suspicious(node.left):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_threads_default_to_one(monkeypatch):
    monkeypatch.delenv(settings.THREADS, raising=False)
    assert settings.threads() == 1
    monkeypatch.setenv(settings.THREADS, "")
    assert settings.threads() == 1


def test_threads_read_the_variable(monkeypatch):
    monkeypatch.setenv(settings.THREADS, " 4 ")
    assert settings.threads() == 4
    monkeypatch.setenv(settings.THREADS, str(settings.MAX_THREADS))
    assert settings.threads() == settings.MAX_THREADS


@pytest.mark.parametrize("bad", ["many", "0", "-2", "1.5", str(settings.MAX_THREADS + 1)])
def test_a_bad_thread_count_is_one_clear_error(monkeypatch, bad):
    monkeypatch.setenv(settings.THREADS, bad)
    with pytest.raises(settings.SettingError) as e:
        settings.threads()
    assert str(e.value) == f"EDGEJUDGE_THREADS={bad!r}: expected an integer from 1 to {settings.MAX_THREADS}"


def test_threads_option_is_bound_to_the_variable(monkeypatch):
    cmd, runner = _threads_command(), click.testing.CliRunner()
    monkeypatch.delenv(settings.THREADS, raising=False)
    assert runner.invoke(cmd, []).output == "1\n"
    assert runner.invoke(cmd, [], env={settings.THREADS: "3"}).output == "3\n"
    assert runner.invoke(cmd, ["--threads", "2"], env={settings.THREADS: "3"}).output == "2\n"
    assert "EDGEJUDGE_THREADS" in runner.invoke(cmd, ["--help"]).output


def test_a_bad_thread_count_reads_the_same_from_the_option(monkeypatch):
    cmd, runner = _threads_command(), click.testing.CliRunner()
    r = runner.invoke(cmd, [], env={settings.THREADS: "many"})
    assert r.exit_code == 2
    assert f"EDGEJUDGE_THREADS='many': expected an integer from 1 to {settings.MAX_THREADS}" in r.output
    r = runner.invoke(cmd, ["--threads", "0"])
    assert r.exit_code == 2 and "'0': expected an integer from 1 to" in r.output


def test_a_bad_setting_met_inside_an_edgejudge_command_ends_it_with_the_message(monkeypatch):
    from models.cli import RootGroup

    group = RootGroup(name="edgejudge")

    @group.command()
    def work() -> None:
        settings.threads()

    monkeypatch.setenv(settings.THREADS, "many")
    r = click.testing.CliRunner().invoke(group, ["work"])
    assert r.exit_code == 1
    expected = f"Error: EDGEJUDGE_THREADS='many': expected an integer from 1 to {settings.MAX_THREADS}"
    assert expected in r.output


def test_cache_default_and_tilde_expansion(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(settings.CACHE, raising=False)
    assert settings.cache_dir() == tmp_path / ".cache" / "edgejudge"
    monkeypatch.setenv(settings.CACHE, "~/elsewhere")
    assert settings.cache_dir() == tmp_path / "elsewhere"
    monkeypatch.setenv(settings.CACHE, str(tmp_path / "abs"))
    assert settings.cache_dir() == tmp_path / "abs"


def test_every_cache_reader_uses_the_setting(monkeypatch, tmp_path):
    """The folders the layers keep under the cache all follow ``$EDGEJUDGE_CACHE``, ``~`` expanded."""
    from labeler.llama_log import llama_log_path
    from models.registry import cache_dir

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(settings.CACHE, "~/c")
    assert cache_dir() == tmp_path / "c"
    assert llama_log_path() == tmp_path / "c" / "logs" / "llama.log"


def test_other_settings(monkeypatch):
    monkeypatch.delenv(settings.ENVS, raising=False)
    monkeypatch.delenv(settings.SCIENCEWORLD_HEAP, raising=False)
    assert settings.env_adapters() == "" and settings.scienceworld_heap() == "1g"
    monkeypatch.setenv(settings.ENVS, "mine=pkg.mod:Adapter")
    monkeypatch.setenv(settings.SCIENCEWORLD_HEAP, "2g")
    assert settings.env_adapters() == "mine=pkg.mod:Adapter" and settings.scienceworld_heap() == "2g"


def test_atomic_write_text_and_bytes(tmp_path):
    out = tmp_path / "sub" / "report.json"
    assert settings.atomic_write(out, "héllo\n") == out
    assert out.read_text(encoding="utf-8") == "héllo\n"
    settings.atomic_write(out, b"\x00\x01")
    assert out.read_bytes() == b"\x00\x01"
    assert _leftovers(out.parent) == []
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600


def test_atomic_write_leaves_no_temp_file_on_failure(tmp_path):
    out = tmp_path / "kept.txt"
    out.write_text("old")
    with pytest.raises(RuntimeError), settings.AtomicFile(out) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert out.read_text() == "old"
    assert _leftovers(tmp_path) == []
    with pytest.raises(TypeError):
        settings.atomic_write(out, 12)  # type: ignore[arg-type]
    assert out.read_text() == "old" and _leftovers(tmp_path) == []


def test_atomic_file_commit_and_discard(tmp_path):
    out = tmp_path / "x.bin"
    f = settings.AtomicFile(out)
    f.tmp.write_bytes(b"new")
    assert not out.exists()  # invisible until committed
    f.commit()
    assert out.read_bytes() == b"new" and not f.tmp.exists()
    g = settings.AtomicFile(out)
    g.tmp.write_bytes(b"other")
    g.discard()
    assert out.read_bytes() == b"new" and _leftovers(tmp_path) == []


def test_the_reader_check_sees_reads(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "import os\n"
        "NAME = 'EDGEJUDGE_X'\n"
        "a = os.environ.get('EDGEJUDGE_THREADS', '1')\n"
        "b = os.getenv('EDGEJUDGE_CACHE')\n"
        "c = os.environ[NAME]\n"
        "d = 'EDGEJUDGE_ENVS' in os.environ\n"
        "e = os.environ.get('HOME')\n"
        "os.environ['EDGEJUDGE_THREADS'] = '1'\n"
        "env = {**os.environ, 'EDGEJUDGE_THREADS': '1'}\n"
        "os.environ.setdefault('EDGEJUDGE_THREADS', '1')\n"
    )
    assert [line for line, _ in _env_reads(f)] == [3, 4, 5, 6]


def test_no_module_but_settings_reads_edgejudge_variables():
    bad = []
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            if path == ROOT / "models" / "settings.py" or "results" in path.relative_to(ROOT).parts:
                continue
            bad += [f"{path.relative_to(ROOT)}:{line}: {what}" for line, what in _env_reads(path)]
    assert bad == []
