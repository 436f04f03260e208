"""TRCA: Transition-wise Rubric Credit Assignment (arXiv 2608.16156).

Rubric items (Evidence +, Execution +, Invalidity -) carry deterministic checks on a transition
(observation, action, next observation); the judge instantiates them offline (``rubrics build``), so
labeling needs no judge call.

Modules, one job each:

* :mod:`labeler.trca.rubric`     — rubric file format: schema, TOML parser with file:line errors, writer
* :mod:`labeler.trca.checks`     — the transition view and the compiled deterministic checks
* :mod:`labeler.trca.rewards`    — foundational r^F, breakthrough r^B, the λ mix
* :mod:`labeler.trca.advantages` — completion-aware returns, episode- and step-relative advantages
* :mod:`labeler.trca.mine`       — transition templates, objects and places mined from a dataset (no model)
* :mod:`labeler.trca.tagging`    — the judge's tag prompt, its examples and calibration for the builder
* :mod:`labeler.trca.grounding`  — success-grounded statistics and verdicts of candidate checks
* :mod:`labeler.trca.build`      — the offline rubric builder (the judge chooses among the mined checks)
* :mod:`labeler.trca.found`      — the items the builder finds in the data alone (no judge)
* :mod:`labeler.trca.crossfit`   — the builder's held-out check over folds of the log
* :mod:`labeler.trca.pipeline`   — labels a dataset file (two streaming passes, atomic output)
* :mod:`labeler.trca.cli`        — ``edgejudge label trca``
"""
