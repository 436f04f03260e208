#!/usr/bin/env bash
# docs/benchmarks/matrix.md, "Imitation ceiling (structured policy)": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

edgejudge matrix --world twc-easy --world twc-medium --world twc-hard --world cookingworld-small \
    --world cookingworld-large --expert-sizes 200 --sources sparse --algos bc --sizes 120 --seeds 0 \
    --test-episodes 50 --llm-episodes 0 --out tools/results/bench_ceiling --work-dir runs/ceiling
edgejudge matrix --world scienceworld-find-animal --expert-sizes 100 --sources sparse --algos bc \
    --sizes 10 --seeds 0 --test-episodes 20 --llm-episodes 0 --out tools/results/bench_ceiling_sw \
    --work-dir runs/ceiling
