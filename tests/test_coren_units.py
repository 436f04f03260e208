"""COREN unit tests: voting, calibration, filtering and ties; QA set and retrieval; temporal check;
truncation;
the orchestrator's loss against hand-computed cases and its learning on a synthetic dataset.

Test doubles (a scripted judge, a bag-of-words encoder) live here only; tests/test_coren_real.py runs the real
Gemma judge and sentence encoder."""

from __future__ import annotations

import hashlib
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from labeler.coren import assembly, structural, temporal, voting
from labeler.coren import orchestrator as orch
from labeler.coren.pipeline import (
    CorenConfig,
    CorenInputError,
    CorenLabeler,
    StepText,
    ranked_candidates,
    split_by_trajectory,
    step_features,
    write_labels,
)
from labeler.coren.prompts import PROMPT_DIR, PromptError, load_prompt, load_prompts, load_templates
from labeler.coren.texts import fit_head, fit_plan, transition_text
from labeler.dataset import Step, Trajectory

torch.set_num_threads(1)
VALUES = [-2, -1, 0, 1, 2]


# ------------------------------------------------------------------------------------------------ voting


def test_positions_and_quintile_votes_hand_computed():
    u = voting.positions([0.3, 0.1, 0.3, 0.9, 0.5])
    # ranks 2.5, 1, 2.5, 5, 4 -> (r - 0.5) / 5
    assert np.allclose(u, [0.4, 0.1, 0.4, 0.9, 0.7])
    assert voting.quintile_votes(u).tolist() == [0, -2, 0, 2, 1]
    assert np.allclose(voting.to_scale([0.0, 0.5, 1.0]), [-2, 0, 2])
    assert voting.positions([1.0, 1.0, 1.0]).tolist() == [0.5, 0.5, 0.5]  # all tied: the middle


def test_majority_vote_counts_and_tie_rules():
    assert voting.majority_vote([2, 2, 1, -2, 2]) == 2
    # 2 vs 1 tie (2 each) without support: nearer 0 wins
    assert voting.majority_vote([2, 1, 2, 1, -2]) == 1
    # same tie, voters' mean position 1.8: 2 is nearer
    assert voting.majority_vote([2, 1, 2, 1, -2], support=1.8) == 2
    # support exactly between the tied values: back to nearest 0
    assert voting.majority_vote([2, 1, 2, 1, -2], support=1.5) == 1
    assert voting.majority_vote([-1, 1]) == -1 and voting.majority_vote([-1, 1], support=0.2) == 1
    with pytest.raises(ValueError):
        voting.majority_vote([])


def test_filtered_vote_and_fallback():
    assert voting.filtered_vote([2, -2, -2], [True, False, False], fallback=0) == (2, False)
    assert voting.filtered_vote([2, -2, -2], [False, True, True], fallback=0) == (-2, False)
    assert voting.filtered_vote([2, -2, -2], [False, False, False], fallback=1) == (1, True)
    # tie among the passing prompts, broken by their positions only
    got = voting.filtered_vote([2, -1, -2], [True, True, False], fallback=0, scale_positions=[1.9, -0.8, -2])
    assert got == (2, False)  # mean position 0.55: 2 is 1.45 away, -1 is 1.55 away
    with pytest.raises(ValueError):
        voting.filtered_vote([1, 2], [True], fallback=0)


def test_calibration_hand_computed():
    d = np.array([[0.8, 0.2], [0.6, 0.4]])
    prior = voting.calibration_prior(d)
    assert np.allclose(prior, [0.7, 0.3])
    cal = voting.calibrate(d, prior)
    # row 0: (0.8/0.7, 0.2/0.3) = (1.142857, 0.666667) -> normalised
    a, b = 0.8 / 0.7, 0.2 / 0.3
    assert np.allclose(cal[0], [a / (a + b), b / (a + b)])
    # a prompt that always prefers the first answer no longer votes for it everywhere
    assert np.argmax(cal[1]) == 1
    scores = voting.prompt_scores(d, [-1, 1])
    assert np.allclose(scores, cal @ np.array([-1, 1])) and scores[1] > scores[0]
    with pytest.raises(ValueError):
        voting.prompt_scores(d, [-1, 0, 1])


