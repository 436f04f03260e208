#!/usr/bin/env bash
# BENCHMARKS.md, "Policy success (benchmark matrix)": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

W="--sizes 120 --clients guard --test-episodes 50 --steps 1000 --llm-episodes 0 --expert-sizes 0 --work-dir runs/matrix"
python -m tools.bench.bench_matrix --world twc-easy --world cookingworld-small --world twc-medium --seeds 0 \
    --sources sparse,trca-built,potential --algos iql,bc,bc-labeled,awr $W --out tools/results/bench_matrix
python -m tools.bench.bench_matrix --world twc-easy --seeds 1,2 --sources sparse,trca-built --algos bc,bc-labeled $W \
    --out tools/results/bench_matrix
python -m tools.bench.bench_matrix --world twc-easy --seeds 1 --sources sparse,trca-built --algos iql $W \
    --out tools/results/bench_matrix
python -m tools.bench.bench_matrix --world twc-hard --seeds 0 --sources sparse,trca-built,potential \
    --algos iql,bc,bc-labeled,awr $W --out tools/results/bench_matrix
python -m tools.bench.bench_matrix --world scienceworld-find-animal --seeds 0 --sources sparse,trca-built,potential \
    --algos iql,bc --sizes 120 --clients guard --test-episodes 20 --steps 1000 --llm-episodes 0 --expert-sizes 0 \
    --work-dir runs/matrix --out tools/results/bench_matrix_sw
