#!/usr/bin/env bash
# docs/benchmarks/encoders.md, "Encoders": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

# BC on the successes of a success-scarce file, evaluated as the exported bundle through edge-serve (guard)
E="--sources sparse --algos bc --seeds 0,1,2 --clients guard --test-episodes 100 --llm-episodes 0 --expert-sizes 0"
for ENCODER in all-MiniLM-L6-v2 static; do
  edgejudge matrix --world twc-easy --sizes 250 --steps 1000 --encoder $ENCODER $E --work-dir runs/matrix \
      --out tools/results/bench_encoder_success_twc_$ENCODER
done
edgejudge matrix --world 'cookingworld-small=twx:cookingworld[level=small]@30' --sizes 200 --steps 300 \
    --encoder static $E --work-dir runs/matrix --out tools/results/bench_encoder_success_cw_static
# the MiniLM graphs: fp32 and int8 against sentence-transformers, latency on one thread
python -m tools.bench.bench_encoder --out tools/results/bench_encoder.json
# the int8 encoder on an emulated AVX2-only CPU (needs qemu-user)
python -m tools.bench.bench_int8_cpus --out tools/results/bench_int8_cpus.json
