"""The tail planner: which queries (in answering order) are decoded together as parallel tails after a shared
trunk. Pure functions over token lists; the decoding itself is
:meth:`labeler.judge.engine.KVEngine.score_tails`.

A *run* is a list of consecutive query indices. Queries join a run when all their choices are single tokens
and their prefixes differ only in short tails after a shared trunk (the COREN prompt variants' questions after
one step, TRCA's statements after one transition). A run joins only while its tails cost no more tokens than
answering the queries one after another with prefix reuse (plus one token per query), fit half a batch and the
sequences, and no tail exceeds ``MAX_TAIL``.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_TAIL = 64  # longest query tail (tokens after the shared trunk) decoded in a parallel run

Prepared = tuple[list[int], list[list[int]]]  # a query's prefix tokens (with BOS) and its choices' tokens


def lcp(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def plan_tails(prepared: Sequence[Prepared], *, n_seq: int, n_batch: int, n_ctx: int) -> list[list[int]]:
    """Split queries (in answering order) into runs decoded together (see the module docstring); every
    query is in exactly one run, runs keep the given order, a run of one is answered on its own."""
    runs: list[list[int]] = []
    trunk = seq_extra = 0  # shared tokens of the current run; its members' costs after the first
    joinable = False  # the current run has only single-token choices
    for i, (ptoks, ctoks) in enumerate(prepared):
        single = n_seq > 1 and all(len(t) == 1 for t in ctoks)
        if runs and joinable and single:
            run = runs[-1]
            first, prev = prepared[run[0]][0], prepared[run[-1]][0]
            t = min(trunk, lcp(first, ptoks), len(ptoks) - 1)
            new_tails = sum(len(prepared[k][0]) - t for k in run) + len(ptoks) - t
            extra = seq_extra + len(ptoks) - min(lcp(prev, ptoks), len(ptoks) - 1)
            new_seq = len(first) - t + extra  # the same queries one after another from the trunk
            longest = max(len(prepared[k][0]) for k in [*run, i]) - t
            if (
                len(run) < n_seq - 1
                and longest <= MAX_TAIL
                and new_tails <= n_batch // 2
                and new_tails <= new_seq + len(run) + 1
                and t + new_tails <= n_ctx
            ):
                run.append(i)
                trunk, seq_extra = t, extra
                continue
        runs.append([i])
        trunk, seq_extra, joinable = len(ptoks) - 1, 0, single
    return runs
