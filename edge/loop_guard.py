"""Per-episode loop breaking on the client side: never repeat an action in a state where it was taken before.

A greedy (argmax) policy is deterministic, and so are most text environments and many robot skills: once it
returns to a state it has seen, it takes the same action and repeats the same cycle until the episode's
step limit (the take/put loop seen on TextWorld Commonsense). The guard keeps the episode's (observation,
action) pairs and, given the policy's scores, returns the best-scored candidate not yet taken in this exact
observation; when every candidate has been tried it falls back to the argmax.

It lives in the client because the daemon is stateless per request (one daemon serves many episodes and
clients); an episode's memory belongs to whoever runs the episode. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence


class LoopGuard:
    """Usage per episode: ``reset()``, then ``choose(observation, candidates, scores)`` at every step."""

    def __init__(self) -> None:
        self._taken: set[tuple[str, str]] = set()
        self.overrides = 0
        """How many times this episode the guard chose something other than the argmax."""

    def reset(self) -> None:
        self._taken.clear()
        self.overrides = 0

    def choose(self, observation: str, candidates: Sequence[str], scores: Sequence[float]) -> int:
        if len(candidates) != len(scores) or not candidates:
            raise ValueError(f"{len(candidates)} candidates but {len(scores)} scores")
        order = sorted(range(len(candidates)), key=lambda i: -float(scores[i]))
        pick = next((i for i in order if (observation, candidates[i]) not in self._taken), order[0])
        if pick != order[0]:
            self.overrides += 1
        self._taken.add((observation, candidates[pick]))
        return pick
