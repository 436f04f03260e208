#!/usr/bin/env bash
# BENCHMARKS.md, "Encoders": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

edgejudge collect --env twx:twc --split train --episodes 300 --behaviour "gold-noise=0.3,random=0.7" \
    --noise 0.3 --seed 1 --out runs/twc300.jsonl.gz      # 41.3 % successful; cut to 251 episodes, 29.9 %
edgejudge collect --env twx:cookingworld --split train --episodes 400 --behaviour "gold-noise=0.3,random=0.7" \
    --noise 0.3 --seed 1 --out runs/cw400.jsonl.gz
python -c "from labeler.dataset import read_trajectories as r, write_trajectories as w; \
w('runs/cw200.jsonl.gz', r('runs/cw400.jsonl.gz')[:200])"     # 200 episodes, 17.5 % successful
ROW="--rows bc-success --no-placement-search --loop-guard --no-argmax --evaluate bundle --latency-samples 10"
for S in 0 1 2; do
  for ENCODER in all-MiniLM-L6-v2 static; do
    python -m tools.bench.bench_policy --train runs/twc300.jsonl.gz --env twx:twc --episodes 100 --max-steps 40 \
        --steps 1000 $ROW --encoder $ENCODER --seed $S --out-dir runs/enc-twc-$ENCODER-s$S
  done
  python -m tools.bench.bench_policy --train runs/cw200.jsonl.gz --env twx:cookingworld --episodes 100 \
      --max-steps 30 --steps 300 $ROW --encoder static --seed $S --out-dir runs/enc-cw-static-s$S
done
# the MiniLM graphs: fp32 and int8 against sentence-transformers, latency on one thread
python -m tools.bench.bench_encoder --out tools/results/bench_encoder.json
# the int8 encoder on an emulated AVX2-only CPU (needs qemu-user)
python -m tools.bench.bench_int8_cpus --out tools/results/bench_int8_cpus.json
