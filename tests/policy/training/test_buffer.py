from __future__ import annotations

import numpy as np
import pytest
import torch

from policy.training.buffer import build_table, scorer_config
from policy.training.rewards import parse_reward
from tests.support.toy_task import DATA, D, HashEmbedder

torch.set_num_threads(1)


def test_table_with_argument_features_and_config_mismatch():
    table = build_table(DATA, HashEmbedder(), parse_reward("sparse"), candidate_features="action+arguments")
    assert table.cand.ndim == 3 and table.cand.shape[2] == 3
    b = table.to_torch().batch(torch.arange(4))
    assert b.cands.shape == (4, table.cand.shape[1], 3 * D)
    assert b.mask.shape == (4, table.cand.shape[1])

    class Cfg:
        hidden = 8
        candidate_features = "action"

    with pytest.raises(ValueError, match="candidate features"):
        scorer_config(table, Cfg(), D)


def test_table_layout():
    table = build_table(
        DATA,
        HashEmbedder(),
        parse_reward("sparse"),
        weight_channel=("trca", "advantage"),
        candidate_features="action",
    )
    assert len(table) == 24 and table.cand.shape == (24, 3, 1)
    assert table.cand[1, 2, 0] == -1  # second step has 2 candidates: padded
    assert table.done.tolist()[:2] == [0.0, 1.0]  # successful episode ends in a true terminal
    assert table.done[3] == 0.0  # a failed episode's end is a timeout: bootstrap
    assert (table.next_cand[0] >= 0).sum() == 2 and (table.next_cand[1] < 0).all()
    assert table.weight[0] == 1.0 and table.weight[2] == -1.0
    # every text is one embedding row: the instruction, the state items, memory actions and the candidates
    rows = [table.instr, table.rec_items, table.rec_mem_action, table.rec_mem_response, table.cand]
    assert table.info["texts"] == len(np.unique(np.concatenate([r[r >= 0].ravel() for r in rows])))
    # a state record per step plus the last next state, per trajectory; the next state is the next record
    assert len(table.rec_items) == 12 * 3 and (table.next_state == table.state + 1).all()
    # the memory is the episode so far, most recent first: none at the start, then the first action
    first, second = table.state[0], table.state[1]
    assert (table.rec_mem_action[first] < 0).all()
    assert table.rec_mem_action[second, 0] >= 0 and (table.rec_mem_action[second, 1:] < 0).all()
    # a plain text (no layout part) is one item of the "other lines" kind
    assert (table.rec_kinds[first] > 0).sum() == 1


def test_a_layout_with_more_item_kinds_than_the_scorer_is_refused_when_the_table_meets_the_config():
    """14 parts need 17 item kinds (parts, unlabelled lines, facts, padding): the check reads the layout, so
    it holds whether or not the data happened to show a fact or an unlabelled line."""
    import dataclasses

    from models.state_layout import Part, StateLayout
    from policy.training.learners.bc import BCConfig

    layout = StateLayout(tuple(Part(f"p{i}", f"P{i}", world=True) for i in range(14)))
    wide = [dataclasses.replace(t, meta={**t.meta, "state_layout": layout.to_dict()}) for t in DATA[:2]]
    table = build_table(wide, HashEmbedder(), parse_reward("sparse"))
    assert table.layouts == [layout]
    for t in (table, table.to_torch()):
        with pytest.raises(ValueError, match="training data: the state layout has 14 parts"):
            scorer_config(t, BCConfig(), D)


@pytest.mark.parametrize("reader", ["vectors", "tokens"])
def test_the_taken_candidate_alone_scores_as_it_does_among_all(reader):
    """IQL's critic scores only the data's action (Batch.taken): the scorer scores candidates independently,
    so that score must be the one it has among all the step's candidates."""
    from policy.training.buffer import ScorerOptions, new_scorer

    embedder = HashEmbedder()
    table = build_table(
        DATA,
        embedder,
        parse_reward("sparse"),
        token_source=embedder.token_source(8) if reader == "tokens" else None,
    ).to_torch()
    scorer = new_scorer(table, ScorerOptions(hidden=8, reader=reader), D)
    b = table.batch(torch.arange(len(DATA[0].steps) + 6))
    with torch.no_grad():
        among_all = scorer(b.instruction, b.state, b.cands, b.mask).gather(1, b.action.unsqueeze(1))
        alone = scorer(b.instruction, b.state, *b.taken)
    assert alone.shape == among_all.shape
    torch.testing.assert_close(alone, among_all, rtol=1e-5, atol=1e-5)
