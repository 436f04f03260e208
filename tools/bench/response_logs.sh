#!/usr/bin/env bash
# docs/benchmarks/label-logs.md, "Response-only logs": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

SW="--world find-living-thing=scienceworld:find-living-thing@40 --world find-plant=scienceworld:find-plant@40"
SW="$SW --world find-non-living-thing=scienceworld:find-non-living-thing@40"
SW="$SW --world chemistry-mix=scienceworld:chemistry-mix@40 --split test --work-dir runs/labels"
edgejudge matrix labels $SW --episodes 5,30 --shapes response \
    --methods sparse,success,potential,trca-built,coren --coren-max-episodes 5 \
    --out tools/results/labels_response          # resumable