def test_mean_vote_hand_computed():
    # two prompts, three steps, Yes/No distributions [P(No), P(Yes)]
    rate = np.array(
        [
            [[0.8, 0.2], [0.6, 0.4], [0.4, 0.6]],  # prompt 0: prior (0.6, 0.4)
            [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]],  # prompt 1: says the same everywhere
        ]
    )
    pos, votes, ctx = assembly.contextual_votes(rate, [-1, 1], "mean")
    # prompt 0, step 0: p_cal ∝ (0.8/0.6, 0.2/0.4) = (4/3, 1/2) -> score (1/2 - 4/3) / (11/6) = -5/11
    # step 1: (1, 1) -> 0; step 2: (2/3, 3/2) -> (3/2 - 2/3) / (13/6) = 5/13; on the scale: 2 * score
    assert np.allclose(votes[0], [-10 / 11, 0.0, 10 / 13])
    assert np.allclose(votes[1], [0.0, 0.0, 0.0])  # a prompt without an opinion adds nothing
    assert np.allclose(ctx, [-5 / 11, 0.0, 5 / 13])  # the mean of the two
    # positions are the same as for the majority vote; the majority vote is coarser
    pos_m, votes_m, ctx_m = assembly.contextual_votes(rate, [-1, 1], "majority")
    assert np.allclose(pos, pos_m) and votes_m[0].tolist() == [-2, 0, 2]
    assert np.allclose(voting.score_scale([0.5, -1.0], [-2, -1, 0, 1, 2]), [0.5, -1.0])
    assert voting.filtered_mean([2.0, -1.0, 0.5], [True, False, True], fallback=-2.0) == (1.25, False)
    assert voting.filtered_mean([2.0, -1.0], [False, False], fallback=-0.5) == (-0.5, True)
    with pytest.raises(ValueError):
        voting.filtered_mean([1.0], [True, False], fallback=0.0)
    with pytest.raises(ValueError):
        assembly.contextual_votes(rate, [-1, 1], "median")


# ------------------------------------------------------------------------------------------------ texts


def _count(text: str) -> int:
    return len(text.split())


def test_fit_head_keeps_head_and_reports_cut():
    text = " ".join(f"w{i}" for i in range(50))
    out, cut = fit_head(text, 10, _count)
    assert cut and _count(out) <= 10 and out.startswith("w0 w1") and out.endswith(" ...")
    assert fit_head("short text", 10, _count) == ("short text", False)
    assert fit_head("a b c", 0, _count) == ("", True)


def test_fit_plan_drops_the_middle():
    actions = [f"a{i} x" for i in range(20)]
    text, cut = fit_plan(actions, 16, _count)
    assert cut and _count(text) <= 16 and text.startswith("a0 x") and text.endswith("a19 x") and "..." in text
    assert fit_plan(["a", "b"], 16, _count) == ("a; b", False)


def test_transition_text_is_the_first_new_line():
    obs = "Inventory: empty\nRecent actions: none\nRoom: a kitchen with an apple."
    nxt = "Feedback: You take the apple.\nInventory: an apple\nRecent actions: take apple\nRoom: a kitchen."
    assert transition_text(obs, nxt) == "Feedback: You take the apple."
    assert transition_text(obs, obs) == "Inventory: empty"
    assert transition_text(obs, "") == ""


# ------------------------------------------------------------------------------------------------ structural


def _traj(
    tid: str,
    actions: list[str],
    success: bool,
    obs: str = "Room: kitchen with plate and dishwasher",
    cands: list[str] | None = None,
) -> Trajectory:
    steps = [
        Step(
            observation=f"{obs} {i}",
            action=a,
            candidates=cands or sorted({*actions, "look around"}),
            next_observation=f"Feedback: you {a}.\n{obs} {i + 1}",
        )
        for i, a in enumerate(actions)
    ]
    return Trajectory(id=tid, instruction="Put things away.", task_type="t", success=success, steps=steps)


def test_action_objects_and_key_objects():
    assert structural.action_objects("put the dirty plate in dishwasher") == ["dirty plate", "dishwasher"]
    assert structural.action_objects("look around") == ["around"]
    assert structural.action_objects("inventory") == []
    t = _traj("a", ["open fridge", "take plate", "put plate in dishwasher"], True)
    assert structural.key_objects(t) == ["dishwasher", "plate"]  # plate twice, dishwasher in the final action


