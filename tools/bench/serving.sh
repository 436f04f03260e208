#!/usr/bin/env bash
# docs/benchmarks/serving.md, "Serving latency": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_text --out tools/results/bench_text_memory --n 500 --n-minilm 40 --llm-states 0 \
    --skip http,websocket,llm

# BC checkpoints at two reader widths, each exported with int8 and int4 token tables (trains 4 checkpoints,
# about 15 minutes; reuses them from runs/reader_width)
python -m tools.bench.bench_reader_width --out tools/results/bench_reader_width.json

python -m tools.bench.bench_memory_window --requests 15 --honest 4 --out tools/results/bench_memory_window.json
python -m tools.bench.bench_memory_window --requests 15 --honest 4 --encoder static \
    --out tools/results/bench_memory_window_static.json
