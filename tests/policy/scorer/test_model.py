from __future__ import annotations

import pytest
import torch

from policy.scorer.model import MASKED_SCORE, PolicyGraph, ScorerConfig, StateInputs, build_scorer
from policy.scorer.token_reader import TokenReader
from policy.training.buffer import TOKEN_LENGTH, build_table
from policy.training.learners import bc, iql
from policy.training.rewards import parse_reward
from policy.training.train import make_config
from tests.support.toy_task import DATA, D, HashEmbedder

torch.set_num_threads(1)


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


def test_config_holds_one_state_encoding_and_reads_the_flat_keys_of_older_checkpoints():
    from models.inputs.state import StateEncoding

    cfg = ScorerConfig(hidden=16, encoding=StateEncoding(max_items=10, memory=4, facts=2))
    assert ScorerConfig.from_dict(cfg.to_dict()) == cfg
    older = {k: v for k, v in cfg.to_dict().items() if k != "encoding"}
    older.update(max_items=10, memory=4, facts=2)
    assert ScorerConfig.from_dict(older) == cfg
    with pytest.raises(ValueError, match="unknown scorer config key"):
        ScorerConfig.from_dict({**cfg.to_dict(), "horizon": 3})


# ----------------------------------------------------------------------------------------------- fast paths
# Each fast path against the reference on the same inputs: the token reader's matrix form (values and
# gradients), the state encoder on packed tokens with fused attention, the scatter form of the match features,
# and whole trainings (BC, IQL with its actor on a second thread) that follow the same curve.


@pytest.fixture
def reference(monkeypatch):
    """Call ``reference(True)`` to build scorers that take the reference computation, ``reference(False)``
    the fast paths (the setting is read when a scorer is built)."""

    def set_reference(on: bool) -> None:
        monkeypatch.setenv("EDGEJUDGE_TRAIN_REFERENCE", "1" if on else "0")

    return set_reference


def test_fast_paths_are_chosen_when_the_scorer_is_built_and_off_in_the_exported_graph(reference):
    cfg = ScorerConfig(embedding_dim=D, hidden=8, reader="tokens", vocab=20, token_dims=4)
    reference(False)
    m = build_scorer(cfg)
    assert m.fast and m.state.fast and m.reader is not None and m.reader.fast
    reference(True)
    assert m.fast, "a built scorer keeps its choice"
    assert not build_scorer(cfg).fast
    assert build_scorer(cfg, fast=True).fast
    PolicyGraph(m)
    assert not (m.fast or m.state.fast or m.reader.fast)


