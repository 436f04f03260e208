"""Unit tests of the policy pieces on hand-made data (embeddings here are a deterministic test double)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from labeler.dataset import Step, Trajectory
from policy import awr, bc, cql, iql
from policy.buffer import build_table
from policy.common import CheckpointError, load_checkpoint, save_checkpoint
from policy.evaluate import wilson_interval
from policy.features import EmbeddingCache, text_key
from policy.model import MASKED_SCORE, ScorerConfig, StateInputs, build_scorer
from policy.rewards import RewardError, parse_reward, step_rewards
from policy.train import ConfigError, make_config, parse_overrides

torch.set_num_threads(1)
D = 16


class HashEmbedder:
    """Test double: a fixed random unit vector per text."""

    dim = D
    computed = 0

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


def test_reward_sources():
    t = DATA[0]
    assert step_rewards(t, parse_reward("sparse")) == [0.0, 1.0]
    assert step_rewards(t, parse_reward("coren")) == [1.0, 2.0]  # dense + terminal bonus
    assert step_rewards(t, parse_reward("trca.total", terminal_bonus=0.0)) == [0.5, 0.5]
    assert step_rewards(DATA[1], parse_reward("coren")) == [-1.0, -1.0]
    with pytest.raises(RewardError, match="unknown reward"):
        parse_reward("dense")
    with pytest.raises(RewardError, match="no label coren.contextual"):
        step_rewards(t, parse_reward("coren.contextual"))
    with pytest.raises(RewardError, match="use --reward sparse"):
        step_rewards(_traj(0, True, labels=False), parse_reward("trca"))


def test_table_layout():
    table = build_table(
        DATA,
        HashEmbedder(),
        parse_reward("sparse"),
        weight_channel=("trca", "advantage"),
        candidate_features="action",
    )
    assert len(table) == 24 and table.cand.shape == (24, 3, 1)
    assert table.cand[1, 2, 0] == -1  # second step has 2 candidates: padded
    assert table.done.tolist()[:2] == [0.0, 1.0]  # successful episode ends in a true terminal
    assert table.done[3] == 0.0  # a failed episode's end is a timeout: bootstrap
    assert (table.next_cand[0] >= 0).sum() == 2 and (table.next_cand[1] < 0).all()
    assert table.weight[0] == 1.0 and table.weight[2] == -1.0
    # every text is one embedding row: the instruction, the state items, memory actions and the candidates
    rows = [table.instr, table.rec_items, table.rec_mem_action, table.rec_mem_response, table.cand]
    assert table.info["texts"] == len(np.unique(np.concatenate([r[r >= 0].ravel() for r in rows])))
    # a state record per step plus the last next state, per trajectory; the next state is the next record
    assert len(table.rec_items) == 12 * 3 and (table.next_state == table.state + 1).all()
    # the memory is the episode so far, most recent first: none at the start, then the first action
    first, second = table.state[0], table.state[1]
    assert (table.rec_mem_action[first] < 0).all()
    assert table.rec_mem_action[second, 0] >= 0 and (table.rec_mem_action[second, 1:] < 0).all()
    # a plain text (no layout part) is one item of the "other lines" kind
    assert (table.rec_kinds[first] > 0).sum() == 1


def test_scorer_masks_and_is_deterministic():
    m = build_scorer(ScorerConfig(embedding_dim=D, hidden=8), seed=1)
    m2 = build_scorer(ScorerConfig(embedding_dim=D, hidden=8), seed=1)
    x = torch.randn(2, D)
    state = StateInputs(
        torch.randn(2, 3, D),
        torch.tensor([[1, 2, 0], [1, 1, 3]]),
        torch.randn(2, 2, D),
        torch.randn(2, 2, D),
        torch.tensor([[True, False], [False, False]]),
    )
    c = torch.randn(2, 4, D)
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    s = m(x, state, c, mask)
    assert s.shape == (2, 4) and (s[0, 2:] == MASKED_SCORE).all()
    assert torch.equal(s, m2(x, state, c, mask))
    # padding is padding: what lies under a False mask or kind 0 does not change any score
    noisy = state._replace(
        items=torch.where((state.item_kinds == 0)[..., None], torch.randn(2, 3, D), state.items),
        memory_actions=torch.where(state.memory_mask[..., None], state.memory_actions, torch.randn(2, 2, D)),
    )
    assert torch.allclose(s, m(x, noisy, c, mask), atol=1e-6)


@pytest.mark.parametrize("features", ["action", "action+arguments"])
@pytest.mark.parametrize("algo", ["iql", "cql", "bc", "awr"])
def test_each_algorithm_learns_the_toy_task(algo, features):
    reward = parse_reward("coren") if algo in ("iql", "cql") else parse_reward("sparse")
    table = build_table(
        DATA, HashEmbedder(), reward, weight_channel=("trca", "advantage"), candidate_features=features
    )
    cfg = make_config(
        algo,
        {
            "steps": 150,
            "batch_size": 32,
            "hidden": 32,
            "log_every": 10,
            "lr": 1e-3,
            "candidate_features": features,
            **({"filter": "success"} if algo == "bc" else {}),
        },
    )
    module = {"iql": iql, "cql": cql, "bc": bc, "awr": awr}[algo]
    result = module.train(table if algo == "bc" else table.to_torch(), cfg, dim=D, progress=False)
    assert result.curves[0]["step"] == 10 and result.curves[-1]["step"] == 150
    first, last = result.curves[0][result.loss_key], result.curves[-1][result.loss_key]
    assert last < first, (algo, first, last)
    # greedy action on both decision points of a successful episode (rows 0 and 1) is the good one
    b = table.to_torch().batch(torch.arange(2))
    with torch.no_grad():
        scores = result.model(b.instruction, b.state, b.cands, b.mask)
    for s, row in zip(DATA[0].steps, scores, strict=True):
        assert s.candidates[int(row.argmax())] in ("take key", "open door"), (algo, s.candidates, row)


def test_training_is_deterministic():
    table = build_table(DATA, HashEmbedder(), parse_reward("sparse")).to_torch()
    cfg = make_config("iql", {"steps": 20, "batch_size": 16, "hidden": 16})
    a = iql.train(table, cfg, dim=D, progress=False)
    b = iql.train(table, cfg, dim=D, progress=False)
    for (ka, va), (kb, vb) in zip(a.model.state_dict().items(), b.model.state_dict().items(), strict=True):
        assert ka == kb and torch.equal(va, vb)
    assert a.curves == b.curves


def test_config_errors():
    with pytest.raises(ConfigError, match="unknown iql config key 'betta'"):
        make_config("iql", {"betta": 1})
    with pytest.raises(ConfigError, match="expected float"):
        make_config("iql", {"beta": "high"})
    with pytest.raises(ConfigError, match="bc filter"):
        make_config("bc", {"filter": "best"})
    with pytest.raises(ConfigError, match="unknown algorithm"):
        make_config("ppo", {})
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_overrides(["beta"])
    cfg = make_config("iql", {})
    assert (cfg.expectile, cfg.beta, cfg.gamma, cfg.weight_clip) == (0.7, 3.0, 0.99, 100.0)


def test_checkpoint_roundtrip_and_errors(tmp_path):
    m = build_scorer(ScorerConfig(embedding_dim=D, hidden=8), seed=0)
    out = save_checkpoint(
        tmp_path / "ck",
        m,
        algo="bc-all",
        algo_config={},
        reward="sparse",
        provenance={},
        curves=[{"step": 1.0, "loss": 2.0}, {"step": 2.0, "loss": 1.0}],
    )
    assert (out / "curves.csv").read_text().splitlines()[0] == "step,loss"
    assert (out / "curves.png").stat().st_size > 0
    m2, meta = load_checkpoint(out)
    assert meta["algo"] == "bc-all"
    for a, b in zip(m.state_dict().values(), m2.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    (out / "checkpoint.json").write_text("{")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_checkpoint(out)
    (tmp_path / "file").write_text("x")
    with pytest.raises(CheckpointError, match="not a checkpoint directory"):
        load_checkpoint(tmp_path / "file")
    # a pickled object (not plain tensors) is refused by weights_only loading
    ck2 = save_checkpoint(tmp_path / "ck2", m, algo="bc", algo_config={}, reward="sparse", provenance={})
    torch.save({"x": object()}, ck2 / "policy.pt")
    with pytest.raises(CheckpointError, match="cannot load weights"):
        load_checkpoint(ck2)


def test_wilson_interval():
    lo, hi = wilson_interval(9, 10)
    assert abs(lo - 0.5958) < 1e-3 and abs(hi - 0.9821) < 1e-3
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(20, 20)[1] == 1.0


def test_embedding_cache_persists_and_survives_a_torn_write(tmp_path):
    c = EmbeddingCache(tmp_path, dim=4)
    keys = [text_key("a"), text_key("b")]
    vecs = np.arange(8, dtype=np.float32).reshape(2, 4)
    c.put(keys, vecs)
    c.put(keys, vecs)  # duplicates are not appended twice
    c2 = EmbeddingCache(tmp_path, dim=4)
    got, missing = c2.get([keys[1], text_key("zzz")])
    assert missing == [1] and np.array_equal(got[0], vecs[1])
    assert (tmp_path / "keys.txt").read_text().count("\n") == 2
    # rows written without their key (a crash between the two appends) are ignored, then overwritten
    with open(tmp_path / "vectors.f32", "ab") as f:
        f.write(np.ones(4, np.float32).tobytes())
    c3 = EmbeddingCache(tmp_path, dim=4)
    c3.put([text_key("c")], np.full((1, 4), 7, np.float32))
    got, missing = EmbeddingCache(tmp_path, dim=4).get([text_key("c"), keys[0]])
    assert missing == [] and (got[0] == 7).all() and np.array_equal(got[1], vecs[0])


def test_embedder_writes_the_disk_cache_as_it_goes(tmp_path, monkeypatch):
    """An interrupted embedding run keeps every flushed batch (a stand-in model fails half way)."""
    import policy.features as features
    from policy.features import TextEmbedder

    class Model:
        calls = 0

        def encode(self, texts, **_kw):
            Model.calls += 1
            if Model.calls > 5:
                raise KeyboardInterrupt
            return np.stack([np.full(384, len(t), np.float32) for t in texts])

    monkeypatch.setattr(features, "FLUSH_TEXTS", 8)
    emb = TextEmbedder(cache_dir=tmp_path, batch_size=4, progress=False)
    monkeypatch.setattr(emb, "_load_model", lambda: Model())
    texts = [f"text {i:03d}" for i in range(40)]
    with pytest.raises(KeyboardInterrupt):
        emb.embed(texts)
    again = TextEmbedder(cache_dir=tmp_path, progress=False)
    assert len(again.cache) == 16  # two flushes of 8 of the 5 batches of 4 that ran
    _got, missing = again.cache.get([text_key(t) for t in texts])
    assert len(missing) == 24
