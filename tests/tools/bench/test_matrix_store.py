from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.bench.matrix_store import RowStore, pool_is_enough, row_key, scarce_subset


def test_row_key_is_the_configuration_in_any_order():
    assert row_key({"a": 1, "b": [2, 3]}) == row_key({"b": [2, 3], "a": 1})
    assert row_key({"a": 1}) != row_key({"a": 1, "b": None})


def test_store_round_trip_and_refuses_a_foreign_file(tmp_path):
    store = RowStore(tmp_path / "m.json")
    store.put({"world": "w", "seed": 0}, {"status": "ok", "success_rate": 0.5})
    again = RowStore(tmp_path / "m.json")
    assert again.get({"seed": 0, "world": "w"})["success_rate"] == 0.5
    assert again.get({"world": "w", "seed": 1}) is None
    assert not list(tmp_path.glob(".*tmp"))  # the atomic rewrite leaves no temporary file
    (tmp_path / "other.json").write_text(json.dumps({"rows": []}))
    with pytest.raises(ValueError, match="not a benchmark-matrix file"):
        RowStore(tmp_path / "other.json")


@given(st.lists(st.booleans(), min_size=1, max_size=80), st.integers(1, 40), st.integers(1, 40))
def test_scarce_subsets_are_nested_and_success_scarce(flags, a, b):
    trajs = [SimpleNamespace(success=f, i=i) for i, f in enumerate(flags)]
    small, big = sorted((a, b))
    succ = sum(flags)
    assert pool_is_enough(trajs, big, 0.3) == (
        succ >= int(0.3 * big) and len(flags) - succ >= big - int(0.3 * big)
    )
    if len(flags) - succ < big - min(succ, int(0.3 * big)):
        with pytest.raises(ValueError, match="failed episodes"):
            scarce_subset(trajs, big, 0.3)
        return
    sub_small, sub_big = scarce_subset(trajs, small, 0.3), scarce_subset(trajs, big, 0.3)
    assert len(sub_big) == big and sum(t.success for t in sub_big) <= 0.3 * big
    assert {t.i for t in sub_small} <= {t.i for t in sub_big}
    assert [t.i for t in sub_big] == sorted(t.i for t in sub_big)  # file order kept
