"""ScienceWorld adapter: the 30 task families of the elementary-science simulator (``scienceworld:TASK``).

Parameters (``--params key=value,...``):

- ``simplifications``: ``easy`` (default: teleporting, open doors and containers, self-watering flower pots,
  no electrical actions except on the electricity tasks), ``none``, or a ``+``-joined list of the simulator's
  names (``teleportAction+openDoors``).
- ``candidates``: the cap on the candidate list (default 128; 0 keeps all; see
  :mod:`policy.worlds.adapters.scienceworld_actions` for how the kept ones are chosen).

Episodes are the task's variations; the simulator splits them into disjoint train / dev / test ranges. The
score is the simulator's 0-100 score divided by 100 (a negative score, e.g. after focusing on the wrong
object, is a failure and reads as 0). Success is a score of 100.

The gold path is the simulator's, replayed once at ``reset(..., gold=True)`` with every action matched onto
the valid-action wording (:func:`policy.worlds.adapters.scienceworld_actions.match_gold`; redundant ``open``
actions are dropped). An action that matches nothing is kept as the simulator's text and, while collecting,
added to the candidates of the step where it is due. If the matched path does not reach 100, the simulator's
own path is used unchanged. ``gold_report`` says what happened to each action.

The state text (format ``scienceworld/2``, :func:`compose_state`) needs only the standard library; the
``scienceworld`` package (and a Java runtime) is imported when a world is opened. Each world is one JVM of
about 1-2 GB (``EDGEJUDGE_SCIENCEWORLD_HEAP``, default ``1g``, caps its heap).
"""

from __future__ import annotations

import os
import random
import re
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from models import settings
from models.state_layout import Part, StateLayout
from policy.worlds.adapters.base import EnvAdapter, EnvError, EnvSpec, EnvState, EpisodeId, Param
from policy.worlds.adapters.scienceworld_actions import (
    Template,
    ValidAction,
    cap_candidates,
    match_gold,
    without_focus,
)

TASKS: dict[str, str] = {
    "boil": "Matter: boil a substance",
    "melt": "Matter: melt a substance",
    "freeze": "Matter: freeze a substance",
    "change-the-state-of-matter-of": "Matter: change the state of matter of a substance",
    "use-thermometer": "Measurement: measure an object's temperature with a thermometer",
    "measure-melting-point-known-substance": "Measurement: melting point of a named substance",
    "measure-melting-point-unknown-substance": "Measurement: melting point of an unknown substance",
    "power-component": "Electricity: build a circuit that powers a component",
    "power-component-renewable-vs-nonrenewable-energy": "Electricity: power a component, renewable source",
    "test-conductivity": "Electricity: test whether a named object conducts",
    "test-conductivity-of-unknown-substances": "Electricity: test whether an unknown object conducts",
    "find-living-thing": "Classification: find a living thing and put it in a box",
    "find-non-living-thing": "Classification: find a non-living thing and put it in a box",
    "find-plant": "Classification: find a plant and put it in a box",
    "find-animal": "Classification: find an animal and put it in a box",
    "grow-plant": "Biology: grow a plant from a seed",
    "grow-fruit": "Biology: grow a fruit (pollination)",
    "chemistry-mix": "Chemistry: mix a named substance from its ingredients",
    "chemistry-mix-paint-secondary-color": "Chemistry: mix a secondary paint colour",
    "chemistry-mix-paint-tertiary-color": "Chemistry: mix a tertiary paint colour",
    "lifespan-longest-lived": "Biology: focus on the longest-lived animal",
    "lifespan-shortest-lived": "Biology: focus on the shortest-lived animal",
    "lifespan-longest-lived-then-shortest-lived": "Biology: longest-lived, then shortest-lived animal",
    "identify-life-stages-1": "Biology: the life stages of a plant, in order",
    "identify-life-stages-2": "Biology: the life stages of an animal, in order",
    "inclined-plane-determine-angle": "Forces: which inclined plane is steeper",
    "inclined-plane-friction-named-surfaces": "Forces: which named surface has more friction",
    "inclined-plane-friction-unnamed-surfaces": "Forces: which unnamed surface has more friction",
    "mendelian-genetics-known-plant": "Biology: Mendelian inheritance of a named plant's trait",
    "mendelian-genetics-unknown-plant": "Biology: Mendelian inheritance of an unknown plant's trait",
}
SIMPLIFICATIONS = (
    "teleportAction",
    "openDoors",
    "openContainers",
    "selfWateringFlowerPots",
    "noElectricalAction",
)
DEFAULT_CAP = 128
HISTORY_LEN = 3
FEEDBACK_CHARS = 300

