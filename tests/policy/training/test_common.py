from __future__ import annotations

import pytest
import torch

from policy.scorer.model import ScorerConfig, build_scorer
from policy.training.common import CheckpointError, load_checkpoint, save_checkpoint
from tests.support.toy_task import D

torch.set_num_threads(1)


def test_checkpoint_roundtrip_and_errors(tmp_path):
    m = build_scorer(ScorerConfig(embedding_dim=D, hidden=8), seed=0)
    out = save_checkpoint(
        tmp_path / "ck",
        m,
        algo="bc-all",
        algo_config={},
        reward="sparse",
        provenance={},
        curves=[{"step": 1.0, "loss": 2.0}, {"step": 2.0, "loss": 1.0}],
    )
    assert (out / "curves.csv").read_text().splitlines()[0] == "step,loss"
    assert (out / "curves.png").stat().st_size > 0
    m2, meta = load_checkpoint(out)
    assert meta["algo"] == "bc-all"
    for a, b in zip(m.state_dict().values(), m2.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    (out / "checkpoint.json").write_text("{")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_checkpoint(out)
    (tmp_path / "file").write_text("x")
    with pytest.raises(CheckpointError, match="not a checkpoint directory"):
        load_checkpoint(tmp_path / "file")
    # a pickled object (not plain tensors) is refused by weights_only loading
    ck2 = save_checkpoint(tmp_path / "ck2", m, algo="bc", algo_config={}, reward="sparse", provenance={})
    torch.save({"x": object()}, ck2 / "policy.pt")
    with pytest.raises(CheckpointError, match="cannot load weights"):
        load_checkpoint(ck2)
