"""The policy's inputs: what training builds and a bundle reads, defined once for both sides.

A policy reads a state text, the episode so far and the candidate actions. How they become arrays is the
contract between the trainers (``policy/``) and the runtime (``edge/``); it lives here so that neither side
can drift from the other. Stdlib, numpy and ``models`` only.

Modules:

* ``state`` — a state text and its episode memory as items, through the layout alone: the response, the
  memory window, the facts, the state-encoding numbers
* ``candidates`` — candidate feature kinds and how a candidate's text becomes its features
* ``arrays`` — a state and its memory as a format-2 bundle's arrays, and batches of them
* ``tokens`` — the token ids of items and candidates that a format-3 bundle reads
* ``formats`` — one builder per bundle format, from texts to the named inputs: the runtime's and the
  checkpoint policy's
* ``schema`` — the policy graph's inputs per bundle format: name, dtype and dimensions
"""
