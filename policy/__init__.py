"""Policies: the worlds and collection, text encoders, the scorer, its learners, export and evaluation.

Each folder is one job; a newcomer looks for a thing where its job is:

* ``worlds`` — the environment adapters (``worlds/adapters/``, importing only ``models``), collection with
  scripted behaviours, the adapter contract's collection check, the task strategies, ``edgejudge collect`` and
  ``edgejudge envs``
* ``encoders`` — the text encoders: cached sentence embeddings, the static and int8 kinds, the MiniLM graph
* ``scorer`` — the structured, memoryful candidate scorer (and the flat one of format-1 bundles)
* ``training`` — the transition table, reward sources, the learners (``training/learners/``) and
  ``edgejudge train``
* ``export`` — the bundle: the scorer graph, parity checks, ``edgejudge export``
* ``evaluation`` — real rollouts, per-decision accuracy, replay of misses, the LLM-as-agent baseline,
  ``edgejudge eval`` and ``edgejudge decisions``
* ``matrix`` — ``edgejudge matrix``: the policy matrix over worlds, reward sources, learners and data sizes,
  resumable, each step an ``edgejudge`` command; nothing else imports it
* ``envs`` — the adapter API's former home, kept one release as a re-export of ``policy.worlds.adapters``
"""
