#!/usr/bin/env bash
# BENCHMARKS.md, "The label check against per-step ground truth": the section's commands, from the repository
# root with the project's environment active (python and edgejudge on PATH). Resumable: each run keeps its
# rows in tools/results/labels_protocol_{a,b}.json and its collected pools in runs/.
set -euo pipefail
cd "$(dirname "$0")/../.."

W="--world twc-easy --world twc-medium --world cookingworld-small"
for f in find-living-thing find-plant find-animal use-thermometer test-conductivity chemistry-mix; do
  W="$W --world $f=scienceworld:$f@40"
done
run() {
  tag=$1; shift
  # shellcheck disable=SC2086
  edgejudge matrix labels $W --episodes 30 --shapes full,response --methods sparse,success,potential \
    --work-dir "runs/labels-protocol-$tag" --out "tools/results/labels_protocol_$tag" "$@"
}
run a --behaviour gold-noise --noise 0.4 --collect-seed 1
run b --behaviour "gold-noise=0.5,random=0.5" --noise 0.3 --collect-seed 2
