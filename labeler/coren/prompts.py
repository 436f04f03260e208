"""COREN prompt variants and query templates: versioned TOML files under ``labeler/prompts/coren/``.

* ``p{k}_{name}.v{version}.toml`` — one prompt variant: ``name``, ``version``, ``style`` (plain | few-shot |
  cot) and its ``header`` (instructions and in-context examples). The paper's five: plain, three sets of
  in-context examples, one chain-of-thought style. ``--prompts N`` uses the first N in file order.
* ``templates.v{version}.toml`` — the query bodies shared by all variants (step rating, the multiple-choice
  candidate query, structural question, backward verification) and the rating scale.

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

    @property
    def template_id(self) -> str:
        return f"coren.{self.name}"

    @property
    def cot(self) -> bool:
        return self.style == "cot"


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
    return CorenPrompt(
        index=index,
        name=_field(data, "name", str, path),
        version=version,
        style=style,
        header=_field(data, "header", str, path),
        sha256=sha,
        path=path,
        reasoning_tokens=reasoning,
    )


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
    files = sorted(folder.glob("templates.v*.toml"))
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
    )
