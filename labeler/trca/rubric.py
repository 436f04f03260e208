"""Rubric files: a human-readable, versioned TOML format, parsed with file:line errors and written back.

A rubric file holds the items of one task type (``task_type = "*"`` applies to any). Example::

    format = "edgejudge.rubrics"
    format_version = 1
    task_type = "twc"
    version = 2                      # the rubric's own revision: bump it when you edit items
    description = "..."

    [build]                          # free-form provenance of the generated file (judge sha256, dataset, ...)
    judge_sha256 = "..."

    [[items]]
    id = "take-object"               # unique; [a-z0-9][a-z0-9_-]*
    category = "execution"           # evidence (+) | execution (+) | invalidity (-)
    text = "An object was picked up" # what the item means (also the question for --item-judge llm)
    note = "..."                     # optional: for reviewers (the builder writes the judge's scores here)
    action = '^take (?P<object>.+)$' # the check: every condition given must hold (regexes: case-insensitive)
    feedback = '^You take the '

    [items.pairs]                    # optional: captured "object" must map to the captured "place"
    "dirty whisk" = ["dishwasher"]

Check conditions (all optional, at least one unless the item is judge-only):

============================  =============================================================================
``action``                    regex searched in the action text
``feedback``                  regex searched in the environment's response (see :mod:`labeler.trca.checks`);
                              ``{object}`` / ``{place}`` in it stand for what ``action`` captured
``not_feedback``              regex that must NOT be found in the response
``next_observation``          regex searched in the whole next observation
``appears``                   list of terms: one absent from the observation is present in the next one
``inventory``                 ``"gain"`` | ``"loss"`` | ``"change"`` of the inventory line
``unchanged``                 true: the state text (without the recent-actions line) did not change
``repeat``                    true: the action is among the observation's recent actions
``instruction``               regex the episode's instruction must match (per-instruction items)
``pairs``                     object -> allowed places (needs groups ``object`` and ``place`` in ``action``)
``pairs_mismatch``            true: holds when the object is in ``pairs`` and the place is NOT one of its own
``argument_in``               where the action's argument must be named: ``"instruction"``, ``"state"`` (the
                              state before the action), ``"earlier"`` (a response earlier in the episode: a
                              recipe read ten steps ago), or a part of the layout (``"inventory"``, ...); the
                              argument is ``action``'s ``object`` group, else the action without its verb
``judge``                     true: no deterministic check; ``label trca --item-judge llm`` asks the judge
============================  =============================================================================

Named regex groups (``(?P<object>...)``) and the term found by ``appears`` bind an item to what it is about,
so breakthrough credit is first-time per (item, binding): taking the apple and later the pear are two
breakthroughs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

RUBRIC_FORMAT = "edgejudge.rubrics"
RUBRIC_FORMAT_VERSION = 1
CATEGORIES = ("evidence", "execution", "invalidity")
SIGN = {"evidence": 1.0, "execution": 1.0, "invalidity": -1.0}
INVENTORY_CHANGES = ("gain", "loss", "change")
REGEX_KEYS = ("action", "feedback", "not_feedback", "next_observation", "instruction")
CHECK_KEYS = (
    *REGEX_KEYS, "appears", "inventory", "unchanged", "repeat", "pairs", "pairs_mismatch", "argument_in"
)  # fmt: skip
ARGUMENT_PLACES = ("instruction", "state", "earlier")
"""``argument_in`` values besides a layout part's name."""
ITEM_KEYS = ("id", "category", "text", "note", "judge", *CHECK_KEYS)
TOP_KEYS = ("format", "format_version", "task_type", "version", "description", "build", "items")
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class RubricError(ValueError):
    """A problem in a rubric file: ``file:line: where: problem``."""

    def __init__(self, path: str, line: int | None, where: str, problem: str):
        self.path, self.line, self.where, self.problem = path, line, where, problem
        loc = f"{path}:{line}" if line is not None else path
        super().__init__(f"{loc}: {where}: {problem}")


