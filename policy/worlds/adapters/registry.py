"""Environment names (``ADAPTER:TASK`` plus ``key=value,...`` parameters) and the registry of adapters.

Built-in adapters are imported only when named, so naming one never starts another's simulator. Adapters of
other packages register under the ``edgejudge.envs`` entry-point group (``name = "module:Class"``); an adapter
that is not installed as a package can be named in ``EDGEJUDGE_ENVS`` (``name=module:Class``, comma-separated)
with its directory on ``PYTHONPATH``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from models import settings
from policy.worlds.adapters.base import EnvAdapter, EnvError, EnvSpec

BUILTIN: dict[str, str] = {
    "twx": "policy.worlds.adapters.twx:TWXAdapter",
    "scienceworld": "policy.worlds.adapters.scienceworld:ScienceWorldAdapter",
}


def _entry_points() -> dict[str, str]:
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _from_environment() -> dict[str, str]:
    out = {}
    for item in filter(None, (s.strip() for s in settings.env_adapters().split(","))):
        name, eq, target = item.partition("=")
        if not eq or ":" not in target:
            raise EnvError(f"bad EDGEJUDGE_ENVS entry {item!r}: expected name=module:Class")
        out[name.strip()] = target.strip()
    return out


ENTRY_POINT_GROUP = "edgejudge.envs"

HOW_TO_REGISTER = (
    "register an adapter with EDGEJUDGE_ENVS=NAME=module:Class (comma-separated, the module's folder on "
    f"PYTHONPATH) or an entry point in the {ENTRY_POINT_GROUP!r} group of an installed package "
    "(docs/environments.md)"
)
"""The end of every error about a name the registry does not know or cannot load."""


def _where(name: str) -> str:
    """Where ``name``'s registration comes from (the last of these wins, as in :func:`adapters`)."""
    if name in _from_environment():
        return "EDGEJUDGE_ENVS"
    if name in _entry_points():
        return f"entry point {ENTRY_POINT_GROUP!r}"
    return "built in"


def adapters() -> dict[str, str]:
    """Adapter name -> ``module:Class``: built-ins, then entry points, then ``EDGEJUDGE_ENVS``."""
    return {**BUILTIN, **_entry_points(), **_from_environment()}


def adapter_class(name: str) -> type[EnvAdapter]:
    """The adapter class registered as ``name``; EnvError listing the registered ones."""
    known = adapters()
    if name not in known:
        raise EnvError(
            f"unknown environment adapter {name!r}: expected one of {', '.join(sorted(known))}; "
            + HOW_TO_REGISTER
        )
    target = known[name]
    module, _, attr = target.partition(":")
    where = _where(name)
    try:
        loaded = importlib.import_module(module)
    except ImportError as e:
        missing = getattr(e, "name", None)
        if missing and module.split(".")[0] == missing.split(".")[0]:
            fix = (
                f"put the folder that holds {module.replace('.', '/')}.py on PYTHONPATH, or install the "
                f"package that provides it; {HOW_TO_REGISTER}"
            )
        else:  # the adapter's module was found; one of its own imports is missing
            fix = f"install what {module} imports"
        raise EnvError(
            f"environment adapter {name!r} ({target}, {where}) cannot be loaded: {e}: {fix}"
        ) from None
    cls = getattr(loaded, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, EnvAdapter)):
        what = "has no" if cls is None else "has a non-adapter"
        raise EnvError(
            f"environment adapter {name!r} ({target}, {where}) cannot be loaded: module {module} {what} "
            f"attribute {attr!r} (an EnvAdapter subclass): name the class as module:Class"
        )
    return cls


def parse_params(text: str | Mapping[str, str] | None) -> dict[str, str]:
    """``"a=1,b=x"`` (or a mapping) -> ``{"a": "1", "b": "x"}``; EnvError for a part without ``=``."""
    if text is None:
        return {}
    if isinstance(text, Mapping):
        return {str(k): str(v) for k, v in text.items()}
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise EnvError(f"bad parameter {part!r} in {text!r}: expected key=value, comma-separated")
        out[key.strip()] = value.strip()
    return out


def parse_env(name: str, params: str | Mapping[str, str] | None = None) -> EnvSpec:
    """Check ``ADAPTER:TASK`` and its parameters against the registry; the resolved :class:`EnvSpec`.

    Every error is one line that lists the valid names, tasks or parameters."""
    adapter, colon, task = name.partition(":")
    if not colon or not adapter or not task:
        raise EnvError(
            f"bad environment name {name!r}: expected ADAPTER:TASK with ADAPTER one of "
            f"{', '.join(sorted(adapters()))} (e.g. twx:twc)"
        )
    cls = adapter_class(adapter)
    if task not in cls.tasks:
        raise EnvError(f"unknown {adapter} task {task!r}: expected one of {', '.join(cls.tasks)}")
    given = parse_params(params)
    known = cls.parameters(task)
    for key, value in given.items():
        if key not in known:
            valid = ", ".join(known) if known else "none"
            raise EnvError(f"unknown parameter {key!r} for {name}: expected one of {valid}")
        given[key] = known[key].check(key, value)
    return EnvSpec(adapter=adapter, task=task, params=cls.resolve(task, given))


def open_env(spec: EnvSpec | str, step_limit: int = 50, params: str | None = None) -> EnvAdapter:
    """Open the world named by ``spec`` (an :class:`EnvSpec`, or a name parsed with ``params``)."""
    if isinstance(spec, str):
        spec = parse_env(spec, params)
    return adapter_class(spec.adapter)(spec, step_limit=step_limit)


def describe() -> list[str]:
    """One line per registered ``ADAPTER:TASK`` with its description (adapters that cannot load say why)."""
    lines = []
    for name in sorted(adapters()):
        try:
            cls = adapter_class(name)
        except EnvError as e:
            lines.append(f"{name}: unavailable ({e})")
            continue
        for task, text in cls.tasks.items():
            lines.append(f"{name}:{task}  {text}")
    return lines
