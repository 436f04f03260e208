"""The learner registry (policy.training.learners.registry): every line names a learner module that declares
itself, ``--help`` reads it without torch, and docs/training.md's worked example (one module, one line)
trains and exports like a shipped learner."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from models.trajectory import write_trajectories
from policy.training.learners import registry
from policy.training.learners.base import Learner
from policy.training.train import ConfigError, make_config, train_from_file
from tests.support.paths import ROOT
from tests.support.toy_task import DATA, HashEmbedder


def test_every_line_names_a_module_that_declares_that_learner():
    assert registry.names() == ["iql", "cql", "bc", "awr", "credit"]
    for name in registry.names():
        found = registry.learner(name)
        assert isinstance(found, Learner) and found.name == name
        make_config(name, {})  # its defaults make a config that can train


def test_an_unknown_learner_is_a_config_error_naming_the_known_ones():
    with pytest.raises(ConfigError, match="unknown algorithm 'ppo': expected one of iql, cql, bc, awr"):
        registry.learner("ppo")


def test_the_registry_and_train_help_import_no_learner_and_no_torch():
    code = (
        "import sys\n"
        "from policy.training.learners import registry\n"
        "from policy.training import train_cli\n"
        "print(','.join(m for m in ('torch', 'policy.training.learners.iql') if m in sys.modules))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ""


def _docs_example() -> tuple[str, str]:
    """docs/training.md, "Add a learner": the module's code and its registry line."""
    text = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    section = text.split("## Add a learner", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2, "the worked example is a module and its registry line"
    return blocks[0], blocks[1].strip()


def test_the_docs_worked_example_is_one_module_and_one_line_and_trains(tmp_path, monkeypatch):
    module, line = _docs_example()
    assert module.startswith("# policy/training/learners/smooth_bc.py\n")
    package = tmp_path / "policy" / "training" / "learners"
    package.mkdir(parents=True)
    (package / "smooth_bc.py").write_text(module)
    import policy.training.learners as learners

    monkeypatch.setattr(learners, "__path__", [*learners.__path__, str(package)])
    entry = eval(line.rstrip(","), {"Entry": registry.Entry})  # the line, as written in LEARNERS
    monkeypatch.setattr(registry, "LEARNERS", (*registry.LEARNERS, entry))

    write_trajectories(tmp_path / "d.jsonl", DATA)
    run = train_from_file(
        tmp_path / "d.jsonl",
        algo="smooth-bc",
        reward="sparse",
        out=tmp_path / "ckpt",
        overrides={"steps": 10, "hidden": 8, "log_every": 5, "smoothing": "0.2"},
        embedder=HashEmbedder(),
        progress=False,
    )
    assert run.selection == "filter=success"
    assert run.episodes == sum(t.success for t in DATA)
    assert (tmp_path / "ckpt" / "policy.pt").is_file()
    with pytest.raises(ConfigError, match="unknown smooth-bc config key 'beta'"):
        make_config("smooth-bc", {"beta": 1})
