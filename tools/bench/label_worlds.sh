#!/usr/bin/env bash
# docs/benchmarks/label-logs.md, "Harder TextWorld worlds": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

edgejudge matrix labels --world 'twc-medium=twx:twc[level=medium]@50' --world 'twc-hard=twx:twc[level=hard]@70' \
    --split dev --episodes 8,20 --shapes full --methods sparse,trca,trca-built,coren --coren-max-episodes 8 \
    --work-dir runs/labels --out tools/results/labels_worlds
