"""edge.bundle_policy: the bundle runner is the daemon's runtime, and a bundle from before encoder kinds
still loads."""

from __future__ import annotations

import sys

import pytest


def test_bundle_policy_is_the_daemon_runtime(tmp_path):
    """The in-process agent runs edge.runtime (no second runner), torch-free."""
    import subprocess

    from tests.support.serving import build_tiny_bundle

    bundle = build_tiny_bundle(tmp_path / "b", skills=["look around", "open fridge"])
    code = (
        "import sys\n"
        "from policy.evaluation.evaluate import open_policy\n"
        "from edge.runtime import Runtime\n"
        f"p = open_policy({str(bundle)!r})\n"
        "assert isinstance(p.runtime, Runtime), type(p.runtime)\n"
        "s = p.scores('put things away', 'You are in the kitchen.', ['open fridge', 'take cup'])\n"
        "assert s.shape == (2,), s.shape\n"
        "assert p.scores('put things away', 'You are in the kitchen.', None).shape == (2,)\n"
        "assert 'torch' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_a_bundle_from_before_encoder_kinds_still_loads(tmp_path):
    """Manifests written before the encoder kind was recorded mean the transformer kind."""
    import json

    from edge.bundle_policy import BundlePolicy
    from models.bundle import load_manifest
    from tests.support.serving import build_tiny_bundle

    bundle = build_tiny_bundle(tmp_path / "old")
    path = bundle / "manifest.json"
    raw = json.loads(path.read_text())
    raw.pop("encoder_kind")
    raw["encoder_io"].pop("kind")
    path.write_text(json.dumps(raw))
    assert load_manifest(bundle).encoder_kind == "transformer"
    with BundlePolicy(bundle) as p:
        assert p.runtime.encoder_kind == "transformer" and p.runtime.text_encoder.allow_padding
        assert p.scores("tidy up", "You are in the kitchen.", ["open fridge", "take cup"]).shape == (2,)
    raw["encoder_kind"] = "quantum"
    path.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="unknown encoder_kind 'quantum'"):
        load_manifest(bundle)
