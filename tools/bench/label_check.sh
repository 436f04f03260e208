#!/usr/bin/env bash
# docs/benchmarks/label-logs.md, "The label check against per-step ground truth": the section's commands, from the
# repository root with the project's environment active (python and edgejudge on PATH). Resumable: each run
# keeps its rows in tools/results/labels_protocol_{a,b,c}.json and its collected pools in runs/.
set -euo pipefail
cd "$(dirname "$0")/../.."

W="--world twc-easy --world twc-medium --world cookingworld-small"
for f in find-living-thing find-plant find-animal use-thermometer test-conductivity chemistry-mix; do
  W="$W --world $f=scienceworld:$f@40"
done
# shellcheck disable=SC2086
edgejudge matrix labels $W --episodes 30 --shapes full,response --methods sparse,success,potential --audit 200 \
    --work-dir runs/labels-protocol-a --out tools/results/labels_protocol_a \
    --behaviour gold-noise --noise 0.4 --collect-seed 1          # resumable
# shellcheck disable=SC2086
edgejudge matrix labels $W --episodes 30 --shapes full,response --methods sparse,success,potential --audit 200 \
    --work-dir runs/labels-protocol-b --out tools/results/labels_protocol_b \
    --behaviour "gold-noise=0.5,random=0.5" --noise 0.3 --collect-seed 2
# the held-out check: worlds and a behaviour the check's rules were not designed on
H="--world twc-hard --world scienceworld-lifespan-longest-lived"
for f in power-component find-non-living-thing; do
  H="$H --world $f=scienceworld:$f@40"
done
# shellcheck disable=SC2086
edgejudge matrix labels $H --episodes 30 --shapes full,response --methods sparse,success,potential --audit 200 \
    --work-dir runs/labels-protocol-c --out tools/results/labels_protocol_c \
    --behaviour "gold-noise=0.7,random=0.3" --noise 0.5 --collect-seed 3
# the same audits by an auditor who is always right (the logs' own score progress): the upper bound of a
# person's ten minutes (40 marks) and of the judge's 200
for n in 40 200; do
  T=""; [ "$n" = 200 ] && T=200
  # shellcheck disable=SC2086
  edgejudge matrix labels $W --episodes 30 --shapes full,response --methods sparse,success,potential \
      --audit $n --auditor truth --work-dir runs/labels-protocol-a --out tools/results/labels_protocol_a_truth$T \
      --behaviour gold-noise --noise 0.4 --collect-seed 1
  # shellcheck disable=SC2086
  edgejudge matrix labels $H --episodes 30 --shapes full,response --methods sparse,success,potential \
      --audit $n --auditor truth --work-dir runs/labels-protocol-c --out tools/results/labels_protocol_c_truth$T \
      --behaviour "gold-noise=0.7,random=0.3" --noise 0.5 --collect-seed 3
done
