"""The answer to one scoring query: each choice's summed log-prob, its token count, and the normalised
probabilities over the choices (``normalize="sum"`` or ``"mean"``; see :mod:`labeler.judge`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NORMALIZATIONS = ("sum", "mean")


@dataclass(frozen=True)
class ChoiceScores:
    """Scores of the choices of one query, in the order they were given."""

    choices: tuple[str, ...]
    logprobs: list[float]  # sum of token log-probs of each choice given the prefix
    ntokens: list[int]  # tokens per choice
    normalize: str = "sum"
    cached: bool = False

    @property
    def scores(self) -> list[float]:
        """The normalised scores the softmax runs over (see the package docstring)."""
        if self.normalize == "mean":
            return [lp / max(n, 1) for lp, n in zip(self.logprobs, self.ntokens, strict=False)]
        return list(self.logprobs)

    @property
    def probs(self) -> list[float]:
        s = np.asarray(self.scores, dtype=np.float64)
        e = np.exp(s - s.max())
        return (e / e.sum()).tolist()

    @property
    def best(self) -> int:
        return int(np.argmax(self.scores))

    def margin(self, a: int = 0, b: int = 1) -> float:
        """``logprobs[a] - logprobs[b]``: e.g. log P(" Yes") − log P(" No")."""
        return self.logprobs[a] - self.logprobs[b]
