"""Build a rubric offline with the judge and the logs' success flags: mine candidate checks from a dataset,
the judge tags them, the success flags check the tags.

1. :func:`labeler.trca.mine.mine` abstracts the environment's responses into transition templates
   (``take {object}`` → ``You take the {object}.``) and collects objects and places from the actions and
   candidates.
2. The judge tags every template, and a fixed list of failure-response candidates, with one of
   ``found`` (Evidence), ``done`` (Execution), ``failed`` (Invalidity), ``nothing`` (no item), by the
   log-probabilities of the four tag words after a few-shot prompt (examples from unrelated tasks). Scores are
   calibrated by subtracting each tag's mean over all candidates of the run (a small model favours some tag
   words whatever the input; contextual calibration, Zhao et al. 2021). This runs under several orders of the
   examples and the majority tag wins (the small judge is sensitive to the order).
3. Each candidate is grounded on the success flags (:mod:`labeler.trca.grounding`): how much more often it
   holds in successful than in failed trajectories, whether its hits in successes lasted (loop-erased path),
   whether it changes the world at all, and how many verbs its response follows. The judge's tag and these
   numbers decide together (:func:`labeler.trca.grounding.verdict`); a response that changes nothing after
   several verbs (a world's generic refusal) becomes Invalidity from the data alone. Every item's note records
   the tag and the numbers; the rejected candidates are listed in the file's header.
4. For placement verbs (``put {object} in {place}``) in a task whose instruction is about where things go,
   each object's place is where successful trajectories left it (their last action on it, on the loop-erased
   path); objects no success placed get the judge's choice among the places seen with them (calibrated over
   objects). This becomes one Execution item with an object → place table, and an Invalidity item for
   placing a grounded object anywhere else.
5. Items need no judge: an Evidence item "a carryable object not visible before appears" over the mined
   objects, an Invalidity item "repeated a recent action that changed nothing", and those found in the data
   alone (:mod:`labeler.trca.found`: the world's generic refusals, actions on what the instruction or an
   earlier response names).

No ground truth (``info``) is read. The result is a TOML file to review and edit (format:
:mod:`labeler.trca.rubric`); :func:`extend_rubric` adds a fresh build's places to a reviewed file.
"""

from __future__ import annotations

import copy
import datetime as _dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from labeler.trca import grounding
from labeler.trca.found import generic_refusals, layout_notes, named_arguments, slug
from labeler.trca.grounding import TAG_CATEGORY, ground, kept_bindings, verdict
from labeler.trca.mine import Mined, mine
from labeler.trca.rubric import Item, Rubric
from labeler.trca.tagging import (
    BUILD_TEMPLATE,
    BUILD_VERSION,
    INVALIDITY_CANDIDATES,
    PLACEMENT_VERBS,
    PLACEMENT_WORDS,
    SHOT_ORDERS,
    TAG_HEAD,
    TAG_PROMPT,
    TAG_SHOTS,
    TAGS,
    Scorer,
    TagVotes,
    judge_places,
    tag_prompt,
    tag_votes,
)
from models.trajectory import Trajectory

__all__ = ["TAG_HEAD", "TAG_PROMPT", "TAG_SHOTS", "TAGS", "BuildConfig", "build_rubric", "tag_prompt"]


@dataclass
class BuildConfig:
    task_type: str
    min_count: int = 2
    """A transition template must be seen this often to become an item."""
    max_templates: int = 40
    """At most this many (most frequent) templates are judged."""
    prompt_orders: int = 4
    """Tag each candidate under this many orders of the examples; the majority wins (ties: higher mean)."""
    tag_templates: bool = True
    """False: no tagging (only placement tables and judge-free items), e.g. to extend a reviewed file."""
    examples_per_template: int = 2
    """Example transitions shown per template (scores averaged per order)."""
    placement: str = "auto"
    """'auto': object → place tables for placement verbs when the instruction is about where things go;
    'none': never; or a comma-separated list of verbs."""
    grounded: bool = True
    """Ground every candidate on the success flags (see :mod:`labeler.trca.grounding`); False: the judge's
    tags and places alone."""
    progress: bool | None = False


@dataclass
class BuildReport:
    rubric: Rubric
    mined: Mined
    rejected: list[str] = field(default_factory=list)  # lines for the header: what the judge did not keep
    queries: int = 0
    notes: list[str] = field(default_factory=list)  # lines for the header: how the log's layout was read


