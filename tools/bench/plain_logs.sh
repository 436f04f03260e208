#!/usr/bin/env bash
# docs/benchmarks/label-logs.md, "Logs without a layout": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

SW="--world find-living-thing=scienceworld:find-living-thing@40 --world find-plant=scienceworld:find-plant@40"
SW="$SW --world find-non-living-thing=scienceworld:find-non-living-thing@40"
SW="$SW --world chemistry-mix=scienceworld:chemistry-mix@40 --split test --work-dir runs/labels"
edgejudge matrix labels $SW --episodes 15 --shapes full,plain --methods sparse,trca-built \
    --out tools/results/labels_plain_sw          # resumable: every step's file is kept under runs/labels
edgejudge matrix labels --world 'twc-medium=twx:twc[level=medium]@50' --split dev --episodes 20 \
    --shapes full,plain --methods sparse,trca-built --work-dir runs/labels --out tools/results/labels_plain_twc
