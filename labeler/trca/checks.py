"""Deterministic rubric checks on a transition (observation, action, next observation).

The state texts are read through the state layout the dataset records (:mod:`models.state_layout`, a
trajectory's ``meta["state_layout"]``; a file without one gets an inferred layout when it is read, see
:mod:`labeler.layouts`): the response to the action is the next state's ``feedback`` part, or, without one,
what the next state adds to the one before (:meth:`models.state_layout.StateLayout.response`); ``inventory``
is what the agent holds, ``history`` the recent actions (without it: the episode's last actions), and the
layout's world key the world state. E.g. TextWorld's::

    Feedback: <the environment's response to the last action>     (absent when it just repeats the room)
    Inventory: <items or "empty">
    Recent actions: <a, b, c>
    Room: <room description>

No world's layout is written here. Nothing here calls a model, so checks run at thousands of transitions per
second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from labeler.trca.rubric import Item, Rubric
from models.actions import ARTICLES, parse_action, text_words
from models.state_layout import PLAIN_LAYOUT, StateLayout
from models.trajectory import Trajectory
from models.trajectory_view import answered_anew

_ARTICLE = re.compile(r"\b(?:" + "|".join(sorted(ARTICLES)) + r")\s+", re.IGNORECASE)


def _norm(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class StateView:
    """One state text split into the parts the checks look at."""

    text: str
    feedback: str
    inventory: str | None
    recent: tuple[str, ...]
    context: str  # the text without the recent-actions line (decision context, and where terms appear)

    @classmethod
    def parse(cls, text: str, layout: StateLayout = PLAIN_LAYOUT) -> StateView:
        """Parse with ``layout`` (cached: a step's next state is the next step's state)."""
        return _parse_state(text, layout)

    @classmethod
    def _parse(cls, text: str, layout: StateLayout) -> StateView:
        parts = layout.parse(text)
        if not any(p.world and p.name in parts for p in layout.parts):
            t = _norm(text)
            return cls(text=text, feedback=t, inventory=None, recent=(), context=t)
        recent_raw = parts.get("history", "")
        recent = (
            tuple(a.strip() for a in recent_raw.split(",")) if recent_raw and recent_raw != "none" else ()
        )
        context = "\n".join(
            line
            for line in text.splitlines()
            if (found := layout.part_of(line)) is None or found[0].name != "history"
        )
        return cls(
            text=text,
            feedback=parts.get("feedback", ""),
            inventory=parts.get("inventory"),
            recent=recent,
            context=_norm(context),
        )

    @cached_property
    def inventory_items(self) -> frozenset[str]:
        inv = (self.inventory or "").strip()
        if not inv or inv.lower() == "empty" or "currently empty" in inv.lower():
            return frozenset()
        return frozenset(p.strip(" ,.").lower() for p in _ARTICLE.split(inv) if p.strip(" ,."))


@lru_cache(maxsize=1024)
def _parse_state(text: str, layout: StateLayout) -> StateView:
    return StateView._parse(text, layout)


RECENT_ACTIONS = 5
"""Without a ``history`` part in the layout, "recent actions" are the episode's last this many actions."""


@dataclass
class Transition:
    instruction: str
    observation: str
    action: str
    next_observation: str
    layout: StateLayout = PLAIN_LAYOUT
    previous: tuple[str, ...] = ()
    """The episode's actions before this one (oldest first): the recent actions of a layout without a
    ``history`` part."""
    earlier: tuple[str, ...] = ()
    """The responses to the episode's actions before this one (oldest first)."""
    seen: tuple[str, ...] | None = None
    """On a trajectory whose states show only part of the scene
    (:attr:`models.trajectory_view.TrajectoryView.partial`): every state text the episode showed up to this
    step's, oldest first. The checks then read the episode so
    far instead of the state alone: evidence is new when the episode had not shown it, and an action changed
    nothing when it drew an empty response or one it had drawn before. None: the states show the whole
    scene."""

    @cached_property
    def before(self) -> StateView:
        return StateView.parse(self.observation, self.layout)

    @cached_property
    def after(self) -> StateView:
        return StateView.parse(self.next_observation, self.layout)

    @cached_property
    def actions(self) -> tuple[str, ...]:
        """The episode's actions up to this one: what an echo of recent actions in a plain text lists."""
        return (*self.previous, self.action)

    @cached_property
    def response(self) -> str:
        """The world's response to the action (:meth:`models.state_layout.StateLayout.response`)."""
        return self.layout.response(self.observation, self.next_observation, self.actions)

    @cached_property
    def world_changed(self) -> bool:
        """Whether the action changed the world state (the layout's world key, echoes of the episode's
        actions left out); on partial states, whether it drew a response the same action had not drawn
        before in the episode."""
        # models.trajectory_view.answered_anew: the rule the trainers' detours read too
        if self.seen is not None:
            return answered_anew(self.action, self.response, zip(self.previous, self.earlier, strict=False))
        key = self.layout.world_key
        return key(self.observation, self.actions) != key(self.next_observation, self.actions)

    @cached_property
    def recent(self) -> tuple[str, ...]:
        if "history" in self.layout.names and self.before.recent:
            return self.before.recent
        return self.previous[-RECENT_ACTIONS:]


