#!/usr/bin/env bash
# docs/benchmarks/collection.md, "Collection": the section's commands, from the repository root
# with the project's environment active (python and edgejudge on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

python -m tools.bench.bench_collect --episodes 200 --repeats 3 --json tools/results/bench_collect.json
# the TWX ladder (200 episodes each), then scienceworld:find-living-thing (--sw-episodes 20 --sw-max-steps 40
# --sw-behaviour gold-noise, the defaults)
