from __future__ import annotations

from labeler.judge.trie import Placed, cells, groups, place, trunk_of

LEAVES = [[1, 2, 3], [1, 2, 4, 5], [1, 6]]


def test_place_shares_each_common_prefix_once():
    assert trunk_of(LEAVES) == 1
    # after the trunk [1]: token 2 is shared by leaves 0-1, the rest is each leaf's own
    assert place(LEAVES, 1) == [
        Placed(2, 1, 0, 1),
        Placed(3, 2, 0, 0),
        Placed(4, 2, 1, 1),
        Placed(5, 3, 1, 1),
        Placed(6, 1, 2, 2),
    ]
    assert cells(LEAVES) == 6 and cells(LEAVES, extra_per_leaf=2) == 12
    # a leaf always keeps its last token (its own output row), even when it is the trunk
    assert trunk_of([[7, 8]]) == 1 and place([[7, 8]], 1) == [Placed(8, 1, 0, 0)]


def test_place_with_a_prefix_leaf_and_three_way_sharing():
    leaves = [[1, 2], [1, 2, 3], [1, 2, 3, 4]]
    assert trunk_of(leaves) == 1
    assert place(leaves, 1) == [Placed(2, 1, 0, 2), Placed(3, 2, 1, 2), Placed(4, 3, 2, 2)]


def test_groups_respect_leaves_and_cells():
    assert groups(LEAVES, max_leaves=2, max_cells=100) == [[0, 1], [2]]
    assert groups(LEAVES, max_leaves=3, max_cells=6) == [[0, 1, 2]]
    assert groups(LEAVES, max_leaves=3, max_cells=6, extra_per_leaf=1) == [[0], [1], [2]]
