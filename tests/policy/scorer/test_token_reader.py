"""policy.scorer.token_reader: the token-level reading of items for each candidate.

Contracts: the exact-match shares against hand-computed values, shared (entity) tokens masked out of both
residuals, the training path (distinct pairs, embedding_bag) equal to the graph's path (id tensors), and the
baked table equal to the unbaked one."""

from __future__ import annotations

import pytest
import torch

from policy.scorer.token_reader import TokenReader


def _reader(vocab: int = 60, dims: int = 8, hidden: int = 16, kinds: int = 5, seed: int = 0) -> TokenReader:
    torch.manual_seed(seed)
    return TokenReader(torch.randn(vocab, dims), hidden, kinds)


def _equal_weights(r: TokenReader) -> None:
    """Every token weighs softplus(0) = log 2: shares become plain fractions of tokens."""
    with torch.no_grad():
        for row in (r.hidden, 2 * r.hidden + 1):  # the weight logits of both sides
            r.proj.weight[row].zero_()
            r.proj.bias[row] = 0.0


def test_shares_are_the_weighted_fractions_of_shared_tokens():
    r = _reader()
    _equal_weights(r)
    cand = torch.tensor([[[5, 7, 9, 0]]])  # "cook red potato", one padding id
    items = torch.tensor([[[7, 9, 11, 12, 13], [20, 21, 0, 0, 0]]])  # shares 2 of 3; shares nothing
    c_vec, c_w = r.token_rows(cand.unsqueeze(2), 1)
    s_vec, s_w = r.token_rows(items.unsqueeze(1), 0)
    rel, cov, _vec = r.pair(
        cand.unsqueeze(2),
        items.unsqueeze(1),
        c_w,
        s_w,
        lambda w: torch.matmul(w.unsqueeze(-2), c_vec).squeeze(-2),
        lambda w: torch.matmul(w.unsqueeze(-2), s_vec).squeeze(-2),
    )
    torch.testing.assert_close(rel[0, 0], torch.tensor([2 / 3, 0.0]), atol=1e-5, rtol=0)
    torch.testing.assert_close(cov[0, 0], torch.tensor([2 / 5, 0.0]), atol=1e-5, rtol=0)


def test_shared_tokens_do_not_enter_the_residuals():
    """Renaming the entity both sides share leaves the pair's vector unchanged: what is read is the
    relation between the other words (with equal token weights: the shares weigh the entity's tokens)."""
    r = _reader()
    _equal_weights(r)
    cand_a = torch.tensor([[[5, 30, 31]]])  # cook <entity a>
    item_a = torch.tensor([[[40, 30, 31]]])  # roast <entity a>
    cand_b = torch.tensor([[[5, 33, 34]]])  # cook <entity b>
    item_b = torch.tensor([[[40, 33, 34]]])
    kinds = torch.tensor([[1]])
    pooled_a, exact_a = r.dense(cand_a, item_a, kinds)
    pooled_b, exact_b = r.dense(cand_b, item_b, kinds)
    assert exact_a[0, 0, 0] < 1.0  # the verb is not shared
    torch.testing.assert_close(pooled_a, pooled_b)
    torch.testing.assert_close(exact_a, exact_b)
    # and the other word of the item does matter
    pooled_c, _ = r.dense(cand_a, torch.tensor([[[41, 30, 31]]]), kinds)
    assert not torch.allclose(pooled_a, pooled_c)


