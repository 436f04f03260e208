"""policy.encoders.static: the static encoder kind (token vectors distilled from the local MiniLM).

Unit tests run the recipe on small arrays; the real tests share one cached build of the full table
($EDGEJUDGE_CACHE/models, built at first use) and check that what training sees is what a bundle serves."""

from __future__ import annotations

import json

import numpy as np
import pytest

from policy.encoders.static import build_table, reference_embed, write_graph

REAL_TEXTS = [
    "Your task is to pick up objects, then place them in their usual locations in the environment.",
    "Feedback: You pick up the dirty socks.\nInventory: dirty socks\nRecent actions: take dirty socks, open "
    "laundry basket\nRoom: You are in the bathroom. In one part of the room you see a bath mat. There is "
    "also a towel rack, that has a clean white towel on it. You also see a closed laundry basket.",
    "put dirty socks in washing machine",
    "take apple from kitchen cupboard",
    "dirty socks",
    "look around",
    "",
]


@pytest.fixture(scope="module")
def static_enc():
    from policy.encoders.static import resolve_static_encoder

    return resolve_static_encoder("static")


def test_table_is_centred_pca_with_zipf_weights():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((400, 12)).astype(np.float32)
    table = build_table(vectors, dims=5)
    assert table.shape == (400, 5) and table.dtype == np.float32
    assert not table[0].any()  # [PAD]
    # unweighted it is the centred PCA projection: the weights only rescale rows, rarer rows weigh more
    plain = build_table(vectors, dims=5, sif_a=1e9)
    ratio = np.linalg.norm(table[1:], axis=1) / np.linalg.norm(plain[1:], axis=1)
    assert np.all(np.diff(ratio) >= -1e-6) and ratio[0] < 0.5 * ratio[-1]
    centred = vectors - vectors.mean(axis=0)
    _u, _s, vt = np.linalg.svd(centred.astype(np.float64), full_matrices=False)
    np.testing.assert_allclose(np.abs(plain[1:]), np.abs(centred[1:] @ vt[:5].T), rtol=1e-3, atol=1e-4)


def test_graph_computes_the_normalised_token_sum(tmp_path):
    """The ONNX graph equals its numpy definition on real texts, with padding and empty texts."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from models.encoder import resolve_encoder
    from policy.encoders.static import write_tokenizer

    enc = resolve_encoder()
    rng = np.random.default_rng(1)
    vocab = Tokenizer.from_file(str(enc.tokenizer_json)).get_vocab_size()
    table = rng.standard_normal((vocab, 8)).astype(np.float32)
    table[0] = 0
    write_graph(table, tmp_path / "encoder.onnx")
    write_tokenizer(enc, tmp_path / "tokenizer.json")
    tok = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert tok.encode("open fridge").tokens == ["open", "fridge"]  # no [CLS] / [SEP] in the sum
    tok.enable_padding()
    encs = tok.encode_batch(REAL_TEXTS)
    ids = np.array([e.ids for e in encs], dtype=np.int64)
    att = np.array([e.attention_mask for e in encs], dtype=np.int64)
    sess = ort.InferenceSession(str(tmp_path / "encoder.onnx"), providers=["CPUExecutionProvider"])
    (got,) = sess.run(
        ["embeddings"], {"input_ids": ids, "attention_mask": att, "token_type_ids": np.zeros_like(ids)}
    )
    ref = reference_embed(table, tmp_path / "tokenizer.json", REAL_TEXTS)
    np.testing.assert_allclose(got, ref, atol=1e-5)
    assert not got[-1].any()  # the empty text: zeros, not NaN
    np.testing.assert_allclose(np.linalg.norm(got[:-1], axis=1), 1.0, atol=1e-5)


@pytest.mark.real
def test_build_is_cached_and_recorded(static_enc):
    from policy.encoders.static import graph_table, resolve_static_encoder

    assert static_enc.kind == "static" and static_enc.embedding_dim == 256
    meta = json.loads((static_enc.path / "meta.json").read_text())
    from models.bundle import sha256_file

    assert meta["sha256"] == static_enc.sha256 == sha256_file(static_enc.weights)
    assert resolve_static_encoder("static:all-MiniLM-L6-v2").sha256 == static_enc.sha256  # from the cache
    table = graph_table(static_enc)
    assert table.shape == (30522, 256) and np.isfinite(table).all()


@pytest.mark.real
def test_training_features_equal_the_bundle_runtime_on_real_texts(tmp_path, static_enc):
    """Train/serve parity: TextEmbedder('static') gives what edge-serve's runtime computes from the bundle,
    and both are the numpy definition of the table."""
    from edge.runtime import load_runtime
    from policy.encoders.features import TextEmbedder
    from policy.encoders.static import graph_table
    from policy.export.assemble import export_random_bundle

    emb = TextEmbedder("static", progress=False)
    assert emb.cache is None and emb.dim == 256
    train = emb.embed(REAL_TEXTS)
    export_random_bundle(tmp_path / "b", encoder="static", candidate_features="action+arguments")
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["encoder_kind"] == "static" and manifest["embedding_dim"] == 256
    assert manifest["provenance"]["encoder_sha256"] == static_enc.sha256
    rt = load_runtime(tmp_path / "b")
    try:
        served = rt.encode(REAL_TEXTS, cache=False)
        alone = np.stack([rt.encode([t], cache=False)[0] for t in REAL_TEXTS])
    finally:
        rt.close()
    np.testing.assert_array_equal(train, served)
    np.testing.assert_array_equal(served, alone)  # independent of what it is batched with
    ref = reference_embed(graph_table(static_enc), static_enc.tokenizer_json, REAL_TEXTS)
    np.testing.assert_allclose(served, ref, atol=1e-6)
    # related texts stay related: the object is closer to its own action than to an unrelated one
    assert served[4] @ served[2] > served[4] @ served[5]
