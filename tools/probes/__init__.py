"""Probes: one-off measurements that explain a benchmark result (their outputs are in tools/results/)."""
