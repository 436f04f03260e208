from __future__ import annotations

import json

import pytest
import torch

from models.bundle import load_manifest
from tests.support.cli import run_cli

torch.set_num_threads(1)


def test_export_cli_errors(cli, tmp_path):
    proc = cli("export", str(tmp_path / "nope"), "--out", str(tmp_path / "b"))
    assert proc.returncode == 1
    assert "does not exist" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("export", "--out", str(tmp_path / "b"))
    assert proc.returncode == 2 and "exactly one" in proc.stderr
    proc = cli("export", "--random-init", "--out", str(tmp_path / "b"), "--bogus")
    assert proc.returncode == 2 and "No such option" in proc.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.real
def test_export_cli_random_init_json(cli, tmp_path):
    proc = cli("export", "--random-init", "--out", str(tmp_path / "b"), "--json", check=True)
    report = json.loads(proc.stdout)
    assert report["policy_max_abs_diff_random"] <= 1e-4
    assert load_manifest(tmp_path / "b").provenance["algo"] == "random-init"


@pytest.mark.real
def test_export_cli_int8_encoder_is_opt_in_and_recorded(cli, tmp_path):
    proc = cli(
        "export", "--random-init", "--out", str(tmp_path / "b"), "--encoder-precision", "int8", check=True
    )
    man = load_manifest(tmp_path / "b")
    assert man.provenance["encoder_precision"] == "int8"
    assert man.provenance["parity"]["encoder_min_cosine"] >= 0.995
    assert "encoder min cosine" in proc.stdout
    proc = cli("export", "--random-init", "--out", str(tmp_path / "c"), "--encoder-precision", "fp16")
    assert proc.returncode == 2 and "fp16" in proc.stderr and not (tmp_path / "c").exists()


@pytest.mark.real
def test_export_cli_stderr_has_no_exporter_or_loading_noise(tmp_path):
    """A fresh cache makes export trace the encoder graph, which is where the exporter's notices come from;
    PYTHONWARNINGS=default would show deprecations that Python otherwise hides, so they must be filtered."""
    p = run_cli(
        "export",
        "--random-init",
        "--out",
        str(tmp_path / "bundle"),
        env={"EDGEJUDGE_CACHE": str(tmp_path / "cache"), "PYTHONWARNINGS": "default"},
        check=True,
    )
    assert p.stdout.startswith("wrote ")
    for noise in ("Warning:", "TorchScript", "Loading weights", "aten::index", "trace might be incorrect"):
        assert noise not in p.stderr, p.stderr[-2000:]
