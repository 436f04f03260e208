"""Labeling: the local judge and the dense reward labelers TRCA, COREN and the success-model potential, over
the trajectory format of :mod:`models.trajectory`.

Imports ``models`` and ``edge``, never ``policy``.

Packages:

* ``judge`` — the local GGUF judge over llama.cpp
* ``trca`` — rubric credit assignment
* ``coren`` — consistency-guided reward ensemble
* ``potential`` — the success-model potential: ΔΦ from a model of the log's own success flags (no judge)
* ``cluster`` — labeling on Ray judge actors (optional)
* ``audit`` — a person's (or the judge's) marks on sampled steps, and each channel's credit against them
* ``prompts`` — shipped prompt files
* ``rubrics`` — shipped rubric files

Modules:

* ``dataset_summary`` — a dataset file's numbers and the layout it is read with, for ``edgejudge data``
* ``subset`` — the success-scarce subset of a log (``edgejudge data subset``)
* ``response_only`` — a log rewritten as a response-only log (``edgejudge data response-only``) or flattened
  into plain text without its layout
* ``cache`` — the crash-safe SQLite answer cache
* ``auroc`` — AUROC by ranks, which the label checks share
* ``quality`` — label quality against ground truth (``edgejudge label quality``)
* ``label_check`` — label quality from the success flags alone
* ``label_writer`` — the one way the labelers put a method's channels and provenance on a log and write it,
  with the closing label check
* ``folds`` — the cross-fit folds (stratified by the success flag) that the potential, TRCA's held-out rubric
  check and COREN's orchestrator check share
* ``llama_log`` — llama.cpp's log lines to a file
* ``cli`` — ``edgejudge data``
* ``judge_cli`` — ``edgejudge judge``
* ``label_cli`` — ``edgejudge label``
* ``rubrics_cli`` — ``edgejudge rubrics``
"""
