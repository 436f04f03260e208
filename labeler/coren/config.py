"""COREN's labeling options (:class:`CorenConfig`, the CLI's flags) and the input check every run starts
with (each step needs its candidate actions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from models.trajectory import Trajectory


class CorenInputError(ValueError):
    """The dataset cannot be labeled as asked (e.g. steps without candidates)."""


@dataclass
class CorenConfig:
    """Labeling options (the CLI's flags)."""

    obs_tokens: int = 48
    """Most tokens of the observation in rating and candidate queries (its head: feedback, inventory, recent
    actions, then the room). The 270M judge ranks better with a short observation (BENCHMARKS.md), and every
    token costs time. Structural questions get the whole observation (up to the context)."""
    result_tokens: int = 40
    """Most tokens of the result (the first new line of the next observation) shown with the taken action."""
    qa_size: int = 48
    """Most entries of the built structural QA set (farthest-point sampled)."""
    qa_answer_tokens: int = 16
    """Most tokens of a prompt's answer to a structural question."""
    keep_dists: bool = True
    """Keep each prompt's distribution over the scale per step (dist_p0 ...)."""
    vote: str = "mean"
    """How the prompts' ratings make a channel (``labeler.coren.voting.VOTES``): ``mean`` of their calibrated
    scores, or ``majority`` of their quintile votes (the paper's vote)."""


def check_candidates(trajectories: Sequence[Trajectory], source: str = "input") -> None:
    for t in trajectories:
        for i, s in enumerate(t.steps):
            if not s.candidates:
                raise CorenInputError(
                    f"{source}: trajectory {t.id!r} step {i} has no candidates: COREN's temporal consistency "
                    "rates every candidate (admissible) action at each observation. Record the candidate "
                    "actions in each step's 'candidates' list (edgejudge collect does), or add them to your "
                    "logs."
                )
