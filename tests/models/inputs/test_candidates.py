"""Candidate features (models.inputs.candidates): the candidate matrix, the retired location kind. (How an
action splits into object and target: tests/models/test_actions.py.)"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from models.inputs.candidates import candidate_matrix, candidate_texts, parts_of


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
