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
# protocol d, another collector: each world's episodes played by a deployed bundle through edge-serve and
# written by the robot's log writer (BC on 20 expert episodes of the train split, exploring at temperature 0.5
# on the test split); held out: nothing of the check or the audit was chosen on such logs
deployed_log() {  # LABEL ENV PARAMS MAX_STEPS -> runs/labels-protocol-d/LABEL/robot.jsonl
  local d=runs/labels-protocol-d/$1 p=(); [ -n "$3" ] && p=(--params "$3")
  mkdir -p "$d"
  [ -f "$d/expert.jsonl.gz" ] || { edgejudge collect --env "$2" "${p[@]}" --split train --behaviour gold-noise \
      --noise 0 --episodes 20 --max-steps "$4" --seed 4 --out "$d/expert.part.jsonl.gz" --no-progress &&
    mv "$d/expert.part.jsonl.gz" "$d/expert.jsonl.gz"; }
  [ -f "$d/bundle/manifest.json" ] || { edgejudge train "$d/expert.jsonl.gz" --algo bc --reward sparse --seed 0 \
      --out "$d/ckpt" --json >/dev/null && edgejudge export "$d/ckpt" --out "$d/bundle" --json >/dev/null; }
  [ -f "$d/robot.jsonl" ] || { edgejudge collect --env "$2" "${p[@]}" --split test --episodes 80 \
      --policy "$d/bundle" --serve --temperature 0.5 --max-steps "$4" --seed 4 --out "$d/robot.part.jsonl" \
      --no-progress && mv "$d/robot.part.jsonl" "$d/robot.jsonl"; }
}
D="" P=""
for w in "twc-easy twx:twc level=easy 40" "twc-medium twx:twc level=medium 60" \
         "cookingworld-small twx:cookingworld level=small 40" "find-animal scienceworld:find-animal '' 40" \
         "find-plant scienceworld:find-plant '' 40" "use-thermometer scienceworld:use-thermometer '' 40"; do
  eval "set -- $w"
  deployed_log "$1" "$2" "$3" "$4"
  D="$D --world $1=$2${3:+[$3]}@$4"; P="$P --pool $1=runs/labels-protocol-d/$1/robot.jsonl"
done
# shellcheck disable=SC2086
edgejudge matrix labels $D $P --episodes 30 --shapes full,response --methods sparse,success,potential \
    --audit 200 --work-dir runs/labels-protocol-d --out tools/results/labels_protocol_d
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
  # shellcheck disable=SC2086
  edgejudge matrix labels $D $P --episodes 30 --shapes full,response --methods sparse,success,potential \
      --audit $n --auditor truth --work-dir runs/labels-protocol-d --out tools/results/labels_protocol_d_truth$T
done
