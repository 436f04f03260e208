#!/usr/bin/env bash
# BENCHMARKS.md, "Learners on success-scarce files": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_learners --world twc-easy --world cookingworld-small --world twc-medium \
    --learner bc-success --learner bc-success-labeled --learner awr-trca --learner iql-sparse \
    --learner iql-trca-scale1=iql:trca:reward_scale=1 --learner bc-labeled --learner bc-success-progress \
    --work-dir runs/matrix --out tools/results/bench_learners.json
