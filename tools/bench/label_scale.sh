#!/usr/bin/env bash
# docs/benchmarks/labeling.md, "Labeling at scale": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_label_scale --out tools/results/bench_label_scale.json
