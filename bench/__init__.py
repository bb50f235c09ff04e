"""Scoring, benchmarks, validation and the command line: the only place that
puts heuristics and exact solvers side by side."""
