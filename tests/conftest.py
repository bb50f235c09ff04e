"""Correctness tests see every registered method, as the CLI does."""
from epochbench.methods import load_all

load_all()
