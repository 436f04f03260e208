"""One bundle runner: ``edgejudge eval BUNDLE`` (policy.evaluate.open_policy -> edge.bundle_policy) and
edge-serve score real TextWorldExpress states identically, for an fp32 and an int8 MiniLM bundle."""

from __future__ import annotations

import sys

import numpy as np
import pytest


class Recorder:
    """An agent wrapper that keeps every request and the scores it got."""

    def __init__(self, scores, name: str):
        self._scores = scores
        self.name = name
        self.log: list[tuple[str, str, tuple[str, ...], np.ndarray]] = []

    def act(self, instruction, observation, candidates, memory=()) -> int:
        s = np.asarray(self._scores(instruction, observation, list(candidates), memory), dtype=np.float32)
        self.log.append((instruction, observation, tuple(candidates), s, len(memory)))
        return int(np.argmax(s))

    def reset(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_bundle_policy_is_the_daemon_runtime(tmp_path):
    """The in-process agent runs edge.runtime (no second runner), torch-free."""
    import subprocess

    from tests.support.serving import build_tiny_bundle

    bundle = build_tiny_bundle(tmp_path / "b", skills=["look around", "open fridge"])
    code = (
        "import sys\n"
        "from policy.evaluate import open_policy\n"
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


@pytest.mark.real
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_eval_and_edge_serve_give_identical_scores(tmp_path, precision):
    from edge.client import EdgeClient
    from edge.edge_policy import EdgePolicy
    from policy.envs import parse_env
    from policy.evaluate import evaluate, open_policy
    from policy.export import export_random_bundle
    from tests.support.serving import Daemon

    bundle = tmp_path / precision
    export_random_bundle(bundle, seed=1, encoder_precision=precision, candidate_features="action+arguments")
    spec = parse_env("twx:twc")
    with open_policy(bundle) as local:  # what `edgejudge eval BUNDLE` runs
        offline = Recorder(local.scores, "eval")
        r_off = evaluate(offline, spec, split="dev", episodes=2, max_steps=6)
    with Daemon(bundle) as d, EdgeClient(d.endpoint, timeout=60, retries=0) as c:
        served = Recorder(EdgePolicy(c).scores, "edge-serve")
        r_srv = evaluate(served, spec, split="dev", episodes=2, max_steps=6)
    assert len(offline.log) == len(served.log) >= 6
    for a, b in zip(offline.log, served.log, strict=True):
        assert a[:3] == b[:3] and a[4] == b[4]  # same real states, candidates and episode memory
        np.testing.assert_array_equal(a[3], b[3])
    assert [e["success"] for e in r_off.per_episode] == [e["success"] for e in r_srv.per_episode]


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
