"""The world a dataset, checkpoint or bundle records, and the check that a policy meets its own state format.

Collection records in every trajectory's ``meta`` the environment (``env``, ``params``) and the adapter's
``state_format`` and ``state_layout``. Training copies them into the checkpoint's provenance (``world``),
export into the bundle's manifest. Evaluation and the edge drivers refuse to run a policy in a world that
composes its state texts in another format: its scores there would mean nothing. Records without a format
(older datasets and bundles) are the ``twx/1`` format. No simulator is needed here.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from models.state_layout import LEGACY_STATE_FORMAT, policy_world, state_format_of
from policy.worlds.adapters.base import EnvError, EnvSpec
from policy.worlds.adapters.registry import adapter_class


def dataset_world(trajectories: Iterable[Any]) -> dict[str, Any]:
    """The world of a dataset's trajectories (``env``/``params`` when they all share them); EnvError when
    they mix state formats."""
    trajs = list(trajectories)
    formats = sorted({state_format_of(t.meta) for t in trajs})
    if len(formats) > 1:
        named = ", ".join(f or "(none)" for f in formats)
        raise EnvError(f"the dataset mixes state formats {named}: train on one format at a time")
    envs = sorted({(str(t.meta.get("env", "")), str(t.meta.get("params", ""))) for t in trajs})
    world: dict[str, Any] = {"state_format": formats[0]} if formats and formats[0] else {}
    if trajs:
        world["state_layout"] = trajs[0].view.layout.to_dict()
    if len(envs) == 1 and envs[0][0]:
        world["env"], world["params"] = envs[0]
    elif len(envs) > 1:
        world["envs"] = [f"{e}[{p}]" if p else e for e, p in envs if e]
    return world


def recorded_world(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The world a bundle (``manifest.json``) or checkpoint (``checkpoint.json``) records; ``{}`` if none."""
    p = Path(path)
    if (p / "manifest.json").is_file():
        from models.bundle import load_manifest

        return dict(load_manifest(p, verify=False).world)
    if (p / "checkpoint.json").is_file():
        meta = json.loads((p / "checkpoint.json").read_text())
        return dict(meta.get("provenance", {}).get("world") or {})
    return {}


def check_world(recorded: Mapping[str, Any], spec: EnvSpec, what: str = "the policy") -> None:
    """EnvError unless ``spec``'s adapter composes the state format ``recorded`` says the policy was trained
    on, or one it declares it stands in for (``EnvAdapter.compatible_formats``: the same parts, values
    written differently), which is said in one line on stderr."""
    cls = adapter_class(spec.adapter)
    trained = state_format_of(policy_world(recorded))
    composes = cls.state_format
    if trained != composes and trained in cls.compatible_formats:
        print(
            f"note: {what} was trained on state format {trained!r}; {spec.name} composes {composes!r}, which "
            "has the same parts with values written differently",
            file=sys.stderr,
        )
        return
    if not trained:
        raise EnvError(
            f"{what} was trained on a log that names no state format (a log no environment adapter wrote), "
            f"but {spec.name} composes {composes!r}: evaluate it where its states come from, e.g. through "
            "edge-serve on the robot"
        )
    if trained != composes:
        where = f" in {recorded['env']}" if recorded.get("env") else ""
        raise EnvError(
            f"{what} was trained{where} on state format {trained!r}, but {spec.name} composes "
            f"{composes!r}: run it in a world of its own format, or train a policy for this one"
        )


def default_env(recorded: Mapping[str, Any]) -> tuple[str, str | None]:
    """The environment to evaluate in when none is given: the recorded one; ``twx:twc`` for a policy of the
    ``twx/1`` format that records none (said in one line on stderr); EnvError for a policy trained on a log
    that names no environment (a user's own log: there is no simulator to guess)."""
    if recorded.get("env"):
        return str(recorded["env"]), recorded.get("params") or None
    if state_format_of(policy_world(recorded)) == LEGACY_STATE_FORMAT:
        print(
            "note: the policy records no environment; evaluating in twx:twc (its state format twx/1)",
            file=sys.stderr,
        )
        return "twx:twc", None
    raise EnvError(
        "the policy was trained on a log that names no environment: give --env NAME (edgejudge envs lists "
        "the simulated worlds); a user's own world is evaluated where its states come from, e.g. through "
        "edge-serve"
    )
