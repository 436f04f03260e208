"""Rubric items the builder finds in the data alone, without asking the judge (:mod:`labeler.trca.build`
calls them): a world's generic refusals, actions on what the instruction or an earlier response names, and
what a log's layout lets the checks read. Each candidate is grounded on the success flags
(:mod:`labeler.trca.grounding`); ``rejected`` collects the reasons for the header of the built file, and
``new_id`` gives each kept item a unique id.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from labeler.trca import grounding
from labeler.trca.grounding import ground, verdict
from labeler.trca.mine import Mined, template_display, template_regex
from labeler.trca.rubric import Item
from models.actions import PREPOSITIONS
from models.state_layout import StateLayout


def slug(text: str) -> str:
    """An item id's piece: lower-case words joined by '-', at most 40 characters."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "item"


def generic_refusals(
    mined: Mined, episodes: list, rejected: list[str], new_id: Callable[[str], str]
) -> list[Item]:
    """Invalidity items for responses that change nothing and follow several verbs alike (a world's "nothing
    happens" or "no known action"), found from the data: no judge, no world-specific text."""
    verbs_of: dict[str, set[str]] = {}
    for tp in mined.templates:
        verbs_of.setdefault(tp.template, set()).add(tp.verb)
    out = []
    for tmpl, verbs in sorted(verbs_of.items()):
        if len(verbs) < grounding.GENERIC_VERBS:
            continue
        item = Item(
            id="candidate",
            category="invalidity",
            text=f'The environment gives its generic answer "{template_display(tmpl)}"',
            feedback=template_regex(tmpl),
        )
        g = ground(item, episodes)
        v = verdict("nothing", g)
        if v.category != "invalidity":
            rejected.append(f'response "{template_display(tmpl)}" after {len(verbs)} verbs: {v.reason}')
            continue
        item.id = new_id(f"generic-{slug(template_display(tmpl))}")
        item.note = f"{v.reason} (found in the data, no judge); {g.summary()}"
        out.append(item)
    return out


NAMED_IN = {"instruction": "the instruction names", "earlier": "an earlier response named"}


NAMED_MIN_HITS = 3
"""Hits in successful trajectories a named-argument item needs before the data can speak for it."""
NAMED_OVER_VERB = 1.25
"""... and how much more it must mark successes than the verb on any argument (else it adds nothing)."""


def named_arguments(
    templates: Sequence, episodes: list, rejected: list[str], new_id: Callable[[str], str]
) -> list[Item]:
    """Execution items for a verb whose object the instruction (or an earlier response) names, found from the
    data alone (no judge): kept when such actions have hits in successes, last there (loop-erased path), are
    clearly more frequent there than in failures, and more so than the verb on any object."""
    out = []
    verbs = sorted({tp.verb for tp in templates if tp.with_object and tp.verb})
    for verb in verbs:
        action = rf"^{re.escape(verb)} (?P<object>.+?)(?: (?:{'|'.join(PREPOSITIONS)}) .+)?$"
        base = ground(Item(id="verb", category="execution", text="", action=action), episodes)
        for where, says in NAMED_IN.items():
            item = Item(
                id="candidate",
                category="execution",
                text=f"'{verb} X' where {says} X",
                action=action,
                argument_in=where,
            )
            g = ground(item, episodes)
            if g.hits_success < NAMED_MIN_HITS:
                continue
            lift, over = g.lift or 0.0, (g.lift or 0.0) / max(base.lift or 0.0, 1e-9)
            if (g.kept or 0.0) < grounding.KEPT_MIN or lift < grounding.RESCUE_LIFT or over < NAMED_OVER_VERB:
                rejected.append(
                    f"'{verb} X' where {says} X: does not mark successes beyond the verb "
                    f"(lift {lift:.2f}, {over:.2f}x the verb's); {g.summary()}"
                )
                continue
            item.id = new_id(f"{slug(verb)}-named-in-{where}")
            item.note = (
                f"found in the data, no judge: lasts in successes and marks them {over:.2f}x more than "
                f"'{verb}' on any object; {g.summary()}"
            )
            out.append(item)
    return out


def layout_notes(layout: StateLayout) -> list[str]:
    """What the checks do on a log whose layout lacks a part they would read (said in the rubric's header)."""
    names = set(layout.names)
    out = []
    if layout.plain:
        out.append("plain text (no 'Label: value' parts): the world state is the whole text")
    if "feedback" not in names:
        out.append("no response part: a step's response is what its next state adds to its state")
    if "history" not in names:
        out.append("no recent-actions part: 'repeat' checks compare the episode's own last actions")
    if "inventory" not in names:
        out.append("no inventory part: no inventory-change item (such a check never holds on this log)")
    return out
