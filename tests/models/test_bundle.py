"""A bundle manifest and a policy checkpoint are read by one rule: their file, valid JSON, their format, the
version this edgejudge reads; each failure names the file and what is wrong."""

from __future__ import annotations

import json
import re

import pytest

from models.bundle import BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, MANIFEST, BundleError, load_manifest
from policy.common import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_JSON,
    CHECKPOINT_VERSION,
    CheckpointError,
    load_checkpoint,
)

CASES = [
    (load_manifest, BundleError, MANIFEST, BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, "bundle manifest"),
    (load_checkpoint, CheckpointError, CHECKPOINT_JSON, CHECKPOINT_FORMAT, CHECKPOINT_VERSION, "checkpoint"),
]


@pytest.mark.parametrize(
    ("load", "error", "name", "fmt", "version", "what"), CASES, ids=["bundle", "checkpoint"]
)
def test_each_failure_names_the_file_and_the_problem(tmp_path, load, error, name, fmt, version, what):
    d = tmp_path / "x"
    d.mkdir()
    with pytest.raises(error, match=r"edgejudge (export|train)|not an edgejudge checkpoint"):
        load(d)  # no file
    f = d / name
    f.write_text("{not json")
    with pytest.raises(error, match=rf"{re.escape(str(f))}: not valid JSON"):
        load(d)
    f.write_text(json.dumps({"format": "other", "format_version": version}))
    with pytest.raises(error, match=rf"{re.escape(str(f))}: not an edgejudge {what} \(format != '{fmt}'\)"):
        load(d)
    f.write_text(json.dumps({"format": fmt, "format_version": version + 98}))
    reads = "1, 2" if fmt == BUNDLE_FORMAT else str(version)  # bundles of format 1 are still read
    with pytest.raises(
        error, match=rf"format_version {version + 98} is not supported \(this edgejudge reads {reads}\)"
    ):
        load(d)
