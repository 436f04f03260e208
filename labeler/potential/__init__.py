"""The success-model potential: a label method that needs no judge (``edgejudge label potential``).

A small logistic model, fit on the log's own success flags and cross-fitted, gives each episode prefix a
potential Φ (the log-odds of success); a step's reward is ΔΦ.

Modules, one job each:

* :mod:`labeler.potential.features` — what a step adds to what its episode knows (text only, any layout)
* :mod:`labeler.potential.model`    — the logistic model over episode prefixes, cross-fitted, and ΔΦ
* :mod:`labeler.potential.cli`      — ``edgejudge label potential``
"""