LAYOUT = StateLayout(
    (
        Part("feedback", "Feedback"),
        Part("inventory", "Inventory", world=True, unordered=True, items=True),
        Part("focus", "Focus", world=True),
        Part("history", "Recent actions", items=True),
        Part("room", "Room", world=True),
    )
)
STATE_FORMAT = "scienceworld/2"
_FOCUSED = re.compile(r"^You focus on (?P<what>.+?)\.?$")


# ------------------------------------------------------------------------------------------------ state text

_BOILERPLATE = re.compile(r"\s*(the agent|a substance called air)\s*(?=\n|$)")


def _clean(text: str) -> str:
    return " ".join(text.split())


_NESTED = re.compile(r"((?:In|On) the [^:]*? is: )([^.]*)(\.)")


def _top_level_items(text: str) -> list[str]:
    """``a, b (x, y), c`` -> ``["a", "b (x, y)", "c"]``: commas inside parentheses do not split."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return [x for x in items if x]


def canonical_listing(look: str) -> str:
    """The room text with its listed objects in sorted order.

    The simulator lists a room's objects (and a container's contents) in an order that changes from one
    reset of the same world to the next; sorting makes the same world read the same."""
    lines = look.split("\n")
    out: list[str] = []
    run: list[str] = []
    for ln in [*lines, None]:
        if ln is not None and ln.startswith("\t"):
            run.append(_NESTED.sub(lambda m: m[1] + ", ".join(sorted(_top_level_items(m[2]))) + m[3], ln))
            continue
        out.extend(sorted(run))
        run = []
        if ln is not None:
            out.append(ln)
    return "\n".join(out)


def compact_room(look: str) -> str:
    """The room description on one line, objects sorted, without the two entries every room lists (the
    agent, the air)."""
    return _clean(_BOILERPLATE.sub("", canonical_listing(look)))


def compact_inventory(text: str) -> str:
    body = _clean(text.replace("In your inventory, you see:", "", 1))
    body = _clean(body.replace("the agent", ""))
    return body or "empty"


def focused_on(feedback: str) -> str | None:
    """What a ``focus on`` action committed to, from the simulator's answer (``You focus on the baby wolf.``
    -> ``the baby wolf``); None for any other answer."""
    m = _FOCUSED.match(_clean(feedback))
    return m["what"] if m else None


def compose_state(
    feedback: str, look: str, inventory: str, history: Sequence[str], focus: str | None = None
) -> str:
    """The policy's state text, most important first (a length-limited encoder cuts the end):

    - the simulator's answer to the last action, at most ``FEEDBACK_CHARS`` characters (omitted when it is
      the room description again, as after ``look around``),
    - the inventory; what the agent has focused on in this episode, in order (a world part: ``focus on``
      commits the agent to an answer, which the room and inventory do not show), left out before any focus;
    - the last ``HISTORY_LEN`` actions, then the room (agent and air entries dropped).
    """
    feedback_c, room = _clean(feedback), compact_room(look)
    if feedback_c == _clean(look) or compact_room(feedback) == room:
        feedback_c = ""
    if len(feedback_c) > FEEDBACK_CHARS:
        feedback_c = feedback_c[: FEEDBACK_CHARS - 3].rstrip() + "..."
    recent = list(history)[-HISTORY_LEN:]
    return LAYOUT.compose(
        {
            "feedback": feedback_c or None,
            "inventory": compact_inventory(inventory),
            "focus": _clean(focus) if focus else None,
            "history": ", ".join(recent) if recent else "none",
            "room": room,
        }
    )


def parse_simplifications(value: str) -> str:
    """``easy`` | ``none`` | ``a+b`` -> the simulator's simplification string; EnvError naming valid ones."""
    if value in ("easy", "none"):
        return "easy" if value == "easy" else ""
    names = [v for v in value.split("+") if v]
    for n in names:
        if n not in SIMPLIFICATIONS:
            raise EnvError(
                f"unknown ScienceWorld simplification {n!r}: expected easy, none or a +-joined list of "
                f"{', '.join(SIMPLIFICATIONS)}"
            )
    return ",".join(names)


# ------------------------------------------------------------------------------------------------ adapter


