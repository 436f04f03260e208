#!/usr/bin/env bash
# docs/benchmarks/label-logs.md, "ScienceWorld": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

SW="--world find-living-thing=scienceworld:find-living-thing@40 --world find-plant=scienceworld:find-plant@40"
SW="$SW --world find-non-living-thing=scienceworld:find-non-living-thing@40"
SW="$SW --world chemistry-mix=scienceworld:chemistry-mix@40 --split test --work-dir runs/labels"
edgejudge matrix labels $SW --episodes 3,15 --shapes full --methods sparse,trca-built,coren \
    --coren-max-episodes 3 --out tools/results/labels_scienceworld          # resumable; runs/labels/
# every task family: loads, collects, labels; its gold paths (resumable from --rows)
python -m tools.bench.check_scienceworld_tasks --variations 1 --max-steps 40 \
    --rows runs/check_scienceworld.jsonl --json tools/results/check_scienceworld_tasks.json \
    --md tools/results/check_scienceworld_tasks.md
