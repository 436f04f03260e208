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

edgejudge matrix --world cookingworld-large --expert-sizes 200 --sources sparse --algos bc --sizes 120 \
    --seeds 0 --test-episodes 50 --llm-episodes 0 --out tools/results/bench_ceiling_large_rerun \
    --work-dir runs/ceiling
edgejudge matrix --world cookingworld-large --world cookingworld-small --expert-sizes 200 --sources sparse \
    --algos bc --sizes 120 --seeds 0 --test-episodes 50 --llm-episodes 0 --augment 2 \
    --out tools/results/bench_ceiling_augment --work-dir runs/ceiling
edgejudge matrix --world scienceworld-find-animal --expert-sizes 100 --sources sparse --algos bc \
    --sizes 10 --seeds 0 --test-episodes 20 --llm-episodes 0 --augment 2 \
    --out tools/results/bench_ceiling_sw_augment --work-dir runs/ceiling
python -m tools.bench.bench_memory_reach --world cookingworld-small --world cookingworld-large \
    --world 'cw6=twx:cookingworld[level=large,numLocations=6,numIngredients=2]@80' \
    --world 'cw9=twx:cookingworld[level=large,numLocations=9,numIngredients=4]@100' --world twc-medium \
    --out tools/results/bench_memory_reach.json --md tools/results/bench_memory_reach.md
