#!/usr/bin/env bash
# make demo-loop: one round of the loop after `make demo` (run first when its outputs are missing), about
# 6-10 minutes on 2 cores. The demo's bundles act as deployed robots would: through edge-serve, with the
# client's loop guard and the robot's episode log writer, exploring with a softmax draw at temperature 0.5.
#
#   the labeled recipe: its bundle plays DEMO_ROUND_EPISODES train games -> the demo's file and its log
#   merged -> TRCA labels -> credit retrained (warm start from its checkpoint) -> export -> test games through
#   edge-serve;  self-imitation, the sparse flywheel: BC's bundle plays as many games -> BC retrained on every
#   successful episode so far -> export -> the same test games;  then the round table.
set -euo pipefail
OUT="${DEMO_OUT:-demo-out}"
PY="${PY:-.venv/bin/python}"
EJ=("$PY" -m models.cli)
if [ ! -f "$OUT/bundle/manifest.json" ] || [ ! -f "$OUT/bundle-bc/manifest.json" ] || [ ! -f "$OUT/drive.bc.json" ]; then
  echo "no demo in $OUT: running make demo first"
  DEMO_OUT="$OUT" PY="$PY" tools/demo/demo.sh
fi
ENV_NAME="$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["env"])' "$OUT/drive.json")"
MAX_STEPS="${DEMO_MAX_STEPS:-40}"
WORLD=(--env "$ENV_NAME" --max-steps "$MAX_STEPS")
if [ -n "${DEMO_PARAMS:-}" ]; then WORLD+=(--params "$DEMO_PARAMS"); fi
ROUND_EPISODES="${DEMO_ROUND_EPISODES:-100}"
TEST_EPISODES="${DEMO_TEST_EPISODES:-100}"
STEPS="${DEMO_STEPS:-1000}"
export EDGEJUDGE_CACHE="${EDGEJUDGE_CACHE:-$OUT/cache}"
EVAL=("${EJ[@]}" eval "${WORLD[@]}" --split test --episodes "$TEST_EPISODES" --json --serve)
stage() { printf '\n== %s\n' "$*"; }
RUBRIC=()
if [ -f "$OUT/rubric.toml" ]; then RUBRIC=(--rubrics "$OUT/rubric.toml"); fi
rm -rf "$OUT"/round-1.*  # a round is remade whole: the logs append, checkpoints are not overwritten

stage "1/3 deploy: each bundle plays $ROUND_EPISODES train games through edge-serve, logged by the robot's writer"
for who in credit bc; do
  bundle="$OUT/bundle"; [ "$who" = bc ] && bundle="$OUT/bundle-bc"
  "${EJ[@]}" collect "${WORLD[@]}" --split train --episodes "$ROUND_EPISODES" --policy "$bundle" --serve \
    --temperature 0.5 --seed 1 --out "$OUT/round-1.$who.jsonl"
done

stage "2/3 retrain: credit on TRCA labels of the demo's file and its own episodes; BC on every success so far"
"${EJ[@]}" data merge "$OUT/train.jsonl.gz" "$OUT/round-1.credit.jsonl" --out "$OUT/round-1.credit.all.jsonl.gz"
"${EJ[@]}" label trca "$OUT/round-1.credit.all.jsonl.gz" "${RUBRIC[@]}" --out "$OUT/round-1.credit.trca.jsonl.gz"
"${EJ[@]}" train "$OUT/round-1.credit.trca.jsonl.gz" --algo credit --reward trca --detour-penalty 0.05 \
  --set steps="$STEPS" --seed 0 --init "$OUT/ckpt-credit" --out "$OUT/round-1.ckpt-credit"
"${EJ[@]}" train "$OUT/train.jsonl.gz" "$OUT/round-1.bc.jsonl" --algo bc --set filter=success --reward sparse \
  --seed 0 --out "$OUT/round-1.ckpt-bc"
for who in credit bc; do
  "${EJ[@]}" export "$OUT/round-1.ckpt-$who" --out "$OUT/round-1.bundle-$who"
done

stage "3/3 evaluate round 1 on the same $TEST_EPISODES test games through edge-serve"
"${EVAL[@]}" "$OUT/round-1.bundle-credit" > "$OUT/round-1.drive.credit.json"
"${EVAL[@]}" "$OUT/round-1.bundle-bc" > "$OUT/round-1.drive.bc.json"

stage "the round"
"$PY" -m tools.demo.demo_summary --loop "$OUT"