def _argument_named(tr: Transition, caps: dict[str, str], where: str) -> bool:
    """Whether the action's argument (its ``object`` capture, else the action without its verb) is named in
    ``where``: the instruction, the state before, an earlier response, or a part of the state before."""
    arg = caps.get("object") or " ".join(parse_action(tr.action).arguments)
    if not arg:
        return False
    if where == "instruction":
        texts: tuple[str, ...] = (tr.instruction,)
    elif where == "state":
        texts = (tr.observation,)
    elif where == "earlier":
        texts = tr.earlier
    else:
        texts = (tr.layout.parse(tr.observation).get(where, ""),)
    rx = _phrase(arg)
    return any(rx.search(t) for t in texts)


@lru_cache(maxsize=4096)
def _phrase(arg: str) -> re.Pattern[str]:
    return re.compile(r"\b" + r"\s+".join(re.escape(w) for w in arg.split()) + r"\b", re.IGNORECASE)


def transitions_of(traj: Trajectory) -> list[Transition]:
    """A trajectory's steps as transitions, read through the layout it records (with the episode so far
    when its states are partial), as its view reads them (:attr:`models.trajectory.Trajectory.view`)."""
    view = traj.view
    layout, actions, partial = view.layout, view.actions, view.partial
    out: list[Transition] = []
    responses: list[str] = []
    for i, s in enumerate(traj.steps):
        tr = Transition(
            traj.instruction,
            s.observation,
            s.action,
            s.next_observation,
            layout,
            actions[:i],
            tuple(responses),
            tuple(x.observation for x in traj.steps[: i + 1]) if partial else None,
        )
        responses.append(tr.response)
        out.append(tr)
    return out


def context_key(instruction: str, observation: str, layout: StateLayout = PLAIN_LAYOUT) -> str:
    """The decision context of a step for step-relative advantages: instruction + normalised state text
    (lowercase, whitespace collapsed, the recent-actions line dropped)."""
    return f"{_norm(instruction).lower()}\n{StateView.parse(observation, layout).context.lower()}"


def _rx(pattern: str | None) -> re.Pattern[str] | None:
    return re.compile(pattern, re.IGNORECASE) if pattern else None


_SLOT = re.compile(r"\{(object|place)\}")


@lru_cache(maxsize=4096)
def _filled(pattern: str, obj: str | None, place: str | None) -> re.Pattern[str] | None:
    """``{object}`` / ``{place}`` in a response regex, filled with what the action regex captured."""
    values = {"object": obj, "place": place}
    if any(values[m] is None for m in _SLOT.findall(pattern)):
        return None
    return re.compile(_SLOT.sub(lambda m: re.escape(values[m.group(1)] or ""), pattern), re.IGNORECASE)


