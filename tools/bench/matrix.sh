#!/usr/bin/env bash
# BENCHMARKS.md, "Policy success (benchmark matrix)": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

W="--steps 1000 --clients guard --test-episodes 50 --work-dir runs/matrix"
python -m tools.bench.bench_matrix --world twc-easy --sizes 30,120 --seeds 0,1,2 --sources sparse,trca,trca-built \
    --algos iql,bc --llm-episodes 2 $W                                       # (BC: seeds 0 and 1)
python -m tools.bench.bench_matrix --world twc-easy --sizes 30,120 --seeds 0,1,2 --sources coren \
    --coren-max-episodes 30 --algos iql --llm-episodes 0 $W --out runs/matrix-coren
python -m tools.bench.bench_matrix --world cookingworld-small --sizes 120 --seeds 0,1,2 --sources sparse,trca-built \
    --algos iql --llm-episodes 0 $W --out runs/matrix-cw
python -m tools.bench.bench_matrix --world twc-medium --sizes 60 --seeds 0,1,2 --sources sparse,trca-built \
    --algos iql --llm-episodes 0 $W --out runs/matrix-medium
# one results file (tools/results/bench_matrix.{json,md,png}) over the rows of all four runs
python -m tools.bench.bench_matrix --report-only --merge runs/matrix-coren.json --merge runs/matrix-cw.json \
    --merge runs/matrix-medium.json --world twc-easy --world cookingworld-small --world twc-medium \
    --sizes 30,60,120 --seeds 0,1,2 --sources sparse,trca,trca-built,coren --algos iql,bc --llm-episodes 2 \
    --coren-max-episodes 30 $W
