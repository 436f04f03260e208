"""The learners: one module each, and the registry that names them.

A learner is one module ending with ``LEARNER = Learner(...)`` and one line in ``registry`` (docs/training.md,
"Add a learner").

Modules:

* ``registry`` — the learners ``edgejudge train --algo`` offers, one line each (imports no learner)
* ``base`` — what a learner declares: its config, the data it selects, the labels it needs
* ``iql`` — Implicit Q-Learning
* ``cql`` — Conservative Q-Learning
* ``bc`` — behaviour cloning
* ``awr`` — advantage-weighted behaviour cloning
* ``credit`` — credit-weighted imitation with unlikelihood on harmful steps
"""
