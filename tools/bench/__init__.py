"""The benchmarks behind BENCHMARKS.md, their shared helpers, and one shell file per BENCHMARKS.md section."""
