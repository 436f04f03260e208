"""Prompt rendering and truncation rules (unit tests; the real-model checks are in test_judge.py)."""

from __future__ import annotations

import pytest

from labeler.prompting import Example, chat_prompt, completion_prompt, fit_text, render


class _CharJudge:
    """A unit-test double: one token per character, with the judge's stats dict."""

    def __init__(self, chat_template: str | None = None):
        self.stats: dict[str, float] = {}
        self.chat_template = chat_template

    def tokenize(self, text: str, *, bos: bool = False) -> list[int]:
        return [ord(c) for c in text]

    def detokenize(self, tokens) -> str:
        return "".join(chr(t) for t in tokens)


def test_completion_prompt_layout():
    p = completion_prompt(
        "Q: c?", instruction="Say yes or no. ", examples=[Example("Q: a?", " yes "), Example("Q: b?", "no")]
    )
    assert p == "Say yes or no.\n\nQ: a?\nAnswer: yes\n\nQ: b?\nAnswer: no\n\nQ: c?\nAnswer:"
    assert completion_prompt("x", answer_prefix="Rating:").endswith("x\nRating:")


def test_render_uses_the_chat_template_when_there_is_one():
    template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}<assistant>"
    assert chat_prompt(template, [{"role": "user", "content": "hi"}]) == "<user>hi</user><assistant>"
    out = render(_CharJudge(template), "Q: c?", instruction="Say yes or no.")
    assert out == "<user>Say yes or no.\n\nQ: c?</user><assistant>Answer:"
    assert render(_CharJudge(None), "Q: c?") == "Q: c?\nAnswer:"


def test_fit_text_keeps_head_and_tail_and_counts():
    j = _CharJudge()
    text = "".join(chr(ord("a") + i % 26) for i in range(300))
    assert fit_text(j, text, 300) == text and "truncated_texts" not in j.stats
    out = fit_text(j, text, 60)
    assert len(out) <= 60 and " … " in out
    head, tail = out.split(" … ")
    assert text.startswith(head) and text.endswith(tail) and len(tail) > len(head)
    assert j.stats["truncated_texts"] == 1
    with pytest.raises(ValueError):
        fit_text(j, text, 2)
