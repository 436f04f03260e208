"""A robot that only queries a daemon installs ``edgejudge[client]`` (pyzmq, msgpack): in a process where
numpy, onnxruntime, tokenizers, torch and tqdm cannot be imported, the client, the episode memory, the loop
guard and the episode log act through a real edge-serve and write a log the labelers read."""

from __future__ import annotations

import subprocess
import sys

import pytest

from models.trajectory import read_trajectories
from tests.support.paths import ROOT
from tests.support.serving import Daemon, build_tiny_bundle

CLIENT_ONLY = """
import importlib.abc, sys, time
BLOCKED = {"numpy", "onnxruntime", "tokenizers", "torch", "tqdm", "labeler", "policy"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
t0 = time.perf_counter()
from edge.client import EdgeClient
from edge.edge_policy import EdgePolicy
from edge.episode_log import EpisodeLog
from edge.policies import EpisodeMemory, Guarded
print("IMPORT_S", time.perf_counter() - t0)
endpoint, log_path = sys.argv[1], sys.argv[2]
with EdgeClient(endpoint, timeout=30) as client:
    world = client.info()["world"]
    policy = Guarded(EdgePolicy(client))
    log = EpisodeLog(log_path, world=world, task_type="tidy")
    for episode in range(2):
        memory = EpisodeMemory()
        policy.reset()
        state = "Room: kitchen. A cup is on the table."
        with log.episode("put the cup in the sink") as ep:
            for step in range(3):
                candidates = ["take cup", "put cup in sink", "look around"]
                i = policy.act("put the cup in the sink", state, candidates, memory)
                nxt = f"Room: kitchen. You did {candidates[i]} ({step})."
                ep.step(state, candidates, candidates[i], nxt)
                memory.record(candidates[i], nxt)
                state = nxt
            ep.end(success=episode == 1)
print("LOADED", ",".join(sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)))
"""


@pytest.mark.real
def test_the_client_side_acts_and_logs_without_numpy_onnxruntime_or_tokenizers(tmp_path):
    bundle = build_tiny_bundle(tmp_path / "bundle")
    log = tmp_path / "episodes.jsonl"
    with Daemon(bundle) as daemon:
        p = subprocess.run(
            [sys.executable, "-c", CLIENT_ONLY, daemon.endpoint, str(log)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert p.returncode == 0, p.stderr
    out = dict(line.partition(" ")[::2] for line in p.stdout.splitlines())
    assert out["LOADED"] == "", f"the client side loaded {out['LOADED']}"
    trajs = read_trajectories(log)
    assert [t.success for t in trajs] == [False, True]
    assert all(len(t.steps) == 3 for t in trajs)
    assert all(s.action in s.candidates for t in trajs for s in t.steps)
