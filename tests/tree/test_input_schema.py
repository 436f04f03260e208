"""The policy's inputs are spelled once (models/inputs/schema.py) and passed by name everywhere else.

The graph modules take the schema's inputs in its order (what the exporter binds positionally), the state's
named tuple and the runtime's feeds hold exactly the schema's state inputs, and no other module lists the
inputs itself (a tuple or list of three or more input names is a second spelling that a reorder would break
silently: ``memory_actions`` and ``memory_responses`` have the same shape)."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from models.inputs.schema import POLICY_INPUTS, input_names, state_names
from tests.support.paths import ROOT

SCHEMA = ROOT / "models" / "inputs" / "schema.py"
NAMES = {t.name for inputs in POLICY_INPUTS.values() for t in inputs}


def _parameters(fn) -> tuple[str, ...]:
    return tuple(p for p in inspect.signature(fn).parameters if p != "self")


def test_the_exported_graphs_take_the_schemas_inputs_in_its_order():
    from policy.scorer.flat import FlatScorer
    from policy.scorer.model import PolicyGraph, StateInputs

    assert _parameters(PolicyGraph.forward) == ("inputs",)  # named from the schema's row
    assert _parameters(FlatScorer.forward) == input_names(1)
    assert StateInputs._fields == state_names(3)  # format 2's and the items' token ids
    assert state_names(3)[: len(state_names(2))] == state_names(2)


def test_the_runtime_feeds_are_the_schemas_state_inputs(tmp_path):
    from models.inputs.arrays import StateArrays, pad_batch
    from models.inputs.formats import TokenStateArrays, input_format
    from models.inputs.state import StateEncoding
    from models.inputs.tokens import TokenIds
    from models.state_layout import layout_of
    from policy.encoders.static import write_tokenizer

    d = 4
    arrays = (np.zeros((2, d), np.float32), np.ones(2, np.int64), np.zeros((1, d), np.float32))
    state = StateArrays(*arrays, np.zeros((1, d), np.float32))
    assert tuple(pad_batch([state], d)) == state_names(2)
    from models.encoder import resolve_encoder

    write_tokenizer(resolve_encoder(), tmp_path / "tokenizer.json")
    ids = TokenIds(tmp_path / "tokenizer.json", 8)
    layout = layout_of({})
    tokens = input_format(3, dim=d, layout=layout, encoding=StateEncoding(), token_ids=ids, caps=(8, 4))
    token_state = TokenStateArrays(*arrays, np.zeros((1, d), np.float32), ["an apple", "a fridge"])
    assert tuple(tokens.feeds([token_state])) == state_names(3)
    assert tuple(tokens.candidate_feeds([["take apple"]], 2)) == ("candidate_tokens",)


def _listings(path) -> list[int]:
    """Lines of ``path`` with a tuple or list literal of three or more policy input names."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List):
            named = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in NAMES]
            if len(named) >= 3:
                out.append(node.lineno)
    return out


@pytest.mark.parametrize("layer", ["models", "edge", "labeler", "policy", "tools"])
def test_no_module_spells_the_inputs_by_position(layer):
    found = {
        str(p.relative_to(ROOT)): lines
        for p in sorted((ROOT / layer).rglob("*.py"))
        if p != SCHEMA and (lines := _listings(p))
    }
    assert found == {}, f"policy inputs listed outside models/inputs/schema.py (read them from it): {found}"


def test_the_check_sees_a_listing(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        'ORDER = ("instruction", "items", "item_kinds")\nOK = {"items": 1, "mask": 2, "state": 3}\n'
    )
    assert _listings(bad) == [1]
