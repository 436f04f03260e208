"""The lazy command groups the root CLI and lazy-group tests go over."""

from __future__ import annotations

from labeler.label_cli import LABEL_SUBCOMMANDS, label
from models.cli import SUBCOMMANDS, main

GROUPS = [(main, SUBCOMMANDS), (label, LABEL_SUBCOMMANDS)]
