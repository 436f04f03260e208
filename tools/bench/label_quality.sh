#!/usr/bin/env bash
# docs/benchmarks/labeling.md, "Label quality across methods": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

[ -f runs/lq/twc-dev30.jsonl.gz ] || edgejudge collect --env twx:twc --split dev --episodes 30 \
    --behaviour gold-noise --noise 0.4 --seed 1 --out runs/lq/twc-dev30.jsonl.gz    # the held-out dev set
edgejudge label coren runs/lq/twc-dev30.jsonl.gz --out runs/dev.coren.jsonl.gz --prompts 4   # COREN rows
python -m tools.bench.bench_label_quality --work runs/lq --coren runs/dev.coren.jsonl.gz \
    --json-out tools/results/label_quality_twc.json     # collects both dev sets into runs/lq if missing
# the COREN rows only, the others kept from the JSON (one --coren per labeling: --vote, --prompts):
edgejudge label coren runs/lq/twc-dev30.jsonl.gz --out runs/dev.coren-majority.jsonl.gz --prompts 4 --vote majority
edgejudge label coren runs/lq/twc-dev30.jsonl.gz --out runs/dev.coren-p2.jsonl.gz --prompts 2
edgejudge label coren runs/lq/twc-dev30.jsonl.gz --out runs/dev.coren-p2-majority.jsonl.gz --prompts 2 --vote majority
python -m tools.bench.bench_label_quality --work runs/lq --coren-only --coren runs/dev.coren.jsonl.gz \
    --coren runs/dev.coren-majority.jsonl.gz --coren runs/dev.coren-p2.jsonl.gz \
    --coren runs/dev.coren-p2-majority.jsonl.gz --json-out tools/results/label_quality_twc.json

# the policy on unreviewed labels: the first 61 episodes of the success-scarce cut of the TWC
# training file (datasets.sh; every failure and the first successes: edgejudge data subset without --episodes)
edgejudge data subset runs/train300.jsonl.gz --max-success-rate 0.3 --out runs/train300.scarce.jsonl.gz
python -c "from models.trajectory import read_trajectories as r, write_trajectories as w; \
w('runs/sub61.jsonl.gz', r('runs/train300.scarce.jsonl.gz')[:61])"
edgejudge rubrics build --dataset runs/sub61.jsonl.gz --task-type twc --out runs/sub61.grounding.toml
edgejudge label trca runs/sub61.jsonl.gz --rubrics runs/sub61.grounding.toml --out runs/sub61.trca-grounding.jsonl.gz
edgejudge train runs/sub61.trca-grounding.jsonl.gz --algo iql --reward trca --detour-penalty 0.05 --steps 2000 \
    --seed 0 --out runs/sub61.iql-trca
edgejudge train runs/sub61.jsonl.gz --algo iql --reward sparse --steps 2000 --seed 0 --out runs/sub61.iql-sparse
for ckpt in runs/sub61.iql-trca runs/sub61.iql-sparse; do
  edgejudge eval "$ckpt" --env twx:twc --split test --episodes 50 --loop-guard
done
