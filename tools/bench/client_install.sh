#!/usr/bin/env bash
# docs/benchmarks/serving.md, "Client-only install": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_client_install --out tools/results/bench_client_install.json
