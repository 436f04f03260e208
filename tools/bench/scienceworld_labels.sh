#!/usr/bin/env bash
# BENCHMARKS.md, "Labeling: ScienceWorld": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_scienceworld_labels --coren-families find-living-thing,find-non-living-thing,find-plant \
    --coren-episodes 3 --json tools/results/bench_scienceworld_labels.json \
    --md tools/results/bench_scienceworld_labels.md          # resumable; runs/scienceworld/
# every task family: loads, collects, labels; its gold paths (resumable from --rows)
python -m tools.bench.check_scienceworld_tasks --variations 1 --max-steps 40 \
    --rows runs/check_scienceworld.jsonl --json tools/results/check_scienceworld_tasks.json \
    --md tools/results/check_scienceworld_tasks.md
