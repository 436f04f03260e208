"""COREN prompt variants and query templates: versioned TOML files under ``labeler/prompts/coren/``.

A query is ``variant header + templates preamble + body + variant tail``:

* ``templates.v{version}.toml`` — what all variants share: the ``preamble`` (instructions and in-context
  examples), the query bodies (step rating, the multiple-choice candidate query, structural question, backward
  verification), the default rating tail and the scale.
* ``p{k}_{name}.v{version}.toml`` — one prompt variant: ``name``, ``version``, ``style`` (plain | few-shot |
  cot), an optional ``header`` and its tails (``rate_tail``, ``choose_tail``, ``qa_tail``, ``backward_tail``).
  ``--prompts N`` uses the first N in file order.

Layout 2 (the shipped files): one shared preamble, variants differ only in their short tails, so a step's text
is evaluated once per trajectory for all variants (the judge's prefix reuse and parallel tails). Layout 1
(``v1/``: a header with its own examples per variant, empty tails) evaluated every step once per variant; it
stays loadable (``load_prompts(n, PROMPT_DIR / "v1")``) for comparison.

Every judge query carries ``template="coren.<name>"`` / ``"coren.templates"`` and the file's version, so the
judge cache never mixes answers of different prompt texts; bump the version whenever a file's text changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import tomllib

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts" / "coren"
STYLES = ("plain", "few-shot", "cot")


class PromptError(ValueError):
    """A prompt or template file that is missing a field or has a bad value (``file: field: problem``)."""


@dataclass(frozen=True)
class CorenPrompt:
    index: int
    name: str
    version: int
    style: str
    header: str
    sha256: str
    path: Path
    reasoning_tokens: int = 0  # cot only: the most tokens of generated reasoning
    rate_tail: str = ""  # after the step (empty: the templates' ``rating``)
    choose_tail: str = ""  # after the candidate list
    qa_tail: str = ""  # after the structural question's observation
    backward_tail: str = ""  # after the plan

    @property
    def template_id(self) -> str:
        return f"coren.{self.name}"

    @property
    def cot(self) -> bool:
        return self.style == "cot"

    def tails(self) -> tuple[str, ...]:
        return (self.rate_tail, self.choose_tail, self.qa_tail, self.backward_tail)


@dataclass(frozen=True)
class Templates:
    version: int
    step: str
    choose: str
    letters: str
    reasoning: str
    rating: str
    choices: tuple[str, ...]
    values: tuple[int, ...]
    qa: str
    backward: str
    backward_choices: tuple[str, ...]
    sha256: str
    path: Path
    preamble: str = ""  # shared by every variant, before the query body
    examples_source: str = "file"  # 'file': the preamble's examples as written; 'data': built from the logs
    examples: tuple[dict, ...] = ()  # the examples built from the logs (labeler.coren.examples)

    template_id = "coren.templates"


def _load(path: Path) -> tuple[dict, str]:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise PromptError(f"{path}: cannot read ({e.strerror})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise PromptError(f"{path}: not valid TOML ({e})") from None
    return data, hashlib.sha256(raw).hexdigest()


def _field(data: dict, key: str, kind: type, path: Path):
    if key not in data:
        raise PromptError(f"{path}: {key}: missing")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) != (kind is bool):
        raise PromptError(f"{path}: {key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def load_prompt(path: Path, index: int) -> CorenPrompt:
    data, sha = _load(path)
    style = _field(data, "style", str, path)
    if style not in STYLES:
        raise PromptError(f"{path}: style: {style!r} is not one of {', '.join(STYLES)}")
    reasoning = int(data.get("reasoning_tokens", 0))
    if style == "cot" and reasoning < 1:
        raise PromptError(f"{path}: reasoning_tokens: a cot prompt needs reasoning_tokens >= 1")
    version = _field(data, "version", int, path)
    if version < 1:
        raise PromptError(f"{path}: version: must be >= 1, got {version}")
    tails = {k: _optional(data, k, path) for k in ("rate_tail", "choose_tail", "qa_tail", "backward_tail")}
    header = _optional(data, "header", path)
    if not header and not any(tails.values()):
        raise PromptError(f"{path}: header: missing (a variant needs a header or its tails)")
    return CorenPrompt(
        index=index,
        name=_field(data, "name", str, path),
        version=version,
        style=style,
        header=header,
        sha256=sha,
        path=path,
        reasoning_tokens=reasoning,
        **tails,
    )


def _optional(data: dict, key: str, path: Path) -> str:
    return _field(data, key, str, path) if key in data else ""


def prompt_files(folder: Path = PROMPT_DIR) -> list[Path]:
    return sorted(p for p in folder.glob("p*_*.v*.toml"))


def load_prompts(n: int, folder: Path = PROMPT_DIR) -> list[CorenPrompt]:
    """The first ``n`` prompt variants in file order (p0 plain, p1-p3 in-context examples, p4 cot)."""
    files = prompt_files(folder)
    if not 1 <= n <= len(files):
        raise PromptError(f"--prompts must be between 1 and {len(files)} (prompt files in {folder}), got {n}")
    prompts = [load_prompt(p, i) for i, p in enumerate(files[:n])]
    names = [p.name for p in prompts]
    if len(set(names)) != len(names):
        raise PromptError(f"{folder}: prompt names must be unique, got {names}")
    return prompts


def load_templates(folder: Path = PROMPT_DIR) -> Templates:
    files = sorted(folder.glob("templates.v*.toml"), key=lambda f: int(f.name.split(".v")[1].split(".")[0]))
    if not files:
        raise PromptError(f"{folder}: no templates.v*.toml")
    path = files[-1]
    data, sha = _load(path)
    choices = tuple(_field(data, "choices", list, path))
    values = tuple(_field(data, "values", list, path))
    if len(choices) != len(values) or len(choices) < 2:
        raise PromptError(f"{path}: choices/values: need the same number (>= 2) of each")
    if not all(isinstance(v, int) for v in values) or list(values) != sorted(values):
        raise PromptError(f"{path}: values: expected increasing integers")
    back = tuple(_field(data, "backward_choices", list, path))
    if len(back) != 2:
        raise PromptError(f"{path}: backward_choices: expected [yes, no]")
    return Templates(
        version=_field(data, "version", int, path),
        step=_field(data, "step", str, path),
        choose=_field(data, "choose", str, path),
        letters=_field(data, "letters", str, path),
        reasoning=_field(data, "reasoning", str, path),
        rating=_field(data, "rating", str, path),
        choices=choices,
        values=values,
        qa=_field(data, "qa", str, path),
        backward=_field(data, "backward", str, path),
        backward_choices=back,
        sha256=sha,
        path=path,
        preamble=_optional(data, "preamble", path),
    )
