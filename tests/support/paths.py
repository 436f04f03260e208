"""Where the repository is, for tests that run its files or name its paths."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
