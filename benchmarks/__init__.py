"""Benchmarks of otel-agents: run ``make bench`` (see README.md here)."""
