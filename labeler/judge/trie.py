"""Token-trie placement: many token lists decoded as parallel llama.cpp sequences in one batch, each shared
prefix evaluated once. Pure functions over token lists (the decodes are in :mod:`labeler.judge.engine` and
:mod:`labeler.judge.batched_generation`).

Leaves are given in sorted order, so the leaves that share a prefix with leaf ``k`` up to position ``p`` are a
contiguous range ``k..m``. Leaf ``k`` owns its tokens from ``max(trunk, lcp with leaf k-1)`` on; each of those
tokens goes into the batch once, tagged with every leaf sequence of its range. Tokens before ``trunk`` are
shared by all leaves and live in sequence 0 (the engine's cached prefix). The number of placed tokens equals
what answering the leaves one after another with prefix reuse would evaluate, but in one decode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from labeler.judge.tails import lcp


@dataclass(frozen=True)
class Placed:
    """One batch entry: ``token`` at ``pos``, in the leaf sequences ``first..last`` (leaf indices)."""

    token: int
    pos: int
    first: int
    last: int


def place(leaves: Sequence[Sequence[int]], trunk: int) -> list[Placed]:
    """Batch entries for ``leaves`` (sorted) after a shared ``trunk`` of tokens (see the module docstring).
    Entries come leaf by leaf, positions increasing, so every entry follows the entries it attends to."""
    n = len(leaves)
    prev = [0] + [lcp(leaves[k - 1], leaves[k]) for k in range(1, n)]
    out: list[Placed] = []
    for k, leaf in enumerate(leaves):
        start = max(trunk, prev[k])
        for p in range(start, len(leaf)):
            last = k  # the later leaves whose common prefix with this one still covers position p
            while last + 1 < n and prev[last + 1] > p:
                last += 1
            out.append(Placed(int(leaf[p]), p, k, last))
    return out


def groups(
    leaves: Sequence[Sequence[int]], *, max_leaves: int, max_cells: int, extra_per_leaf: int = 0
) -> list[list[int]]:
    """Split sorted leaves into consecutive groups decoded together: at most ``max_leaves`` leaves and at
    most ``max_cells`` KV cells (the group's trunk, its placed tokens and ``extra_per_leaf`` cells per leaf,
    e.g. the tokens a leaf will generate)."""
    out: list[list[int]] = []
    for k in range(len(leaves)):
        if out:
            g = out[-1] + [k]
            if len(g) <= max_leaves and cells([leaves[i] for i in g], extra_per_leaf) <= max_cells:
                out[-1] = g
                continue
        out.append([k])
    return out


def trunk_of(leaves: Sequence[Sequence[int]]) -> int:
    """Tokens shared by every leaf, leaving each leaf at least its last token (so it has its own output)."""
    first = leaves[0]
    return min(min(lcp(first, x), len(x) - 1) for x in leaves)


def cells(leaves: Sequence[Sequence[int]], extra_per_leaf: int = 0) -> int:
    """KV cells a group needs: its trunk, every placed token, and ``extra_per_leaf`` per leaf."""
    t = trunk_of(leaves)
    return t + len(place(leaves, t)) + extra_per_leaf * len(leaves)
