"""Labeling: the trajectory format, the local judge, and the dense reward labelers TRCA, COREN and the
success-model potential.

Imports ``models`` and ``edge``, never ``policy``.

Packages:

* ``judge`` — the local GGUF judge over llama.cpp
* ``trca`` — rubric credit assignment
* ``coren`` — consistency-guided reward ensemble
* ``potential`` — the success-model potential: ΔΦ from a model of the log's own success flags (no judge)
* ``cluster`` — labeling on Ray judge actors (optional)
* ``prompts`` — shipped prompt files
* ``rubrics`` — shipped rubric files

Modules:

* ``dataset`` — the JSON Lines trajectory format, validated reads (inferring a missing layout), atomic writes
* ``log_layout`` — which trajectories need an inferred state layout, and the one notice that says so
* ``dataset_summary`` — a dataset file's numbers and the layout it is read with, for ``edgejudge data``
* ``subset`` — the success-scarce subset of a log (``edgejudge data subset``)
* ``response_only`` — a log rewritten as a response-only log (``edgejudge data response-only``) or flattened
  into plain text without its layout
* ``cache`` — the crash-safe SQLite answer cache
* ``auroc`` — AUROC by ranks, which the label checks share
* ``quality`` — label quality against ground truth (``edgejudge label quality``)
* ``label_check`` — label quality from the success flags alone
* ``view`` — what a trajectory's texts say, read once: layout, responses, partial states, world keys, path
* ``progress`` — progress bars
* ``llama_log`` — llama.cpp's log lines to a file
* ``cli`` — ``edgejudge data``
* ``judge_cli`` — ``edgejudge judge``
* ``label_cli`` — ``edgejudge label``
* ``rubrics_cli`` — ``edgejudge rubrics``
"""
