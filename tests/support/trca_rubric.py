"""A rubric text and the world strings the rubric, check and mining tests share."""

from __future__ import annotations

from policy.worlds.adapters.twx import compose_state

GOOD = """\
format = "edgejudge.rubrics"
format_version = 1
task_type = "toy"
version = 3
description = "toy rubric"

[build]
judge_sha256 = "abc"

[[items]]
id = "take"
category = "execution"
text = "An object was taken"
action = '^take (?P<object>.+)$'
feedback = '^You take the {object}\\.$'

[[items]]
id = "put-right"
category = "execution"
text = "Put where it belongs"
action = '^put (?P<object>.+?) in (?P<place>.+)$'
[items.pairs]
"apple" = ["fridge"]
"dirty sock" = "laundry basket"

[[items]]
id = "put-wrong"
category = "invalidity"
text = "Put where it does not belong"
action = '^put (?P<object>.+?) in (?P<place>.+)$'
pairs_mismatch = true
[items.pairs]
"apple" = ["fridge"]

[[items]]
id = "revealed"
category = "evidence"
text = "Something new appears"
appears = ["pear", "apple"]

[[items]]
id = "not-understood"
category = "invalidity"
text = "Parser failure"
feedback = "not sure what you mean"

[[items]]
id = "noop"
category = "invalidity"
text = "Repeated action without effect"
repeat = true
unchanged = true

[[items]]
id = "gained"
category = "execution"
text = "Inventory grew"
inventory = "gain"
instruction = "apple"

[[items]]
id = "asked"
category = "evidence"
text = "The agent learned where the key is"
judge = true
"""


INSTR = "Put the apple in the fridge."


O0 = compose_state("", "You see a closed fridge and an apple.", "Inventory: empty", [])


def put_objects(trajs) -> set[str]:
    """The objects of a TWC log's ``put X in Y`` candidates, lower-cased: what a rubric must place."""
    return {
        a.split(" in ")[0][4:].lower()
        for t in trajs
        for s in t.steps
        for a in s.candidates
        if a.startswith("put ") and " in " in a
    }
