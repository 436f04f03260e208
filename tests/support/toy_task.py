"""A toy task for the policy tests: two-step trajectories and a hashing embedder double."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import numpy as np

from models.trajectory import Step, Trajectory

D = 16


class HashTokenIds:
    """Test double of ``models.inputs.tokens.TokenIds``: a word's id is its hash in a small vocabulary."""

    vocab = 97

    def __init__(self, length: int):
        self.length = length

    def ids(self, text: str) -> list[int]:
        words = text.split()[: self.length]
        return [1 + int(hashlib.sha256(w.encode()).hexdigest()[:8], 16) % (self.vocab - 1) for w in words]


class HashEmbedder:
    """Test double: a fixed random unit vector per text (and hashed word ids over a random token table)."""

    dim = D
    computed = 0
    encoder = SimpleNamespace(name="hash", sha256="0" * 64)  # train_from_file records the encoder's identity

    def token_source(self, length: int) -> tuple[HashTokenIds, np.ndarray]:
        table = np.random.default_rng(0).standard_normal((HashTokenIds.vocab, 8)).astype(np.float32)
        return HashTokenIds(length), table

    def embed(self, texts):
        out = []
        for t in texts:
            seed = int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)
            v = np.random.default_rng(seed).standard_normal(D).astype(np.float32)
            out.append(v / np.linalg.norm(v))
        return np.stack(out) if out else np.zeros((0, D), np.float32)


def _traj(i: int, success: bool, labels: bool = True) -> Trajectory:
    """Two steps; the 'good' action is 'take key' then 'open door'."""
    good = ["take key", "open door"]
    steps = []
    for j in range(2):
        cands = ["look", good[j], "dance"] if j == 0 else ["look", good[j]]
        act = good[j] if success else "look"
        lab = {
            "coren": {"ensemble": 1.0 if act in good else -1.0},
            "trca": {"total": 0.5 if act in good else 0.0, "advantage": 1.0 if success else -1.0},
        }
        steps.append(
            Step(
                observation=f"room {j} {'key' if j else ''}",
                action=act,
                candidates=cands,
                next_observation=f"room {j + 1}",
                env_reward=1.0 if (success and j == 1) else 0.0,
                labels=lab if labels else {},
            )
        )
    return Trajectory(
        id=f"t{i}", instruction="escape the room", task_type="toy", success=success, steps=steps
    )


DATA = [_traj(i, success=i % 3 == 0) for i in range(12)]