def _reader_inputs(seed: int):
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, 20, (14, 7), generator=gen)
    tokens[:, 5:] = 0
    tokens[3, 2:] = 0
    tokens[5] = torch.tensor([4, 6, 0, 0, 0, 0, 0])
    tokens[6] = torch.tensor([6, 4, 9, 0, 0, 0, 0])  # 5's words all inside 6: an empty residual
    tokens[-1] = 0
    cand = torch.randint(0, 14, (3, 4), generator=gen)
    cand[0, 0] = 5
    items = torch.randint(0, 14, (3, 6), generator=gen)
    items[0, 0] = 6
    kinds = torch.randint(0, 5, (3, 6), generator=gen)
    kinds[0, 0] = 1
    kinds[2] = 0
    return tokens, cand, items, kinds


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_readers_matrix_form_equals_the_reference_in_values_and_gradients(seed):
    torch.manual_seed(seed)
    r = TokenReader(torch.randn(20, 8), 16, 5)
    inputs = _reader_inputs(seed)
    out, grads = [], []
    for ref in (True, False):
        r.fast = not ref
        r.zero_grad()
        pooled, exact = r.rows(*inputs, candidate_tokens=4, item_tokens=6)
        (pooled.square().sum() + exact.sum()).backward()
        out.append((pooled.detach(), exact.detach()))
        grads.append([p.grad.clone() for p in r.parameters() if p.grad is not None])
    for a, b in zip(out[0], out[1], strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    for a, b in zip(grads[0], grads[1], strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_a_cached_batch_reads_the_same_pairs_as_a_fresh_one():
    torch.manual_seed(0)
    r = TokenReader(torch.randn(20, 8), 16, 5)
    inputs = _reader_inputs(0)
    cache: dict = {}
    first = r.rows(*inputs, candidate_tokens=4, item_tokens=6, cache=cache)
    assert cache, "the pairs were not kept"
    again = r.rows(*inputs, candidate_tokens=4, item_tokens=6, cache=cache)
    fresh = r.rows(*inputs, candidate_tokens=4, item_tokens=6)
    for a, b, c in zip(first, again, fresh, strict=True):
        assert torch.equal(a, b) and torch.equal(a, c)


def _state(gen: torch.Generator) -> StateInputs:
    kinds = torch.tensor([[1, 2, 0, 0], [1, 1, 3, 2], [0, 0, 0, 0]])
    memory_mask = torch.tensor([[True, False], [False, False], [True, True]])  # True: padding
    return StateInputs(
        torch.randn(3, 4, D, generator=gen),
        kinds,
        torch.randn(3, 2, D, generator=gen),
        torch.randn(3, 2, D, generator=gen),
        memory_mask,
    )


def test_packed_state_encoder_and_scatter_match_features_equal_the_reference():
    gen = torch.Generator().manual_seed(4)
    m = build_scorer(ScorerConfig(embedding_dim=D, hidden=16), seed=3).eval()
    x, state = torch.randn(3, D, generator=gen), _state(gen)
    cands = torch.randn(3, 5, D, generator=gen)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False], [True] * 5])
    scores = []
    for ref in (True, False):
        m.use_fast_paths(not ref)
        tokens, pad = m.state(x, state)
        scores.append((m(x, state, cands, mask), tokens.masked_fill(pad[..., None], 0.0)))
    torch.testing.assert_close(scores[0][0], scores[1][0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(scores[0][1], scores[1][1], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(m.match_features_fast(state, cands), m.match_features(state, cands))


@pytest.mark.parametrize("algo", ["bc", "iql"])
def test_a_training_on_the_fast_paths_follows_the_reference(reference, algo):
    emb = HashEmbedder()
    table = build_table(
        DATA,
        emb,
        parse_reward("sparse"),
        candidate_features="action+arguments",
        token_source=emb.token_source(TOKEN_LENGTH),
    )
    cfg = make_config(algo, {"steps": 20, "batch_size": 16, "hidden": 16, "log_every": 5, "reader": "tokens"})
    curves = []
    for ref in (True, False):
        reference(ref)
        data = table if algo == "bc" else table.to_torch()
        curves.append((bc if algo == "bc" else iql).train(data, cfg, dim=D, progress=False).curves)
    for a, b in zip(*curves, strict=True):
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] == pytest.approx(b[k], rel=1e-3, abs=1e-4), (k, a[k], b[k])


def test_iql_on_a_second_thread_makes_the_same_updates():
    """The actor's step runs beside the critic's: the same computation per network, so the same trained actor
    as one thread gives."""
    emb = HashEmbedder()
    table = build_table(
        DATA, emb, parse_reward("sparse"), token_source=emb.token_source(TOKEN_LENGTH)
    ).to_torch()
    actors = []
    for threaded in (False, True):
        cfg = make_config(
            "iql",
            {
                "steps": 12,
                "batch_size": 16,
                "hidden": 16,
                "log_every": 4,
                "reader": "tokens",
                "actor_thread": threaded,
            },
        )
        actors.append(iql.train(table, cfg, dim=D, progress=False).model.state_dict())
    for name, value in actors[0].items():
        torch.testing.assert_close(actors[1][name], value, atol=0, rtol=0, msg=name)
