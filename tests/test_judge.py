"""The judge on the REAL embedded GGUF (Gemma 3 270M Q4_K_M), tiny prompts, one thread.

The model is loaded once per session (fixture ``judge``); tests that need a fresh KV cache call ``reset()``.
"""

from __future__ import annotations

import math

import pytest

from labeler.judge import ChoiceScores, JudgeError, open_judge

pytestmark = pytest.mark.real

PROMPT = (
    "Question: Is fire hot?\nAnswer: Yes\n\nQuestion: Is ice hot?\nAnswer: No\n\n"
    "Question: Is the sun hot?\nAnswer:"
)


@pytest.fixture(scope="session")
def judge():
    with open_judge("gemma3-270m", n_threads=1, n_threads_batch=1, n_ctx=2048, cache=None) as j:
        yield j


def test_interface(judge):
    assert len(judge.model_sha256) == 64
    assert judge.n_ctx == 2048
    assert judge.count_tokens("hello world") == 2
    s = judge.score(PROMPT, [" Yes", " No"], template="test.plain", version=1)
    assert isinstance(s, ChoiceScores)
    assert s.ntokens == [1, 1]
    assert all(lp < 0 for lp in s.logprobs)
    assert math.isclose(sum(s.probs), 1.0, rel_tol=1e-9)
    assert s.best == 0  # the model does know the sun is hot
    for key in ("queries", "cache_hits", "evaluated_tokens", "reused_tokens", "seconds"):
        assert key in judge.stats


def test_bad_choices_are_rejected(judge):
    with pytest.raises(JudgeError, match="non-empty"):
        judge.score(PROMPT, [])
    with pytest.raises(JudgeError, match="non-empty string"):
        judge.score(PROMPT, [" Yes", ""])
    with pytest.raises(JudgeError, match="normalize"):
        judge.score(PROMPT, [" Yes"], normalize="max")