class CompiledItem:
    """An item's check, compiled once. :meth:`match` returns the item's bindings on a hit, else None."""

    def __init__(self, item: Item):
        self.item = item
        self.action = _rx(item.action)
        self.feedback = _rx(item.feedback)
        self.feedback_slots = bool(item.feedback and _SLOT.search(item.feedback))
        self.not_feedback = _rx(item.not_feedback)
        self.next_observation = _rx(item.next_observation)
        self.instruction = _rx(item.instruction)
        # ``appears``: terms as word n-grams, looked up in a set (a regex alternation of hundreds of names is
        # ~20x slower); found terms are cached per text, since step t's next state is step t+1's state
        self.terms: dict[str, str] = {}
        self.max_n = 0
        if item.appears:
            for t in item.appears:
                words = text_words(t)
                if words:
                    self.terms[" ".join(words)] = t.lower()
                    self.max_n = max(self.max_n, len(words))
        self._found_cache: dict[str, frozenset[str]] = {}

    def _found(self, text: str) -> frozenset[str]:
        hit = self._found_cache.get(text)
        if hit is None:
            words = text_words(text)
            found = set()
            for n in range(1, self.max_n + 1):
                for i in range(len(words) - n + 1):
                    term = self.terms.get(" ".join(words[i : i + n]))
                    if term is not None:
                        found.add(term)
            hit = frozenset(found)
            if len(self._found_cache) >= 4096:
                self._found_cache.clear()
            self._found_cache[text] = hit
        return hit

    def applies_to(self, instruction: str) -> bool:
        return self.instruction is None or self.instruction.search(instruction) is not None

    def match(self, tr: Transition) -> frozenset[str] | None:
        it = self.item
        if it.judge:
            return None
        caps: dict[str, str] = {}
        if self.action is not None:
            m = self.action.search(tr.action)
            if m is None:
                return None
            caps.update({k: _norm(v).lower() for k, v in m.groupdict().items() if v})
        if self.feedback is not None:
            rx = self.feedback
            if self.feedback_slots:
                rx = _filled(self.feedback.pattern, caps.get("object"), caps.get("place"))
                if rx is None:
                    return None
            m = rx.search(tr.response)
            if m is None:
                return None
            caps.update({k: _norm(v).lower() for k, v in m.groupdict().items() if v})
        if self.not_feedback is not None and self.not_feedback.search(tr.response):
            return None
        if self.next_observation is not None and not self.next_observation.search(tr.next_observation):
            return None
        if it.pairs is not None:
            obj, place = caps.get("object"), caps.get("place")
            if obj is None or place is None or obj not in it.pairs:
                return None
            if (place in it.pairs[obj]) == bool(it.pairs_mismatch):
                return None
        if it.repeat and tr.action.strip().lower() not in {a.lower() for a in tr.recent}:
            return None
        if it.argument_in is not None and not _argument_named(tr, caps, it.argument_in):
            return None
        if it.unchanged and tr.world_changed:
            return None
        extra: list[str] = []
        if it.inventory is not None:
            old, new = tr.before.inventory_items, tr.after.inventory_items
            gained, lost = new - old, old - new
            changed = {"gain": gained, "loss": lost, "change": gained | lost}[it.inventory]
            if not changed:
                return None
            extra = sorted(changed)
        if self.terms:
            if tr.seen is None:
                known = self._found(tr.before.context)
            else:
                known = frozenset().union(*(self._found(_norm(t)) for t in tr.seen))
            new_terms = sorted(self._found(tr.after.context) - known)
            if not new_terms:
                return None
            extra = sorted({*extra, *new_terms})
        base = ";".join(f"{k}={v}" for k, v in sorted(caps.items()))
        if not extra:
            return frozenset({base})
        return frozenset(f"{base}|{x}" if base else x for x in extra)


class CompiledRubric:
    """A rubric ready to apply: ``hits(transition)`` lists (item index, bindings) of every item that holds."""

    def __init__(self, rubric: Rubric):
        self.rubric = rubric
        self.items = [CompiledItem(it) for it in rubric.items]
        self._by_instruction: dict[str, list[int]] = {}

    def active(self, instruction: str) -> list[int]:
        """Indices of the items that apply to an instruction (per-instruction items filter themselves)."""
        idx = self._by_instruction.get(instruction)
        if idx is None:
            idx = [i for i, c in enumerate(self.items) if c.applies_to(instruction)]
            self._by_instruction[instruction] = idx
        return idx

    def hits(self, tr: Transition) -> list[tuple[int, frozenset[str]]]:
        out = []
        for i in self.active(tr.instruction):
            b = self.items[i].match(tr)
            if b is not None:
                out.append((i, b))
        return out
