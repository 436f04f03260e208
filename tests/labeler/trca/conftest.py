"""Fixtures the tests of this folder share."""

from __future__ import annotations

import pytest

from models.trajectory import write_trajectories
from tests.support.trca_toy import RUBRIC, toy_dataset


@pytest.fixture
def files(tmp_path):
    data, rub = tmp_path / "toy.jsonl", tmp_path / "toy.toml"
    write_trajectories(data, toy_dataset())
    rub.write_text(RUBRIC)
    return data, rub
