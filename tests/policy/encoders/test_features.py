from __future__ import annotations

import numpy as np
import pytest
import torch

from policy.encoders.features import EmbeddingCache, text_key

torch.set_num_threads(1)


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
    import policy.encoders.features as features
    from policy.encoders.features import TextEmbedder

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
