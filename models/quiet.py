"""Known-harmless third-party noise, silenced in one place; every other warning still shows.

What is silenced, and why it is harmless here:

- torch's TorchScript ONNX exporter: its deprecation notices (the exporter is chosen on purpose, see
  ``policy`` export), the tracer's "might cause the trace to be incorrect" notes on transformers' masking
  code (the exported graph is parity-checked against torch before anything is written), and the note that
  advanced indexing becomes several ONNX operators;
- transformers' "Loading weights" progress bars when the sentence encoder loads (a few milliseconds each).

llama.cpp's load logs go to a file instead (``labeler.llama_log``). :func:`silence_known_noise` installs the
filters for the whole process (the ``edgejudge`` entry point calls it); :func:`known_noise_silenced` does the
same for one block of code. Stdlib only: nothing here imports torch or transformers.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator

KNOWN_WARNINGS: tuple[tuple[type[Warning], str], ...] = (
    (DeprecationWarning, r"You are using the legacy TorchScript-based ONNX export"),
    (DeprecationWarning, r"The feature will be removed\. Please remove usage of this function"),
    (UserWarning, r"Exporting aten::index operator of advanced indexing"),
    # torch.jit.TracerWarning is a Warning subclass; matched by its text so torch need not be imported
    (Warning, r"Converting a tensor to a Python (boolean|index|integer|float)"),
    (Warning, r"torch\.tensor results are registered as constants in the trace"),
    (Warning, r"Iterating over a tensor might cause the trace to be incorrect"),
)
"""(category, message regex) of every warning this module silences."""


def _install_filters() -> None:
    for category, message in KNOWN_WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=category)


def disable_loading_bars() -> None:
    """No "Loading weights" bars from transformers: set before it is imported, switched off if it is."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    logging_mod = sys.modules.get("transformers.utils.logging")
    if logging_mod is not None:
        logging_mod.disable_progress_bar()


def silence_known_noise() -> None:
    """Silence the known-harmless noise for the rest of the process."""
    _install_filters()
    disable_loading_bars()


@contextlib.contextmanager
def known_noise_silenced() -> Iterator[None]:
    """Silence the known-harmless warnings inside the block (the previous filters come back after it)."""
    with warnings.catch_warnings():
        _install_filters()
        yield
