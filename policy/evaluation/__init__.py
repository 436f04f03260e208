"""Evaluation: how well a policy acts and decides.

Modules:

* ``evaluate`` — real rollouts and the random baseline
* ``torch_policy`` — a checkpoint as a policy
* ``decisions`` — per-decision accuracy against logged actions, per verb
* ``decisions_cli`` — ``edgejudge decisions``
* ``replay_misses`` — which wrong decisions cost the episode: each miss replayed in its world
* ``llm_policy`` — the LLM-as-agent baseline
* ``eval_cli`` — ``edgejudge eval``, in process or through edge-serve
"""
