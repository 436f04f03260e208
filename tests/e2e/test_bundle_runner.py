"""One bundle runner: ``edgejudge eval BUNDLE`` (policy.evaluation.evaluate.open_policy -> edge.bundle_policy)
and edge-serve score real TextWorldExpress states identically, for an fp32 and an int8 MiniLM bundle."""

from __future__ import annotations

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


@pytest.mark.real
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_eval_and_edge_serve_give_identical_scores(tmp_path, precision):
    from edge.client import EdgeClient
    from edge.edge_policy import EdgePolicy
    from policy.evaluation.evaluate import evaluate, open_policy
    from policy.export.assemble import export_random_bundle
    from policy.worlds.adapters import parse_env
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
