"""Prompt rendering for the judge: plain few-shot completion prompts for base models, the GGUF's chat template
for instruction-tuned ones, and one truncation rule for over-long text.

Gemma 3 270M (the embedded judge) is a *base* model without a chat template: it continues text. Judge prompts
for it are completion prompts: an optional instruction line, a few solved examples, then the query, ending
right before the answer (``"...\\nAnswer:"``) so that choices such as ``" Yes"`` / ``" No"`` are scored as the
next tokens. :func:`render` picks the chat template automatically when the model has one.

Truncation rule (:func:`fit_text`): a text longer than its token budget keeps its first third and its last two
thirds of the budget, joined by ``" … "`` (the end of an observation usually holds the newest information; the
start names the place). Every truncation is counted in ``judge.stats["truncated_texts"]``, so a labeling run
can report how often it happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

ELLIPSIS = " … "


class _Tokenizing(Protocol):
    stats: dict[str, float]

    def tokenize(self, text: str, *, bos: bool = False) -> list[int]: ...

    def detokenize(self, tokens: Sequence[int]) -> str: ...


@dataclass(frozen=True)
class Example:
    """One solved example of a few-shot prompt."""

    query: str
    answer: str


def fit_text(judge: _Tokenizing, text: str, max_tokens: int) -> str:
    """``text`` if it has at most ``max_tokens`` tokens, else its head and tail (see the module doc)."""
    if max_tokens < 4:
        raise ValueError(f"max_tokens must be >= 4, got {max_tokens}")
    toks = judge.tokenize(text)
    if len(toks) <= max_tokens:
        return text
    budget = max_tokens - len(judge.tokenize(ELLIPSIS))
    head = max(budget // 3, 1)
    tail = max(budget - head, 1)
    judge.stats["truncated_texts"] = judge.stats.get("truncated_texts", 0) + 1
    return judge.detokenize(toks[:head]).rstrip() + ELLIPSIS + judge.detokenize(toks[-tail:]).lstrip()


def completion_prompt(
    query: str,
    *,
    instruction: str = "",
    examples: Sequence[Example] = (),
    answer_prefix: str = "Answer:",
    separator: str = "\n\n",
) -> str:
    """A plain few-shot prompt for a base model; it ends with ``answer_prefix`` and no trailing space, so the
    choices (``" Yes"``) carry their own leading space.

    ``query`` and each example's ``query`` are inserted verbatim; ``answer_prefix`` follows on a new line."""
    parts = []
    if instruction:
        parts.append(instruction.strip())
    for ex in examples:
        parts.append(f"{ex.query.rstrip()}\n{answer_prefix} {ex.answer.strip()}")
    parts.append(f"{query.rstrip()}\n{answer_prefix}")
    return separator.join(parts)


def chat_prompt(
    chat_template: str,
    messages: Sequence[dict[str, str]],
    *,
    bos_token: str = "",
    eos_token: str = "",
    add_generation_prompt: bool = True,
) -> str:
    """Render ``messages`` (``[{"role": "user", "content": ...}]``) with a GGUF chat template (Jinja2)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    fmt = Jinja2ChatFormatter(
        template=chat_template,
        bos_token=bos_token,
        eos_token=eos_token,
        add_generation_prompt=add_generation_prompt,
    )
    return str(fmt(messages=list(messages)).prompt)  # type: ignore[arg-type]


def render(
    judge: Any,
    query: str,
    *,
    instruction: str = "",
    examples: Sequence[Example] = (),
    answer_prefix: str = "Answer:",
) -> str:
    """A judge prompt for ``judge``: the chat template when its GGUF has one, else :func:`completion_prompt`.

    With a chat template the instruction and examples become the user turn and the assistant turn starts with
    ``answer_prefix``; BOS is left to the tokenizer (the judge adds it)."""
    template = getattr(judge, "chat_template", None)
    if not template:
        return completion_prompt(
            query, instruction=instruction, examples=examples, answer_prefix=answer_prefix
        )
    user = completion_prompt(query, instruction=instruction, examples=examples, answer_prefix="").rstrip()
    return chat_prompt(template, [{"role": "user", "content": user}]) + answer_prefix
