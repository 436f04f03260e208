"""The robot side: ``edge-serve`` and its clients. Imports only ``models`` (never torch or an LLM).

Nothing here parses a world's text: state texts and world keys come from the client's environment adapter,
and a state is split only by the layout its bundle records. The C++ client is in ``edge/cpp``.

Modules:

* ``serve`` — the ``edge-serve`` command line
* ``serve_config`` — the daemon's settings
* ``server`` — the daemon loop: socket, micro-batches, the workers' broker, signals, replies
* ``workers`` — the scoring threads and the loop's pool of them
* ``scoring`` — the answers to one batch's ``act`` requests
* ``reload`` — hot reload in a helper thread
* ``control`` — the control ops (health, info, reload) and the reload's way to the swap
* ``process_pool`` — worker processes: the broker's ipc:// backend, replacement of a dead worker
* ``worker_process`` — one worker process: its own interpreter and onnxruntime session
* ``curve`` — CURVE certificates and allowed clients
* ``runtime`` — the bundle's encoder and scorer in onnxruntime, with the embedding cache
* ``text_encoder`` — the bundle's tokenizer and encoder runs
* ``bundle_policy`` — the same runtime as an in-process policy
* ``metrics`` — Prometheus text
* ``logs`` — JSON log lines, systemd notify
* ``launch`` — start a daemon and read its endpoint
* ``protocol`` — msgpack messages and errors (both ends)
* ``protocol_vectors`` — byte-level test vectors shared with the C++ client
* ``client`` — ``EdgeClient``
* ``query_cli`` — ``edgejudge query``
* ``policies`` — the one policy interface and base, the episode memory and the wrappers
* ``edge_policy`` — ``EdgePolicy``: the daemon as a policy
* ``loop_guard`` — client-side loop breaking from the episode's history
* ``episode_log`` — the robot's episode log: what the deployed policy did, in the trajectory format
"""
