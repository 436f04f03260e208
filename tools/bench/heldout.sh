#!/usr/bin/env bash
# docs/benchmarks/matrix.md, "Worlds kept out of tuning": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

H="--clients guard --steps 1000 --llm-episodes 0 --expert-sizes 0 --work-dir runs/heldout"
H="$H --out tools/results/bench_heldout"
edgejudge matrix --world sw-find-plant=scienceworld:find-plant@60 --sizes 120 --seeds 0,1,2 \
    --sources sparse,trca-built --algos credit,bc --test-episodes 20 $H
edgejudge matrix --world cookingworld-large --sizes 120 --seeds 0,1,2 --sources sparse,trca-built \
    --algos credit,bc --test-episodes 50 $H
# the teachers, one seed: BC on as many expert episodes as the files have successes (36), and on find-plant on
# 100 (its imitation ceiling; CookingWorld large's, on 200, is in "Imitation ceiling")
edgejudge matrix --world cookingworld-large --sizes 120 --seeds 0 --sources sparse --algos bc --test-episodes 50 \
    --expert-sizes 36 ${H/--expert-sizes 0 /}
edgejudge matrix --world sw-find-plant=scienceworld:find-plant@60 --sizes 120 --seeds 0 --sources sparse \
    --algos bc --test-episodes 20 --expert-sizes 36,100 ${H/--expert-sizes 0 /}

D=runs/heldout/find-plant-ceiling
mkdir -p "$D"
edgejudge collect --env scienceworld:find-plant --split train --episodes 100 --max-steps 60 \
    --behaviour gold-noise --noise 0 --seed 0 --out $D/train-expert.jsonl.gz
edgejudge train $D/train-expert.jsonl.gz --algo bc --reward sparse --seed 0 --set steps=1000 --out $D/ckpt-bc
edgejudge export $D/ckpt-bc --out $D/bundle-bc
edgejudge eval $D/bundle-bc --env scienceworld:find-plant --split test --episodes 20 --max-steps 60 --serve \
    --json > $D/eval.json
