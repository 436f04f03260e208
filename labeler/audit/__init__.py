"""Step audits: a person (or the judge) marks sampled steps of a log as progress, harmful or neither, and the
label check reads the marks to tell which channel's step credit holds (``edgejudge label audit``,
``edgejudge label quality --audit``).

Modules:

* ``marks`` — the marks file: one JSON line per mark, appended and synced, read back with undos applied
* ``sample`` — which steps to audit: stratified by the episode's outcome and by how much the channels disagree
* ``view`` — a step as the person sees it: the instruction, the episode so far in short, the step, what
  followed
* ``agreement`` — each channel's credit against the marks: AUROC with a bootstrap interval, and the channel
  the audit supports
* ``judge_audit`` — the local judge marks the sample: two prompt variants per step, marked where they agree
* ``spread`` — the marks spread to every step by what the steps did (cross-fitted), and the auditor's
  consistency across episodes
* ``cli`` — ``edgejudge label audit``: the terminal session, one keystroke per mark, or the judge's marks
* ``spread_cli`` — ``edgejudge label spread``: the channel ``audit.spread`` written onto a log
"""
