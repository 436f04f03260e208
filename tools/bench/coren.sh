#!/usr/bin/env bash
# BENCHMARKS.md, "Labeling: COREN": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

[ -f runs/lq/twc-dev30.jsonl.gz ] || edgejudge collect --env twx:twc --split dev --episodes 30 \
    --behaviour gold-noise --noise 0.4 --seed 1 --out runs/lq/twc-dev30.jsonl.gz    # the held-out dev set
edgejudge label coren runs/lq/twc-dev30.jsonl.gz --out runs/dev.coren.jsonl.gz --prompts 4 \
    --report runs/dev.coren.report.json          # --vote majority, --prompts 2 for the other columns
python -m tools.bench.bench_coren --labeled runs/dev.coren.jsonl.gz --report runs/dev.coren.report.json \
    --json-out tools/results/bench_coren_v2p4.json     # without --labeled it collects and labels itself

python -m tools.bench.bench_coren_speed --trajectories 2 \
    --json-out tools/results/bench_coren_speed.json
