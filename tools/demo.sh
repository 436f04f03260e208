#!/usr/bin/env bash
# make demo: the pipeline on embedded defaults, small enough for a 2-core laptop.
set -euo pipefail
OUT="${DEMO_OUT:-demo-out}"
PY="${PY:-.venv/bin/python}"
EJ=("$PY" -m edge.cli)
mkdir -p "$OUT"

echo "== 1/1 collect: TextWorld Commonsense, train split, success-scarce mixture"
"${EJ[@]}" collect --env twx:twc --split train --episodes 60 --behaviour "gold-noise=0.35,random=0.65" \
  --noise 0.3 --seed 0 --out "$OUT/train.jsonl.gz"
"${EJ[@]}" data validate "$OUT/train.jsonl.gz"
"${EJ[@]}" data stats "$OUT/train.jsonl.gz"
