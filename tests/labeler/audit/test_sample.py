"""Which steps an audit shows: successes and failures alike, where the channels disagree first, repeatable."""

from __future__ import annotations

from labeler.audit.sample import audited_channels, disagreement, sample_steps
from tests.labeler.audit.helpers import labeled_log


def test_the_channels_audited_leave_out_advantages_and_weights():
    assert audited_channels(labeled_log()) == ["bad.r", "good.r"]


def test_the_sample_mixes_outcomes_prefers_disagreement_and_repeats():
    log = labeled_log(6, 4)
    picked = sample_steps(log, 8, seed=3)
    assert len(picked) == 8 and len({(r.id, r.step) for r in picked}) == 8
    outcomes = [log[r.traj].success for r in picked]
    assert outcomes.count(True) == outcomes.count(False) == 4
    assert picked == sample_steps(log, 8, seed=3) and picked != sample_steps(log, 8, seed=4)
    assert all(log[r.traj].id == r.id for r in picked)
    assert len(sample_steps(log, 100)) == 24  # every step when the log has fewer
    spread = disagreement(log, ["good.r", "bad.r"])
    assert len(spread) == 24 and max(spread) > 0
    assert disagreement(log, ["good.r"]) == [0.0] * 24  # one channel: nothing to disagree about
