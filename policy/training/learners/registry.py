"""The learners ``edgejudge train --algo`` offers: one line each (name, module, what it does).

Importing this module imports no learner (and no torch): ``edgejudge train --help`` lists them from here, and
:func:`learner` loads the one that trains. A new learner is one module ending with ``LEARNER = Learner(...)``
(:mod:`policy.training.learners.base`) and one line in :data:`LEARNERS` (docs/training.md, "Add a learner").
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


class ConfigError(ValueError):
    """A learner's configuration that cannot train: unknown learner or key, a bad value, missing labels."""


@dataclass(frozen=True)
class Entry:
    name: str
    module: str
    help: str
    """One line for ``edgejudge train --help``."""


LEARNERS: tuple[Entry, ...] = (
    Entry("iql", "policy.training.learners.iql", "Implicit Q-Learning (discrete)"),
    Entry("cql", "policy.training.learners.cql", "Conservative Q-Learning (discrete)"),
    Entry(
        "bc", "policy.training.learners.bc", "behaviour cloning (--set filter=success: successful episodes)"
    ),
    Entry("awr", "policy.training.learners.awr", "advantage-weighted imitation on TRCA's trca.advantage"),
    Entry(
        "credit",
        "policy.training.learners.credit",
        "imitation of the steps the labels do not call harmful, harmful steps pushed away (dense --reward)",
    ),
)


def names() -> list[str]:
    return [e.name for e in LEARNERS]


def entry(name: str) -> Entry:
    for e in LEARNERS:
        if e.name == name:
            return e
    raise ConfigError(f"unknown algorithm {name!r}: expected one of {', '.join(names())}")


def learner(name: str) -> Any:
    """The :class:`~policy.training.learners.base.Learner` named ``name`` (its module imported now)."""
    found = importlib.import_module(entry(name).module).LEARNER
    if found.name != name:
        raise RuntimeError(
            f"{entry(name).module} declares the learner {found.name!r}, registered as {name!r}"
        )
    return found
