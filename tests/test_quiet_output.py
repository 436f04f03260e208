"""Quiet output: known-harmless third-party noise is silenced or goes to a log file; real warnings show."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

from models.quiet import KNOWN_WARNINGS, known_noise_silenced
from tests.conftest import ROOT, run_cli

# The texts as torch 2.13 / transformers 5 print them (one per filter)
NOISE = [
    (
        DeprecationWarning,
        "You are using the legacy TorchScript-based ONNX export. Starting in PyTorch 2.9, ...",
    ),
    (DeprecationWarning, "The feature will be removed. Please remove usage of this function"),
    (UserWarning, "Exporting aten::index operator of advanced indexing in opset 17 is achieved by ..."),
    (RuntimeWarning, "Converting a tensor to a Python boolean might cause the trace to be incorrect. ..."),
    (RuntimeWarning, "torch.tensor results are registered as constants in the trace. ..."),
    (RuntimeWarning, "Iterating over a tensor might cause the trace to be incorrect. ..."),
]


def test_every_known_warning_is_silenced_and_other_warnings_still_show():
    assert len(NOISE) == len(KNOWN_WARNINGS)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with known_noise_silenced():
            for category, text in NOISE:
                warnings.warn(text, category, stacklevel=1)
            warnings.warn("a real problem", UserWarning, stacklevel=1)
            warnings.warn("a real deprecation", DeprecationWarning, stacklevel=1)
        warnings.warn(NOISE[0][1], NOISE[0][0], stacklevel=1)  # the filters end with the block
    assert [str(w.message) for w in seen] == ["a real problem", "a real deprecation", NOISE[0][1]]


@pytest.mark.real
def test_loading_the_sentence_encoder_prints_no_progress_bars():
    code = "from models.encoder import load_sentence_encoder\nload_sentence_encoder()\nprint('loaded')\n"
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "loaded"
    assert "Loading weights" not in p.stderr
    assert "it/s]" not in p.stderr


def test_llama_cpp_errors_still_reach_stderr_but_its_harmless_notes_do_not():
    from labeler.llama_log import shows_on_stderr

    swa = "llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194)"
    token = (
        "load: control-looking token:    212 '</s>' was not control-type; this is probably a bug in the model"
    )
    assert not shows_on_stderr(3, swa) and not shows_on_stderr(3, token)
    assert shows_on_stderr(3, "llama_model_load: error loading model: tensor 'x' data is not within bounds")
    assert not shows_on_stderr(2, "llama_model_loader: - kv   0: general.architecture str = gemma3")
    assert not shows_on_stderr(1, "print_info: n_ctx_train = 32768")


@pytest.mark.real
def test_judge_cli_stderr_has_no_llama_cpp_load_log():
    from labeler.llama_log import llama_log_path

    p = run_cli(
        "judge",
        "score",
        "--prefix",
        "Question: Is the sun hot?\nAnswer:",
        "--choice",
        " Yes",
        "--choice",
        " No",
        check=True,
    )
    assert '"probs"' in p.stdout
    for noise in ("SWA cache", "llama_model_loader", "llama_context", "control-looking token"):
        assert noise not in p.stderr
    with open(llama_log_path(), "rb") as f:  # ... they went to the log file
        f.seek(max(0, f.seek(0, 2) - 200_000))
        assert b"full-size SWA cache" in f.read()


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