def test_candidate_entries_from_successes_only():
    ok = _traj("a", ["take plate", "put plate in dishwasher"], True)
    fail = _traj("b", ["take plate", "put plate in dishwasher"], False)
    entries = structural.candidate_entries([ok, fail])
    assert entries and all(e.observation.startswith("Room: kitchen") for e in entries)
    assert entries[0].answer == "plate, dishwasher"  # in order of appearance
    assert len(entries) == 1  # the same answer in one trajectory is kept once


def test_farthest_point_is_diverse_and_deterministic():
    emb = np.array([[1, 0], [0.99, 0.14], [0, 1], [-1, 0]], dtype=float)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    assert structural.farthest_point(emb, 2) == [0, 3]
    assert structural.farthest_point(emb, 10) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "line,problem",
    [
        ('{"instruction": "i", "observation": "o"}', ":2: answer: missing"),
        ('{"instruction": "i", "observation": "o", "answer": 3}', ":2: answer: expected a non-empty string"),
        ('{"instruction": "i", "observation": "o", "answer": "a", "x": 1}', ":2: x: unknown field"),
        ("not json", ":2: line: invalid JSON"),
        ("[1]", ":2: line: expected a JSON object"),
    ],
)
def test_load_qa_reports_file_line(tmp_path, line, problem):
    p = tmp_path / "qa.jsonl"
    p.write_text('{"instruction": "i", "observation": "o", "answer": "a"}\n' + line + "\n")
    with pytest.raises(structural.QAError) as e:
        structural.load_qa(p)
    assert str(e.value).startswith(f"{p}{problem}")


def test_load_qa_ok_and_hash(tmp_path):
    p = tmp_path / "qa.jsonl"
    p.write_text('{"instruction": "i", "observation": "o", "answer": "a"}\n\n')
    entries = structural.load_qa(p)
    assert entries == [structural.QAEntry("i", "o", "a")]
    assert structural.qa_hash(entries) == structural.qa_hash([structural.QAEntry("i", "o", "a")])
    assert structural.qa_hash(entries) != structural.qa_hash([structural.QAEntry("i", "o", "b")])
    with pytest.raises(structural.QAError, match="does not exist"):
        structural.load_qa(tmp_path / "nope.jsonl")


def test_answer_pass_threshold():
    assert structural.answer_passes(0.5) and not structural.answer_passes(0.49)
    assert structural.clean_answer("  plate, dishwasher\nmore") == "plate, dishwasher"


# ------------------------------------------------------------------------------------------------ temporal


def test_position_prior_and_high_value():
    dists = [np.array([0.7, 0.3]), np.array([0.5, 0.3, 0.2])]
    prior = temporal.position_prior(dists, 4)
    assert np.allclose(prior, [0.6, 0.3, 0.2, 1.0])
    # raw argmax is A, but A is the favourite position: calibrated, B wins (0.45/0.3 > 0.55/0.6)
    assert temporal.high_value_index([0.55, 0.45], prior) == 1
    assert temporal.high_value_index([0.6, 0.3], prior) == 0  # tie -> first


def test_violation_rule():
    assert temporal.violated("take a", "take a", passed=False)
    assert not temporal.violated("take a", "take a", passed=True)
    assert not temporal.violated("take a", "look", passed=False)
    # calibrated against the mean: a judge that says Yes to everything passes only its more confident plans
    assert temporal.backward_passes([0.9, 0.8, 0.95]).tolist() == [True, False, True]
    assert temporal.backward_passes([0.7, 0.7]).tolist() == [True, True]  # no difference: all pass


def test_ranked_candidates_cap_keeps_taken_action():
    st = StepText("o", "c30", "r", [f"c{i}" for i in range(40)])
    ranked = ranked_candidates(st, 26)
    assert len(ranked) == 26 and ranked[-1] == 30 and ranked[:25] == list(range(25))
    assert ranked_candidates(StepText("o", "c1", "r", ["c0", "c1"]), 26) == [0, 1]


# ------------------------------------------------------------------------------------------------
# orchestrator


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


