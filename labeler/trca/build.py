"""Build a rubric offline with the judge: mine candidate checks from a dataset, the judge chooses among them.

1. :func:`labeler.trca.mine.mine` abstracts the environment's responses into transition templates
   (``take {object}`` → ``You take the {object}.``) and collects objects and places from the actions and
   candidates.
2. The judge tags every template, and a fixed list of failure-response candidates, with one of
   ``found`` (Evidence), ``done`` (Execution), ``failed`` (Invalidity), ``nothing`` (no item), by the
   log-probabilities of the four tag words after a few-shot prompt (examples from unrelated tasks). Scores are
   calibrated by subtracting each tag's mean over all candidates of the run (a small model favours some tag
   words whatever the input; contextual calibration, Zhao et al. 2021). This runs under several orders of the
   examples and the majority tag wins (the small judge is sensitive to the order).
3. For placement verbs (``put {object} in {place}``) in a task whose instruction is about where things go, the
   judge chooses each object's usual place among the places seen with it (calibrated the same way over
   objects); this becomes one Execution item with an object → place table, replacing "put anything anywhere".
4. Two items need no judge: an Evidence item "a carryable object not visible before appears" over the mined
   objects, and an Invalidity item "repeated a recent action that changed nothing".

No ground truth (``info``) is read. The result is a TOML file to review and edit (format:
:mod:`labeler.trca.rubric`); :func:`extend_rubric` adds a fresh build's places to a reviewed file.
"""

from __future__ import annotations

import copy
import datetime as _dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from labeler.dataset import Trajectory
from labeler.trca.mine import Mined, Template, mine
from labeler.trca.rubric import Item, Rubric

