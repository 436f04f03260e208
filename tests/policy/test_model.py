from __future__ import annotations

import pytest
import torch

from policy.model import MASKED_SCORE, ScorerConfig, StateInputs, build_scorer
from tests.support.toy_task import D

torch.set_num_threads(1)


def test_affinity_term_is_bilinear_in_object_and_target():
    m = build_scorer(ScorerConfig(embedding_dim=D, hidden=8, candidate_features="action+arguments"), seed=0)
    x = torch.randn(1, D)
    state = StateInputs(
        torch.randn(1, 2, D),
        torch.tensor([[1, 2]]),
        torch.randn(1, 1, D),
        torch.zeros(1, 1, D),
        torch.ones(1, 1, dtype=torch.bool),
    )
    c, o, t = torch.randn(3, D), torch.randn(3, D), torch.randn(3, D)
    mask = torch.ones(1, 3, dtype=torch.bool)

    def affinity(target):
        """The score with the gate at 1 minus the score with the gate at 0."""
        out = []
        for g in (1.0, 0.0):
            with torch.no_grad():
                m.aff_gate.weight.zero_()
                m.aff_gate.bias.fill_(g)
                out.append(m(x, state, torch.cat([c, o, target], -1)[None], mask)[0])
        return out[0] - out[1]

    full = affinity(t)
    assert torch.allclose(affinity(torch.zeros_like(t)), torch.zeros(3))  # no target, no affinity
    assert torch.allclose(affinity(2 * t), 2 * full, atol=1e-4)  # linear in the target (and the object)
    expected = m.aff_scale * (o * t).sum(-1) + (m.aff_u(o) * m.aff_v(t)).sum(-1)
    assert torch.allclose(full, expected.detach(), atol=1e-4)


def test_scorer_masks_and_is_deterministic():
    m = build_scorer(ScorerConfig(embedding_dim=D, hidden=8), seed=1)
    m2 = build_scorer(ScorerConfig(embedding_dim=D, hidden=8), seed=1)
    x = torch.randn(2, D)
    state = StateInputs(
        torch.randn(2, 3, D),
        torch.tensor([[1, 2, 0], [1, 1, 3]]),
        torch.randn(2, 2, D),
        torch.randn(2, 2, D),
        torch.tensor([[True, False], [False, False]]),
    )
    c = torch.randn(2, 4, D)
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    s = m(x, state, c, mask)
    assert s.shape == (2, 4) and (s[0, 2:] == MASKED_SCORE).all()
    assert torch.equal(s, m2(x, state, c, mask))
    # padding is padding: what lies under a False mask or kind 0 does not change any score
    noisy = state._replace(
        items=torch.where((state.item_kinds == 0)[..., None], torch.randn(2, 3, D), state.items),
        memory_actions=torch.where(state.memory_mask[..., None], state.memory_actions, torch.randn(2, 2, D)),
    )
    assert torch.allclose(s, m(x, noisy, c, mask), atol=1e-6)


def test_config_holds_one_state_encoding_and_reads_the_flat_keys_of_older_checkpoints():
    from models.inputs.state import StateEncoding

    cfg = ScorerConfig(hidden=16, encoding=StateEncoding(max_items=10, memory=4, facts=2))
    assert ScorerConfig.from_dict(cfg.to_dict()) == cfg
    older = {k: v for k, v in cfg.to_dict().items() if k != "encoding"}
    older.update(max_items=10, memory=4, facts=2)
    assert ScorerConfig.from_dict(older) == cfg
    with pytest.raises(ValueError, match="unknown scorer config key"):
        ScorerConfig.from_dict({**cfg.to_dict(), "horizon": 3})