def placement_verbs(cfg: BuildConfig, mined: Mined) -> list[str]:
    if cfg.placement == "none":
        return []
    if cfg.placement != "auto":
        return [v.strip() for v in cfg.placement.split(",") if v.strip()]
    if not PLACEMENT_WORDS.search(mined.instruction):
        return []
    return [v for v in PLACEMENT_VERBS if v in mined.places_for]


def build_rubric(
    trajectories: Sequence[Trajectory],
    judge: Scorer,
    cfg: BuildConfig,
    dataset_name: str = "",
    log: Callable[[str], None] | None = None,
) -> BuildReport:
    """The rubric for ``cfg.task_type`` built from its trajectories (see the module docstring), with what
    the judge did not keep and how the states were read."""
    log = log or (lambda _m: None)
    trajs = _of_task_type(trajectories, cfg.task_type)
    mined = mine(trajs, min_count=cfg.min_count)
    templates = mined.templates[: cfg.max_templates]
    log(
        f"mined {len(mined.templates)} transition templates from {mined.steps} steps; "
        + (f"judging {len(templates)}" if cfg.tag_templates else "not tagging them (places only)")
    )
    report = BuildReport(rubric=Rubric(cfg.task_type, 1, []), mined=mined, notes=_state_notes(trajs))
    # --- 2. tag templates and invalidity candidates: one calibrated batch per example order, then a vote
    if not 1 <= cfg.prompt_orders <= len(SHOT_ORDERS):
        raise ValueError(f"prompt_orders must be in 1..{len(SHOT_ORDERS)}, got {cfg.prompt_orders}")
    orders = cfg.prompt_orders if cfg.tag_templates else 0
    tags = tag_votes(judge, mined, templates, orders, cfg.examples_per_template, cfg.progress)
    report.queries += tags.queries
    episodes = grounding.prepare(trajs) if cfg.grounded else []
    items = _Items(cfg, mined, templates, tags, episodes, report)
    items.placement_tables(judge, log)  # 3.
    items.tagged_templates()
    items.failure_candidates()
    items.judge_free()  # 4.
    report.rubric = _rubric(cfg, items.items, trajs, mined, judge, dataset_name, report.queries)
    return report


def _of_task_type(trajectories: Sequence[Trajectory], task_type: str) -> list[Trajectory]:
    trajs = [t for t in trajectories if t.task_type == task_type]
    if not trajs:
        types = sorted({t.task_type for t in trajectories})
        raise ValueError(f"no trajectory of task type {task_type!r} (the dataset has: {', '.join(types)})")
    return trajs


def _state_notes(trajs: list[Trajectory]) -> list[str]:
    """The header's lines on how the log's states were read: its layout, and the partial states."""
    notes = layout_notes(trajs[0].view.layout)
    partial = sum(1 for t in trajs if t.view.partial)
    if partial:
        notes.append(
            f"{partial} of {len(trajs)} trajectories show only part of the scene in each state: their checks "
            "read the episode so far (evidence is new when the episode had not shown it; an action changed "
            "nothing when it drew an empty response or one it had drawn before)"
        )
    return notes


