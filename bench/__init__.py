"""Benchmarks and the generators they use (make bench)."""
