from __future__ import annotations

import pytest

from labeler.cluster.options import ClusterError


@pytest.mark.real
def test_the_driver_tokenizes_like_the_judge_without_loading_weights():
    from labeler.cluster.workers import DriverJudge
    from labeler.judge import open_judge

    class Pool:
        infos = [{"n_ctx": 2048, "provenance": {"backend": "llama-cpp-python"}}]
        stats = {"queries": 3}

    text = "Task: put the apple away\nAction: take apple ☃ ünïcode\n\n"
    driver = DriverJudge("gemma3-270m", Pool())
    try:
        with open_judge("gemma3-270m", n_threads=1) as judge:
            assert driver.tokenize(text, bos=True) == judge.tokenize(text, bos=True)
            assert driver.count_tokens(text) == judge.count_tokens(text)
            assert driver.model_sha256 == judge.model_sha256
        assert driver.n_ctx == 2048 and driver.stats == {"queries": 3}
        with pytest.raises(ClusterError, match="run on the judge actors"):
            driver.score_many([("x", [" y"])], template="t", version=1)
    finally:
        driver.close()