def test_training_rows_equal_the_graph_path_and_baking():
    r = _reader(seed=1)
    gen = torch.Generator().manual_seed(2)
    tokens = torch.randint(1, 25, (12, 7), generator=gen)
    tokens[:, 5:] = 0
    tokens[3, 2:] = 0
    tokens[-1] = 0  # the padding row of a table
    cand_rows = torch.randint(0, 12, (3, 4), generator=gen)
    item_rows = torch.randint(0, 12, (3, 6), generator=gen)
    kinds = torch.randint(0, 5, (3, 6), generator=gen)
    kinds[2] = 0  # a state with no item
    got = r.rows(tokens, cand_rows, item_rows, kinds, candidate_tokens=4, item_tokens=6)
    ref = r.dense(tokens[cand_rows][..., :4], tokens[item_rows][..., :6], kinds)
    for a, b in zip(got, ref, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    assert not ref[0][2].any()  # nothing pooled from no item
    r.bake(bits=32)
    baked = r.dense(tokens[cand_rows][..., :4], tokens[item_rows][..., :6], kinds)
    r.unbake()
    for a, b in zip(baked, ref, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("bits", [8, 4])
def test_quantised_rows_are_within_half_a_step_of_the_float_rows(bits):
    """The exported tables are int8 (or int4, two a byte) rows with an fp16 scale each: every dequantised
    value lies within half a quantisation step (plus the scale's own fp16 rounding) of the float one, and
    padding stays 0. The hidden width is odd on purpose: int4 pads the row to a whole byte."""
    r = _reader(hidden=15)
    ids = torch.arange(r.table.shape[0])
    r.bake(bits=32)
    exact = [r.token_rows(ids, side) for side in (0, 1)]
    r.bake(bits=bits)
    got = [r.token_rows(ids, side) for side in (0, 1)]
    stored = r.baked_0  # the stored rows of side 0
    r.unbake()
    top = 127 if bits == 8 else 7
    assert stored.shape == (60, 16 if bits == 8 else 8)
    for (ev, ew), (gv, gw) in zip(exact, got, strict=True):
        full = torch.cat([ev, ew[:, None]], dim=1)
        step = full.abs().amax(dim=1, keepdim=True) / top
        err = (torch.cat([gv, gw[:, None]], dim=1) - full).abs()
        assert (err <= step * (0.5 + top * 2**-10) + 1e-7).all()
        assert gw[0] == 0  # the padding id weighs nothing


def test_the_exported_graph_stores_the_packed_rows_and_unpacks_them_as_torch(tmp_path):
    """The file holds the int4 rows as they are (uint8, two values a byte; the exporter folds nothing), and
    onnxruntime, which unpacks the whole table once when it loads the graph, gets torch's values."""
    import onnx
    import onnxruntime as ort

    from policy.encoders.onnx_common import OPSET, torchscript_exporter

    class Rows(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.r = _reader(hidden=15)
            self.r.bake(bits=4)

        def forward(self, ids):
            return torch.cat(
                [torch.cat([v, w.unsqueeze(-1)], -1) for v, w in map(self.r.token_rows, (ids, ids), (0, 1))],
                -1,
            )

    graph, ids = Rows(), torch.tensor([[0, 3, 59, 7]])
    path = tmp_path / "rows.onnx"
    with torchscript_exporter():
        torch.onnx.export(graph, (ids,), path, dynamo=False, opset_version=OPSET, input_names=["ids"],
                          dynamic_axes={"ids": {1: "n"}}, do_constant_folding=False)  # fmt: skip
    stored = {tuple(t.dims): t.data_type for t in onnx.load(str(path)).graph.initializer}
    assert stored.get((60, 8)) == onnx.TensorProto.UINT8  # [V, ceil(16 / 2)] packed rows, per side
    assert (60, 16) not in stored  # no dequantised table in the file
    (got,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"ids": ids.numpy()}
    )
    torch.testing.assert_close(torch.from_numpy(got), graph(ids))


def test_gradients_reach_the_projection_not_the_frozen_table():
    r = _reader()
    tokens = torch.tensor([[5, 7, 9], [7, 9, 11], [0, 0, 0]])
    pooled, exact = r.rows(
        tokens, torch.tensor([[0]]), torch.tensor([[1, 2]]), torch.tensor([[1, 0]]), candidate_tokens=3,
        item_tokens=3,
    )  # fmt: skip
    (pooled.sum() + exact.sum()).backward()
    assert r.proj.weight.grad is not None and r.proj.weight.grad.abs().sum() > 0
    assert not r.table.requires_grad


def test_exact_features_are_the_same_in_the_exported_form(monkeypatch):
    r = _reader(kinds=6)
    gen = torch.Generator().manual_seed(3)
    rel, cov = torch.rand(2, 3, 7, generator=gen), torch.rand(2, 3, 7, generator=gen)
    kinds = torch.randint(0, 6, (2, 7), generator=gen)
    kinds[1] = 0
    got = r.exact(rel, cov, kinds)
    monkeypatch.setattr(torch.onnx, "is_in_onnx_export", lambda: True)
    ref = r.exact(rel, cov, kinds)
    torch.testing.assert_close(got, ref)
    assert got.shape == (2, 3, 10) and (got[1] == -1.0).all()


def test_a_candidate_whose_words_all_appear_in_an_item_reads_the_same_in_training_and_the_graph():
    """A pair with nothing left on one side: its residual is zero on both paths, in value and gradient
    (training computes it as the text's sum minus the shared tokens: their rounding must not be divided by
    the empty rest)."""
    r = _reader()
    tokens = torch.tensor([[5, 7, 9, 0, 0], [7, 9, 5, 11, 12], [7, 9, 0, 0, 0]])  # 0 and 2 inside 1
    cand_rows, item_rows = torch.tensor([[0, 2]]), torch.tensor([[1, 0]])
    kinds = torch.tensor([[1, 2]])
    grads = []
    for path in ("rows", "dense"):
        r.zero_grad()
        if path == "rows":
            pooled, exact = r.rows(tokens, cand_rows, item_rows, kinds, candidate_tokens=5, item_tokens=5)
        else:
            pooled, exact = r.dense(tokens[cand_rows], tokens[item_rows], kinds)
        (pooled.square().sum() + exact.sum()).backward()
        grads.append((pooled.detach(), exact.detach(), r.proj.weight.grad.clone()))
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
