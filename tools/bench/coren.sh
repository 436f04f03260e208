#!/usr/bin/env bash
# docs/benchmarks/labeling.md, "COREN": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

[ -f runs/lq/twc-dev30.jsonl.gz ] || edgejudge collect --env twx:twc --split dev --episodes 30 \
    --behaviour gold-noise --noise 0.4 --seed 1 --out runs/lq/twc-dev30.jsonl.gz    # the held-out dev set
edgejudge label coren runs/lq/twc-dev30.jsonl.gz --out runs/dev.coren.jsonl.gz --prompts 4 \
    --report runs/dev.coren.report.json          # --vote majority, --prompts 2 for the other columns
python -m tools.bench.bench_coren --labeled runs/dev.coren.jsonl.gz --report runs/dev.coren.report.json \
    --json-out tools/results/bench_coren_v2p4.json     # without --labeled it collects and labels itself

edgejudge label coren runs/lq/twc-dev30.jsonl.gz --out runs/dev10.coren.jsonl.gz --prompts 2 --limit 10
edgejudge label quality runs/dev10.coren.jsonl.gz --json > runs/dev10.coren.quality.json
edgejudge collect --env scienceworld:find-living-thing --episodes 10 --behaviour gold-noise --noise 0.4 \
    --seed 1 --max-steps 30 --out runs/lq/sw-find-living-thing10.jsonl.gz
edgejudge label coren runs/lq/sw-find-living-thing10.jsonl.gz --out runs/sw10.coren.jsonl.gz --prompts 2
edgejudge label quality runs/sw10.coren.jsonl.gz --json > runs/sw10.coren.quality.json

python -m tools.bench.bench_coren_speed --trajectories 2 \
    --json-out tools/results/bench_coren_speed.json