def test_heldout_gain_and_folds_hand_computed():
    target = np.array([1.0, 1.0, 0.0, 0.0])
    base = np.full(4, 0.5)  # the base rate: mse 0.25
    gain, mse, mse_base = orch.heldout_gain(np.array([0.9, 0.7, 0.1, 0.3]), base, target)
    assert mse == pytest.approx((0.01 + 0.09 + 0.01 + 0.09) / 4) and mse_base == pytest.approx(0.25)
    assert gain == pytest.approx(1 - 0.05 / 0.25)
    # predictions worse than the base rate: negative gain (the gate will close)
    assert orch.heldout_gain(np.array([0.0, 0.0, 1.0, 1.0]), base, target)[0] == pytest.approx(1 - 1 / 0.25)
    folds = orch.folds_of([True, True, True, False, False, False], 3, seed=0)
    assert sorted(i for f in folds for i in f) == list(range(6))
    assert all(sum(i < 3 for i in f) == 1 and len(f) == 2 for f in folds)  # one success, one failure each


def test_heldout_check_gate_rules():
    feats, rewards, success = _synthetic(12, 0)
    cfg = orch.OrchestratorConfig(input_dim=12, hidden=8, epochs=5, folds=3)
    few = orch.heldout_check(orch.make_batch(feats[:4], rewards[:4], success[:4]), cfg)
    assert few.gate == 1.0 and few.gain is None and "too few" in few.reason
    off = orch.heldout_check(
        orch.make_batch(feats, rewards, success), orch.OrchestratorConfig(input_dim=12, folds=0)
    )
    assert off.gate == 1.0 and "no held-out check" in off.reason


def _noise(n: int, seed: int):
    rng = np.random.default_rng(seed)
    feats, rewards, success = [], [], []
    for i in range(n):
        t = int(rng.integers(3, 8))
        feats.append(rng.normal(size=(t, 12)).astype(np.float32))
        rewards.append(rng.choice(VALUES, size=(t, 3)).astype(float))
        success.append(bool(i % 2))
    return feats, rewards, success


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


# ------------------------------------------------------------------------------------------------ prompts


def test_prompt_files_load_and_validate(tmp_path):
    prompts = load_prompts(5)
    assert [p.style for p in prompts] == ["few-shot", "few-shot", "few-shot", "few-shot", "cot"]
    t = load_templates()
    assert t.choices == (" No", " Yes") and t.values == (-1, 1) and t.version == 2
    # layout 2: one shared preamble, the variants differ only in their tails
    assert "Progress: Yes" in t.preamble and all(p.header == "" for p in prompts)
    assert len({p.rate_tail for p in prompts[:4]}) == 4 and all(all(p.tails()) for p in prompts)
    # layout 1 stays loadable for comparison: a header per variant, the templates' own tails
    old = load_prompts(5, PROMPT_DIR / "v1")
    assert [p.style for p in old] == ["plain", "few-shot", "few-shot", "few-shot", "cot"]
    assert all(p.header and not any(p.tails()) for p in old)
    t1 = load_templates(PROMPT_DIR / "v1")
    assert t1.version == 1 and t1.preamble == "" and t1.choose.endswith("option")
    with pytest.raises(PromptError, match="between 1 and 5"):
        load_prompts(6)
    bad = tmp_path / "p9_x.v1.toml"
    bad.write_text('name = "x"\nversion = 1\nstyle = "poem"\nheader = "h"\n')
    with pytest.raises(PromptError, match="style"):
        load_prompt(bad, 0)
    bad.write_text('name = "x"\nversion = 1\nstyle = "plain"\n')
    with pytest.raises(PromptError, match="header: missing"):
        load_prompt(bad, 0)


# ------------------------------------------------------------------------------------------------ pipeline