BUILD_TEMPLATE = "trca.build"
BUILD_VERSION = 2
TAGS = ("found", "done", "failed", "nothing")
TAG_CATEGORY = {"found": "evidence", "done": "execution", "failed": "invalidity"}
PLACEMENT_VERBS = ("put", "place", "insert", "hang", "store")
_PLACEMENT_WORDS = re.compile(
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
    progress: bool | None = False


@dataclass
class BuildReport:
    rubric: Rubric
    mined: Mined
    rejected: list[str] = field(default_factory=list)  # lines for the header: what the judge did not keep
    queries: int = 0


def _calibrated(rows: list[list[float]]) -> list[list[float]]:
    if not rows:
        return rows
    k = len(rows[0])
    means = [sum(r[j] for r in rows) / len(rows) for j in range(k)]
    return [[r[j] - means[j] for j in range(k)] for r in rows]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "item"


def placement_verbs(cfg: BuildConfig, mined: Mined) -> list[str]:
    if cfg.placement == "none":
        return []
    if cfg.placement != "auto":
        return [v.strip() for v in cfg.placement.split(",") if v.strip()]
    if not _PLACEMENT_WORDS.search(mined.instruction):
        return []
    return [v for v in PLACEMENT_VERBS if v in mined.places_for]


def _tag_queries(
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


def build_rubric(
    trajectories: Sequence[Trajectory],
    judge: Scorer,
    cfg: BuildConfig,
    dataset_name: str = "",
    log: Callable[[str], None] | None = None,
) -> BuildReport:
    log = log or (lambda _m: None)
    trajs = [t for t in trajectories if t.task_type == cfg.task_type]
    if not trajs:
        types = sorted({t.task_type for t in trajectories})
        raise ValueError(
            f"no trajectory of task type {cfg.task_type!r} (the dataset has: {', '.join(types)})"
        )
    mined = mine(trajs, min_count=cfg.min_count)
    templates = mined.templates[: cfg.max_templates]
    log(
        f"mined {len(mined.templates)} transition templates from {mined.steps} steps; "
        + (f"judging {len(templates)}" if cfg.tag_templates else "not tagging them (places only)")
    )
    report = BuildReport(rubric=Rubric(cfg.task_type, 1, []), mined=mined)

    # --- 2. tag templates and invalidity candidates: one calibrated batch per example order, then a vote
    if not 1 <= cfg.prompt_orders <= len(SHOT_ORDERS):
        raise ValueError(f"prompt_orders must be in 1..{len(SHOT_ORDERS)}, got {cfg.prompt_orders}")
    votes: dict[tuple[str, str], list[str]] = {}
    means: dict[tuple[str, str], list[list[float]]] = {}
    for order in range(cfg.prompt_orders if cfg.tag_templates else 0):
        queries = _tag_queries(mined, templates, order, cfg.examples_per_template)
        scores = judge.score_many(
            [(q[2], [f" {t}" for t in TAGS]) for q in queries],
            template=BUILD_TEMPLATE,
            version=BUILD_VERSION,
            progress=cfg.progress,
        )
        report.queries += len(queries)
        per_key: dict[tuple[str, str], list[list[float]]] = {}
        for (kind, key, _p), c in zip(queries, _calibrated([list(x.logprobs) for x in scores]), strict=True):
            per_key.setdefault((kind, key), []).append(c)
        for k, rows in per_key.items():
            mean = [sum(r[j] for r in rows) / len(rows) for j in range(len(TAGS))]
            votes.setdefault(k, []).append(TAGS[max(range(len(TAGS)), key=lambda j: mean[j])])
            means.setdefault(k, []).append(mean)

    def tag_of(kind: str, key: str) -> tuple[str, str]:
        """The majority tag over prompt orders (a tie goes to the higher mean calibrated score) and a note."""
        vs = votes[(kind, key)]
        ms = means[(kind, key)]
        avg = [sum(m[j] for m in ms) / len(ms) for j in range(len(TAGS))]
        counts = {t: vs.count(t) for t in TAGS}
        tag = max(TAGS, key=lambda t: (counts[t], avg[TAGS.index(t)]))
        detail = ", ".join(f"{t}={v:+.2f}" for t, v in zip(TAGS, avg, strict=True))
        return tag, f"votes {'/'.join(vs)}; mean calibrated log-probs {detail}"

    # --- 3. placement tables
    items: list[Item] = []
    placed_verbs = placement_verbs(cfg, mined)
    for verb in placed_verbs:
        table = mined.places_for.get(verb, {})
        objects = sorted(table)
        if not objects:
            continue
        qs = [(PLACE_PROMPT.format(object=o), [f" {p}" for p in sorted(table[o])]) for o in objects]
        res = judge.score_many(qs, template=BUILD_TEMPLATE, version=BUILD_VERSION, progress=cfg.progress)
        report.queries += len(qs)
        # calibrate: a place's score minus its mean over the objects it was offered for
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
        preps = sorted(
            {tp_prep for tp in templates if tp.verb == verb for tp_prep in tp.preps} or {"in", "on"}
        )
        items.append(
            Item(
                id=f"{_slug(verb)}-where-it-belongs",
                category="execution",
                text=f"An object was {verb} where it usually belongs (the judge chose each object's place)",
                action=rf"^{re.escape(verb)} (?P<object>.+?) (?:{'|'.join(preps)}) (?P<place>.+)$",
                feedback=r"^You (put|place|insert|hang|store)\b" if verb in PLACEMENT_VERBS else None,
                pairs=pairs,
                note=f"judge chose among the places seen with each object, calibrated over "
                f"{len(objects)} objects",
            )
        )
        log(f"placement table for '{verb}': {len(pairs)} objects")

    # --- templates -> items
    used_ids: set[str] = {it.id for it in items}
    for i, tp in enumerate(templates if cfg.tag_templates else []):
        tag, why = tag_of("template", str(i))
        example = f"e.g. '{tp.examples[0][0]}' -> '{tp.examples[0][1][:80]}'"
        if tag == "nothing":
            report.rejected.append(f"'{tp.verb} ...' -> \"{tp.display}\" ({tp.count}x): nothing ({why})")
            continue
        if tp.verb in placed_verbs and tag != "failed":
            report.rejected.append(
                f"'{tp.verb} ...' -> \"{tp.display}\" ({tp.count}x): {tag}, replaced by the "
                f"placement table ({why})"
            )
            continue
        base = f"{_slug(tp.verb)}-{_slug(tp.display.replace('{object}', '').replace('{place}', ''))}"
        iid, n = base, 2
        while iid in used_ids:
            iid, n = f"{base}-{n}", n + 1
        used_ids.add(iid)
        items.append(
            Item(
                id=iid,
                category=TAG_CATEGORY[tag],
                text=f"'{tp.verb} ...' gets the response \"{tp.display}\"",
                action=tp.action_regex(),
                feedback=tp.response_regex(),
                note=f"judge tag {tag} ({why}); {tp.count} transitions; {example}",
            )
        )
    for cid, rx, _action, response in INVALIDITY_CANDIDATES if cfg.tag_templates else ():
        tag, why = tag_of("candidate", cid)
        if tag != "failed":
            report.rejected.append(f"failure candidate '{cid}' ({response!r}): {tag} ({why})")
            continue
        items.append(
            Item(
                id=f"failed-{cid}",
                category="invalidity",
                text=f"The environment answers that the action failed (like {response!r})",
                feedback=rx,
                note=f"fixed candidate accepted by the judge ({why})",
            )
        )

    # --- 4. items without the judge
    carryable = sorted({o for v in mined.places_for.values() for o in v})
    if carryable:
        items.append(
            Item(
                id="object-revealed",
                category="evidence",
                text="A carryable object that was not visible before appears",
                appears=carryable,
                note=f"{len(carryable)} objects mined from the actions' arguments",
            )
        )
    items.append(
        Item(
            id="no-effect-repeat",
            category="invalidity",
            text="The action repeats a recent action and changes nothing",
            repeat=True,
            unchanged=True,
            note="fixed item (no judge)",
        )
    )

    judge_sha = getattr(judge, "model_sha256", "")
    report.rubric = Rubric(
        task_type=cfg.task_type,
        version=1,
        items=items,
        description=f"TRCA rubric for task type {cfg.task_type!r}, built from {len(trajs)} trajectories",
        build={
            "builder": "edgejudge rubrics build",
            "prompt_template": BUILD_TEMPLATE,
            "prompt_version": BUILD_VERSION,
            "judge_sha256": judge_sha,
            "dataset": dataset_name,
            "trajectories": len(trajs),
            "steps": mined.steps,
            "instruction": mined.instruction,
            "judge_queries": report.queries,
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    )
    return report


def build_header(report: BuildReport) -> str:
    lines = [
        f"TRCA rubric for task type '{report.rubric.task_type}', generated by 'edgejudge rubrics build'.",
        "Review it: every item's check is a plain regex or term list; edit freely, then bump 'version'.",
        "Validate with: edgejudge rubrics validate FILE",
    ]
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
