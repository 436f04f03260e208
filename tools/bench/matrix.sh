#!/usr/bin/env bash
# docs/benchmarks/matrix.md, "Policy success (benchmark matrix)": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

W="--clients guard --test-episodes 50 --steps 1000 --work-dir runs/matrix --out tools/results/bench_matrix"
M="edgejudge matrix"
# 120 episodes, seed 0: every learner and reward source
$M --world twc-easy --world cookingworld-small --world twc-medium --world twc-hard --sizes 120 --seeds 0 \
    --sources sparse,trca-built,potential --algos iql,bc,bc-labeled,awr --llm-episodes 0 --expert-sizes 0 $W
# seeds 1 and 2 of the recipe and the sparse baselines
$M --world twc-easy --sizes 120 --seeds 1,2 --sources sparse,trca-built --algos bc,bc-labeled --llm-episodes 0 \
    --expert-sizes 0 $W
$M --world twc-easy --sizes 120 --seeds 1,2 --sources sparse,trca-built --algos iql --llm-episodes 0 --expert-sizes 0 $W
$M --world twc-medium --world cookingworld-small --sizes 120 --seeds 1,2 --sources sparse,trca-built --algos iql,bc \
    --llm-episodes 0 --expert-sizes 0 $W
# credit-weighted imitation (the label-kept steps less idle repeats, every episode's harmful steps pushed away)
$M --world twc-easy --world cookingworld-small --sizes 120 --seeds 0,1,2 --sources trca-built --algos credit \
    --llm-episodes 0 --expert-sizes 0 $W
$M --world twc-medium --world twc-hard --sizes 120 --seeds 0,1,2 --sources trca-built --algos credit --llm-episodes 0 \
    --expert-sizes 0 $W
# 30 episodes, with COREN (2 prompts, mean vote) on the two TWC worlds
$M --world twc-easy --world twc-medium --sizes 30 --seeds 0 --sources sparse,trca-built,coren --algos iql,bc \
    --llm-episodes 0 --expert-sizes 0 $W
# 30 episodes, 3 seeds: credit and BC on the successes
$M --world twc-easy --world twc-medium --world cookingworld-small --sizes 30 --seeds 0,1,2 \
    --sources sparse,trca-built --algos credit,bc --llm-episodes 0 --expert-sizes 0 $W
# BC on as many expert episodes as the 30- and 120-episode files hold successes (9, 36)
$M --world twc-easy --world cookingworld-small --world twc-medium --world twc-hard --sizes 30 --seeds 0,1,2 \
    --sources sparse --algos bc --llm-episodes 0 --expert-sizes 9,36 $W
# the report of every row above, the imitation ceiling (tools/bench/ceiling.sh) beside them
$M --world twc-easy --world cookingworld-small --world twc-medium --world twc-hard --sizes 30,120 --seeds 0,1,2 \
    --sources sparse,trca-built,potential,coren --algos iql,bc,bc-labeled,awr,credit --llm-episodes 0 \
    --expert-sizes 9,36 $W --ceiling tools/results/bench_ceiling.json --report-only

# ScienceWorld: two families outside the label benchmarks' tuning set, 20 test episodes each
S="--clients guard --test-episodes 20 --steps 1000 --llm-episodes 0 --work-dir runs/matrix"
S="$S --out tools/results/bench_matrix_sw"
$M --world scienceworld-find-animal --sizes 120 --seeds 0 --sources sparse,trca-built --algos iql --expert-sizes 0 $S
$M --world scienceworld-find-animal --sizes 120 --seeds 0 --sources sparse --algos bc --expert-sizes 100 $S
$M --world scienceworld-lifespan-longest-lived --sizes 120 --seeds 0 --sources sparse,trca-built --algos iql,bc \
    --expert-sizes 100 $S
$M --world scienceworld-find-animal --world scienceworld-lifespan-longest-lived --sizes 120 --seeds 0 \
    --sources sparse,trca-built --algos iql,bc --expert-sizes 100 $S --report-only
