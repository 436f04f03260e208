from __future__ import annotations

from labeler.trca.build import BuildConfig
from labeler.trca.crossfit import crossfit_check
from tests.support.trca_tags import TagJudge, episode


def test_crossfit_check_of_a_grounded_rubric():
    good = ["take apple", "put apple in fridge"]
    bad = ["take apple", "put apple in box", "push wall"]
    trajs = [episode(f"s{i}", good) for i in range(3)] + [episode(f"f{i}", bad) for i in range(3)]
    chk = crossfit_check(trajs, TagJudge(), BuildConfig(task_type="tiny"), folds=2)
    # every held-out failure placed the apple where no success left it: lower mean reward than any success
    assert chk is not None and chk.mean_reward.value == 1.0 and chk.verdict in ("separates", "weak")
    assert crossfit_check(trajs[:3] + trajs[3:4], TagJudge(), BuildConfig(task_type="tiny"), folds=2) is None