class ScienceWorldAdapter(EnvAdapter):
    """One ScienceWorld task family. Owns a JVM: use as a context manager."""

    name: ClassVar[str] = "scienceworld"
    tasks: ClassVar[Mapping[str, str]] = TASKS
    layout: ClassVar[StateLayout] = LAYOUT
    state_format: ClassVar[str] = STATE_FORMAT
    exact_replay: ClassVar[bool] = False  # look-alike objects are listed and named in varying order

    @classmethod
    def parameters(cls, task: str) -> Mapping[str, Param]:
        return {
            "simplifications": Param(
                "easy", "easy, none, or a +-joined list of " + ", ".join(SIMPLIFICATIONS)
            ),
            "candidates": Param(str(DEFAULT_CAP), "cap on the candidate list (0: all)", integer=True),
        }

    @classmethod
    def resolve(cls, task: str, given: Mapping[str, str]) -> str:
        simpl = given.get("simplifications", "easy")
        parse_simplifications(simpl)
        cap = int(given.get("candidates", DEFAULT_CAP))
        if cap < 0:
            raise EnvError(f"bad value {cap} for candidates: expected 0 (all) or a positive cap")
        return f"simplifications={simpl},candidates={cap}"

    @classmethod
    def compose(cls, parts: Mapping[str, str], history: Sequence[str]) -> str:
        return compose_state(
            parts.get("feedback", ""),
            parts.get("look", ""),
            parts.get("inventory", ""),
            history,
            parts.get("focus") or None,
        )

    def __init__(self, spec: EnvSpec, step_limit: int = 50):
        super().__init__(spec, step_limit)
        try:
            from scienceworld import ScienceWorldEnv
        except ImportError as e:  # pragma: no cover - depends on the install
            raise RuntimeError("scienceworld is not installed: pip install 'edgejudge[scienceworld]'") from e
        values = spec.values
        self.simplifications = parse_simplifications(values.get("simplifications", "easy"))
        self.cap = int(values.get("candidates", DEFAULT_CAP))
        heap = settings.scienceworld_heap()
        saved = os.environ.get("JAVA_TOOL_OPTIONS")
        os.environ["JAVA_TOOL_OPTIONS"] = f"{saved or ''} -Xmx{heap}".strip()
        try:
            # our own step limit ends episodes; the simulator's is set out of the way
            self._env = ScienceWorldEnv("", envStepLimit=10**6)
        finally:
            if saved is None:
                del os.environ["JAVA_TOOL_OPTIONS"]
            else:
                os.environ["JAVA_TOOL_OPTIONS"] = saved
        self._closed = False
        self._env.load(spec.task, 0, self.simplifications)
        self._splits = {
            "train": list(self._env.get_variations_train()),
            "dev": list(self._env.get_variations_dev()),
            "test": list(self._env.get_variations_test()),
        }
        self._variation: int | None = None
        self._loaded: tuple[int, bool] | None = None  # (variation, with gold path) of the loaded world
        self._state: EnvState | None = None
        self._gold: list[str] | None = None
        self._gold_ptr = 0
        self._extra: set[str] = set()  # gold actions the valid list does not name
        self._focus: list[str] = []  # what the agent focused on in this episode, in order
        self.gold_report: dict[str, Any] = {}

    # -------------------------------------------------------------- episodes

    def episodes(self, split: str) -> list[EpisodeId]:
        self.check_split(split)
        return list(self._splits[split])

    def _load(self, episode: EpisodeId, split: str, gold: bool) -> tuple[str, dict[str, Any]]:
        self.check_split(split)
        if not isinstance(episode, int) or episode not in self._splits[split]:
            lo, hi = self._splits[split][0], self._splits[split][-1]
            raise EnvError(f"{self.spec.name}: no {split} variation {episode!r} (expected {lo}..{hi})")
        # The simulator lists look-alike objects (and names them in the valid list) in an order that can
        # differ between two loads of the same variation; a reset of the loaded world replays it exactly.
        if self._loaded != (episode, True) and self._loaded != (episode, gold):
            self._env.load(self.spec.task, episode, self.simplifications, generateGoldPath=gold)
            self._loaded = (episode, gold)
        return self._env.reset()

    def reset(self, episode: EpisodeId, split: str, gold: bool = False) -> EnvState:
        obs, infos = self._load(episode, split, gold)
        self._variation = int(episode)
        self._gold, self._gold_ptr, self._extra = None, 0, set()
        if gold:
            raw = list(self._env.get_gold_action_sequence())
            self._gold = self._replayed_gold(raw)
            obs, infos = self._env.reset()
        self.history = []
        self._focus = []
        self._state = self._make_state(obs, infos)
        return self._state

    def gold_path(self) -> list[str] | None:
        if self._gold is None:
            raise RuntimeError("gold_path() needs reset(..., gold=True)")
        return list(self._gold)

    def _replayed_gold(self, raw: list[str]) -> list[str]:
        """The simulator's gold path in valid-list wording, checked by replaying it (module docstring)."""
        kinds: Counter[str] = Counter()
        templates = [
            Template(int(t["template_id"]), t["action_example"])
            for t in self._env.get_possible_actions_with_IDs()
        ]
        out: list[str] = []
        extra: set[str] = set()
        _, infos = self._env.reset()
        feedback = ""
        for action in raw:
            if action.isdigit() and not feedback.startswith("Ambiguous request"):
                kinds["answer-dropped"] += 1  # the matched action was not ambiguous: nothing to answer
                continue
            valid = infos["valid"]
            if action in valid:
                chosen, kind = action, "literal"
            else:
                m = match_gold(action, self._valid_actions(), templates, self._referents())
                kind = m.kind
                if m.kind == "noop":
                    kinds[kind] += 1
                    continue
                chosen = m.action if m.action is not None else action
                if m.action is None:
                    extra.add(action)
            kinds[kind] += 1
            out.append(chosen)
            feedback, _, _, infos = self._env.step(chosen)
        score = int(infos["score"])
        self.gold_report = {"raw": len(raw), "kinds": dict(kinds), "matched_score": score, "used": "matched"}
        if score < 100:
            # matching broke the path somewhere: the simulator's own wording, extra candidates where needed
            self._env.reset()
            self.gold_report["used"] = "raw"
            self._extra = set(raw)
            return raw
        self._extra = extra
        return out

    def _valid_actions(self) -> list[ValidAction]:
        return [
            ValidAction(v["action"], int(v["template_id"]), tuple(int(i) for i in v["obj_ids"]))
            for v in self._env.get_valid_action_object_combinations_with_templates()
        ]

    def _referents(self) -> dict[int, list[str]]:
        lut = self._env.get_all_object_ids_types_referents_LUTJSON()
        refs: dict[int, list[str]] = {int(k): list(v["referents"]) for k, v in lut.items()}
        for k, name in self._env.get_possible_object_referent_LUT().items():
            refs.setdefault(int(k), []).append(name)
        return refs

    # -------------------------------------------------------------- steps

    def _make_state(self, obs: str, infos: dict[str, Any], completed: bool = False) -> EnvState:
        raw_score = int(infos["score"])
        success = raw_score >= 100
        failure = raw_score < 0 or (completed and not success)
        parts = {"feedback": obs, "inventory": infos["inv"], "look": infos["look"]}
        if self._focus:
            parts["focus"] = ", ".join(self._focus)
        keep: list[str] = []
        if self._gold is not None and self._gold_ptr < len(self._gold):
            expected = self._gold[self._gold_ptr]
            if expected in self._extra or expected in infos["valid"]:
                keep.append(expected)
        seed = zlib.crc32(
            f"{self.spec.task}|{self._variation}|{len(self.history)}|{compact_room(infos['look'])}".encode()
        )
        candidates = cap_candidates(
            infos["valid"], self.cap, random.Random(seed), keep, held=infos["inv"], task=infos["taskDesc"]
        )
        return EnvState(
            observation=self.compose(parts, self.history),
            candidates=candidates,
            instruction=_clean(infos["taskDesc"].replace("Task Description:", "", 1)),
            parts=parts,
            score=min(max(raw_score, 0), 100) / 100.0,
            done=success or failure or len(self.history) >= self.step_limit,
            success=success,
            failure=failure,
            info={"score_raw": raw_score, "variation": self._variation, "valid": len(infos["valid"])},
        )

    def step(self, action: str) -> EnvState:
        if self._state is None:
            raise RuntimeError("step() before reset()")
        gold = self._gold
        if gold is not None and self._gold_ptr < len(gold) and action == gold[self._gold_ptr]:
            self._gold_ptr += 1
        obs, _reward, completed, infos = self._env.step(action)
        self.history.append(action)
        what = focused_on(obs) if action.startswith("focus on ") else None
        if what:
            self._focus.append(what)
        self._state = self._make_state(obs, infos, bool(completed))
        return self._state

    def noise_candidates(self, state: EnvState) -> list[str]:
        """Random steps never ``focus on`` anything (a wrong focus ends the episode in failure)."""
        return without_focus(state.candidates)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._env.close()
