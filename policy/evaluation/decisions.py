"""Per-decision accuracy against logged actions, per action verb: where a policy gains and where it fails.

A policy without recovery succeeds with probability about p^L (p: per-decision accuracy, L: path length), so
one decision type it gets wrong caps a whole world. :func:`decision_accuracy` replays every step of a file of
episodes (typically expert episodes of held-out games: their gold paths), asks the policy for its choice
among the step's candidates, with the episode so far as memory exactly as a rollout would give it, and
counts how often it picks the logged action, per *verb*: the first word of the logged action
(:func:`models.actions.verb_of`), read from the candidates themselves, so nothing here knows any world. Steps
with a single candidate, or whose action is not among its candidates, are not decisions and are counted
apart. A miss that picks an action the episode logs later is counted as *later* too: the log's order is one
of several that work where a recipe or a list of chores leaves the order free.

Any :class:`edge.policies.Policy` can be measured: a bundle in process, the daemon through its client, a
training checkpoint.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from edge.policies import Policy
from models.actions import verb_of
from models.trajectory import Trajectory


@dataclass
class VerbTally:
    decisions: int = 0
    right: int = 0
    wrong_picks: Counter[str] = field(default_factory=Counter)
    """What the policy chose instead, by the verb of its choice (``cook`` -> ``cook``: the same verb with
    other arguments)."""
    later: int = 0
    """Misses whose pick is an action the episode logs at a later step: an order the log did not follow
    (cut the onion before the potato), which may cost nothing, told apart from a choice the log never
    makes."""

    @property
    def accuracy(self) -> float:
        return self.right / self.decisions if self.decisions else float("nan")


@dataclass(frozen=True)
class Miss:
    """A decision the policy got wrong: the trajectory's index in the file, the step's, and what it picked
    (:mod:`policy.evaluation.replay_misses` replays it)."""

    episode: int
    step: int
    pick: str


@dataclass
class DecisionReport:
    verbs: dict[str, VerbTally]
    skipped: int
    """Steps that were no decision (one candidate, or the logged action not among the candidates)."""
    episodes: int
    misses: list[Miss] = field(default_factory=list)

    @property
    def decisions(self) -> int:
        return sum(v.decisions for v in self.verbs.values())

    @property
    def accuracy(self) -> float:
        n = self.decisions
        return sum(v.right for v in self.verbs.values()) / n if n else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "decisions": self.decisions,
            "accuracy": self.accuracy,
            "skipped": self.skipped,
            "verbs": {
                verb: {
                    "decisions": t.decisions,
                    "right": t.right,
                    "accuracy": t.accuracy,
                    "wrong_picks": dict(t.wrong_picks.most_common()),
                    "later": t.later,
                }
                for verb, t in sorted(self.verbs.items(), key=lambda kv: -kv[1].decisions)
            },
        }

    def table(self, *, min_decisions: int = 1) -> str:
        """A markdown table, most frequent verb first (verbs with fewer decisions are summed in one row)."""
        lines = ["| verb | decisions | right | accuracy | later | instead |", "|---|---|---|---|---|---|"]
        rest = VerbTally()
        for verb, t in sorted(self.verbs.items(), key=lambda kv: (-kv[1].decisions, kv[0])):
            if t.decisions < min_decisions:
                rest.decisions += t.decisions
                rest.right += t.right
                rest.later += t.later
                rest.wrong_picks.update(t.wrong_picks)
                continue
            lines.append(_row(verb, t))
        if rest.decisions:
            lines.append(_row(f"(verbs under {min_decisions})", rest))
        overall = VerbTally(
            self.decisions,
            sum(v.right for v in self.verbs.values()),
            later=sum(v.later for v in self.verbs.values()),
        )
        lines.append(_row("**all**", overall))
        return "\n".join(lines)


def _row(verb: str, t: VerbTally) -> str:
    instead = ", ".join(f"{v} {n}" for v, n in t.wrong_picks.most_common(3))
    return f"| {verb} | {t.decisions} | {t.right} | {t.accuracy:.3f} | {t.later} | {instead} |"


def decision_accuracy(policy: Policy, trajectories: Iterable[Trajectory]) -> DecisionReport:
    """Replay each episode's logged steps and count the policy's agreement with them, per verb."""
    verbs: dict[str, VerbTally] = {}
    misses: list[Miss] = []
    skipped = episodes = 0
    for e, t in enumerate(trajectories):
        episodes += 1
        policy.reset()
        memory: list[tuple[str, str]] = []
        for i, s in enumerate(t.steps):
            if len(s.candidates) > 1 and s.action in s.candidates:
                pick = s.candidates[policy.act(t.instruction, s.observation, s.candidates, tuple(memory))]
                tally = verbs.setdefault(verb_of(s.action), VerbTally())
                tally.decisions += 1
                if pick == s.action:
                    tally.right += 1
                else:
                    tally.wrong_picks[verb_of(pick)] += 1
                    tally.later += any(later.action == pick for later in t.steps[i + 1 :])
                    misses.append(Miss(e, i, pick))
            else:
                skipped += 1
            memory.append((s.action, s.next_observation))
    return DecisionReport(verbs, skipped, episodes, misses)
