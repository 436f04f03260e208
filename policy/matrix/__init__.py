"""The policy matrix (``edgejudge matrix``): success per world, reward source, learner, training-data size and
seed, each trained policy exported and driven through edge-serve; resumable, one cached step per command.

It stands above the rest of ``policy`` and ``labeler``: it runs their commands in subprocesses and reads
their files, and nothing below imports it.

Modules:

* ``recipes`` — the reward sources and the recipes (a learner with its settings), one line each
* ``plan`` — worlds (presets or any adapter), sizes, and the configuration of every row
* ``store`` — rows keyed by their configuration in one JSON file, rewritten atomically; merging runs
* ``data`` — a world's collected pool, its success-scarce cuts in each log shape, their rubrics and labels
* ``run`` — the rows computed: train, export, decisions, evaluation through edge-serve, backfill
* ``rounds`` — the loop: each policy deployed, its episodes logged, labeled and trained on again, per round
* ``groups`` — rows grouped per configuration, their names, and the cells every table shares
* ``report`` — the Markdown tables
* ``plot`` — the PNG
* ``rounds_report`` — the loop's table per round and learner beside its baselines, and its PNG
* ``labels`` — the label grid: world x log shape x label method, label quality before any training
* ``labels_audit`` — the judge's audit in the label grid: the channel the check names against the best one
* ``cli_args`` — what the two commands share: the recorded command line, option parsing, adapter checks
* ``labels_cli`` — ``edgejudge matrix labels``
* ``cli`` — ``edgejudge matrix`` (and its subcommand ``labels``)
"""
