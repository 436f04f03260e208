"""COREN: consistency-guided reward ensemble (Lee et al., Findings of EMNLP 2024, arXiv 2411.17135).

Modules:

* :mod:`~labeler.coren.cli` — ``edgejudge label coren``.
* :mod:`~labeler.coren.run` — what the command runs: the judging, the orchestrator, the labels and the report.
* :mod:`~labeler.coren.judge_session` — the judge a run asks: the local GGUF judge or the Ray judge pool.
* :mod:`~labeler.coren.dry_run` — ``--dry-run``: queries, tokens and the estimated time, without judging.
* :mod:`~labeler.coren.pipeline` — :class:`~labeler.coren.pipeline.CorenLabeler`: QA set, judge work, labels.
* :mod:`~labeler.coren.queries` — step texts within their token budgets and every query's text; the dry run.
* :mod:`~labeler.coren.judging` — the judge calls (rating and candidate queries, backward checks, QA answers).
* :mod:`~labeler.coren.assembly` — the three channels from the answers, and each step's labels.
* :mod:`~labeler.coren.config` — labeling options and the input check.
* :mod:`~labeler.coren.report` — the labeling report.
* :mod:`~labeler.coren.prompts` — the versioned prompt variants and query templates.
* :mod:`~labeler.coren.examples` — in-context examples built from the user's own logs, per task type.
* :mod:`~labeler.coren.texts` — text fitting (truncation rule) and the transition text.
* :mod:`~labeler.coren.voting` — calibration, scale positions, majority and filtered votes.
* :mod:`~labeler.coren.structural` — the structural QA set, retrieval and answer checks.
* :mod:`~labeler.coren.temporal` — high-value actions and the backward verification.
* :mod:`~labeler.coren.orchestrator` — the learned per-step weights of the three channels.
"""
