"""In-context examples for COREN's prompts built from the user's own logs, per task type, without ``info``.

The shipped preamble (``labeler/prompts/coren/templates.v2.toml``) shows the judge fourteen hand-written
household examples; on another world they show the wrong task. :func:`data_examples` picks, per task type:

* **"Yes"** — transitions on the loop-erased paths of successful trajectories that change the world state:
  steps whose effect lasted in an episode that succeeded;
* **"No"** — transitions that change nothing: repeats of a recent action, the world's refusals ("nothing
  happens", "no known action"), looking around.

Both read one rule from the trajectory's view (:class:`models.trajectory_view.TrajectoryView`): its
loop-erased ``path`` and whether each step ``changed`` the world, each partial-state aware, so a response-only
log (whose states are the last response) is read as the episode so far on both sides: a step changed the
world when it drew a response the same action had not drawn before.

Verbs are taken in turn so the examples are varied, and the choice is seeded. :func:`data_preamble` writes
them in the shipped layout (``Task:``, ``Action:``, ``Result:``, then the rating question and the answer),
after the shipped preamble's first line. The result is the same transition text the queries show
(:meth:`models.trajectory.Trajectory.responses`). The examples go into the provenance (``examples``), and a
hand-written file stays the default.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from labeler.coren.texts import NOTHING_NEW
from models.actions import verb_of
from models.trajectory import Trajectory


@dataclass(frozen=True)
class Example:
    task_type: str
    instruction: str
    action: str
    result: str
    progress: bool


def _by_verb(rows: list[tuple[str, str, str]], n: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """Up to ``n`` rows (instruction, action, result), verbs in turn, distinct actions."""
    groups: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for r in rows:
        groups[verb_of(r[1])].append(r)
    for g in groups.values():
        rng.shuffle(g)
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    verbs = sorted(groups)
    while len(out) < n and any(groups[v] for v in verbs):
        for v in verbs:
            while groups[v]:
                r = groups[v].pop()
                if r[1] not in seen:
                    seen.add(r[1])
                    out.append(r)
                    break
            if len(out) >= n:
                break
    return out


def data_examples(trajectories: Sequence[Trajectory], per_type: int = 8, seed: int = 0) -> list[Example]:
    """Half "Yes", half "No" examples per task type (fewer when the data have fewer), interleaved."""
    rng = random.Random(seed)
    yes: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    no: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for t in trajectories:
        view = t.view
        kept = set(view.path) if t.success else set()
        for i, (action, response, changed) in enumerate(
            zip(view.actions, view.responses, view.changed, strict=True)
        ):
            row = (t.instruction, action, response or NOTHING_NEW)
            if not changed:
                no[t.task_type].append(row)
            elif i in kept:
                yes[t.task_type].append(row)
    out: list[Example] = []
    for tt in sorted(set(yes) | set(no)):
        ys = _by_verb(yes[tt], per_type // 2, rng)
        ns = _by_verb(no[tt], per_type - per_type // 2, rng)
        for k in range(max(len(ys), len(ns))):
            for rows, ok in ((ys, True), (ns, False)):
                if k < len(rows):
                    out.append(Example(tt, *rows[k], progress=ok))
    return out


def data_preamble(shipped: str, examples: Sequence[Example], rating: str = "Progress:") -> str:
    """A preamble in the shipped layout: its first line (what the judge is asked), then ``examples``."""
    head = shipped.split("\n", 1)[0].strip() or "Say whether each action made progress on its task."
    blocks = [
        f"Task: {e.instruction}\nAction: {e.action}\nResult: {e.result}\n"
        f"{rating} {'Yes' if e.progress else 'No'}"
        for e in examples
    ]
    return head + "\n\n" + "\n\n".join(blocks) + "\n\n"


def provenance(examples: Sequence[Example], preamble: str) -> dict:
    return {
        "source": "data",
        "sha256": hashlib.sha256(preamble.encode("utf-8")).hexdigest(),
        "count": len(examples),
        "examples": [asdict(e) for e in examples],
    }
