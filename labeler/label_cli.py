"""``edgejudge label ...``: add dense reward channels to a trajectory dataset, and measure their quality.

Subcommands load lazily (like the top-level group), so ``edgejudge label quality`` runs without the LLM stack.
Each labeling method registers itself here with one line in :data:`LABEL_SUBCOMMANDS`:

* ``label coren``   — COREN consistency-guided reward ensemble (``labeler.coren.cli``)
* ``label potential`` — success-model potential ΔΦ, no judge (``labeler.potential.cli``)
* ``label quality`` — AUROC of every label channel vs the environment's ground truth (``labeler.quality``)
* ``label trca``    — TRCA rubric credit assignment (``labeler.trca.cli``)
* ``label audit``   — a person marks sampled steps; the quality check reads the marks (``labeler.audit.cli``)
* ``label spread``  — an audit's marks spread to every step, the channel ``audit.spread``
  (``labeler.audit.spread_cli``)
"""

from __future__ import annotations

import click

from models.lazy_group import LazyGroup

# name -> "module:attribute"; add your method here (one line).
LABEL_SUBCOMMANDS: dict[str, str] = {
    "trca": "labeler.trca.cli:trca",
    "coren": "labeler.coren.cli:coren",
    "potential": "labeler.potential.cli:potential",
    "quality": "labeler.quality:quality",
    "audit": "labeler.audit.cli:audit",
    "spread": "labeler.audit.spread_cli:spread_command",
}


@click.group(cls=LazyGroup, lazy_subcommands=LABEL_SUBCOMMANDS)
def label() -> None:
    """Label trajectories with dense rewards from a local LLM judge, and measure label quality.

    \b
    Typical use:
      edgejudge label coren data/dev.jsonl.gz --out data/dev.coren.jsonl.gz
      edgejudge label quality data/dev.coren.jsonl.gz --plot quality.png
    """
