"""Statistics for tests whose measured quantity is a random outcome (a trained policy, a judge's rubric): an
assertion states what the mechanism guarantees with an interval or a test of its own, never a number read off
one machine's run (training differs in the last bits across CPU kernels, so outcomes do too)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def sign_test_p(better: int, worse: int) -> float:
    """One-sided exact sign test (McNemar on paired outcomes): the chance of at least ``better`` wins among
    the ``better + worse`` discordant pairs if either side were as likely to win each."""
    n = better + worse
    if n == 0:
        return 1.0
    return sum(math.comb(n, k) for k in range(better, n + 1)) / 2**n


def paired_sign_test_p(a: Sequence[bool], b: Sequence[bool]) -> float:
    """:func:`sign_test_p` of ``a`` right where ``b`` is wrong against the reverse, over paired items."""
    assert len(a) == len(b)
    pairs = list(zip(a, b, strict=True))
    return sign_test_p(sum(x and not y for x, y in pairs), sum(y and not x for x, y in pairs))