@dataclass
class _Items:
    """The rubric's items as the build adds them, in the file's order: placement tables, tagged templates,
    the world's generic refusals, failure candidates, actions on named arguments, judge-free items."""

    cfg: BuildConfig
    mined: Mined
    templates: list
    tags: TagVotes
    episodes: list
    report: BuildReport
    items: list[Item] = field(default_factory=list)
    placed_verbs: list[str] = field(default_factory=list)
    used_ids: set[str] = field(default_factory=set)

    def judged(self, tag: str, why: str, item: Item) -> tuple[str | None, str]:
        """The category ``item`` gets (None: no item) and the note's reason: the judge's tag, grounded."""
        if not self.cfg.grounded:
            return TAG_CATEGORY.get(tag), f"judge tag {tag} ({why})"
        g = ground(item, self.episodes)
        v = verdict(tag, g)
        return v.category, f"{v.reason}; judge tag {tag} ({why}); {g.summary()}"

    def new_id(self, base: str) -> str:
        iid, n = base, 2
        while iid in self.used_ids:
            iid, n = f"{base}-{n}", n + 1
        self.used_ids.add(iid)
        return iid

    def placement_tables(self, judge: Scorer, log: Callable[[str], None]) -> None:
        """For each placement verb, an object -> place table (and, grounded, placing elsewhere)."""
        self.placed_verbs = placement_verbs(self.cfg, self.mined)
        for verb in self.placed_verbs:
            table = self.mined.places_for.get(verb, {})
            if table:
                self._placement_table(judge, verb, table, log)
        self.used_ids = {it.id for it in self.items}

    def _placement_table(
        self, judge: Scorer, verb: str, table: dict[str, set[str]], log: Callable[[str], None]
    ) -> None:
        cfg, objects = self.cfg, sorted(table)
        judge_pairs, n = judge_places(judge, table, cfg.progress)
        self.report.queries += n
        preps = sorted(
            {tp_prep for tp in self.templates if tp.verb == verb for tp_prep in tp.preps} or {"in", "on"}
        )
        action = rf"^{re.escape(verb)} (?P<object>.+?) (?:{'|'.join(preps)}) (?P<place>.+)$"
        feedback = r"^You (put|place|insert|hang|store)\b" if verb in PLACEMENT_VERBS else None
        grounded: dict[str, list[str]] = {}
        if cfg.grounded:
            probe = Item(id="probe", category="execution", text="", action=action, feedback=feedback)
            grounded = {o: sorted(ps) for o, ps in kept_bindings(ground(probe, self.episodes)).items()}
        pairs = {o: grounded.get(o) or judge_pairs[o] for o in objects}
        pairs.update(grounded)
        by_judge = sorted(o for o in pairs if o not in grounded)
        note = (
            f"{len(grounded)} objects placed where successful trajectories left them (their last action on "
            f"it, on the loop-erased path); {len(by_judge)} by the judge (among the places seen with each "
            f"object, calibrated over {len(objects)} objects)"
            if cfg.grounded
            else f"judge chose among the places seen with each object, calibrated over {len(objects)} objects"
        )
        judged = f"; judge-placed: {', '.join(by_judge)}" if cfg.grounded and by_judge else ""

        def placing(suffix: str, category: str, text: str, pairs: dict, note: str, **more) -> Item:
            """An item on this verb's placements (its action and response patterns)."""
            iid = f"{slug(verb)}-{suffix}"
            return Item(iid, category, text, action=action, feedback=feedback, pairs=pairs, note=note, **more)

        text = f"An object was {verb} where it usually belongs"
        self.items.append(placing("where-it-belongs", "execution", text, pairs, note + judged))
        if grounded:
            text = f"An object was {verb} somewhere successful trajectories never left it"
            note = f"the {len(grounded)} objects that successful trajectories placed, any other place"
            self.items.append(placing("elsewhere", "invalidity", text, grounded, note, pairs_mismatch=True))
        log(f"placement table for '{verb}': {len(pairs)} objects ({len(grounded)} from successes)")

    def tagged_templates(self) -> None:
        """An item for every template the tags and the grounding keep (the rest go to the rejected list)."""
        for i, tp in enumerate(self.templates if self.cfg.tag_templates else []):
            tag, why = self.tags.tag_of("template", str(i))
            example = f"e.g. '{tp.examples[0][0]}' -> '{tp.examples[0][1][:80]}'"
            head = f"'{tp.verb} ...' -> \"{tp.display}\" ({tp.count}x)"
            if tp.verb in self.placed_verbs and tag != "failed":
                self.report.rejected.append(f"{head}: {tag}, replaced by the placement table ({why})")
                continue
            item = Item(
                id="candidate",
                category="execution",
                text=f"'{tp.verb} ...' gets the response \"{tp.display}\"",
                action=tp.action_regex(),
                feedback=tp.response_regex(),
            )
            category, reason = self.judged(tag, why, item)
            if category is None:
                self.report.rejected.append(f"{head}: {reason}")
                continue
            base = f"{slug(tp.verb)}-{slug(tp.display.replace('{object}', '').replace('{place}', ''))}"
            item.id, item.category = self.new_id(base), category
            item.note = f"{reason}; {tp.count} transitions; {example}"
            self.items.append(item)

    def failure_candidates(self) -> None:
        """The world's generic refusals found in the data, the fixed failure responses the judge tags as
        failures, and actions on what the instruction or an earlier response names."""
        cfg, rejected = self.cfg, self.report.rejected
        found_here = cfg.grounded and cfg.tag_templates
        if found_here:
            self.items += generic_refusals(self.mined, self.episodes, rejected, self.new_id)
        for cid, rx, _action, response in INVALIDITY_CANDIDATES if cfg.tag_templates else ():
            tag, why = self.tags.tag_of("candidate", cid)
            item = Item(
                id=f"failed-{cid}",
                category="invalidity",
                text=f"The environment answers that the action failed (like {response!r})",
                feedback=rx,
            )
            if cfg.grounded and ground(item, self.episodes).hits == 0:
                rejected.append(f"failure candidate '{cid}' ({response!r}): never seen in the data")
                continue
            category, reason = self.judged(tag, why, item)
            if category != "invalidity":
                rejected.append(f"failure candidate '{cid}' ({response!r}): {reason}")
                continue
            item.note = f"fixed candidate: {reason}"
            self.items.append(item)
        if found_here:
            self.items += named_arguments(self.templates, self.episodes, rejected, self.new_id)

    def judge_free(self) -> None:
        """A carryable object appears (over the mined objects); a repeat that changes nothing."""
        carryable = sorted({o for v in self.mined.places_for.values() for o in v})
        if carryable:
            self.items.append(
                Item(
                    id="object-revealed",
                    category="evidence",
                    text="A carryable object that was not visible before appears",
                    appears=carryable,
                    note=f"{len(carryable)} objects mined from the actions' arguments",
                )
            )
        self.items.append(
            Item(
                id="no-effect-repeat",
                category="invalidity",
                text="The action repeats a recent action and changes nothing",
                repeat=True,
                unchanged=True,
                note="fixed item (no judge)",
            )
        )


