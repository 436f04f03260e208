#!/usr/bin/env bash
# docs/benchmarks/labeling.md, "TRCA": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_trca --json tools/results/bench_trca.json    # makes the dev set if missing; 1 min 25 s
