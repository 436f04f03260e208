#!/usr/bin/env bash
# BENCHMARKS.md, "Labeling: logs without a layout": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_plain_logs --work runs/plain --worlds twc-medium --episodes 20
python -m tools.bench.bench_plain_logs --work runs/plain --episodes 15 --json tools/results/bench_plain_logs.json \
    --md tools/results/bench_plain_logs.md          # resumable: every stage's file is kept under runs/plain
