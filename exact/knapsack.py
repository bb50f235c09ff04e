"""Exact models of the ``knapsack`` family (seed 003 section 4.2's MKP).

The license knapsack is the packing family's 0-1 multidimensional knapsack
with a profit objective: :func:`as_packing` states it as a
:class:`~instances.packing.PackingInstance` (``capacity``, ``demand =
weights``, ``objective="profit"``) and :func:`solve_knapsack` hands it to
:func:`exact.packing.solve_packing`, so both families share one model
(:func:`exact.packing.packing_model`: jobs that fit alone, one row per
license that can bind, exact integer objective for decimal profits) and the
CP-SAT / CBC / HiGHS backends of ``exact/_binary.py``.

Registered as ``cpsat``, ``milp-cbc``, ``milp-highs`` for ``knapsack``;
``f(inst, *, time_limit, threads, seed=0) -> Result`` with a proven upper
bound on the profit and the status.  Threads pinned (CBC always serial);
deterministic for a given seed and thread count.
"""
from __future__ import annotations

from dataclasses import replace

from instances.core import Result
from instances.knapsack import KnapsackInstance
from instances.packing import PackingInstance
from instances.registry import register

from .packing import METHODS, solve_packing


def as_packing(inst: KnapsackInstance) -> PackingInstance:
    """The knapsack as a packing instance with the profit objective (same
    job indices).  O(n L)."""
    return PackingInstance.build(inst.capacity, inst.weights, profit=inst.profit, objective="profit",
                                 meta={"name": inst.name}, source=inst.name)


def solve_knapsack(inst: KnapsackInstance, method: str, *, time_limit: float, threads: int = 1,
                   seed: int = 0) -> Result:
    """Most profitable feasible job set with backend ``method`` (the packing
    family's MKP model).  Selected jobs in ascending order, a proven upper
    bound, status ``optimal`` / ``feasible`` / ``timeout``.  Exponential in
    the worst case; ``time_limit`` covers build and solve."""
    res = solve_packing(as_packing(inst), method, time_limit=time_limit, threads=threads, seed=seed)
    return replace(res, family=inst.kind, method=method)


def _make(method: str):
    def method_func(inst, *, time_limit: float, threads: int = 1, **params) -> Result:
        return solve_knapsack(inst, method, time_limit=time_limit, threads=threads, **params)

    method_func.__name__ = method_func.__qualname__ = f"knapsack_{method.replace('-', '_')}"
    method_func.__doc__ = f"Best license knapsack (seed 003 4.2 MKP) [{method}; see solve_knapsack]"
    return register("knapsack", method, kind="exact")(method_func)


for _m in METHODS:
    _f = _make(_m)
    globals()[_f.__name__] = _f  # knapsack_cpsat, knapsack_milp_cbc, knapsack_milp_highs
del _m, _f
