"""``edgejudge train`` (policy.training.train_cli): its options say what the learners' configs say, so a
default cannot drift between the command and the config classes, and ``--algo`` offers the registry."""

from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from models.channel_choice import write_choice
from models.trajectory import Step, Trajectory, write_trajectories
from policy.scorer.model import TRAINING_READER, ScorerConfig
from policy.training.buffer import ScorerOptions
from policy.training.learners import registry
from policy.training.train_cli import _chosen_channel, train


def _option(name: str):
    return next(p for p in train.params if p.name == name)


def test_algo_offers_exactly_the_registry_with_its_help_lines():
    algo = _option("algo")
    assert list(algo.type.choices) == registry.names()
    for e in registry.LEARNERS:
        assert f"{e.name} ({e.help})" in algo.help


def test_option_defaults_are_the_learners_config_defaults():
    """``--seed`` is every learner's ``seed`` default; ``--steps`` has none of its own (the learner's)."""
    assert _option("steps").default is None
    for name in registry.names():
        fields = {f.name: f.default for f in dataclasses.fields(registry.learner(name).config)}
        assert fields["seed"] == _option("seed").default, name


def test_the_scorer_options_take_their_defaults_from_the_scorer_config():
    """One default per knob: the width training builds is the scorer config's, the reader training
    builds is named for it (a config without a reader means the older sentence-vector scorer)."""
    opts = {f.name: f.default for f in dataclasses.fields(ScorerOptions)}
    cfg = {f.name: f.default for f in dataclasses.fields(ScorerConfig)}
    assert opts["hidden"] == cfg["hidden"]
    assert opts["reader"] == TRAINING_READER != cfg["reader"]


def test_help_lists_the_learners_without_loading_them():
    result = CliRunner().invoke(train, ["--help"])
    assert result.exit_code == 0
    assert "credit" in result.output and "iql" in result.output


def test_reward_auto_without_a_recorded_choice_refuses_before_any_training(tmp_path):
    log = tmp_path / "fleet.trca.jsonl"
    steps = [Step("o", "a", ["a"], "o2", labels={"trca": {"total": 1.0}})]
    write_trajectories(log, [Trajectory("e", "i", "t", True, steps)])
    out = tmp_path / "ckpt"
    result = CliRunner().invoke(train, [str(log), "--algo", "iql", "--reward", "auto", "--out", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert f"--reward auto: no channel chosen for {log}: 'edgejudge label audit {log}'" in result.output
    assert "or name --reward" in result.output


def test_reward_auto_resolves_to_the_recorded_channel(tmp_path):
    log = tmp_path / "fleet.trca.jsonl"
    write_choice(log, "trca.progress", "person", "the audit by person supports it")
    assert _chosen_channel((str(log),)) == "trca.progress"
