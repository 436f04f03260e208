#!/usr/bin/env bash
# docs/benchmarks/serving.md, "Serving latency": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_text --out tools/results/bench_text_memory --n 500 --n-minilm 40 --llm-states 0 \
    --skip http,websocket,llm
# the load test: 8 clients (a random-init format-1 MiniLM bundle exported first)
[ -d runs/load-bundle ] || edgejudge export --random-init --bundle-format 1 --out runs/load-bundle
python -m tools.bench.bench_serve --bundle runs/load-bundle --out runs/bench_serve_load --n 3000 --n-text 300 \
    --warmup 100 --block 100 --clients 8 --skip http,websocket,int8,cpp --json

# BC checkpoints at two reader widths, each exported with int8 and int4 token tables (trains 4 checkpoints,
# about 15 minutes; reuses them from runs/reader_width)
python -m tools.bench.bench_reader_width --out tools/results/bench_reader_width.json

python -m tools.bench.bench_memory_window --requests 15 --honest 4 --out tools/results/bench_memory_window.json
python -m tools.bench.bench_memory_window --requests 15 --honest 4 --encoder static \
    --out tools/results/bench_memory_window_static.json
