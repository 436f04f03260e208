"""The replay benchmark's pooling and table (hand-computed from two reports)."""

from __future__ import annotations

from tools.bench.bench_replay import markdown, pooled

REPORTS = [
    {"verbs": {"put": {"decisions": 10, "right": 4}, "take": {"decisions": 10, "right": 10}},
     "replay": {"put": {"misses": 6, "recovered": 4, "fatal": 2, "not_replayed": 0}}},
    {"verbs": {"put": {"decisions": 10, "right": 6}, "take": {"decisions": 10, "right": 8}},
     "replay": {"put": {"misses": 4, "recovered": 1, "fatal": 3, "not_replayed": 0},
                "take": {"misses": 2, "recovered": 2, "fatal": 0, "not_replayed": 0}}},
]  # fmt: skip


def test_seeds_pool_per_verb_and_the_table_gives_right_and_right_or_recovered():
    got = pooled(REPORTS)
    assert got["put"] == {
        "decisions": 20,
        "right": 10,
        "misses": 10,
        "recovered": 5,
        "fatal": 5,
        "not_replayed": 0,
    }
    assert got["take"]["recovered"] == 2 and got["take"]["right"] == 18
    md = markdown({"w": {"bc": got}})
    # all: 28 right of 40, 7 recovered; put 10 / 15 of 20; take 18 / 20 of 20
    assert "| bc | 0.70 / 0.88 | 5 of 40 | 0.50 / 0.75 | 0.90 / 1.00 |" in md
    assert "| put: right / or recovered | take: right / or recovered |" in md  # most decisions first
