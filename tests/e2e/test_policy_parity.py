"""One policy, three runners: a trained checkpoint in torch, its exported bundle in process (what
``edgejudge eval BUNDLE`` runs) and the same bundle behind a real edge-serve daemon choose the same actions on
real episodes, with the episode memory each of them is sent, in two worlds, with both encoder kinds (MiniLM
fp32 on TextWorld Commonsense, the static encoder on CookingWorld) and both scorer readers (token-reading,
bundle format 3, in both worlds; sentence vectors only, format 2)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from models.bundle import load_manifest
from models.trajectory import write_trajectories
from policy.evaluation.evaluate import evaluate
from policy.worlds.adapters import open_env, parse_env
from policy.worlds.collect import run_episode

pytestmark = pytest.mark.real


torch.set_num_threads(1)


class Recorder:
    """A policy that records, per call, the state, the memory length, its scores and its pick."""

    def __init__(self, scores, name: str):
        self._scores, self.name, self.log = scores, name, []

    def act(self, instruction, state, candidates, memory=()):
        s = np.asarray(self._scores(instruction, state, list(candidates), memory), dtype=np.float32)
        self.log.append((state, len(memory), s))
        return int(np.argmax(s))

    def reset(self) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("world", "params", "encoder", "reader"),
    [
        ("twx:twc", "level=easy", "all-MiniLM-L6-v2", "tokens"),
        ("twx:cookingworld", "level=small", "static", "tokens"),
        ("twx:cookingworld", "level=small", "static", "vectors"),
    ],
    ids=["twc-minilm-tokens", "cookingworld-static-tokens", "cookingworld-static-vectors"],
)
def test_checkpoint_bundle_and_daemon_choose_the_same_actions(tmp_path, world, params, encoder, reader):
    from edge.bundle_policy import BundlePolicy
    from edge.client import EdgeClient
    from edge.edge_policy import EdgePolicy
    from policy.evaluation.torch_policy import TorchPolicy
    from policy.export.assemble import export_bundle
    from policy.training.train import train_from_file
    from tests.support.serving import Daemon

    spec = parse_env(world, params)
    with open_env(spec, step_limit=12) as env:
        rng = random.Random(0)
        seeds = env.episodes("train")[:8]
        trajs = [run_episode(env, seed, "train", "gold-noise", 0.0, rng) for seed in seeds]
        write_trajectories(tmp_path / "expert.jsonl", trajs)
        overrides = {"steps": 150, "batch_size": 16, "hidden": 32, "log_every": 50, "reader": reader}
        run = train_from_file(
            tmp_path / "expert.jsonl", algo="bc", reward="sparse", out=tmp_path / "ckpt",
            overrides=overrides, encoder=encoder, progress=False,
        )  # fmt: skip
        export_bundle(run.checkpoint, tmp_path / "bundle")
        assert load_manifest(tmp_path / "bundle").format_version == (3 if reader == "tokens" else 2)
        runs = {}
        with TorchPolicy(run.checkpoint) as ckpt:
            runs["checkpoint"] = Recorder(ckpt.scores, "checkpoint")
            evaluate(runs["checkpoint"], spec, split="test", episodes=2, max_steps=8, env=env)
        with BundlePolicy(tmp_path / "bundle") as local:
            runs["eval"] = Recorder(local.scores, "eval")
            evaluate(runs["eval"], spec, split="test", episodes=2, max_steps=8, env=env)
        with Daemon(tmp_path / "bundle") as d, EdgeClient(d.endpoint, timeout=60, retries=0) as c:
            runs["edge-serve"] = Recorder(EdgePolicy(c).scores, "edge-serve")
            evaluate(runs["edge-serve"], spec, split="test", episodes=2, max_steps=8, env=env)
    logs = {name: r.log for name, r in runs.items()}
    assert len(logs["eval"]) >= 8 and any(m > 0 for _s, m, _x in logs["eval"])  # the memory was used
    for name in ("checkpoint", "edge-serve"):
        assert [(s, m) for s, m, _x in logs[name]] == [(s, m) for s, m, _x in logs["eval"]], name
        picks = [int(np.argmax(x)) for _s, _m, x in logs[name]]
        assert picks == [int(np.argmax(x)) for _s, _m, x in logs["eval"]], name
    for (_s, _m, a), (_s2, _m2, b) in zip(logs["eval"], logs["edge-serve"], strict=True):
        np.testing.assert_array_equal(a, b)  # one runtime: the daemon's scores are the in-process ones
    for (_s, _m, a), (_s2, _m2, b) in zip(logs["eval"], logs["checkpoint"], strict=True):
        np.testing.assert_allclose(a, b, atol=5e-3)  # torch on its own features vs the exported graphs
