"""models.inputs.formats: each bundle format's builder gives exactly the schema's inputs, the three steps
(prepare, embed the listed texts, build) equal embedding one state at a time, and a format's needs are
checked up front."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from models.inputs.formats import embed_inputs, input_format
from models.inputs.schema import input_names
from models.inputs.state import StateEncoding
from models.inputs.tokens import TokenIds
from models.state_layout import layout_of

D = 8
OBS = "Inventory: an apple\nRoom: You are in the kitchen. You see a fridge that is closed."
MEMORY = [("look around", "You see a fridge.\nInventory: empty"), ("take apple", OBS)]
CANDIDATES = ["open fridge", "put apple in fridge", "look around"]


def embed(texts: list[str]) -> np.ndarray:
    return np.stack(
        [np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).random(D) for t in texts]
    ).astype(np.float32)


@pytest.fixture(scope="module")
def token_ids(tmp_path_factory) -> TokenIds:
    from models.encoder import resolve_encoder
    from policy.encoders.static import write_tokenizer

    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    write_tokenizer(resolve_encoder(), path)
    return TokenIds(path, 8)


def _format(version: int, token_ids: TokenIds):
    return input_format(
        version, dim=D, layout=layout_of({}), encoding=StateEncoding(), token_ids=token_ids, caps=(8, 4)
    )


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_batch_of_states_and_candidates_feeds_exactly_the_schemas_inputs(version, token_ids):
    fmt = _format(version, token_ids)
    states = [embed_inputs(fmt, OBS, MEMORY, embed, D), embed_inputs(fmt, "Room: a hall.", (), embed, D)]
    feeds = {
        "instruction": np.zeros((2, D), np.float32),
        **fmt.feeds(states),
        "candidates": np.zeros((2, 3, D), np.float32),
        "mask": np.ones((2, 3), bool),
        **fmt.candidate_feeds([CANDIDATES, CANDIDATES[:1]], 3),
    }
    assert sorted(feeds) == sorted(input_names(version))
    if version == 3:
        ids = feeds["candidate_tokens"]
        assert ids.shape[:2] == (2, 3) and ids.shape[2] <= 4
        assert ids[1, 1:].sum() == 0 and ids[0].all(axis=1).any()  # padding candidates read nothing


def test_the_three_steps_equal_one_state_embedded_at_once(token_ids):
    fmt = _format(3, token_ids)
    prepared = fmt.prepare(OBS, MEMORY)
    cached, uncached = fmt.texts(prepared)
    assert uncached == [] and len(cached) >= 3  # the items and the memory window, all cacheable
    built = fmt.build(prepared, embed(cached), np.zeros((0, D), np.float32))
    once = embed_inputs(fmt, OBS, MEMORY, embed, D)
    for name in ("items", "kinds", "memory_actions", "memory_responses", "item_texts"):
        assert np.array_equal(np.asarray(getattr(built, name)), np.asarray(getattr(once, name))), name
    flat = _format(1, token_ids)
    assert flat.texts(flat.prepare(OBS, MEMORY)) == ([], [OBS])  # the whole text, never cached


def test_a_format_says_what_it_lacks():
    with pytest.raises(ValueError, match="format 2: needs"):
        input_format(2, dim=D)
    with pytest.raises(ValueError, match="format 3: needs the token ids"):
        input_format(3, dim=D, layout=layout_of({}), encoding=StateEncoding())
    with pytest.raises(ValueError, match="format 4"):
        input_format(4, dim=D, layout=layout_of({}), encoding=StateEncoding())