class ScriptedJudge:
    """Test double: P(Yes) is high when the result says 'You take', letters favour 'take' options, backward
    checks pass, QA answers are fixed."""

    model_sha256 = "f" * 64
    n_ctx = 4096

    def __init__(self):
        self.stats = {"queries": 0, "cache_hits": 0}
        self.calls: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 1

    def score_many(self, queries, *, template, version, **kw):
        out = []
        templates = [template] * len(queries) if isinstance(template, str) else list(template)
        assert len(templates) == len(queries)
        for (prefix, choices), tid in zip(queries, templates, strict=True):
            self.stats["queries"] += 1
            self.calls.append(tid)
            n = len(choices)
            p = np.full(n, 1.0)
            if choices[0] == " No":
                tail = prefix.rsplit("Action:", 1)[-1]
                p = np.array([1.0, 4.0 if "You take" in tail else 0.5])
            elif choices[0] == " A":
                opts = prefix.rsplit("Possible actions:", 1)[-1].splitlines()
                for i, line in enumerate(o for o in opts if ". " in o):
                    if "take" in line and i < n:
                        p[i] = 5.0
            elif choices[0] == " Yes":
                p = np.array([3.0, 1.0])
            h = int(hashlib.sha256(prefix.encode()).hexdigest()[:4], 16) / 65536 * 0.01
            p = p + h
            out.append(SimpleNamespace(probs=(p / p.sum()).tolist()))
        return out

    def generate(self, prompt, *, grammar=None, max_tokens=64, stop=None, template="adhoc", version=1):
        self.stats["queries"] += 1
        return " plate, dishwasher\n"


class BagEncoder:
    """Test double: hashed bag-of-words vectors."""

    def encode(self, sentences, **kw):
        out = np.zeros((len(sentences), 64))
        for i, s in enumerate(sentences):
            for w in s.lower().replace(",", " ").split():
                out[i, int(hashlib.md5(w.encode()).hexdigest()[:6], 16) % 64] += 1.0
        return out + 1e-3


def _dataset():
    # candidate orders differ per step, so the letter-position calibration cannot cancel a real preference
    look, put, take = "look around", "put plate in dishwasher", "take plate"
    ok = Trajectory(
        id="ok",
        instruction="Put things away.",
        task_type="t",
        success=True,
        steps=[
            Step(
                "Room: kitchen with plate and dishwasher",
                take,
                [take, look, put],
                "Feedback: You take the plate.\nRoom: kitchen with dishwasher",
            ),
            Step(
                "Room: kitchen with dishwasher",
                put,
                [look, take, put],
                "Feedback: You put the plate in the dishwasher.\nRoom: kitchen",
            ),
        ],
    )
    bad = Trajectory(
        id="bad",
        instruction="Put things away.",
        task_type="t",
        success=False,
        steps=[
            Step(
                "Room: kitchen with plate and dishwasher",
                look,
                [put, look],
                "Room: kitchen with plate and dishwasher, looked",
            ),
            Step(
                "Room: kitchen with plate and dishwasher, looked",
                look,
                [put, look],
                "Room: kitchen with plate and dishwasher, looked twice",
            ),
        ],
    )
    return [ok, bad]


def test_pipeline_with_scripted_judge_labels_every_step(tmp_path):
    judge = ScriptedJudge()
    prompts = load_prompts(3)
    lab = CorenLabeler(judge, BagEncoder(), prompts, load_templates(), CorenConfig())
    trajs = _dataset()
    res = lab.label(trajs)
    assert res.channels.shape == (4, 3) and np.all(np.isfinite(res.channels))
    assert np.all(np.abs(res.channels) <= 2)
    # the 'take' step is rated highest by every prompt (calibration keeps its lead)
    assert res.channels[0, 0] == res.channels[:, 0].max() > res.channels[2, 0]
    cfg_m = CorenConfig(vote="majority")
    res_m = CorenLabeler(ScriptedJudge(), BagEncoder(), prompts, load_templates(), cfg_m).label(_dataset())
    assert res_m.channels[0, 0] == 2 and set(res_m.channels.ravel()) <= {-2, -1, 0, 1, 2}
    rep = lab.report
    assert rep.queries["cand"] == 4 * 3 and rep.queries["rate"] == 4 * 3 and rep.queries["back"] == 2 * 3
    assert rep.qa_entries >= 1 and rep.queries["qa"] >= 3
    assert len(rep.backward_pass_rate) == 3 and all(0.0 <= r <= 1.0 for r in rep.backward_pass_rate)
    # one template id per prompt: answers of different prompt texts never share cache entries
    assert set(judge.calls) == {p.template_id for p in prompts}

    feats = step_features(lab, res)
    batch = orch.make_batch(
        split_by_trajectory(feats, trajs),
        split_by_trajectory(res.channels, trajs),
        [t.success for t in trajs],
    )
    model = orch.train(batch, orch.OrchestratorConfig(input_dim=feats.shape[1], epochs=20)).model
    write_labels(res, orch.weights_for(model, feats), {"judge_sha256": judge.model_sha256}, keep_dists=True)
    lab0 = trajs[0].steps[0].labels["coren"]
    assert {"contextual", "structural", "temporal", "ensemble", "dist_p0", "dist_p2"} <= set(lab0)
    assert math.isfinite(lab0["ensemble"]) and len(lab0["dist_p1"]) == 2  # [P(No), P(Yes)]
    assert lab0["contextual_soft"] > trajs[1].steps[0].labels["coren"]["contextual_soft"]
    assert trajs[1].provenance["coren"]["judge_sha256"] == "f" * 64