def _rubric(
    cfg: BuildConfig,
    items: list[Item],
    trajs: list[Trajectory],
    mined: Mined,
    judge: Scorer,
    dataset_name: str,
    queries: int,
) -> Rubric:
    return Rubric(
        task_type=cfg.task_type,
        version=1,
        items=items,
        description=f"TRCA rubric for task type {cfg.task_type!r}, built from {len(trajs)} trajectories",
        build={
            "builder": "edgejudge rubrics build",
            "prompt_template": BUILD_TEMPLATE,
            "prompt_version": BUILD_VERSION,
            "judge_sha256": getattr(judge, "model_sha256", ""),
            "dataset": dataset_name,
            "trajectories": len(trajs),
            "steps": mined.steps,
            "instruction": mined.instruction,
            "judge_queries": queries,
            "grounded": cfg.grounded,
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    )


def build_header(report: BuildReport) -> str:
    lines = [
        f"TRCA rubric for task type '{report.rubric.task_type}', generated by 'edgejudge rubrics build'.",
        "Review it: every item's check is a plain regex or term list; edit freely, then bump 'version'.",
        "Validate with: edgejudge rubrics validate FILE",
    ]
    if report.notes:
        lines += ["", "How the log's states were read (its state layout):"]
        lines += [f"  - {n}" for n in report.notes]
    if report.rejected:
        lines += ["", "Candidates the judge did not keep (tag scores are calibrated log-probs):"]
        lines += [f"  - {r}" for r in report.rejected]
    return "\n".join(lines)


def leading_comments(text: str) -> str:
    """The comment block at the top of a rubric file (its review history), without the '# ' markers."""
    out = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        out.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(out)


def extend_rubric(base: Rubric, built: Rubric) -> tuple[Rubric, list[str]]:
    """A reviewed rubric with the placement pairs of objects it does not know taken from a fresh build.

    Everything the base file says (items, categories, reviewed pairs) is kept; only objects missing from its
    placement tables are added, with the judge's choice, and new mined object names join its ``appears``
    lists. Returns the new rubric and the objects given a place.
    """
    if base.task_type != built.task_type:
        raise ValueError(f"--base is for task type {base.task_type!r}, the build for {built.task_type!r}")
    new = copy.deepcopy(base)
    fresh = {it.id: it for it in built.items}
    added: list[str] = []
    for it in new.items:
        other = fresh.get(it.id)
        if other is None:
            continue
        if it.pairs is not None and other.pairs:
            for obj, places in other.pairs.items():
                if obj not in it.pairs:
                    it.pairs[obj] = list(places)
                    added.append(obj)
        if it.appears is not None and other.appears:  # mined object names: no judgment involved
            it.appears = [*it.appears, *sorted(set(other.appears) - set(it.appears))]
    if added:
        new.version = base.version + 1
        new.build = {
            **base.build,
            "extended_from_dataset": built.build.get("dataset", ""),
            "extended_judge_sha256": built.build.get("judge_sha256", ""),
            "extended_objects": len(added),
            "extended_date": built.build.get("date", ""),
        }
    return new, added
