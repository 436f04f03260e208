#!/usr/bin/env bash
# BENCHMARKS.md, "Learners on success-scarce files": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_learners --world twc-easy --world cookingworld-small --world twc-medium \
    --world twc-hard --learner credit-trca --learner bc-success-labeled --learner bc-success \
    --learner bc-expert --seed 0 --seed 1 --seed 2 --test-episodes 200 --work-dir runs/matrix \
    --out tools/results/bench_learners.json
python -m tools.bench.bench_learners --world twc-easy --world cookingworld-small --world twc-medium \
    --world twc-hard --learner credit-idle-all=credit:trca:idle_repeats=true \
    --seed 0 --seed 1 --seed 2 --test-episodes 200 --work-dir runs/matrix --out tools/results/bench_learners.json
python -m tools.bench.bench_learners --world twc-easy \
    --learner credit-hindsight=credit:trca:failures=true,idle_repeats=true \
    --learner credit-neg1=credit:trca:negative=1,idle_repeats=true \
    --learner credit-labels=credit:trca:detours=false,idle_repeats=true --learner iql-trca --learner iql-sparse \
    --seed 0 --seed 1 --seed 2 --test-episodes 200 --work-dir runs/matrix --out tools/results/bench_learners.json
python -m tools.bench.bench_learners --world twc-medium \
    --learner credit-labels=credit:trca:detours=false,idle_repeats=true \
    --seed 0 --seed 1 --seed 2 --test-episodes 200 --work-dir runs/matrix --out tools/results/bench_learners.json
python -m tools.bench.bench_learners --world twc-easy --episodes 30 --learner credit-trca --learner bc-success \
    --learner bc-success-labeled --learner bc-expert --learner iql-sparse --seed 0 --seed 1 --seed 2 \
    --test-episodes 200 --work-dir runs/matrix --out tools/results/bench_learners.json
python -m tools.bench.bench_learners --world cookingworld-small --learner bc-expert-aug2=bc:expert:augment=2 \
    --learner bc-sl-aug2=bc:trca:filter=success-labeled,augment=2 --seed 0 --seed 1 --seed 2 \
    --test-episodes 200 --work-dir runs/matrix --out tools/results/bench_learners.json

python -m tools.bench.bench_replay --world twc-easy --world cookingworld-small --learner bc-expert \
    --learner credit-trca --learner credit-idle-all --learner bc-success-labeled --learner bc-success \
    --seed 0 --seed 1 --seed 2 --out tools/results/bench_replay.json
