#!/usr/bin/env bash
# make demo: the whole pipeline on embedded defaults, sized for a 2-core laptop (about 10-15 minutes the first
# time; judge answers and text embeddings are cached, so a rerun is faster).
#
#   collect (train split, success-scarce) -> label (TRCA on all, COREN on a slice) -> train (the recommended
#   recipe: credit-weighted imitation on TRCA rewards; on the same episodes the sparse baselines: BC on the
#   successful episodes, IQL on the success flag) -> export (ONNX bundles) -> evaluate the bundle (onnxruntime
#   only; argmax and with the client-side loop guard) -> edge-serve + test episodes driven through the daemon by
#   a client with the generic loop guard (the headline row) -> the teachers: BC on as many expert episodes as
#   the file has successes (what the failed episodes must beat) and BC on all the expert episodes (the
#   imitation ceiling: what the policy can copy at best), exported and served the same way -> summary.
#   60 training episodes: with few successes the dense labels matter.
#
# DEMO_ENV picks the world (default twx:twc, TextWorld Commonsense), DEMO_PARAMS its parameters, e.g.
#   DEMO_ENV=twx:cookingworld make demo;  DEMO_ENV=twx:twc DEMO_PARAMS=level=medium DEMO_MAX_STEPS=60 make demo
# A world without a shipped rubric (labeler/rubrics/TASK.toml) gets one built by the judge from the train data.
set -euo pipefail
OUT="${DEMO_OUT:-demo-out}"
PY="${PY:-.venv/bin/python}"
EJ=("$PY" -m models.cli)
ENV_NAME="${DEMO_ENV:-twx:twc}"
TASK="${ENV_NAME#*:}"
MAX_STEPS="${DEMO_MAX_STEPS:-40}"
WORLD=(--env "$ENV_NAME" --max-steps "$MAX_STEPS")
if [ -n "${DEMO_PARAMS:-}" ]; then WORLD+=(--params "$DEMO_PARAMS"); fi
TRAIN_EPISODES="${DEMO_TRAIN_EPISODES:-60}"
TEST_EPISODES="${DEMO_TEST_EPISODES:-100}"
COREN_EPISODES="${DEMO_COREN_EPISODES:-3}"
EXPERT_EPISODES="${DEMO_EXPERT_EPISODES:-60}"
STEPS="${DEMO_STEPS:-1000}"
export EDGEJUDGE_CACHE="${EDGEJUDGE_CACHE:-$OUT/cache}"
mkdir -p "$OUT"
stage() { printf '\n== %s\n' "$*"; }

stage "1/8 collect: $ENV_NAME, train split, success-scarce mixture (<= 30 % of episodes succeed)"
"${EJ[@]}" collect "${WORLD[@]}" --split train --episodes "$TRAIN_EPISODES" \
  --behaviour "gold-noise=0.1,random=0.9" --noise 0.3 --seed 0 --out "$OUT/train.jsonl.gz"
"${EJ[@]}" data validate "$OUT/train.jsonl.gz"
"${EJ[@]}" data stats "$OUT/train.jsonl.gz" --json > "$OUT/train.stats.json"
"${EJ[@]}" data stats "$OUT/train.jsonl.gz"

stage "2/8 label: COREN with the embedded Gemma 3 270M judge on $COREN_EPISODES short held-out (dev) episodes"
# COREN asks the judge several questions per step (~0.5-1 step/s on one thread), so the demo shows it on a slice.
"${EJ[@]}" collect "${WORLD[@]}" --split dev --episodes "$COREN_EPISODES" --behaviour gold-noise --noise 0.3 \
  --seed 1 --out "$OUT/slice.jsonl.gz"
"${EJ[@]}" label coren "$OUT/slice.jsonl.gz" --out "$OUT/slice.coren.jsonl.gz" --prompts 2 \
  --report "$OUT/coren.report.json"
"${EJ[@]}" label quality "$OUT/slice.coren.jsonl.gz" --plot "$OUT/coren.png"

RUBRIC=()
if [ -f "labeler/rubrics/$TASK.toml" ]; then
  stage "3/8 label: TRCA (judge-built rubric shipped in labeler/rubrics/$TASK.toml; no judge call per step)"
else
  stage "3/8 label: TRCA with a rubric the judge builds from the train data (no judge call per step after it)"
  "${EJ[@]}" rubrics build --dataset "$OUT/train.jsonl.gz" --task-type "$TASK" --out "$OUT/rubric.toml"
  RUBRIC=(--rubrics "$OUT/rubric.toml")
