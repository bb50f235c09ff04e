"""Exact CP-SAT and MILP models of the epochbench problem families.

Importing a module here registers its methods (``kind="exact"``) in
:mod:`epochbench.instances.registry`; ``exact`` never imports ``heuristics``.
"""
from . import packing  # noqa: F401  (registers packing/epochs: cpsat, milp-cbc, milp-highs)
