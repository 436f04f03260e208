"""The judge's prompts for the rubric builder (:mod:`labeler.trca.build`): tagging candidate checks, placing
objects, and the fixed failure-response candidates; with the contextual calibration of their scores and the
vote over example orders (:func:`tag_votes`).

Nothing here reads a dataset's ground truth; the examples in the prompts come from tasks unrelated to the
benchmarks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from labeler.trca.mine import Mined, Template

BUILD_TEMPLATE = "trca.build"
BUILD_VERSION = 2  # the tagging prompt's version (cache key)
TAGS = ("found", "done", "failed", "nothing")
PLACEMENT_VERBS = ("put", "place", "insert", "hang", "store")
PLACEMENT_WORDS = re.compile(
    r"\b(place|places|location|locations|belong|belongs|put away|tidy|where)\b", re.I
)

TAG_HEAD = (
    "Each step of an agent is tagged: found (it discovered new information the task needs), done (it "
    "completed a step of the task), failed (the action failed or was not understood), nothing (no effect on "
    "the task).\n\n"
)
TAG_SHOTS = (  # examples from tasks unrelated to the benchmarks
    "Task: Find the key and unlock the door.\nAction: open drawer\n"
    "Response: You open the drawer. The drawer contains a key.\nTag: found",
    "Task: Find the key and unlock the door.\nAction: take key\nResponse: You take the key.\nTag: done",
    "Task: Find the key and unlock the door.\nAction: sing\nResponse: I don't understand that.\nTag: failed",
    "Task: Find the key and unlock the door.\nAction: smell flower\nResponse: It smells nice.\nTag: nothing",
    "Task: Water the plants.\nAction: read note\n"
    "Response: The note says: the watering can is in the shed.\nTag: found",
    "Task: Water the plants.\nAction: fill can with water\nResponse: You fill the watering can.\nTag: done",
    "Task: Water the plants.\nAction: take shed\nResponse: That's not something you can take.\nTag: failed",
    "Task: Water the plants.\nAction: wait\nResponse: Time passes.\nTag: nothing",
)
TAG_QUERY = "Task: {instruction}\nAction: {action}\nResponse: {response}\nTag:"
# The 270M judge's tags depend on the order of the examples (per-step AUROC of the resulting rubric on TWC
# train ranged 0.67-0.79 over these orders); the builder votes over them (on train: >= the first order alone).
SHOT_ORDERS = (
    (0, 1, 2, 3, 4, 5, 6, 7),
    (4, 5, 6, 7, 0, 1, 2, 3),
    (7, 6, 5, 4, 3, 2, 1, 0),
    (1, 4, 2, 7, 0, 5, 3, 6),
)


def tag_prompt(order: int = 0) -> str:
    """The few-shot tagging prompt with the examples in ``SHOT_ORDERS[order]`` (a ``str.format`` template)."""
    return TAG_HEAD + "".join(TAG_SHOTS[i] + "\n\n" for i in SHOT_ORDERS[order]) + TAG_QUERY


TAG_PROMPT = tag_prompt(0)
PLACE_PROMPT = (
    "Where things belong in a tidy house:\nA toothbrush belongs in the bathroom cabinet.\n"
    "A pillow belongs on the bed.\nA frozen pizza belongs in the freezer.\n"
    "A dirty sock belongs in the laundry hamper.\nA banana peel belongs in the compost bin.\n"
    "A {object} belongs in the"
)

# Failure responses of text environments: candidate Invalidity checks the judge accepts or rejects.
INVALIDITY_CANDIDATES: tuple[tuple[str, str, str, str], ...] = (
    # (id, response regex, example action, example response)
    (
        "not-understood",
        r"(not sure what you mean|don't understand|do not understand|unknown command)",
        "jump over fridge",
        "I'm not sure what you mean.",
    ),
    ("cannot", r"\b(you can't|you cannot|can not)\b", "eat fridge", "You can't do that."),
    (
        "not-possible",
        r"(is not something you can|isn't something you can|not something you can)",
        "take stove",
        "That's not something you can take.",
    ),
    ("already", r"\b(is|are) already\b", "open fridge", "That is already open."),
    (
        "not-here",
        r"(you don't see|can't see any|there is no|no such thing)",
        "take banana",
        "You don't see any such thing here.",
    ),
    ("nothing-happens", r"nothing happens", "push wall", "Nothing happens."),
)


class Scorer(Protocol):  # the judge's interface used here (labeler.judge.Judge satisfies it)
    model_sha256: str

    def score_many(
        self,
        queries: Sequence[tuple[str, Sequence[str]]],
        *,
        template: str,
        version: int,
        normalize: str = "sum",
        progress: bool | None = False,
    ) -> list[Any]: ...


def calibrated(rows: list[list[float]]) -> list[list[float]]:
    if not rows:
        return rows
    k = len(rows[0])
    means = [sum(r[j] for r in rows) / len(rows) for j in range(k)]
    return [[r[j] - means[j] for j in range(k)] for r in rows]


def tag_queries(
    mined: Mined, templates: list[Template], order: int, examples: int
) -> list[tuple[str, str, str]]:
    """(kind, key, prompt) for every template example and every invalidity candidate, in one prompt order."""
    prompt = tag_prompt(order)
    out = []
    for i, tp in enumerate(templates):
        for action, response in tp.examples[:examples]:
            out.append(
                (
                    "template",
                    str(i),
                    prompt.format(instruction=mined.instruction, action=action, response=response),
                )
            )
    for cid, _rx, action, response in INVALIDITY_CANDIDATES:
        out.append(
            ("candidate", cid, prompt.format(instruction=mined.instruction, action=action, response=response))
        )
    return out


def judge_places(
    judge: Scorer, table: dict[str, set[str]], progress: bool | None = False
) -> tuple[dict[str, list[str]], int]:
    """Each object's usual place as the judge chooses it among the places seen with it; a place's score is
    calibrated by subtracting its mean over the objects it was offered for. Returns (pairs, queries)."""
    objects = sorted(table)
    qs = [(PLACE_PROMPT.format(object=o), [f" {p}" for p in sorted(table[o])]) for o in objects]
    res = judge.score_many(qs, template=BUILD_TEMPLATE, version=BUILD_VERSION, progress=progress)
    sums: dict[str, list[float]] = {}
    for o, s in zip(objects, res, strict=False):
        for p, lp in zip(sorted(table[o]), s.logprobs, strict=False):
            sums.setdefault(p, []).append(lp)
    mean_of = {p: sum(v) / len(v) for p, v in sums.items()}
    pairs: dict[str, list[str]] = {}
    for o, s in zip(objects, res, strict=False):
        places = sorted(table[o])
        cal_scores = [lp - mean_of[p] for p, lp in zip(places, s.logprobs, strict=False)]
        pairs[o] = [places[max(range(len(places)), key=lambda j: cal_scores[j])]]
    return pairs, len(qs)


@dataclass
class TagVotes:
    """Each candidate's tag under every example order (``(kind, key)``: ``("template", index)`` or
    ``("candidate", id)``) and its mean calibrated scores per order."""

    votes: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    means: dict[tuple[str, str], list[list[float]]] = field(default_factory=dict)
    queries: int = 0

    def tag_of(self, kind: str, key: str) -> tuple[str, str]:
        """The majority tag over prompt orders (a tie goes to the higher mean calibrated score) and a note."""
        vs = self.votes[(kind, key)]
        ms = self.means[(kind, key)]
        avg = [sum(m[j] for m in ms) / len(ms) for j in range(len(TAGS))]
        counts = {t: vs.count(t) for t in TAGS}
        tag = max(TAGS, key=lambda t: (counts[t], avg[TAGS.index(t)]))
        detail = ", ".join(f"{t}={v:+.2f}" for t, v in zip(TAGS, avg, strict=True))
        return tag, f"votes {'/'.join(vs)}; mean calibrated log-probs {detail}"


def tag_votes(
    judge: Scorer,
    mined: Mined,
    templates: list[Template],
    orders: int,
    examples: int,
    progress: bool | None = False,
) -> TagVotes:
    """Tag the templates and the invalidity candidates: one calibrated batch per example order (``orders``
    of them, 0: none), each candidate's examples averaged, one vote per order."""
    out = TagVotes()
    for order in range(orders):
        queries = tag_queries(mined, templates, order, examples)
        scores = judge.score_many(
            [(q[2], [f" {t}" for t in TAGS]) for q in queries],
            template=BUILD_TEMPLATE,
            version=BUILD_VERSION,
            progress=progress,
        )
        out.queries += len(queries)
        per_key: dict[tuple[str, str], list[list[float]]] = {}
        for (kind, key, _p), c in zip(queries, calibrated([list(x.logprobs) for x in scores]), strict=True):
            per_key.setdefault((kind, key), []).append(c)
        for k, rows in per_key.items():
            mean = [sum(r[j] for r in rows) / len(rows) for j in range(len(TAGS))]
            out.votes.setdefault(k, []).append(TAGS[max(range(len(TAGS)), key=lambda j: mean[j])])
            out.means.setdefault(k, []).append(mean)
    return out
