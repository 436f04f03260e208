#!/usr/bin/env bash
# docs/benchmarks/training.md, "Training speed": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_train_speed --out tools/results/bench_train_speed.json
