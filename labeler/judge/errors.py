"""The judge's two error types: a query it cannot answer as asked, and a model file llama.cpp cannot load."""

from __future__ import annotations

from models.registry import ModelError


class JudgeError(ValueError):
    """A query the judge cannot answer as asked (too long for the context, empty choice, bad option)."""


class JudgeLoadError(ModelError):
    """llama.cpp could not load the model file."""
