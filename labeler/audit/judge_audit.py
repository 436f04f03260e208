"""The judge audits the steps: the local judge marks a sample of a log's steps, so that every label channel's
step credit is checked against per-step evidence without a person.

Each sampled step is asked COREN's step rating (``Progress: Yes / No`` after the task, the state's head, the
action and its result; :mod:`labeler.coren.queries`) under two prompt variants, cached like every judge call.
The variants are the cross-check: a step both rate above their median over the sample (the small judge says
yes to most steps, so each variant is read against its own middle) is marked ``progress``, one both rate
below it ``neither``, and one they disagree on is recorded ``unsure`` (asked, no answer). The marks go to the
same file as a person's, by ``judge:MODEL``, and ``label quality --audit`` reads them the same way; a judge
whose prompts agree on too few of the steps asked neither supports nor contradicts a channel
(:data:`labeler.audit.agreement.MIN_JUDGE_AGREEMENT`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from labeler.audit.marks import JUDGE, UNSURE, Mark
from labeler.audit.sample import StepRef
from labeler.coren.config import CorenConfig
from labeler.coren.prompts import load_prompts, load_templates, prompt_files
from labeler.coren.queries import QueryBuilder
from models.trajectory import Trajectory

VARIANTS = 2
"""Prompt variants asked per step (the first non-reasoning ones of COREN's prompt files)."""


@dataclass
class JudgeAudit:
    marks: list[Mark]
    """One per step asked: ``progress``, ``neither`` or ``unsure``."""
    asked: int
    """Steps asked."""
    agreed: int
    """Steps the variants agreed on (the marked ones)."""
    queries: int
    cached: int


def auditor_name(model_ref: str) -> str:
    """How the marks name a judge auditor: :data:`labeler.audit.marks.JUDGE` and the model's reference."""
    return f"{JUDGE}{model_ref}"


def judge_audit(trajectories: Sequence[Trajectory], refs: Sequence[StepRef], judge, by: str) -> JudgeAudit:
    """Marks of ``judge`` on the steps ``refs`` (see the module docstring), named ``by``."""
    templates = load_templates()
    prompts = [p for p in load_prompts(len(prompt_files())) if not p.cot][:VARIANTS]
    builder = QueryBuilder(prompts, templates, CorenConfig(), judge.count_tokens, judge.n_ctx)
    yes = templates.choices[max(range(len(templates.values)), key=lambda i: templates.values[i])]
    wanted: dict[int, list[int]] = {}
    for r in refs:
        wanted.setdefault(r.traj, []).append(r.step)
    queries, where = [], []
    for ti, steps in wanted.items():
        instruction, texts = builder.step_texts(trajectories[ti])
        for p in prompts:
            for i in steps:
                st = texts[i]
                body = builder.body(instruction, st, st.action, st.result)
                queries.append((builder.lead(p) + body + builder.rating(p), list(templates.choices)))
                where.append((ti, i, p))
    scores = judge.score_many(
        queries, template=[p.template_id for *_, p in where], version=[p.version for *_, p in where]
    )
    p_yes: dict[str, list[float]] = {}
    for (_ti, _i, p), s in zip(where, scores, strict=True):
        p_yes.setdefault(p.name, []).append(s.probs[s.choices.index(yes)])
    # The small judge says yes to most steps: each variant's answer is read against its own median over the
    # sample (a step above it is more like progress than the others), not against one half.
    middle = {name: sorted(v)[len(v) // 2] for name, v in p_yes.items()}
    votes: dict[tuple[int, int], list[bool]] = {}
    for (ti, i, p), s in zip(where, scores, strict=True):
        votes.setdefault((ti, i), []).append(s.probs[s.choices.index(yes)] >= middle[p.name])
    marks = []
    for (ti, i), v in votes.items():
        kind = "progress" if all(v) else "neither" if not any(v) else UNSURE
        marks.append(Mark(trajectories[ti].id, i, kind, by))
    agreed = sum(m.mark != UNSURE for m in marks)
    return JudgeAudit(marks, len(votes), agreed, len(scores), sum(s.cached for s in scores))
