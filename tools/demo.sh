#!/usr/bin/env bash
# make demo: the whole pipeline on embedded defaults, sized for a 2-core laptop (about 10 minutes the first time;
# judge answers are cached, so a rerun is faster).
#
#   collect (TWC train, success-scarce) -> label (TRCA on all, COREN on a slice) -> train (IQL on TRCA
#   rewards, and sparse BC on successful episodes as the baseline) -> export (ONNX bundle) -> evaluate the
#   bundle (onnxruntime only; argmax, with the client-side loop guard, and with the client-side placement
#   search) -> edge-serve + TWC test episodes driven through the daemon (the client runs the placement
#   search) -> summary
set -euo pipefail
OUT="${DEMO_OUT:-demo-out}"
PY="${PY:-.venv/bin/python}"
EJ=("$PY" -m edge.cli)
TRAIN_EPISODES="${DEMO_TRAIN_EPISODES:-150}"
TEST_EPISODES="${DEMO_TEST_EPISODES:-20}"
COREN_EPISODES="${DEMO_COREN_EPISODES:-3}"
export EDGEJUDGE_CACHE="${EDGEJUDGE_CACHE:-$OUT/cache}"
mkdir -p "$OUT"
stage() { printf '\n== %s\n' "$*"; }

stage "1/7 collect: TextWorld Commonsense, train split, success-scarce mixture (<= 30 % of episodes succeed)"
"${EJ[@]}" collect --env twx:twc --split train --episodes "$TRAIN_EPISODES" \
  --behaviour "gold-noise=0.1,random=0.9" --noise 0.3 --seed 0 --out "$OUT/train.jsonl.gz"
"${EJ[@]}" data validate "$OUT/train.jsonl.gz"
"${EJ[@]}" data stats "$OUT/train.jsonl.gz" --json > "$OUT/train.stats.json"
"${EJ[@]}" data stats "$OUT/train.jsonl.gz"

stage "2/7 label: COREN with the embedded Gemma 3 270M judge on $COREN_EPISODES short held-out (dev) episodes"
# COREN asks the judge several questions per step (~0.5-1 step/s on one thread), so the demo shows it on a slice.
"${EJ[@]}" collect --env twx:twc --split dev --episodes "$COREN_EPISODES" --behaviour gold-noise --noise 0.3 \
  --seed 1 --out "$OUT/slice.jsonl.gz"
"${EJ[@]}" label coren "$OUT/slice.jsonl.gz" --out "$OUT/slice.coren.jsonl.gz" --prompts 2 \
  --report "$OUT/coren.report.json"
"${EJ[@]}" label quality "$OUT/slice.coren.jsonl.gz" --plot "$OUT/coren.png"

stage "3/7 label: TRCA (judge-built rubric shipped in labeler/rubrics/twc.toml; no judge call per step)"
"${EJ[@]}" label trca "$OUT/train.jsonl.gz" --out "$OUT/train.trca.jsonl.gz"
"${EJ[@]}" label quality "$OUT/train.trca.jsonl.gz" --json > "$OUT/trca.quality.json"
"${EJ[@]}" label quality "$OUT/train.trca.jsonl.gz"

stage "4/7 train: IQL on TRCA rewards (dense; undone detours penalised), and BC on successes (sparse baseline)"
"${EJ[@]}" train "$OUT/train.trca.jsonl.gz" --algo iql --reward trca --detour-penalty 0.05 --set steps=2000 \
  --seed 0 --out "$OUT/ckpt-iql-trca"
"${EJ[@]}" train "$OUT/train.trca.jsonl.gz" --algo bc --set filter=success --reward sparse --seed 0 \
  --out "$OUT/ckpt-bc"

stage "5/7 export: ONNX bundle (policy + MiniLM encoder + tokenizer, checksummed manifest, parity checked)"
"${EJ[@]}" export "$OUT/ckpt-iql-trca" --out "$OUT/bundle"

stage "6/7 evaluate on the TWC test split (objects unseen in training): bundle via onnxruntime, and the baseline"
"${EJ[@]}" eval "$OUT/bundle" --env twx:twc --split test --episodes "$TEST_EPISODES" --json > "$OUT/eval.bundle.json"
"${EJ[@]}" eval "$OUT/bundle" --env twx:twc --split test --episodes "$TEST_EPISODES" --loop-guard --json \
  > "$OUT/eval.bundle.guard.json"
"${EJ[@]}" eval "$OUT/bundle" --env twx:twc --split test --episodes "$TEST_EPISODES" --placement-search --json \
  > "$OUT/eval.bundle.search.json"
"${EJ[@]}" eval "$OUT/ckpt-bc" --env twx:twc --split test --episodes "$TEST_EPISODES" --loop-guard --json \
  > "$OUT/eval.bc.json"
"${EJ[@]}" eval "$OUT/ckpt-bc" --env twx:twc --split test --episodes "$TEST_EPISODES" --placement-search --json \
  > "$OUT/eval.bc.search.json"
"${EJ[@]}" eval --agent random --env twx:twc --split test --episodes "$TEST_EPISODES" --json > "$OUT/eval.random.json"
"${EJ[@]}" eval --agent random --env twx:twc --split test --episodes "$TEST_EPISODES" --placement-search --json \
  > "$OUT/eval.random.search.json"

stage "7/7 serve: edge-serve on the bundle, TWC test episodes driven through it (Python client + placement search)"
"$PY" tools/drive_edge.py --bundle "$OUT/bundle" --split test --episodes "$TEST_EPISODES" --placement-search \
  --json > "$OUT/drive.json"

stage "summary"
"$PY" tools/demo_summary.py "$OUT"