@dataclass
class Item:
    id: str
    category: str
    text: str
    action: str | None = None
    feedback: str | None = None
    not_feedback: str | None = None
    next_observation: str | None = None
    instruction: str | None = None
    appears: list[str] | None = None
    inventory: str | None = None
    unchanged: bool | None = None
    repeat: bool | None = None
    pairs: dict[str, list[str]] | None = None
    pairs_mismatch: bool | None = None
    argument_in: str | None = None
    judge: bool = False
    note: str = ""

    @property
    def sign(self) -> float:
        return SIGN[self.category]

    @property
    def has_check(self) -> bool:
        return any(getattr(self, k) is not None for k in CHECK_KEYS if k != "instruction")


@dataclass
class Rubric:
    task_type: str
    version: int
    items: list[Item]
    description: str = ""
    build: dict[str, Any] = field(default_factory=dict)
    path: str | None = None
    sha256: str | None = None

    def category_sizes(self) -> dict[str, int]:
        return {c: sum(1 for it in self.items if it.category == c) for c in CATEGORIES}


# ------------------------------------------------------------------------------------------------ parsing


def _item_lines(text: str) -> list[tuple[int, dict[str, int]]]:
    """For each ``[[items]]`` block: its header line and the line of each key inside it (1-based)."""
    blocks: list[tuple[int, dict[str, int]]] = []
    key_re = re.compile(r"""^\s*("?)([A-Za-z0-9_-]+)\1\s*=""")
    in_sub = False  # inside [items.pairs] or another table: keys there are not the item's own
    for n, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if s.startswith("[[items]]"):
            blocks.append((n, {}))
            in_sub = False
        elif s.startswith("["):
            in_sub = True
            if s.startswith("[items.pairs]") and blocks:
                blocks[-1][1].setdefault("pairs", n)
        elif blocks and not in_sub:
            m = key_re.match(line)
            if m:
                blocks[-1][1].setdefault(m.group(2), n)
    return blocks


