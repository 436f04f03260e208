from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st


def _static_tokenizer():
    from tokenizers import Tokenizer

    from models.encoder import resolve_encoder

    tok = Tokenizer.from_file(str(resolve_encoder().tokenizer_json))
    tok.post_processor = None
    tok.no_padding()
    tok.enable_truncation(max_length=40)
    return tok


_TOK = _static_tokenizer()


def test_length_groups_cover_every_text_once_and_respect_limits():
    from edge.text_encoder import RUN_COST_TOKENS, length_groups

    rng = np.random.default_rng(0)
    for _ in range(50):
        lengths = [int(x) for x in rng.integers(2, 60, size=int(rng.integers(0, 40)))]
        for pad in (True, False):
            groups = length_groups(lengths, 8, allow_padding=pad)
            assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
            assert all(1 <= len(g) <= 8 for g in groups)
            if not pad:
                assert all(len({lengths[i] for i in g}) == 1 for g in groups)
            cost = sum(RUN_COST_TOKENS + len(g) * max(lengths[i] for i in g) for g in groups)
            one_each = sum(RUN_COST_TOKENS + n for n in lengths)
            assert cost <= one_each  # never worse than one run per text
    # a long observation is not padded together with short candidates
    assert length_groups([47, 5, 6, 5], 64) == [[1, 3, 2], [0]]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=12),
            st.sampled_from(["fridge", "dirty  socks", "\n", "Room:", "café", "x\x1cy", "a,b.", "  ", "你"]),
        ),
        max_size=30,
    ).map(" ".join)
)
def test_chunk_tokenizer_gives_the_tokenizer_ids(text):
    """The static kind's fast path tokenizes any text exactly as the tokenizer does (truncation included)."""
    from edge.text_encoder import ChunkTokenizer, chunkable

    assert chunkable(_TOK)
    fast = ChunkTokenizer(_TOK, 40, capacity=64)
    assert fast.ids(text) == _TOK.encode(text).ids
    assert fast.ids(text) == _TOK.encode(text).ids  # from the cache


def test_templated_tokenizers_are_not_chunked():
    from tokenizers import Tokenizer

    from edge.text_encoder import chunkable
    from models.encoder import resolve_encoder

    assert not chunkable(Tokenizer.from_file(str(resolve_encoder().tokenizer_json)))
