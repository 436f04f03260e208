"""policy.train_paths: the training fast paths compute what the reference computes.

Each fast path against the reference on the same inputs: the token reader's matrix form (values and
gradients), the state encoder on packed tokens with fused attention, the scatter form of the match features,
and whole trainings (BC, IQL with its actor on a second thread) that follow the same curve. Off while an ONNX
graph is traced."""

from __future__ import annotations

import pytest
import torch

from policy import bc, iql, train_paths
from policy.buffer import TOKEN_LENGTH, build_table
from policy.model import ScorerConfig, StateInputs, build_scorer
from policy.rewards import parse_reward
from policy.token_reader import TokenReader
from policy.train import make_config
from tests.support.toy_task import DATA, D, HashEmbedder


@pytest.fixture
def reference(monkeypatch):
    """Call ``reference(True)`` to take the reference computation, ``reference(False)`` the fast paths."""

    def set_reference(on: bool) -> None:
        monkeypatch.setattr(train_paths, "REFERENCE", on)

    return set_reference


def test_on_by_default_off_for_the_reference_and_while_tracing(reference, monkeypatch):
    reference(False)
    assert train_paths.enabled()
    reference(True)
    assert not train_paths.enabled()
    reference(False)
    monkeypatch.setattr(torch.onnx, "is_in_onnx_export", lambda: True)
    assert not train_paths.enabled()


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
def test_the_readers_matrix_form_equals_the_reference_in_values_and_gradients(reference, seed):
    torch.manual_seed(seed)
    r = TokenReader(torch.randn(20, 8), 16, 5)
    inputs = _reader_inputs(seed)
    out, grads = [], []
    for ref in (True, False):
        reference(ref)
        r.zero_grad()
        pooled, exact = r.rows(*inputs, candidate_tokens=4, item_tokens=6)
        (pooled.square().sum() + exact.sum()).backward()
        out.append((pooled.detach(), exact.detach()))
        grads.append([p.grad.clone() for p in r.parameters() if p.grad is not None])
    for a, b in zip(out[0], out[1], strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    for a, b in zip(grads[0], grads[1], strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_a_cached_batch_reads_the_same_pairs_as_a_fresh_one(reference):
    reference(False)
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


def test_packed_state_encoder_and_scatter_match_features_equal_the_reference(reference):
    gen = torch.Generator().manual_seed(4)
    m = build_scorer(ScorerConfig(embedding_dim=D, hidden=16), seed=3).eval()
    x, state = torch.randn(3, D, generator=gen), _state(gen)
    cands = torch.randn(3, 5, D, generator=gen)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False], [True] * 5])
    scores = []
    for ref in (True, False):
        reference(ref)
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
