#!/usr/bin/env bash
# BENCHMARKS.md, "Labeling: harder TextWorld worlds": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_label_worlds --work runs/lw --world twc-medium --episodes 20 --coren-episodes 8 \
    --json-out tools/results/label_quality_worlds.json
python -m tools.bench.bench_label_worlds --work runs/lw --world twc-hard --episodes 20 --coren-episodes 3
