"""The shipped adapters' contract cases: (environment name, parameters, step limit), small worlds and the
harder levels, a few episodes each. The contract tests (tests/policy/worlds/adapters/test_contract.py, the
world's own checks; tests/policy/worlds/test_collection_check.py, the collection check) run on every case; a
shipped adapter joins by adding its cases here, and every built-in adapter must have at least one."""

from __future__ import annotations

CASES = [
    ("twx:twc", "level=easy", 20),
    ("twx:twc", "level=medium", 30),
    ("twx:twc", "level=hard", 50),
    ("twx:cookingworld", "level=small", 30),
    ("twx:cookingworld", "level=large", 50),
    ("scienceworld:find-non-living-thing", "simplifications=easy", 25),
]


IDS = [f"{n}[{p}]" for n, p, _ in CASES]
