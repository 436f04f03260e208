"""Which logged steps a label-reading imitation learner should copy, and which it should push away: per-step
credit from the step rewards (labels, terminal success bonus, detour penalty) of *every* episode, successful
or not.

- **Successful episodes**: every step whose reward is not negative gets credit 1 (what the labels do not
  call harmful in an episode that reached the goal: the filter ``success-labeled`` of
  :mod:`policy.training.learners.bc`), except a step that changed nothing and repeats an action the episode
  had already taken (the third look around, the second inventory check of a random walk that happened to
  succeed): it is not what made the episode succeed, and imitating it teaches the policy to stall. The first
  look, the first read of a recipe keep their credit.
- **Harmful steps, in every episode**: a step that changed the world and has a negative reward gets
  ``-negative``: the learner pushes its probability down (unlikelihood) instead of ignoring it. This is what
  a file's failed episodes teach best: a random walk misplaces things, and the labels say which. The
  negative reward is the labels' (a misplacement) or, with ``detours``, the detour penalty's (the step lies
  on a loop of world states: what it did was undone, like a random put taken back). Two cases are no
  evidence of harm and get no signal: a step the labels themselves call progress (its effect was undone by
  *another* step later), and a step that changed nothing (a repeated look wasted a step, but the same look
  is right at the start of an episode).

With ``failures``, the progress of failed episodes is credited too (hindsight: a stretch that ended in
progress is a demonstration of that progress). The steps that *enabled* a rewarded step (opening the
container before putting into it) carry no reward of their own, so credit goes back from each rewarded step
over the steps that led to it:

- **Milestones**: the steps whose reward is positive (what the labels call progress; a successful episode's
  last step has the success bonus).
- **Segments**: the stretch after the previous milestone up to and including this one. Its steps whose
  effect on the world lasted to the milestone are the segment's loop-erased path over world states
  (:func:`models.world_paths.loop_erased_steps`): a detour inside the segment (taking an object and putting
  it back) and a step that changed nothing (looking, examining) are not on it. The milestone gets credit 1,
  the path step ``d`` places before it ``discount ** d``.
- **Linked steps**: a random walk's lasting steps are mostly unrelated to the progress it stumbled on, so
  in a failed episode only the path steps that act on what the milestone acts on are credited, going back:
  a step whose argument phrases (``open fridge``: ``fridge``) meet those of the milestone or of a step
  already kept (``take cup from fridge``: ``cup``, ``fridge``). Generic over ``verb object [preposition
  target]`` commands (:mod:`models.actions`); ``linked=False`` credits the whole path.

It is off by default: on TWC easy (docs/experiments.md, "Learners on success-scarce files") the labels'
progress inside random walks is noisier than the successful episodes' steps, and crediting it lost 6 points of
success.

A step gets the largest positive credit any rule gives it; a harmful step is never a milestone, and a step on
the path to a milestone is never harmful (its reward is not negative), so the two never compete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from models.actions import parse_action
from models.trajectory import Trajectory
from models.world_paths import loop_erased_steps


@dataclass(frozen=True)
class CreditRule:
    discount: float = 0.8
    """Credit of a path step one place further from the milestone it led to (1 at the milestone)."""
    negative: float = 0.5
    """Weight of the unlikelihood term on a harmful step (0: ignore harmful steps, as filtered BC does)."""
    failures: bool = False
    """Credit the progress of failed episodes too (hindsight segments; True). Off by default: on TWC easy
    it cost 6 points of success (the labels' progress in random walks is noisier than the successes')."""
    detours: bool = True
    """Count the detour penalty as evidence of harm (False: only negative labels)."""
    linked: bool = True
    """In failed episodes, credit only the path steps that act on what the milestone (or a step already
    credited after them) acts on: the same phrase among their arguments
    (:attr:`models.actions.Action.phrases`, e.g. ``open fridge`` before ``take apple from fridge``)."""
    idle_repeats: bool = False
    """In successful episodes, credit a step that changed nothing every time (True), or only the first use
    of its action in the episode (False, the default: on the learner benchmark's four worlds it gained
    1-6 points of success and lost none)."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.discount <= 1.0:
            raise ValueError(f"credit discount must be in [0, 1], got {self.discount}")
        if self.negative < 0:
            raise ValueError(f"credit negative weight must be >= 0, got {self.negative}")


def segment_path(keys: Sequence[str], start: int, milestone: int) -> list[int]:
    """The steps of ``start..milestone`` whose effect lasted to the milestone: the loop-erased path of the
    world states ``keys[start..milestone + 1]``, with the milestone itself always last (it is the progress,
    even when it changed no world part, e.g. reading what the goal needs)."""
    path = [start + i for i in loop_erased_steps(keys[start : milestone + 2])]
    path = [i for i in path if i != milestone]
    return [*path, milestone]


def linked_steps(actions: Sequence[str], path: Sequence[int]) -> list[int]:
    """The steps of ``path`` (the milestone last) that act on what the milestone acts on, going back: a
    step is kept when one of its argument phrases is among those of the milestone or of a kept later step."""
    milestone = path[-1]
    wanted = set(parse_action(actions[milestone]).phrases)
    kept = [milestone]
    for i in reversed(path[:-1]):
        phrases = set(parse_action(actions[i]).phrases)
        if phrases & wanted:
            kept.append(i)
            wanted |= phrases
    return kept[::-1]


def step_credit(
    traj: Trajectory, rewards: Sequence[float], rule: CreditRule, labels: Sequence[float] | None = None
) -> list[float]:
    """One credit per step of ``traj`` from its ``rewards`` (:func:`policy.training.rewards.step_rewards`)
    under ``rule``: positive, imitate with that weight; negative, push away; 0, no signal (module docstring).
    ``labels``: the same rewards without the detour penalty (None: ``rewards`` have none), which tell the
    labels' negatives and progress from the penalty's."""
    n = len(traj.steps)
    if len(rewards) != n or (labels is not None and len(labels) != n):
        raise ValueError(f"trajectory {traj.id}: {len(rewards)} rewards for {n} steps")
    actions = [s.action for s in traj.steps]
    credit = [1.0 if r >= 0 else 0.0 for r in rewards] if traj.success else [0.0] * n
    if traj.success and not rule.idle_repeats:
        changed = traj.view.changed
        credit = [0.0 if not changed[i] and actions[i] in actions[:i] else c for i, c in enumerate(credit)]
    if traj.success or rule.failures:
        keys = traj.view.episode_keys
        start = 0
        for m, r in enumerate(rewards):
            if r <= 0:
                continue
            path = segment_path(keys, start, m)
            if rule.linked and not traj.success:
                path = linked_steps(actions, path)
            for d, i in enumerate(reversed(path)):
                if rewards[i] >= 0:
                    credit[i] = max(credit[i], rule.discount**d)
            start = m + 1
    if rule.negative > 0:
        said = labels if labels is not None else rewards
        harm = rewards if rule.detours else said
        changed = traj.view.changed
        credit = [
            -rule.negative if harm[i] < 0 and said[i] <= 0 and changed[i] else c for i, c in enumerate(credit)
        ]
    return credit
