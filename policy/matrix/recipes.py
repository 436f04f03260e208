"""What the matrix trains and on which labels: one registry of reward sources and one of recipes (a learner
of ``edgejudge train`` with its settings), one line each; the plan, the data, the runs and the report read
them and name none.

A new reward source is one line in :data:`SOURCES` (and, for a new kind of labeling, one branch in
:meth:`policy.matrix.data.WorldData.training_file`); a new recipe is one line in :data:`RECIPES` (its learner
one module and one line in :mod:`policy.training.learners.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from models.channel_choice import AUTO

LABELINGS = ("none", "whole", "per-file", "built", "expert")
"""How a source's labels are made for the ``n``-episode training file: ``none`` (the file as collected),
``whole`` (the largest file labeled once, each smaller one cut from it), ``per-file`` (each file on its own:
labels cross-fitted on the file), ``built`` (TRCA on rubrics the judge builds from that file alone),
``expert`` (pure expert episodes, no labels)."""


@dataclass(frozen=True)
class Source:
    name: str
    title: str
    """How rows name it: ``IQL, <title>``."""
    reward: str
    """``edgejudge train --reward`` (``auto``: the channel recorded beside the row's labeled file,
    :func:`policy.matrix.data.train_reward`)."""
    channel: str
    """The label channel its label quality is measured on (``success``: the episode's flag on every step;
    ``auto``: the recorded one)."""
    labeling: str
    """One of :data:`LABELINGS`."""
    trca: bool = False
    """TRCA's labels: the recipes that read TRCA's channels (advantages, harmful steps) run on it."""
    per_step_judge: bool = False
    """The judge rates every step (COREN): its files are tagged with the prompts and judge, and only the sizes
    up to ``Sizes.coren_max_episodes`` are labeled."""
    trainable: bool = True
    """A source ``edgejudge matrix --sources`` takes (the label grid also measures the others)."""
    about: str = ""
    """One line for ``--help``."""
    labels_of: str = ""
    """The source whose labeled files it trains on (default: its own): it shares them, so an audit of one of
    those files serves both."""

    @property
    def dense(self) -> bool:
        return self.reward != "sparse"

    @property
    def label_source(self) -> str:
        """The source whose labeling makes its files."""
        return self.labels_of or self.name


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source("sparse", "sparse", "sparse", "env.reward", "none", about="the success flag alone"),
        Source(
            "trca",
            "TRCA (shipped rubric)",
            "trca",
            "trca.total",
            "whole",
            trca=True,
            about="TRCA on the shipped rubric of the task type",
        ),  # fmt: skip
        Source(
            "trca-auto",
            "TRCA (shipped rubric), the channel its audit supports",
            AUTO,
            AUTO,
            "whole",
            trca=True,
            about="trca's labeled files, each trained on the channel a step audit of it supports (recorded "
            "by 'edgejudge label quality FILE --audit MARKS'); a file without one is the row's error",
            labels_of="trca",
        ),
        Source(
            "trca-built",
            "TRCA (rubric built from the data, unreviewed)",
            "trca",
            "trca.total",
            "built",
            trca=True,
        ),
        Source(
            "coren",
            "COREN",
            "coren",
            "coren.ensemble",
            "whole",
            per_step_judge=True,
            about="the judge on every step, under several prompts",
        ),  # fmt: skip
        Source(
            "potential",
            "success-model potential (no judge)",
            "potential",
            "potential.delta",
            "per-file",
            about="the success-model potential fit on each training file, cross-fitted; no judge",
        ),  # fmt: skip
        Source("success", "success flag on every step", "sparse", "success", "none", trainable=False),
        Source("expert", "expert episodes", "sparse", "env.reward", "expert", trainable=False),
    )
}
EXPERT = "expert"
"""The source of the imitation-ceiling rows: BC on pure expert episodes (gold paths, no noise)."""


def trainable_sources() -> list[str]:
    return [s.name for s in SOURCES.values() if s.trainable]


def dense_sources() -> list[str]:
    return [s.name for s in SOURCES.values() if s.trainable and s.dense]


@dataclass(frozen=True)
class Recipe:
    name: str
    """The row's ``algo``."""
    algo: str
    """``edgejudge train --algo``."""
    title: str
    runs_on: str
    """``any`` source, only ``sparse`` (the success flag), or only ``trca`` sources."""
    bc_filter: str | None = None
    """BC's ``--set filter=...`` (recorded in the row's configuration)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """Further keys of the row's configuration (e.g. IQL's reward scale)."""

    def sources(self, offered: tuple[str, ...] | list[str]) -> list[str]:
        """The sources of ``offered`` this recipe trains on."""
        if self.runs_on == "sparse":
            return ["sparse"]
        if self.runs_on == "trca":
            return [s for s in offered if SOURCES[s].trca]
        return list(offered)


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe("iql", "iql", "IQL", "any", settings={"reward_scale": "return-span"}),
        Recipe("awr", "awr", "AWR on TRCA advantages", "trca"),
        Recipe("bc", "bc", "BC on successes", "sparse", bc_filter="success"),
        Recipe(
            "bc-labeled", "bc", "BC on successes, steps the labels keep", "trca", bc_filter="success-labeled"
        ),
        Recipe("credit", "credit", "Credit: steps the labels keep, harmful steps pushed away", "trca"),
    )
}
"""The matrix's recipes: ``bc`` learns from the successful episodes (source sparse); ``iql`` from every
source (its rewards scaled so the episode returns span a fixed range); ``awr`` (TRCA's stored advantages),
``bc-labeled`` (the successful episodes' steps the labels do not call harmful) and ``credit`` (those, and
every episode's harmful steps pushed away) from every TRCA source."""


BASELINES = {"random": "random", "llm-agent": "LLM-as-agent"}
"""The untrained rows (source ``-``)."""


def row_names() -> dict[tuple[str, str], str]:
    """Every row kind's display name, in table order: each recipe on each source it runs on, the imitation
    ceiling, the baselines."""
    names = {
        (r.name, s): f"{r.title}, {SOURCES[s].title}"
        for r in RECIPES.values()
        for s in r.sources(trainable_sources())
    }
    names[("bc", EXPERT)] = "BC on expert episodes (imitation ceiling)"
    names.update({(algo, "-"): title for algo, title in BASELINES.items()})
    return names