fi
"${EJ[@]}" label trca "$OUT/train.jsonl.gz" "${RUBRIC[@]}" --out "$OUT/train.trca.jsonl.gz"
"${EJ[@]}" label quality "$OUT/train.trca.jsonl.gz" --json > "$OUT/trca.quality.json"
"${EJ[@]}" label quality "$OUT/train.trca.jsonl.gz"

stage "4/8 train on TRCA rewards (dense; undone detours penalised): credit-weighted imitation; sparse baselines on the same episodes: BC on the successes, IQL on the success flag"
"${EJ[@]}" train "$OUT/train.trca.jsonl.gz" --algo credit --reward trca --detour-penalty 0.05 --set steps="$STEPS" \
  --seed 0 --out "$OUT/ckpt-credit"
"${EJ[@]}" train "$OUT/train.trca.jsonl.gz" --algo bc --set filter=success --reward sparse --seed 0 \
  --out "$OUT/ckpt-bc"
"${EJ[@]}" train "$OUT/train.jsonl.gz" --algo iql --reward sparse --set steps="$STEPS" --seed 0 \
  --out "$OUT/ckpt-iql-sparse"

stage "5/8 export: ONNX bundle (policy + MiniLM encoder + tokenizer, checksummed manifest, parity checked)"
"${EJ[@]}" export "$OUT/ckpt-credit" --out "$OUT/bundle"
"${EJ[@]}" export "$OUT/ckpt-iql-sparse" --out "$OUT/bundle-sparse"
"${EJ[@]}" export "$OUT/ckpt-bc" --out "$OUT/bundle-bc"

stage "6/8 evaluate on the $ENV_NAME test split: the bundle via onnxruntime (argmax, loop guard), random"
EVAL=("${EJ[@]}" eval "${WORLD[@]}" --split test --episodes "$TEST_EPISODES" --json)
"${EVAL[@]}" "$OUT/bundle" --no-loop-guard > "$OUT/eval.bundle.json"
"${EVAL[@]}" "$OUT/bundle" --loop-guard > "$OUT/eval.bundle.guard.json"
"${EVAL[@]}" --baseline random > "$OUT/eval.random.json"

stage "7/8 serve: edge-serve on the bundle, $ENV_NAME test episodes driven through it (Python client, loop guard)"
"${EVAL[@]}" "$OUT/bundle" --serve > "$OUT/drive.json"
"${EVAL[@]}" "$OUT/bundle-sparse" --serve > "$OUT/drive.sparse.json"
"${EVAL[@]}" "$OUT/bundle-bc" --serve > "$OUT/drive.bc.json"

SUCCESSES=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["successes"])' "$OUT/train.stats.json")
# the ceiling holds at least as many expert episodes as the teacher of the file's size
EXPERT_EPISODES=$((SUCCESSES > EXPERT_EPISODES ? SUCCESSES : EXPERT_EPISODES))
stage "8/8 the teachers: BC on expert episodes (gold paths), as many as the file has successes and all $EXPERT_EPISODES"
"${EJ[@]}" collect "${WORLD[@]}" --split train --episodes "$EXPERT_EPISODES" --behaviour gold-noise --noise 0 \
  --seed 0 --out "$OUT/expert.jsonl.gz"
if [ "$SUCCESSES" -gt 0 ]; then
  "${EJ[@]}" data subset "$OUT/expert.jsonl.gz" --episodes "$SUCCESSES" --max-success-rate 1 \
    --out "$OUT/expert-same.jsonl.gz"
  "${EJ[@]}" train "$OUT/expert-same.jsonl.gz" --algo bc --reward sparse --seed 0 --out "$OUT/ckpt-bc-expert-same"
  "${EJ[@]}" export "$OUT/ckpt-bc-expert-same" --out "$OUT/bundle-expert-same"
  "${EVAL[@]}" "$OUT/bundle-expert-same" --serve > "$OUT/drive.expert-same.json"
fi
"${EJ[@]}" train "$OUT/expert.jsonl.gz" --algo bc --reward sparse --seed 0 --out "$OUT/ckpt-bc-expert"
"${EJ[@]}" export "$OUT/ckpt-bc-expert" --out "$OUT/bundle-expert"
"${EVAL[@]}" "$OUT/bundle-expert" --serve > "$OUT/drive.expert.json"

stage "summary"
"$PY" -m tools.demo.demo_summary "$OUT"
