"""Labeling: the trajectory format, the local judge, and the dense reward labelers TRCA and COREN.

Packages: ``judge`` (the local GGUF judge over llama.cpp), ``trca`` (rubric credit assignment), ``coren``
(consistency-guided reward ensemble), ``cluster`` (labeling on Ray judge actors, optional), ``prompts`` and
``rubrics`` (shipped prompt and rubric files).

Modules: ``dataset`` (the JSON Lines trajectory format, validated reads, atomic writes), ``cache`` (the
crash-safe SQLite answer cache), ``prompting`` (completion prompts and chat templates), ``quality`` (label
quality against ground truth), ``label_check`` (label quality from the success flags alone), ``paths`` (loop
erasure over world states), ``progress`` (progress bars), ``llama_log`` (llama.cpp's log lines to a file), and
the command lines ``cli`` (``edgejudge data``), ``judge_cli``, ``label_cli`` and ``rubrics_cli``.

Imports ``models`` and ``edge``, never ``policy``.
"""
