"""Rubric libraries shipped with edgejudge: TASK_TYPE.toml (see labeler.trca.rubric for the format)."""
