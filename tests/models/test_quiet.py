"""Quiet output (models.quiet): known-harmless third-party noise is silenced; real warnings show."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

from models.quiet import KNOWN_WARNINGS, known_noise_silenced
from tests.support.paths import ROOT

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