def test_pipeline_temporal_violation_when_backward_fails():
    class NoJudge(ScriptedJudge):
        def score_many(self, queries, **kw):
            out = super().score_many(queries, **kw)
            for (prefix, choices), r in zip(queries, out, strict=True):
                if choices[0] == " Yes":  # the plan of the success (all 'take plate') fails, the other passes
                    r.probs = [0.1, 0.9] if "Plan: take plate; take plate" in prefix else [0.9, 0.1]
            return out

    lab = CorenLabeler(NoJudge(), BagEncoder(), load_prompts(2), load_templates(), CorenConfig())
    res = lab.label(_dataset())
    # in the success, 'take plate' is every prompt's high-value action and the plan fails: all votes excluded
    assert lab.report.temporal_violations == 2 and lab.report.temporal_fallbacks == 1
    assert np.all(np.isfinite(res.channels))


def test_pipeline_rejects_steps_without_candidates():
    trajs = _dataset()
    trajs[1].steps[1].candidates = []
    lab = CorenLabeler(ScriptedJudge(), BagEncoder(), load_prompts(1), load_templates(), CorenConfig())
    with pytest.raises(CorenInputError, match="step 1 has no candidates.*candidates"):
        lab.label(trajs)


def test_long_texts_are_truncated_and_counted():
    trajs = _dataset()
    trajs[0].steps[0].observation = "Room: " + "very long room " * 2000
    trajs[1].instruction = "Put " + "everything " * 3000 + "away."
    judge = ScriptedJudge()
    judge.n_ctx = 1500
    lab = CorenLabeler(judge, BagEncoder(), load_prompts(2), load_templates(), CorenConfig(obs_tokens=48))
    plan = lab.plan(trajs)
    assert plan["truncations"]["instruction"] == 1  # cut to a quarter of the free context
    assert plan["truncations"]["observation_head"] >= 1  # the observation's head, by design
    assert plan["queries"]["cand"] == 2 * 4 and plan["total_queries"] > 0


# ------------------------------------------------------------------------------------------------ examples


def test_examples_built_from_the_data():
    from labeler.coren.examples import data_examples, data_preamble
    from tests.test_trca_grounding import episode

    trajs = [
        episode("s1", ["push wall", "take apple", "put apple in box", "take apple", "put apple in fridge"]),
        episode("f1", ["take apple", "pull rope", "take apple"]),
    ]
    ex = data_examples(trajs, per_type=4)
    yes = [e.action for e in ex if e.progress]
    no = [e.action for e in ex if not e.progress]
    # Yes: lasting steps of the success only (the box detour is erased, the failure never counts)
    assert sorted(yes) == ["put apple in fridge", "take apple"]
    # No: steps that changed nothing (a refusal, a repeat that failed)
    assert set(no) <= {"push wall", "pull rope", "take apple"} and "push wall" in no
    assert [e.progress for e in ex][:2] == [True, False]  # interleaved
    pre = data_preamble("Say whether each action made progress.\n\nTask: x", ex)
    assert pre.startswith("Say whether each action made progress.\n\nTask: Put the things where they belong.")
    assert (
        "Action: put apple in fridge\nResult: Feedback: You put the apple in the fridge.\nProgress: Yes"
        in pre
    )
    assert data_examples(trajs, per_type=4) == ex  # seeded
