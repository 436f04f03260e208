"""COREN: consistency-guided reward ensemble (Lee et al., Findings of EMNLP 2024, arXiv 2411.17135)."""
