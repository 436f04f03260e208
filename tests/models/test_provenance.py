"""Where a result was measured: the machine in one line, the load average, and the commit of this checkout
(``unknown`` for an installed package)."""

from __future__ import annotations

import subprocess

from models.provenance import PROVENANCE, git_commit, load_average, machine, provenance
from tests.support.paths import ROOT


def test_provenance_names_the_machine_the_load_and_the_checked_out_commit():
    git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    head = git.stdout.strip() if git.returncode == 0 else ""
    p = provenance()
    assert tuple(p) == PROVENANCE and p["machine"] == machine() and "CPUs" in p["machine"]
    assert len(p["load_average"]) == 3 and all(isinstance(x, float) for x in load_average())
    assert p["git_commit"] == git_commit() and p["git_commit"].removesuffix("+dirty") == (head or "unknown")


def test_a_folder_without_git_is_unknown(tmp_path):
    (tmp_path / "models").mkdir()
    assert git_commit(tmp_path) == "unknown"
