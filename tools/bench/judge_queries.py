"""The judge benchmark's queries (:mod:`tools.bench.bench_judge`): real TextWorldExpress steps (TWC, dev
split, collected with ``policy.worlds.collect``, seeded) in the shapes the labelers send: ``coren`` and
``coren1`` (COREN's prompt files, its two layouts), ``trca`` (a transition and a rubric statement) and
``cand`` (COREN's first design: every candidate rated -2..2 after the full observation)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

TASK = "Pick up objects, then place them in their usual locations."
CAND_RATE = (
    "Rate each action of a household robot from -2 (wrong for the task) to 2 (completes part of the task)."
)
# shape 'cand' (COREN's first design): every candidate rated -2..2 with the full observation;
# (observation, action, result, rating) examples of its two prompt variants
_CAND_EXAMPLES = (
    (
        (
            "Room: You are in the bathroom. You see a sink, a bath mat and a towel rack, that has "
            "nothing on it. There is also a wet towel.\nInventory: empty",
            "take wet towel",
            "Feedback: You take the wet towel.",
            2,
        ),
        (
            "Room: You are in the bathroom. You see a sink, a bath mat and a towel rack.\n"
            "Inventory: a wet towel",
            "inventory",
            "Inventory: a wet towel",
            0,
        ),
        (
            "Room: You are in the bathroom. You see a sink, a bath mat and a towel rack.\n"
            "Inventory: a wet towel",
            "put wet towel in sink",
            "Feedback: You put the wet towel in the sink.",
            -2,
        ),
    ),
    (
        (
            "Room: You are in the living room. You see a sofa, a bookcase that is empty, and a coffee "
            "table. There is also a novel.\nInventory: empty",
            "take novel",
            "Feedback: You take the novel.",
            2,
        ),
        (
            "Room: You are in the living room. You see a sofa, a bookcase that is empty, and a coffee "
            "table.\nInventory: a novel",
            "put novel in bookcase",
            "Feedback: You put the novel in the bookcase.",
            2,
        ),
        (
            "Room: You are in the living room. You see a sofa and a coffee table.\nInventory: empty",
            "look around",
            "Room: You are in the living room. You see a sofa and a coffee table.",
            0,
        ),
    ),
)
CAND_HEADERS = tuple(
    CAND_RATE
    + "\n\n"
    + "".join(
        f"Task: {TASK}\nObservation: {o}\nAction: {a}\nResult: {r}\nRating: {v}\n\n" for o, a, r, v in ex
    )
    for ex in _CAND_EXAMPLES
)
CAND_CHOICES = [" -2", " -1", " 0", " 1", " 2"]
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
OBS_WORDS = 36  # about COREN's default 48-token observation head
TRCA_HEADER = "You check one step of an agent in a text game."
TRCA_STATEMENTS = (
    "The agent picked up an object that is not in its usual location.",
    "The agent put an object in its usual location.",
    "The step revealed new information about the room or its objects.",
    "The action failed, was not allowed, or changed nothing.",
)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _head(text: str, words: int) -> str:
    """The first ``words`` words of ``text`` with its line breaks (COREN's observation head, by words)."""
    parts = re.split(r"(\s+)", text.strip())
    kept = parts[: 2 * words - 1]
    return "".join(kept) + (" ..." if len(parts) > len(kept) else "")


def _coren_queries(
    pattern: str, folder: Path, n_prompts: int, ins: str, obs: str, s: Any, result: str
) -> list:
    """One step's COREN queries built from the prompt files exactly as labeler.coren.pipeline composes them
    (header + preamble + body + tail)."""
    from labeler.coren.pipeline import StepText, ranked_candidates
    from labeler.coren.prompts import load_prompts, load_templates

    t = load_templates(folder)
    st = StepText(obs, s.action, result, list(s.candidates))
    ranked = ranked_candidates(st, len(t.letters))
    options = "\n".join(f"{t.letters[i]}. {st.candidates[c]}" for i, c in enumerate(ranked))
    out = []
    for v, p in enumerate(p for p in load_prompts(n_prompts, folder) if not p.cot):
        lead = p.header + t.preamble
        rate = t.step.format(instruction=ins, observation=obs, action=s.action, result=result)
        choose = t.choose.format(instruction=ins, observation=obs, options=options)
        base = {"pattern": pattern, "variant": v, "template": p.template_id, "version": p.version}
        out.append({**base, "choices": list(t.choices), "prefix": lead + rate + (p.rate_tail or t.rating)})
        out.append(
            {
                **base,
                "choices": [" " + t.letters[i] for i in range(len(ranked))],
                "prefix": lead + choose + p.choose_tail,
            }
        )
    return out


def build_queries(
    n_steps: int, seed: int, patterns: tuple[str, ...] = ("coren", "trca"), n_candidates: int = 5,
    coren_prompts: int = 4,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:  # fmt: skip
    """Real TWC dev steps -> judge queries ``{"pattern", "traj", "variant", "prefix", "choices"}``."""
    import random

    from labeler.coren.prompts import PROMPT_DIR

    rng = random.Random(seed)
    steps, episodes = _collect_steps(n_steps, seed)
    queries: list[dict[str, Any]] = []
    for traj, ins, s, response in steps:
        result = _one_line((s.info.get("feedback") or "(nothing new)").strip().splitlines()[0])
        obs = _head(s.observation, OBS_WORDS)
        coren_result = response or "(nothing new)"
        for pattern, folder in (("coren", PROMPT_DIR), ("coren1", PROMPT_DIR / "v1")):
            if pattern in patterns:
                for q in _coren_queries(pattern, folder, coren_prompts, ins, obs, s, coren_result):
                    queries.append({**q, "traj": traj})
        if "cand" in patterns:
            others = [c for c in s.candidates if c != s.action]
            picked = rng.sample(others, min(n_candidates, len(others)))
            queries += _cand_queries(traj, ins, s, result, picked)
        for st in TRCA_STATEMENTS if "trca" in patterns else ():
            queries.append(
                {
                    "pattern": "trca",
                    "traj": traj,
                    "variant": 0,
                    "choices": [" yes", " no"],
                    "prefix": f"{TRCA_HEADER}\nTask: {ins}\nAction: {s.action}\nGame response: {result}\n"
                    f"Statement: {st}\nIs the statement true for this step? Answer yes or no.\nAnswer:",
                }
            )
    return queries, {
        "steps": len(steps),
        "episodes": episodes,
        "env": "twx:twc",
        "split": "dev",
        "seed": seed,
        "coren_variants": len({q["variant"] for q in queries if q["pattern"] == "coren"}),
        "trca_statements": len(TRCA_STATEMENTS),
    }


def _collect_steps(n_steps: int, seed: int) -> tuple[list[tuple[int, str, Any, str]], int]:
    """The first ``n_steps`` (trajectory, instruction, step, response) of seeded TWC dev episodes, and how
    many episodes that took."""
    from policy.worlds.adapters import parse_env
    from policy.worlds.collect import CollectConfig, collect

    steps = []
    episodes = 0
    cfg = CollectConfig(
        env=parse_env("twx:twc"),
        split="dev",
        episodes=max(2, n_steps),
        behaviour="gold-noise=0.5,random=0.5",
        noise=0.4,
        seed=seed,
        max_steps=12,
    )
    for t in collect(cfg):
        steps.extend((episodes, t.instruction, s, r) for s, r in zip(t.steps, t.responses(), strict=True))
        episodes += 1
        if len(steps) >= n_steps:
            break
    return steps[:n_steps], episodes


def _cand_queries(traj: int, ins: str, s: Any, result: str, picked: list[str]) -> list[dict[str, Any]]:
    """Shape cand, per prompt variant: the taken action with its result, then every picked candidate."""
    out = []
    for v, head in enumerate(CAND_HEADERS):
        stem = f"{head}Task: {ins}\nObservation: {s.observation}\n"
        for action, res in [(s.action, result)] + [(c, "(not taken yet)") for c in picked]:
            prefix = f"{stem}Action: {action}\nResult: {res}\nRating:"
            out.append(
                {"pattern": "cand", "traj": traj, "variant": v, "choices": CAND_CHOICES, "prefix": prefix}
            )
    return out
