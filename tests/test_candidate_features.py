"""Candidate features (edge.actions), the affinity scorer, the loop guard, and their agreement across
training, export, the bundle runner and the daemon's runtime."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from edge.actions import (
    PREPOSITIONS,
    candidate_matrix,
    candidate_texts,
    parts_of,
    split_action,
)
from edge.loop_guard import LoopGuard
from edge.state_inputs import embed_state, pad_batch, state_texts
from policy.buffer import build_table, scorer_config
from policy.model import ScorerConfig, StateInputs, build_scorer
from policy.rewards import parse_reward
from tests.test_policy_units import DATA, D, HashEmbedder

# ------------------------------------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    "action, expected",
    [
        ("put dirty plate in dishwasher", ("dirty plate", "dishwasher")),
        ("put box of cereal on shelf", ("box of cereal", "shelf")),
        ("take paper towel from counter", ("paper towel", "counter")),
        ("take apple", ("apple", "")),
        ("open fridge", ("fridge", "")),
        ("look around", ("around", "")),
        ("inventory", ("", "")),
        ("", ("", "")),
        ("put in", ("in", "")),  # a preposition needs words after it to start a target
    ],
)
def test_split_action(action, expected):
    assert split_action(action) == expected


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8).filter(
    lambda w: w not in PREPOSITIONS
)


@given(
    verb=words,
    obj=st.lists(words, min_size=1, max_size=4),
    prep=st.sampled_from(PREPOSITIONS),
    target=st.lists(words, min_size=1, max_size=4),
)
def test_split_action_recovers_object_and_target(verb, obj, prep, target):
    action = " ".join([verb, *obj, prep, *target])
    assert split_action(action) == (" ".join(obj), " ".join(target))
    assert split_action(" ".join([verb, *obj])) == (" ".join(obj), "")


def test_candidate_matrix_layout_and_one_embed_call():
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return np.stack([np.full(4, len(t), np.float32) for t in texts])

    cands = ["put cup in box", "take cup", "inventory"]
    m = candidate_matrix("action+arguments", cands, embed, 4)
    assert m.shape == (3, 12) and m.dtype == np.float32
    assert len(calls) == 1 and "" not in calls[0] and len(calls[0]) == len(set(calls[0]))
    assert m[0, 4] == len("cup") and m[0, 8] == len("box")
    assert not m[1, 8:].any() and not m[2, 4:].any()  # absent target / arguments are zeros
    assert candidate_matrix("action", cands, embed, 4).shape == (3, 4)
    assert candidate_texts("action", cands) == cands
    with pytest.raises(ValueError, match="unknown candidate features"):
        parts_of("words")


def test_candidate_features_take_no_state_text():
    """What a candidate becomes depends on its own text only: the builders are given no state to read, and a
    daemon serving a bundle needs to know nothing about the world."""
    for builder in (candidate_texts, candidate_matrix):
        params = set(inspect.signature(builder).parameters)
        assert not params & {"observation", "state", "obs"}, builder.__name__
    cands = ["take cookbook", "put pen in fridge", "open chest of drawers"]
    assert candidate_texts("action+arguments", cands) == [
        *("take cookbook", "cookbook", ""),
        *("put pen in fridge", "pen", "fridge"),
        *("open chest of drawers", "chest of drawers", ""),
    ]


def test_the_location_kind_is_retired_with_its_reason():
    with pytest.raises(ValueError, match="retired: it read objects' places from TextWorld's room text"):
        parts_of("action+arguments+location")


# ------------------------------------------------------------------------------------------------ scorer


def test_affinity_term_is_bilinear_in_object_and_target():
    m = build_scorer(ScorerConfig(embedding_dim=D, hidden=8, candidate_features="action+arguments"), seed=0)
    x = torch.randn(1, D)
    state = StateInputs(
        torch.randn(1, 2, D),
        torch.tensor([[1, 2]]),
        torch.randn(1, 1, D),
        torch.zeros(1, 1, D),
        torch.ones(1, 1, dtype=torch.bool),
    )
    c, o, t = torch.randn(3, D), torch.randn(3, D), torch.randn(3, D)
    mask = torch.ones(1, 3, dtype=torch.bool)

    def affinity(target):
        """The score with the gate at 1 minus the score with the gate at 0."""
        out = []
        for g in (1.0, 0.0):
            with torch.no_grad():
                m.aff_gate.weight.zero_()
                m.aff_gate.bias.fill_(g)
                out.append(m(x, state, torch.cat([c, o, target], -1)[None], mask)[0])
        return out[0] - out[1]

    full = affinity(t)
    assert torch.allclose(affinity(torch.zeros_like(t)), torch.zeros(3))  # no target, no affinity
    assert torch.allclose(affinity(2 * t), 2 * full, atol=1e-4)  # linear in the target (and the object)
    expected = m.aff_scale * (o * t).sum(-1) + (m.aff_u(o) * m.aff_v(t)).sum(-1)
    assert torch.allclose(full, expected.detach(), atol=1e-4)


def test_table_with_argument_features_and_config_mismatch():
    table = build_table(DATA, HashEmbedder(), parse_reward("sparse"), candidate_features="action+arguments")
    assert table.cand.ndim == 3 and table.cand.shape[2] == 3
    b = table.to_torch().batch(torch.arange(4))
    assert b.cands.shape == (4, table.cand.shape[1], 3 * D)
    assert b.mask.shape == (4, table.cand.shape[1])

    class Cfg:
        hidden = 8
        candidate_features = "action"

    with pytest.raises(ValueError, match="candidate features"):
        scorer_config(table, Cfg(), D)


# ------------------------------------------------------------------------------------------------ loop guard


def test_loop_guard_never_repeats_a_loop_closing_action():
    g = LoopGuard(key=lambda obs: obs.split("|")[0])  # "world|history": the key drops the history
    hold, placed = ["put x in y", "look"], ["take x", "put z in w"]
    assert g.choose("H|1", hold, [0.9, 0.1]) == 0  # put x away
    assert g.choose("P|2", placed, [0.9, 0.5]) == 0  # take it back (the policy's argmax) ...
    assert g.choose("H|3", hold, [0.9, 0.1]) == 0  # ... back in H: 'take x' closed a loop; 'put' stays fine
    assert g.choose("P|4", placed, [0.9, 0.5]) == 1  # 'take x' is not taken from P again
    assert g.overrides == 1
    g.reset()
    assert g.choose("P|4", placed, [0.9, 0.5]) == 0 and g.overrides == 0  # a new episode forgets


def test_loop_guard_no_ops_exact_repeats_and_fallback():
    g = LoopGuard()
    cands = ["look", "go", "wait"]
    assert g.choose("S", cands, [0.9, 0.5, 0.1]) == 0  # a no-op: S again ...
    assert g.choose("S", cands, [0.9, 0.5, 0.1]) == 1  # ... so 'look' closed a loop of length one
    assert g.choose("T", cands, [0.9, 0.5, 0.1]) == 0
    g2 = LoopGuard()
    assert [g2.choose("S", ["a"], [1.0]) for _ in range(3)] == [0, 0, 0]  # nothing else: the argmax
    with pytest.raises(ValueError):
        g.choose("S", cands, [1.0])


def test_edge_policy_guard_picks_from_the_reply_scores():
    from edge.edge_policy import EdgePolicy
    from edge.policies import Guarded, Policy

    class StubClient:  # the reply fields EdgePolicy reads; the real daemon is driven in test_eval_serve.py
        def act(self, instruction, observation, candidates, memory=()):
            return {"index": 0, "scores": [0.9, 0.5], "model": "m", "timing": {"server_ms": 0.1}}

    plain, guarded = EdgePolicy(StubClient()), Guarded(EdgePolicy(StubClient()))
    assert isinstance(plain, Policy) and isinstance(guarded, Policy)
    assert [plain.act("i", "s", ["a", "b"]) for _ in range(3)] == [0, 0, 0]
    assert [guarded.act("i", "s", ["a", "b"]) for _ in range(3)] == [0, 1, 0]
    assert guarded.overrides == 1 and guarded.name == "edge-serve+guard"
    guarded.reset()
    assert guarded.act("i", "s", ["a", "b"]) == 0


def test_placement_strategy_over_the_daemon_ranks_places_with_one_more_request():
    from edge.edge_policy import EdgePolicy
    from edge.policies import Timed
    from policy.envs.twx_placement import PlacementSearchPolicy

    class StubClient:
        def __init__(self):
            self.requests = []

        def act(self, instruction, observation, candidates, memory=()):
            self.requests.append(list(candidates))
            scores = [1.0 if c.endswith("shelf") else 0.0 for c in candidates]
            return {"index": 0, "scores": scores, "model": "m", "timing": {"server_ms": 0.1}}

    client = StubClient()
    inner = Timed(EdgePolicy(client))  # one timing per request
    policy = PlacementSearchPolicy(inner)
    assert policy.name == "edge-serve+search"
    assert policy.act("i", "s0", ["look around", "take cup"]) == 1
    assert policy.act("i", "s1", ["put cup in sink", "put cup in shelf", "open box"]) == 1
    # the second step asked for the admissible scores, then for one hypothetical put per place
    assert client.requests[-1] == ["put cup in sink", "put cup in shelf", "put cup in box"]
    assert len(inner.ms) == 3 and policy.searches == 0


# ------------------------------------------------------------------------------------------------ real bundle


@pytest.mark.parametrize("kind", ["action+arguments"])
def test_argument_bundle_agrees_across_torch_onnx_and_the_daemon_runtime(tmp_path, kind):
    """A real MiniLM encoder.onnx; the same scores from the torch scorer on sentence-transformers features,
    the bundle runner, the daemon runtime from text and from features sent as arrays."""
    from edge.bundle_policy import BundlePolicy
    from edge.runtime import load_runtime
    from models.bundle import load_manifest
    from policy.export import export_bundle
    from policy.features import TextEmbedder

    model = build_scorer(ScorerConfig(embedding_dim=384, hidden=16, candidate_features=kind), 3)
    rep = export_bundle(model, tmp_path / "b", skills=["put mug in dishwasher", "look around"])
    assert rep.policy_max_abs_diff_real <= 1e-4
    man = load_manifest(tmp_path / "b")
    assert man.candidate_features == kind and man.candidate_dim == 3 * 384
    assert man.to_dict()["policy_io"]["inputs"]["candidates"][2] == 3 * 384

    instr = "Your task is to put objects in their usual locations."
    obs = "Inventory: dirty mug\nRoom: You are in the kitchen. You see a dishwasher that has a fork on it."
    memory = [("look around", "Feedback: You see a dishwasher.\nInventory: empty"), ("take dirty mug", obs)]
    cands = ["put dirty mug in dishwasher", "put dirty mug in fridge", "take fork"]
    emb = TextEmbedder(progress=False)
    feats = candidate_matrix(kind, cands, emb.embed, 384)
    assert not feats[2, 2 * 384 :].any()  # "take fork" has no target
    st = state_texts(man.state_layout, man.encoding, obs, memory)
    feeds = pad_batch([embed_state(st, emb.embed, 384)], 384)
    with torch.no_grad():
        ref = model(
            torch.from_numpy(emb.embed([instr])),
            StateInputs(**{k: torch.from_numpy(v) for k, v in feeds.items()}),
            torch.from_numpy(feats)[None],
            torch.ones(1, 3, dtype=torch.bool),
        )[0]

    with BundlePolicy(tmp_path / "b") as pol:
        onnx_scores = pol.scores(instr, obs, cands, memory)
        skills_scores = pol.scores(instr, obs, None, memory)
        assert not np.allclose(pol.scores(instr, obs, cands), onnx_scores)  # the memory is read
    np.testing.assert_allclose(onnx_scores, ref.numpy(), atol=2e-3)
    assert skills_scores.shape == (2,)

    rt = load_runtime(tmp_path / "b")
    try:
        (item,) = rt.items_from_text([(instr, obs, cands, memory)])
        assert item.candidates.shape == (3, 3 * 384)
        (from_text,) = rt.score([item])
        np.testing.assert_allclose(from_text, onnx_scores, atol=1e-5)
    finally:
        rt.close()
