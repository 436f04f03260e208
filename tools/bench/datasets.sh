#!/usr/bin/env bash
# docs/benchmarks/labeling.md, "Data sets": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

# the held-out TWC dev set of every label-quality table (30 episodes, 622 steps, 223 with score progress,
# 153 on the gold path, 21 successes; tools.bench.benchlib.HELDOUT_DEV_COLLECT makes it the same way)
edgejudge collect --env twx:twc --split dev --episodes 30 --behaviour gold-noise --noise 0.4 --seed 1 \
    --out runs/dev30.jsonl.gz
# the TWC training file of the policy tables (300 episodes, 38.7 % successful; edgejudge data subset
# --max-success-rate 0.3 cuts it to 262 episodes, 29.8 % successful, 8,547 steps) and its TRCA labels (shipped rubric)
edgejudge collect --env twx:twc --split train --episodes 300 --behaviour "gold-noise=0.3,random=0.7" \
    --noise 0.3 --seed 0 --out runs/train300.jsonl.gz
edgejudge label trca runs/train300.jsonl.gz --out runs/train300.trca.jsonl.gz
