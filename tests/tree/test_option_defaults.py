"""One default per knob: where a command's option sets a field of a config class, the option's default is
that field's default (or None, which leaves the config's own). The configs are where a default is written;
a command that spells it again would drift."""

from __future__ import annotations

import dataclasses

import click
import pytest

from labeler.coren.cli import coren
from labeler.coren.config import CorenConfig
from labeler.potential.cli import potential
from labeler.potential.model import PotentialConfig
from policy.training.learners import registry
from policy.training.train_cli import train


def drifted(command: click.Command, config: type, renames: dict[str, str] | None = None) -> list[str]:
    """The options of ``command`` named as a field of ``config`` (or through ``renames``, option -> field)
    whose default is neither None nor the field's."""
    fields = {f.name: f.default for f in dataclasses.fields(config)}
    renames = renames or {}
    bad = []
    for p in command.params:
        if not isinstance(p, click.Option):
            continue
        name = renames.get(p.name, p.name)
        if name in fields and p.default is not None and p.default != fields[name]:
            option = f"--{p.name.replace('_', '-')}"
            bad.append(f"{command.name} {option}: {p.default!r}, {config.__name__}: {fields[name]!r}")
    return bad


CASES = [
    pytest.param(potential, PotentialConfig, None, id="label potential"),
    pytest.param(coren, CorenConfig, None, id="label coren"),
    *(
        pytest.param(train, registry.learner(name).config, None, id=f"train --algo {name}")
        for name in registry.names()
    ),
]


@pytest.mark.parametrize(("command", "config", "renames"), CASES)
def test_option_defaults_are_the_config_defaults(command, config, renames):
    assert drifted(command, config, renames) == []


def test_the_check_sees_a_drifted_default():
    @dataclasses.dataclass
    class Cfg:
        folds: int = 5
        seed: int = 0

    @click.command()
    @click.option("--folds", default=4)
    @click.option("--seed", default=None)
    def cmd(folds, seed):
        pass

    assert drifted(cmd, Cfg) == ["cmd --folds: 4, Cfg: 5"]
