"""What the bundle exporters share: the ONNX opset, the error type, a one-thread onnxruntime session, the
model cache folder and the real texts every parity check runs on."""

from __future__ import annotations

import os
import shutil
import warnings
from contextlib import contextmanager
from pathlib import Path

from models import settings

OPSET = 17

# Real texts for the parity checks: TextWorld-style instructions, states and actions.
PARITY_TEXTS = [
    "Your task is to pick up objects, then place them in their usual locations in the environment.",
    "Feedback: You pick up the dirty socks.\nInventory: dirty socks\nRecent actions: take dirty socks\n"
    "Room: You are in the bathroom. In one part of the room you see a bath mat. There is also a towel rack.",
    "put dirty socks in washing machine",
    "open fridge",
    "take apple from kitchen cupboard",
    "look around",
    "",
]


class ExportError(RuntimeError):
    """An export that must not be used: parity failure, bad input, missing dependency."""


@contextmanager
def torchscript_exporter():
    """The TorchScript ONNX exporter (``torch.onnx.export(..., dynamo=False)``) without torch's deprecation
    notices about it: the exporter is chosen on purpose (:mod:`policy.export.assemble`), and parity is checked
    after every export."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def cache_root() -> Path:
    """Where built encoder graphs are kept: ``$EDGEJUDGE_CACHE/onnx``."""
    return settings.cache_dir() / "onnx"


def publish_folder(tmp: Path, folder: Path) -> None:
    """Move a fully built cache entry ``tmp`` into place as ``folder``, replacing a stale entry; when another
    process published the same entry meanwhile, keep theirs and drop ``tmp``."""
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    try:
        os.replace(tmp, folder)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)


def ort_session(path: Path):
    """A one-thread CPU onnxruntime session (parity checks)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), sess_options=so, providers=["CPUExecutionProvider"])
