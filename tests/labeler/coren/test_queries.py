from __future__ import annotations

import torch

from labeler.coren.pipeline import (
    StepText,
    ranked_candidates,
)

torch.set_num_threads(1)


def test_ranked_candidates_cap_keeps_taken_action():
    st = StepText("o", "c30", "r", [f"c{i}" for i in range(40)])
    ranked = ranked_candidates(st, 26)
    assert len(ranked) == 26 and ranked[-1] == 30 and ranked[:25] == list(range(25))
    assert ranked_candidates(StepText("o", "c1", "r", ["c0", "c1"]), 26) == [0, 1]
