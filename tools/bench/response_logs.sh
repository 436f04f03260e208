#!/usr/bin/env bash
# BENCHMARKS.md, "Labeling: response-only logs": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_response_logs --work runs/response --coren \
    --json tools/results/bench_response_logs.json --md tools/results/bench_response_logs.md   # resumable
