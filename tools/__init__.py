"""Developer tools: set-up scripts, the demo, benchmarks and probes; run from the repository root as modules
(``python -m tools.bench.bench_serve ...``)."""