def _top_lines(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith("["):
            name = line.strip().strip("[]").strip()
            out.setdefault(name, n)
            if name != "build":
                break
            continue
        m = re.match(r"^([A-Za-z0-9_-]+)\s*=", line)
        if m:
            out.setdefault(m.group(1), n)
    return out


def _regex(value: Any, fail) -> str:
    if not isinstance(value, str) or not value:
        fail("expected a non-empty regex string")
    try:
        re.compile(value, re.IGNORECASE)
    except re.error as e:
        fail(f"invalid regex ({e})")
    return value


def _item(raw: Any, i: int, lines: dict[str, int], header: int | None, path: str) -> Item:
    def fail_at(key: str | None, problem: str):
        line = lines.get(key, header) if key else header
        where = f"items[{i}]" + (f".{key}" if key else "")
        raise RubricError(path, line, where, problem)

    if not isinstance(raw, dict):
        fail_at(None, "expected a table")
    for key in raw:
        if key not in ITEM_KEYS:
            fail_at(key, f"unknown key (expected one of {', '.join(ITEM_KEYS)})")
    for key in ("id", "category", "text"):
        if key not in raw:
            fail_at(None, f"missing {key!r}")
        if not isinstance(raw[key], str) or not raw[key].strip():
            fail_at(key, "expected a non-empty string")
    if not _ID.match(raw["id"]):
        fail_at("id", f"{raw['id']!r} is not a valid id (lowercase letters, digits, '-', '_')")
    if raw["category"] not in CATEGORIES:
        fail_at("category", f"{raw['category']!r} is not one of {', '.join(CATEGORIES)}")
    kw: dict[str, Any] = {"id": raw["id"], "category": raw["category"], "text": raw["text"].strip()}
    if "note" in raw:
        if not isinstance(raw["note"], str):
            fail_at("note", "expected a string")
        kw["note"] = raw["note"]
    for key in REGEX_KEYS:
        if key in raw:
            kw[key] = _regex(raw[key], lambda p, k=key: fail_at(k, p))
    if "appears" in raw:
        terms = raw["appears"]
        if (
            not isinstance(terms, list)
            or not terms
            or not all(isinstance(t, str) and t.strip() for t in terms)
        ):
            fail_at("appears", "expected a non-empty list of non-empty strings")
        kw["appears"] = [t.strip() for t in terms]
    if "inventory" in raw:
        if raw["inventory"] not in INVENTORY_CHANGES:
            fail_at("inventory", f"{raw['inventory']!r} is not one of {', '.join(INVENTORY_CHANGES)}")
        kw["inventory"] = raw["inventory"]
    if "argument_in" in raw:
        where = raw["argument_in"]
        if not isinstance(where, str) or not re.match(r"^[a-z][a-z0-9_]*$", where):
            fail_at(
                "argument_in",
                f"{where!r}: expected one of {', '.join(ARGUMENT_PLACES)} or a layout part's name",
            )
        kw["argument_in"] = where
    for key in ("unchanged", "repeat", "judge", "pairs_mismatch"):
        if key in raw:
            if not isinstance(raw[key], bool):
                fail_at(key, f"expected true or false, got {type(raw[key]).__name__}")
            kw[key] = raw[key]
    for key in ("unchanged", "repeat", "pairs_mismatch"):
        if kw.get(key) is False:
            fail_at(key, "only 'true' is meaningful; remove it")
    if kw.get("pairs_mismatch") and "pairs" not in raw:
        fail_at("pairs_mismatch", "needs a [items.pairs] table")
    if "pairs" in raw:
        pairs = raw["pairs"]
        if not isinstance(pairs, dict) or not pairs:
            fail_at("pairs", "expected a non-empty table: object = [places]")
        clean: dict[str, list[str]] = {}
        for obj, places in pairs.items():
            if isinstance(places, str):
                places = [places]
            if not isinstance(places, list) or not places or not all(isinstance(p, str) for p in places):
                fail_at("pairs", f"{obj!r}: expected a place or a list of places")
            clean[obj.strip().lower()] = [p.strip().lower() for p in places]
        action = kw.get("action")
        if action is None or not {"object", "place"} <= set(re.compile(action).groupindex):
            fail_at("pairs", "needs an 'action' regex with groups (?P<object>...) and (?P<place>...)")
        kw["pairs"] = clean
    item = Item(**kw)
    if item.judge and item.has_check:
        fail_at("judge", "a judge-only item must not also have a deterministic check")
    if not item.judge and not item.has_check:
        fail_at(
            None,
            "no check: give at least one of "
            + ", ".join(k for k in CHECK_KEYS if k != "instruction")
            + " (or judge = true)",
        )
    return item


def parse_rubric(text: str, path: str = "<rubric>") -> Rubric:
    """Parse and validate rubric TOML text. Raises :class:`RubricError` with file:line on any problem."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        line = int(m.group(1)) if m else None
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise RubricError(path, line, "toml", msg) from None
    top = _top_lines(text)

    def fail(key: str, problem: str, line: int | None = None):
        raise RubricError(path, line if line is not None else top.get(key), key, problem)

    for key in raw:
        if key not in TOP_KEYS:
            fail(key, f"unknown key (expected one of {', '.join(TOP_KEYS)})")
    if raw.get("format") != RUBRIC_FORMAT:
        fail("format", f"expected {RUBRIC_FORMAT!r}, got {raw.get('format')!r}")
    if raw.get("format_version") != RUBRIC_FORMAT_VERSION:
        fail(
            "format_version",
            f"unsupported {raw.get('format_version')!r} (this edgejudge reads {RUBRIC_FORMAT_VERSION})",
        )
    task_type = raw.get("task_type")
    if not isinstance(task_type, str) or not task_type.strip():
        fail("task_type", "expected a non-empty string (a dataset task_type, or '*' for any)")
    version = raw.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        fail("version", f"expected an integer >= 1, got {version!r}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        fail("description", "expected a string")
    build = raw.get("build", {})
    if not isinstance(build, dict):
        fail("build", "expected a table")
    for k, v in build.items():
        plain = (str, int, float, bool)
        if not (isinstance(v, plain) or (isinstance(v, list) and all(isinstance(x, plain) for x in v))):
            line = next(
                (n for n, t in enumerate(text.splitlines(), start=1) if re.match(rf"^{re.escape(k)}\s*=", t)),
                top.get("build"),
            )
            fail(
                f"build.{k}",
                f"expected a string, number, boolean or a list of them, got {type(v).__name__}",
                line=line,
            )
    items_raw = raw.get("items")
    if not isinstance(items_raw, list) or not items_raw:
        fail("items", "no [[items]]: a rubric needs at least one item", line=top.get("items"))
    blocks = _item_lines(text)
    items: list[Item] = []
    seen: dict[str, int] = {}
    for i, it in enumerate(items_raw):
        header, lines = blocks[i] if i < len(blocks) else (None, {})
        item = _item(it, i, lines, header, path)
        if item.id in seen:
            raise RubricError(
                path,
                lines.get("id", header),
                f"items[{i}].id",
                f"duplicate id {item.id!r} (first at items[{seen[item.id]}])",
            )
        seen[item.id] = i
        items.append(item)
    return Rubric(
        task_type=task_type.strip(),
        version=version,
        items=items,
        description=description,
        build=build,
        path=path,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


def load_rubric(path: str | os.PathLike[str]) -> Rubric:
    p = Path(path)
    if not p.exists():
        raise RubricError(str(p), None, "file", "does not exist")
    if p.is_dir():
        raise RubricError(str(p), None, "file", "is a directory, expected a .toml rubric file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise RubricError(str(p), None, "file", f"not UTF-8 text ({e.reason})") from None
    return parse_rubric(text, str(p))


# ------------------------------------------------------------------------------------------------ embedded

RUBRICS_DIR = Path(__file__).resolve().parent.parent / "rubrics"


def embedded_rubric_path(task_type: str) -> Path | None:
    """The rubric shipped with edgejudge for a task type (``labeler/rubrics/TASK.toml``), if any."""
    p = RUBRICS_DIR / f"{task_type}.toml"
    return p if p.is_file() else None


# ------------------------------------------------------------------------------------------------ writing


def _toml_str(s: str) -> str:
    """A TOML string: a literal string for regexes (no escaping needed) when possible, else a basic string."""
    if "'" not in s and "\n" not in s and all(ord(c) >= 32 for c in s):
        return f"'{s}'"
    return json.dumps(s, ensure_ascii=False)


def _toml_key(k: str) -> str:
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else json.dumps(k, ensure_ascii=False)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dump_rubric(rubric: Rubric, header: str = "") -> str:
    """Rubric as TOML text (readable: comments from ``header`` on top, one block per item)."""
    out: list[str] = []
    for line in header.strip("\n").splitlines():
        out.append(f"# {line}".rstrip())
    if out:
        out.append("")
    out += [
        f'format = "{RUBRIC_FORMAT}"',
        f"format_version = {RUBRIC_FORMAT_VERSION}",
        f"task_type = {json.dumps(rubric.task_type)}",
        f"version = {rubric.version}",
        f"description = {json.dumps(rubric.description, ensure_ascii=False)}",
    ]
    if rubric.build:
        out += ["", "[build]"]
        out += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in rubric.build.items()]
    for it in rubric.items:
        out += [
            "",
            "[[items]]",
            f'id = "{it.id}"',
            f'category = "{it.category}"',
            f"text = {json.dumps(it.text, ensure_ascii=False)}",
        ]
        if it.note:
            out.append(f"note = {json.dumps(it.note, ensure_ascii=False)}")
        for key in ("judge", *CHECK_KEYS):
            v = getattr(it, key)
            if v is None or key == "pairs" or (key == "judge" and not v):
                continue
            out.append(f"{key} = {_toml_str(v) if key in REGEX_KEYS else _toml_value(v)}")
        if it.pairs:
            out.append("[items.pairs]")
            out += [f"{json.dumps(o, ensure_ascii=False)} = {_toml_value(p)}" for o, p in it.pairs.items()]
    return "\n".join(out) + "\n"


def write_rubric(path: str | os.PathLike[str], rubric: Rubric, header: str = "") -> str:
    """Write atomically (temp + rename) after checking that the text parses back; returns the text."""
    text = dump_rubric(rubric, header)
    parse_rubric(text, str(path))  # never write a file we could not read back
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, p)
    return text
