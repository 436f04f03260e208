"""A bundle manifest and a policy checkpoint are read by one rule: their file, valid JSON, their format, the
version this edgejudge reads; each failure names the file and what is wrong."""

from __future__ import annotations

import json
import re

import pytest

from models.bundle import BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, MANIFEST, BundleError, load_manifest
from policy.training.common import (
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
    reads = "1, 2, 3" if fmt == BUNDLE_FORMAT else str(version)  # bundles of formats 1 and 2 are still read
    with pytest.raises(
        error, match=rf"format_version {version + 98} is not supported \(this edgejudge reads {reads}\)"
    ):
        load(d)


def _fourteen_parts() -> dict:
    from models.state_layout import Part, StateLayout

    return StateLayout(tuple(Part(f"p{i}", f"P{i}", world=True) for i in range(14))).to_dict()


def test_a_layout_with_more_item_kinds_than_the_policy_is_refused_at_export_and_at_load(tmp_path):
    """A 14-part layout needs 17 item kinds (parts, unlabelled lines, facts, padding); a scorer of 16 would
    index past its kind embedding at serve time, whatever kinds its training data happened to show."""
    from models.bundle import write_manifest
    from tests.support.serving import build_tiny_bundle

    out = build_tiny_bundle(tmp_path / "b")
    world = {"state_layout": _fourteen_parts()}
    with pytest.raises(ValueError, match="14 parts.*17 item kinds.*has 16"):
        write_manifest(out, embedding_dim=16, max_length=64, world=world, policy={"kinds": 16})
    write_manifest(out, embedding_dim=16, max_length=64, world=world, policy={"kinds": 17})  # room for it
    raw = json.loads((out / MANIFEST).read_text())
    raw["policy"]["kinds"] = 16
    (out / MANIFEST).write_text(json.dumps(raw))
    with pytest.raises(BundleError, match="malformed manifest.*14 parts"):
        load_manifest(out)
