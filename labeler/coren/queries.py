"""COREN's query texts: the step texts fitted to their token budgets and every judge query composed from the
prompt files, plus the dry-run estimate of what a run will ask.

A query is ``header + preamble + body + tail`` (:mod:`labeler.coren.prompts`). Query kinds (per prompt n):

* ``rate``  — the taken action *with its result* (the transition) at every step: the prompt's distribution
  over the template's answers (Yes/No; the cot prompt first generates one line of reasoning). These give the
  prompts' votes (see :mod:`labeler.coren.voting`).
* ``cand``  — one multiple-choice query per observation scoring every candidate at once: the prompt's
  high-value action for the temporal check. It shares the observation's text with the ``rate`` query as KV
  prefix (the judge orders a trajectory's queries by prefix).
* ``back``  — one backward verification per trajectory: can the prompt's high-value actions achieve the task?
* ``qa``    — the structural question retrieved for the steps, answered once per (prompt, QA entry).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from labeler.coren import structural
from labeler.coren.config import CorenConfig, CorenInputError, check_candidates
from labeler.coren.prompts import CorenPrompt, Templates
from labeler.coren.texts import NOTHING_NEW, TruncationStats, fit_head, fit_plan
from models.trajectory import Trajectory

ACTION_TOKENS = 32
PLAN_TOKENS = 384
SAFETY_TOKENS = 16


@dataclass
class StepText:
    observation: str
    action: str
    result: str
    candidates: list[str]


def ranked_candidates(st: StepText, max_options: int) -> list[int]:
    """Indices of the candidates offered in the multiple-choice query: all of them when they fit the letters;
    otherwise the first ``max_options - 1`` plus the taken action (documented cap)."""
    n = len(st.candidates)
    if n <= max_options:
        return list(range(n))
    keep = list(range(max_options - 1))
    taken = st.candidates.index(st.action) if st.action in st.candidates else 0
    return keep + [taken] if taken not in keep else list(range(max_options))


class Budgets:
    """Token budgets per field (see :mod:`labeler.coren.texts` for the truncation rule)."""

    def __init__(
        self,
        n_ctx: int,
        prompts: Sequence[CorenPrompt],
        templates: Templates,
        count: Callable[[str], int],
        result_tokens: int,
    ):
        scaffold = max(
            count(templates.step.format(instruction="", observation="", action="", result="")),
            count(templates.qa.format(instruction="", observation="")),
        )
        header = max(count(p.header) for p in prompts) + count(templates.preamble)
        reasoning = max((p.reasoning_tokens for p in prompts), default=0)
        tail = (
            count(templates.reasoning)
            + reasoning
            + max(count(x) for p in prompts for x in (templates.rating, *p.tails()))
            + max(count(c) for c in templates.choices)
        )
        self.avail = n_ctx - header - scaffold - tail - SAFETY_TOKENS - 1
        if self.avail < 64 + result_tokens:
            raise CorenInputError(
                f"judge context n_ctx={n_ctx} is too small for the COREN prompts "
                f"(headers take {header} tokens); use a larger --n-ctx"
            )
        self.instruction = self.avail // 4
        self.result = result_tokens
        self.action = ACTION_TOKENS


class QueryBuilder:
    """Composes the texts of every query; counts the texts it cuts in ``trunc``."""

    def __init__(
        self,
        prompts: Sequence[CorenPrompt],
        templates: Templates,
        cfg: CorenConfig,
        count: Callable[[str], int],
        n_ctx: int,
    ):
        self.prompts = list(prompts)
        self.t = templates
        self.cfg = cfg
        self._count = count
        self.trunc = TruncationStats()
        self.budgets = Budgets(n_ctx, self.prompts, templates, count, cfg.result_tokens)

    # ------------------------------------------------------------------------------------------------ texts

    def fit(self, text: str, tokens: int, what: str) -> str:
        out, cut = fit_head(text, tokens, self._count)
        if cut:
            self.trunc.add(what)
        return out

    def step_texts(self, traj: Trajectory) -> tuple[str, list[StepText]]:
        b = self.budgets
        instruction = self.fit(traj.instruction, b.instruction, "instruction")
        left = b.avail - self._count(instruction)
        out = []
        for s, response in zip(traj.steps, traj.responses(), strict=True):
            result = self.fit(response or NOTHING_NEW, b.result, "result")
            action = self.fit(s.action, b.action, "action")
            cands = [self.fit(c, b.action, "candidate") for c in s.candidates]
            options = sum(self._count(c) + 2 for c in cands[: len(self.t.letters)])
            room = left - max(self._count(result) + self._count(action), options)
            # a cut to --obs-tokens is by design (counted apart); a cut to the context is a truncation
            obs = self.fit(
                s.observation,
                min(self.cfg.obs_tokens, room),
                "observation_head" if self.cfg.obs_tokens <= room else "observation",
            )
            out.append(StepText(obs, action, result, cands))
        return instruction, out

    # ------------------------------------------------------------------------------------------------ queries

    def lead(self, prompt: CorenPrompt) -> str:
        return prompt.header + self.t.preamble

    def rating(self, prompt: CorenPrompt) -> str:
        return prompt.rate_tail or self.t.rating

    def body(self, instruction: str, st: StepText, action: str, result: str) -> str:
        return self.t.step.format(
            instruction=instruction, observation=st.observation, action=action, result=result
        )

    def step_queries(
        self, prompt: CorenPrompt, instruction: str, texts: list[StepText]
    ) -> tuple[list[tuple[str, list[str]]], list[str]]:
        """One candidate query per step (multiple choice over its ranked candidates) and the taken actions'
        rating prefixes (with result; for the cot prompt, the text the reasoning is generated after)."""
        t = self.t
        lead = self.lead(prompt)
        cand = []
        for st in texts:
            ranked = ranked_candidates(st, len(t.letters))
            options = "\n".join(f"{t.letters[i]}. {st.candidates[c]}" for i, c in enumerate(ranked))
            body = t.choose.format(instruction=instruction, observation=st.observation, options=options)
            cand.append((lead + body + prompt.choose_tail, [" " + t.letters[i] for i in range(len(ranked))]))
        tail = t.reasoning if prompt.cot else self.rating(prompt)
        rate = [lead + self.body(instruction, st, st.action, st.result) + tail for st in texts]
        return cand, rate

    def backward_query(self, prompt: CorenPrompt, instruction: str, plan: list[str]) -> str:
        """The backward verification of a plan (the prompt's high-value actions, cut to ``PLAN_TOKENS``)."""
        text, cut = fit_plan(plan, PLAN_TOKENS, self._count)
        if cut:
            self.trunc.add("plan")
        body = self.t.backward.format(instruction=instruction, plan=text)
        return self.lead(prompt) + body + prompt.backward_tail

    def qa_query(self, prompt: CorenPrompt, entry: structural.QAEntry) -> str:
        """The structural question about a QA entry's observation (the whole observation that fits)."""
        b = self.budgets
        instruction = self.fit(entry.instruction, b.instruction, "qa_instruction")
        obs = self.fit(entry.observation, b.avail - self._count(instruction), "qa_observation")
        return self.lead(prompt) + self.t.qa.format(instruction=instruction, observation=obs) + prompt.qa_tail

    # -------------------------------------------------------------------------------------------- estimate

    def plan(self, trajectories: Sequence[Trajectory]) -> dict[str, Any]:
        """Query counts and a token estimate, without running the judge (``--dry-run``).

        ``prompt_tokens``: all query text; ``new_tokens``: what is left after the prefix shared with the
        previous query in the judge's order (what llama.cpp actually evaluates; estimated from characters)."""
        check_candidates(trajectories)
        counts: dict[str, int] = {}
        chars = new_chars = 0
        gen_tokens = 0
        sample: list[str] = []
        texts = [self.step_texts(t) for t in trajectories]
        n_qa = min(self.cfg.qa_size, len(structural.candidate_entries(trajectories)))
        prev = ""
        for instruction, sts in texts:
            qs = []
            for prompt in self.prompts:
                cand, rate = self.step_queries(prompt, instruction, sts)
                qs += [q for q, _ in cand] + rate
                counts["cand"] = counts.get("cand", 0) + len(cand)
                counts["rate"] = counts.get("rate", 0) + len(rate)
                if prompt.cot:
                    counts["reason"] = counts.get("reason", 0) + len(rate)
                    gen_tokens += len(rate) * prompt.reasoning_tokens
                counts["back"] = counts.get("back", 0) + 1
            qs.sort()
            for q in qs:
                lcp = 0
                for a, b in zip(prev, q, strict=False):
                    if a != b:
                        break
                    lcp += 1
                chars += len(q)
                new_chars += len(q) - lcp
                prev = q
            sample.extend(qs[:1])
        for _prompt in self.prompts:
            counts["qa"] = counts.get("qa", 0) + n_qa
            gen_tokens += n_qa * self.cfg.qa_answer_tokens
        ratio = (
            (sum(self._count(x) for x in sample) / max(sum(len(x) for x in sample), 1)) if sample else 0.25
        )
        return {
            "trajectories": len(trajectories),
            "steps": sum(len(t.steps) for t in trajectories),
            "queries": counts,
            "total_queries": sum(counts.values()),
            "prompt_tokens": int(chars * ratio),
            "new_tokens": int(new_chars * ratio),
            "generated_tokens_max": gen_tokens,
            "truncations": dict(self.trunc.counts),
            "example_query": sample[0] if sample else "",
        }
