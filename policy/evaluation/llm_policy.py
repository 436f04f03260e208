"""The LLM-as-agent baseline: the judge model itself picks, at every step, the candidate action with the
highest (length-normalised) log-probability as the continuation of a prompt holding the instruction and the
state text.

This is what "no online LLM calls" replaces: the same seeds and metrics as the exported policy, plus its
per-action latency (one prompt evaluation + one short continuation per candidate, through llama.cpp).
No label cache is used, so the measured latency is what a robot calling the LLM would pay.
"""

from __future__ import annotations

from collections.abc import Sequence

from edge.policies import Memory, ScoringPolicy

TEMPLATE = "llm-agent"
TEMPLATE_VERSION = 1
PROMPT = (
    "You are an agent in a text adventure game. Choose the next action that makes progress on the task.\n\n"
    "Task: {instruction}\n{state}\n\nNext action:"
)


def build_prompt(instruction: str, state: str) -> str:
    return PROMPT.format(instruction=" ".join(instruction.split()), state=state.strip())


class LLMPolicy(ScoringPolicy):
    """The judge as a policy; closing it closes the judge."""

    def __init__(self, judge, *, normalize: str = "mean"):
        self.judge = judge
        self.normalize = normalize
        self.name = f"llm:{judge.model_sha256[:12]}"

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> list[float]:
        """The judge's log-prob of every candidate after the prompt (the memory is not read)."""
        res = self.judge.score(
            build_prompt(instruction, state),
            [" " + c for c in candidates],
            template=TEMPLATE,
            version=TEMPLATE_VERSION,
            normalize=self.normalize,
        )
        return list(res.scores)

    def on_close(self) -> None:
        self.judge.close()


def open_llm_policy(judge_ref: str = "gemma3-270m", **kwargs) -> LLMPolicy:
    """The LLM-as-agent baseline on the judge ``judge_ref`` (a registry name or a GGUF path), without a label
    cache (the latency measured is what a robot calling the LLM would pay)."""
    from labeler.judge import open_judge

    judge = open_judge(judge_ref, cache=None, **kwargs)
    policy = LLMPolicy(judge)
    policy.name = f"llm:{judge_ref}"
    return policy
