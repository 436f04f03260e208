"""The COREN orchestrator: its loss against hand-computed cases, its learning on a synthetic dataset, the
held-out check and its checkpoints."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from labeler.coren import orchestrator as orch

torch.set_num_threads(1)


VALUES = [-2, -1, 0, 1, 2]


def _synthetic(n: int, seed: int):
    """Channel 0 is the informative one: +2 on every step of a success, 0 on a failure (so its normalised
    return
    is ~alpha * f_s, the target); channels 1 and 2 are uniform noise over the scale."""
    rng = np.random.default_rng(seed)
    feats, rewards, success = [], [], []
    for i in range(n):
        ok = bool(i % 2)
        t = int(rng.integers(3, 8))
        r = rng.choice(VALUES, size=(t, 3)).astype(float)
        r[:, 0] = 2.0 if ok else 0.0
        feats.append(rng.normal(size=(t, 12)).astype(np.float32))
        rewards.append(r)
        success.append(ok)
    return feats, rewards, success


PAPER = {"null_channel": False, "learn_scale": False, "learn_bias": False, "folds": 0}


def _noise(n: int, seed: int):
    rng = np.random.default_rng(seed)
    feats, rewards, success = [], [], []
    for i in range(n):
        t = int(rng.integers(3, 8))
        feats.append(rng.normal(size=(t, 12)).astype(np.float32))
        rewards.append(rng.choice(VALUES, size=(t, 3)).astype(float))
        success.append(bool(i % 2))
    return feats, rewards, success


def test_orchestrator_loss_hand_computed():
    # one trajectory, 2 steps, weights all on channel 0; rewards 2 then 1; gamma 0.5, K=2, H=2, success 1,
    # alpha 1
    w = torch.tensor([[[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    r = torch.tensor([[[2.0, -2.0, 0.0], [1.0, 0.0, 0.0]]])
    m = torch.ones(1, 2)
    loss = orch.orchestrator_loss(w, r, m, torch.tensor([1.0]), gamma=0.5, max_reward=2.0, alpha=1.0)
    ret = (2.0 + 0.5 * 1.0) / (2 * 2.0)  # 0.625
    assert loss.item() == pytest.approx((ret - 1.0) ** 2)
    # equal weights, a padded second trajectory of length 1 (failure): mean of both squared errors
    w2 = torch.full((2, 2, 3), 1 / 3)
    r2 = torch.tensor([[[3.0, 0.0, 0.0], [0.0, 0.0, 3.0]], [[-3.0, 0.0, 0.0], [9.0, 9.0, 9.0]]])
    m2 = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    loss2 = orch.orchestrator_loss(w2, r2, m2, torch.tensor([1.0, 0.0]), gamma=1.0, max_reward=1.0, alpha=0.5)
    e1 = (1.0 + 1.0) / (2 * 1.0) - 0.5  # 0.5
    e2 = (-1.0) / (1 * 1.0) - 0.0  # -1
    assert loss2.item() == pytest.approx((e1**2 + e2**2) / 2)


def test_orchestrator_learns_the_informative_channel():
    feats, rewards, success = _synthetic(60, 0)
    batch = orch.make_batch(feats, rewards, success)
    cfg = orch.OrchestratorConfig(
        input_dim=12, hidden=16, epochs=300, lr=1e-2, gamma=0.99, alpha=1.0, **PAPER
    )
    res = orch.train(batch, cfg)
    assert res.losses[-1] < 0.5 * res.losses[0]
    test_feats, _, _ = _synthetic(20, 1)
    w = orch.weights_for(res.model, np.concatenate(test_feats))
    assert w.mean(axis=0)[0] > 0.8, w.mean(axis=0)
    assert np.allclose(w.sum(axis=1), 1.0, atol=1e-5)  # the paper's orchestrator: weights sum to 1


def test_loss_with_scale_bias_and_null_channel_hand_computed():
    # one trajectory, 2 steps; step 0 all weight on channel 0 (reward 2), step 1 on the null channel (reward 0
    # whatever the channels say); gamma 0.5, K 2, H 2: return (2 + 0.5 * 0) / 4 = 0.5; s 0.5 -> 0.25; b 0.1;
    # success 1: (0.25 + 0.1 - 1)^2 = 0.4225
    w = torch.tensor([[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]])
    r = torch.tensor([[[2.0, -2.0, 0.0], [2.0, 2.0, 2.0]]])
    loss = orch.orchestrator_loss(
        w, r, torch.ones(1, 2), torch.tensor([1.0]), gamma=0.5, max_reward=2.0, alpha=1.0, scale=0.5, bias=0.1
    )
    assert loss.item() == pytest.approx(0.4225)


def test_heldout_gain_hand_computed():
    target = np.array([1.0, 1.0, 0.0, 0.0])
    base = np.full(4, 0.5)  # the base rate: mse 0.25
    gain, mse, mse_base = orch.heldout_gain(np.array([0.9, 0.7, 0.1, 0.3]), base, target)
    assert mse == pytest.approx((0.01 + 0.09 + 0.01 + 0.09) / 4) and mse_base == pytest.approx(0.25)
    assert gain == pytest.approx(1 - 0.05 / 0.25)
    # predictions worse than the base rate: negative gain (the gate will close)
    assert orch.heldout_gain(np.array([0.0, 0.0, 1.0, 1.0]), base, target)[0] == pytest.approx(1 - 1 / 0.25)


def test_heldout_check_gate_rules():
    feats, rewards, success = _synthetic(12, 0)
    cfg = orch.OrchestratorConfig(input_dim=12, hidden=8, epochs=5, folds=3)
    few = orch.heldout_check(orch.make_batch(feats[:4], rewards[:4], success[:4]), cfg)
    assert few.gate == 1.0 and few.gain is None and "too few" in few.reason
    off = orch.heldout_check(
        orch.make_batch(feats, rewards, success), orch.OrchestratorConfig(input_dim=12, folds=0)
    )
    assert off.gate == 1.0 and "no held-out check" in off.reason


def test_ensemble_ignores_a_noise_channel_and_falls_back_to_sparse_on_noise():
    cfg = orch.OrchestratorConfig(input_dim=12, hidden=16, epochs=300, lr=1e-2, gamma=0.99)
    # channel 0 predicts success, channels 1 and 2 are noise: the gate stays open, channel 0 gets the weight
    res = orch.fit(orch.make_batch(*_synthetic(60, 0)), cfg)
    assert res.check.gate == 1.0 and res.check.gain > 0.5, res.check
    w = orch.weights_for(res.model, np.concatenate(_synthetic(20, 1)[0])).mean(axis=0)
    assert w[0] > 0.6 and w[0] > 4 * max(w[1], w[2]), w
    # every channel is noise: held-out predictions are no better than the base rate -> sparse (all zeros)
    res = orch.fit(orch.make_batch(*_noise(60, 0)), cfg)
    assert res.check.gate == 0.0 and res.check.gain <= 0.0 and "falling back" in res.check.reason
    assert np.all(orch.weights_for(res.model, np.concatenate(_noise(20, 1)[0])) == 0.0)


def test_version_1_checkpoints_still_load(tmp_path):
    from safetensors.torch import save_file

    cfg = orch.OrchestratorConfig(input_dim=6, hidden=4, **PAPER)
    m = orch.Orchestrator(cfg)
    meta = {"format": orch.CKPT_FORMAT, "version": "1", "provenance": "{}"}
    meta["config"] = json.dumps({"input_dim": 6, "hidden": 4})
    save_file(
        {k: v for k, v in m.state_dict().items() if k.startswith("net.")}, tmp_path / "v1.st", metadata=meta
    )
    loaded, _, _ = orch.load(tmp_path / "v1.st", input_dim=6)
    x = np.ones((2, 6), dtype=np.float32)
    assert np.allclose(orch.weights_for(loaded, x), orch.weights_for(m, x))
    assert np.allclose(orch.weights_for(loaded, x).sum(axis=1), 1.0, atol=1e-6)


def test_orchestrator_checkpoint_roundtrip_and_errors(tmp_path):
    cfg = orch.OrchestratorConfig(input_dim=6, hidden=4, epochs=1)
    model = orch.Orchestrator(cfg)
    sha = orch.save(model, tmp_path / "o.safetensors", {"judge_sha256": "abc"})
    loaded, prov, sha2 = orch.load(tmp_path / "o.safetensors", input_dim=6)
    assert sha == sha2 and prov == {"judge_sha256": "abc"}
    x = np.ones((2, 6), dtype=np.float32)
    assert np.allclose(orch.weights_for(model, x), orch.weights_for(loaded, x))
    with pytest.raises(orch.OrchestratorError, match="expects 6-dim"):
        orch.load(tmp_path / "o.safetensors", input_dim=7)
    (tmp_path / "bad.safetensors").write_bytes(b"not a checkpoint")
    with pytest.raises(orch.OrchestratorError, match="not a safetensors"):
        orch.load(tmp_path / "bad.safetensors")
    with pytest.raises(orch.OrchestratorError, match="does not exist"):
        orch.load(tmp_path / "missing.safetensors")
