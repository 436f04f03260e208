"""Structural consistency: the MDP-specific question set D_QA, retrieval, and which prompts answer correctly.

A QA entry is (instruction, observation o', reference answer a(o')); its question q(o') is the template's
"Which objects in this observation matter for the task?" asked about o'. For each step, the entry whose o' is
nearest to the step's observation (cosine similarity of all-MiniLM-L6-v2 embeddings) is retrieved; each prompt
answers q(o') once (the answer depends on the prompt and the question, not on the step, so it is shared by
every step that retrieves the same entry); a prompt passes when its answer's embedding similarity to a(o') is
>= 0.5.

**Building D_QA without ground truth** (only the dataset's success flags, the sparse reward): in each
successful trajectory, the *key objects* are the objects its actions act on at least twice (e.g. take X, then
put X in Y) or that its final action acts on; for each observation o' of that trajectory that mentions key
objects, the reference answer is those objects in order of appearance. Entries are deduplicated per
(trajectory, answer) and capped at ``max_size`` by farthest-point sampling on the observation embeddings
(diverse situations). Objects of an action: its phrases (:attr:`models.actions.Action.phrases`: the words
after its verb cut at every preposition, a leading article dropped). A user QA file (``--qa FILE``, JSON
Lines with ``instruction``, ``observation``, ``answer``) replaces the built set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.actions import parse_action
from models.trajectory import Trajectory

PASS_SIMILARITY = 0.5


class QAError(ValueError):
    """A QA file problem: ``file:line: field: problem``."""


@dataclass(frozen=True)
class QAEntry:
    instruction: str
    observation: str
    answer: str

    def to_dict(self) -> dict[str, str]:
        return {"instruction": self.instruction, "observation": self.observation, "answer": self.answer}


def key_objects(traj: Trajectory) -> list[str]:
    counts: dict[str, int] = {}
    for step in traj.steps:
        for obj in set(parse_action(step.action).phrases):
            counts[obj] = counts.get(obj, 0) + 1
    final = set(parse_action(traj.steps[-1].action).phrases)
    return sorted(o for o, c in counts.items() if c >= 2 or o in final)


def candidate_entries(trajectories: Sequence[Trajectory]) -> list[QAEntry]:
    """All QA entries the build rule yields, before capping (see the module docstring)."""
    out: list[QAEntry] = []
    for traj in trajectories:
        if not traj.success:
            continue
        keys = key_objects(traj)
        seen: set[str] = set()
        for step in traj.steps:
            low = step.observation.lower()
            present = sorted((low.find(o), o) for o in keys if o in low)
            if not present:
                continue
            answer = ", ".join(o for _, o in present)
            if answer in seen:
                continue
            seen.add(answer)
            out.append(QAEntry(traj.instruction, step.observation, answer))
    return out


def farthest_point(emb: np.ndarray, k: int) -> list[int]:
    """Indices of ``k`` mutually distant rows (cosine), starting from row 0; deterministic."""
    n = emb.shape[0]
    if n <= k:
        return list(range(n))
    chosen = [0]
    sim = emb @ emb[0]
    best = sim.copy()
    for _ in range(k - 1):
        i = int(np.argmin(best))
        chosen.append(i)
        best = np.maximum(best, emb @ emb[i])
    return sorted(chosen)


def load_qa(path: str | Path) -> list[QAEntry]:
    """Read a QA file (JSON Lines: instruction, observation, answer); errors as ``file:line: field:
    problem``."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise QAError(f"{p}: file: does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise QAError(f"{p}: file: cannot read ({e})") from None
    out = []
    for lineno, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise QAError(f"{p}:{lineno}: line: invalid JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(raw, dict):
            raise QAError(f"{p}:{lineno}: line: expected a JSON object")
        for key in ("instruction", "observation", "answer"):
            if key not in raw:
                raise QAError(f"{p}:{lineno}: {key}: missing")
            if not isinstance(raw[key], str) or not raw[key].strip():
                raise QAError(f"{p}:{lineno}: {key}: expected a non-empty string")
        extra = sorted(set(raw) - {"instruction", "observation", "answer"})
        if extra:
            raise QAError(f"{p}:{lineno}: {extra[0]}: unknown field")
        out.append(QAEntry(raw["instruction"], raw["observation"], raw["answer"]))
    if not out:
        raise QAError(f"{p}: file: no QA entries")
    return out


def qa_hash(entries: Sequence[QAEntry]) -> str:
    blob = json.dumps(
        [e.to_dict() for e in entries], ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def retrieve(step_emb: np.ndarray, qa_emb: np.ndarray) -> np.ndarray:
    """Index of the nearest QA observation for each step (rows are L2-normalised embeddings)."""
    return np.argmax(step_emb @ qa_emb.T, axis=1)


def clean_answer(text: str) -> str:
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def answer_passes(similarity: float) -> bool:
    return similarity >= PASS_SIMILARITY
