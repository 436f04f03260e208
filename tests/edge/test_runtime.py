"""The edge runtime: batched scoring equals one-by-one scoring, text and embedding items agree, the bounded
LRU, bad bundles. Runs the real onnxruntime on a tiny bundle."""

from __future__ import annotations

import numpy as np
import pytest

from edge.runtime import LRU, Item, RuntimeConfig, TextRequest, load_runtime
from models.bundle import BundleError
from tests.support.serving import build_tiny_bundle


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    r = load_runtime(build_tiny_bundle(tmp_path_factory.mktemp("b") / "b"), RuntimeConfig(cache_size=8))
    yield r
    r.close()


def test_batched_scores_equal_single_scores_with_padding(rt):
    reqs = [
        TextRequest("task a", "obs a", ["x"]),
        TextRequest("task b", "obs b", ["p", "q", "r", "s"]),
        TextRequest("task a", "obs c", ["x", "y"]),
    ]
    items = rt.items_from_text(reqs)
    together = rt.score(items)
    for it, s in zip(items, together, strict=True):
        (alone,) = rt.score([it])
        assert s.shape == (len(it.candidates),)
        np.testing.assert_allclose(s, alone, atol=1e-6)


def test_text_and_embedding_items_agree(rt):
    (item,) = rt.items_from_text([TextRequest("put apple", "Room: kitchen", ["take apple", "look"])])
    embs = rt.encode(["put apple", "Room: kitchen", "take apple", "look"], cache=False)
    (a,) = rt.score([item])
    (b,) = rt.score([Item(embs[0], embs[1], embs[2:], None)])
    np.testing.assert_allclose(a, b, atol=1e-6)
    assert np.allclose(np.linalg.norm(embs, axis=1), 1.0, atol=1e-5)  # normalisation is inside the graph


def test_cache_is_bounded_and_observations_are_not_cached(rt):
    rt.items_from_text([TextRequest("i", f"observation {n}", [f"cand {n}"]) for n in range(20)])
    assert len(rt.cache) <= 8
    assert rt.cache.get("observation 19") is None and rt.cache.get("cand 19") is not None


def test_lru_order_and_zero_capacity():
    lru = LRU(2)
    a, b, c = (np.full(2, v, np.float32) for v in (1, 2, 3))
    lru.put("a", a)
    lru.put("b", b)
    assert lru.get("a") is a  # a is now the most recent
    lru.put("c", c)
    assert lru.get("b") is None and lru.get("a") is a and len(lru) == 2
    off = LRU(0)
    off.put("a", a)
    assert off.get("a") is None


def test_runtime_refuses_bad_bundles(tmp_path):
    with pytest.raises(BundleError, match="not a bundle directory"):
        load_runtime(tmp_path / "missing")
    b = build_tiny_bundle(tmp_path / "b")
    (b / "tokenizer.json").write_text("{}")
    with pytest.raises(BundleError, match="tokenizer.json has 2 bytes"):
        load_runtime(b)


@pytest.mark.parametrize(
    ("provenance", "warned"),
    [
        ({}, False),
        ({"encoder_precision": "int8", "encoder_integer_kernels": "u8u8"}, False),
        ({"encoder_precision": "int8"}, True),  # exported before the U8U8 recipe
        ({"encoder_precision": "int8", "encoder_integer_kernels": "u8s8"}, True),
    ],
)
def test_an_int8_bundle_with_signed_weights_is_flagged_as_not_portable(tmp_path, provenance, warned):
    from models.bundle import write_manifest

    out = build_tiny_bundle(tmp_path / "b")
    write_manifest(out, embedding_dim=16, max_length=64, provenance=provenance, format_version=1)
    rt = load_runtime(out)
    try:
        assert (rt.portability_warning is not None) is warned
        if warned:
            assert "without VNNI" in rt.portability_warning and "re-export" in rt.portability_warning
    finally:
        rt.close()
