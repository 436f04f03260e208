#!/usr/bin/env bash
# docs/benchmarks/labeling.md, "Judge speed": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_judge --out tools/results/bench_judge.json                  # 10 steps, 6 min
python -m tools.bench.bench_judge --patterns coren,coren1 --steps 5 --out tools/results/bench_judge_layouts.json
