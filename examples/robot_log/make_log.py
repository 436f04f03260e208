"""Writes events.jsonl.gz: a pick-and-place robot's episodes as a plain-text event log.

No environment adapter wrote this log and it records no state layout: every state is a few sentences of
prose, as a robot's own logger might write them. It stands for a user's own log in the how-to of
docs/labeling.md ("Label your own log"); ``info`` holds the task's progress for measuring label quality only.

    python examples/robot_log/make_log.py            # rewrites examples/robot_log/events.jsonl.gz
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

OBJECTS = ("cup", "pen", "sponge", "block", "spoon", "battery")
PLACES = {
    "cup": "sink",
    "pen": "drawer",
    "sponge": "sink",
    "block": "bin",
    "spoon": "drawer",
    "battery": "bin",
}
CLOSABLE = {"drawer"}
STATIONS = ("table", "sink", "drawer", "bin")


def describe(s: dict) -> str:
    """The robot's state as prose: where the arm is, what it holds, what it sees there."""
    lines = [f"The arm is at the {s['at']}."]
    lines.append(f"The gripper holds the {s['held']}." if s["held"] else "The gripper is empty.")
    here = [o for o, where in s["where"].items() if where == s["at"]]
    if s["at"] in CLOSABLE and not s["open"]:
        lines.append(f"The {s['at']} is closed.")
    elif here:
        lines.append(f"In view at the {s['at']}: " + ", ".join(f"a {o}" for o in sorted(here)) + ".")
    else:
        lines.append(f"Nothing is in view at the {s['at']}.")
    return "\n".join(lines)


def candidates(s: dict) -> list[str]:
    out = [f"go to {st}" for st in STATIONS if st != s["at"]]
    if s["at"] in CLOSABLE:
        out.append(f"{'close' if s['open'] else 'open'} {s['at']}")
    visible = s["at"] not in CLOSABLE or s["open"]
    if s["held"]:
        out.append(f"place {s['held']} at {s['at']}")
    elif visible:
        out += [f"pick {o}" for o, where in sorted(s["where"].items()) if where == s["at"]]
    out.append("scan")
    return out


def act(s: dict, action: str) -> tuple[str, int]:
    """Apply ``action``; the logger's event sentence and the task progress it made."""
    target, goal = s["target"], PLACES[s["target"]]
    if action.startswith("go to "):
        s["at"] = action[6:]
        return f"Moved to the {s['at']}.", 0
    if action.startswith(("open ", "close ")):
        s["open"] = action.startswith("open ")
        gain = int(s["open"] and s["at"] == goal and not s["opened_goal"])
        s["opened_goal"] |= bool(gain)
        return f"The {s['at']} is now {'open' if s['open'] else 'closed'}.", gain
    if action.startswith("pick "):
        obj = action[5:]
        s["held"], s["where"][obj] = obj, "gripper"
        gain = int(obj == target and not s["picked"])
        s["picked"] |= bool(gain)
        return f"Grasp succeeded: {obj}.", gain
    if action.startswith("place "):
        obj = s["held"]
        s["held"], s["where"][obj] = None, s["at"]
        done = obj == target and s["at"] == goal
        return f"Released the {obj} at the {s['at']}.", int(done)
    return "Scan complete: no change.", 0


def episode(rng: random.Random, k: int, noise: float) -> dict:
    objs = rng.sample(OBJECTS, 3)
    target = objs[0]
    s = {"at": "table", "held": None, "where": {o: "table" for o in objs}, "open": False, "target": target,
         "picked": False, "opened_goal": False}  # fmt: skip
    goal = PLACES[target]
    plan = [f"pick {target}", f"go to {goal}"] + ([f"open {goal}"] if goal in CLOSABLE else [])
    plan.append(f"place {target} at {goal}")
    steps, score = [], 0
    for _ in range(14):
        cands = candidates(s)
        due = next((a for a in plan if a in cands), None)
        action = due if due and rng.random() > noise else rng.choice(cands)
        if action in plan:
            plan = plan[plan.index(action) + 1 :]
        obs = describe(s)
        event, gain = act(s, action)
        score += gain
        nxt = event + "\n" + describe(s)
        steps.append({"observation": obs, "action": action, "candidates": cands, "next_observation": nxt,
                      "env_reward": 0.0, "info": {"score": score, "progress": gain}})  # fmt: skip
        if s["where"][target] == goal:
            steps[-1]["env_reward"] = 1.0
            break
        if not plan:  # the plan was broken by a random step: replan from here
            plan = ([] if s["held"] == target else [f"pick {target}"]) + [f"go to {goal}"]
            plan += ([f"open {goal}"] if goal in CLOSABLE and not s["open"] else []) + [
                f"place {target} at {goal}"
            ]
    success = s["where"][target] == goal
    return {"format": 1, "id": f"robot-{k}", "instruction": f"Put the {target} where it belongs.",
            "task_type": "tidy-arm", "success": success, "steps": steps,
            "meta": {"logger": "arm-events/0.3"}}  # fmt: skip


def main() -> None:
    rng = random.Random(7)
    rows = [episode(rng, k, noise=0.55) for k in range(48)]
    out = Path(__file__).with_name("events.jsonl.gz")
    with gzip.GzipFile(out, "wb", mtime=0) as f:
        for r in rows:
            f.write((json.dumps(r, separators=(",", ":")) + "\n").encode())
    print(f"{out}: {len(rows)} episodes, {sum(r['success'] for r in rows)} successful")


if __name__ == "__main__":
    main()
