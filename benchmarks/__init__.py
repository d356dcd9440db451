"""rlrun's benchmark suite: ``python -m benchmarks [--only NAME ...]`` (see BENCHMARKS.md)."""
