"""Policies: environments and collection, offline RL over candidate actions, evaluation, ONNX export.

Packages:

* ``envs`` — the environment adapters (TextWorldExpress, ScienceWorld, recorded logs): the worlds, importing
  only ``models``
* ``matrix`` — ``edgejudge matrix``: the policy matrix over worlds, reward sources, learners and data sizes,
  resumable, each step an ``edgejudge`` command

Modules:

* ``collect`` — scripted collection
* ``cli`` — ``edgejudge collect``
* ``env_contract`` — the adapter contract in full: the worlds' own checks and the collection check
* ``envs_cli`` — ``edgejudge envs`` and ``edgejudge envs check``
* ``features`` — sentence embeddings with an on-disk cache
* ``buffer`` — the transition table
* ``rewards`` — reward sources
* ``paths`` — hindsight loop erasure
* ``model`` — the structured, memoryful candidate scorer
* ``attention`` — the scorer's multi-head attention and transformer block
* ``token_reader`` — the scorer's token-level reading of items for each candidate
* ``model_flat`` — the flat scorer of format-1 bundles
* ``common`` — seeding, threads, checkpoints, the training loop
* ``train_paths`` — whether training takes its fast paths (or the reference computation)
* ``iql`` — Implicit Q-Learning
* ``cql`` — Conservative Q-Learning
* ``bc`` — behaviour cloning
* ``awr`` — advantage-weighted behaviour cloning
* ``credit`` — per-step credit from every episode's rewards: what to imitate, what to push away
* ``credit_bc`` — credit-weighted imitation with unlikelihood on harmful steps
* ``augment`` — entity-consistent renamed copies of episodes, the renamable names read from the log
* ``train`` — dataset -> features -> one algorithm -> checkpoint
* ``train_cli`` — ``edgejudge train``
* ``evaluate`` — real rollouts and the random baseline
* ``torch_policy`` — a checkpoint as a policy
* ``decisions`` — per-decision accuracy against logged actions, per verb
* ``decisions_cli`` — ``edgejudge decisions``
* ``replay_misses`` — which wrong decisions cost the episode: each miss replayed in its world
* ``llm_policy`` — the LLM-as-agent baseline
* ``episode_policy`` — an adapter's task strategies and the loop guard composed over a policy
* ``twx_placement`` — TextWorld's opt-in put-away strategy (``--strategy placement-search``)
* ``eval_cli`` — ``edgejudge eval``, in process or through edge-serve
* ``export`` — bundle assembly
* ``policy_graph`` — the scorer graph
* ``encoder_graph`` — the MiniLM encoder graph
* ``static_encoder`` — the static encoder kind
* ``encoder_opt`` — the opt-in int8 encoder
* ``export_common`` — what the exporters share
* ``export_cli`` — ``edgejudge export``
"""
