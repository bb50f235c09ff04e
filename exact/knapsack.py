"""Exact models of the ``knapsack`` family ([capannini2007] section 4.2's MKP).

The license knapsack is the packing family's 0-1 multidimensional knapsack
with a profit objective: :func:`as_packing` states it as a
:class:`~epochbench.instances.packing.PackingInstance` (``capacity``, ``demand =
weights``, ``objective="profit"``) and :func:`solve_knapsack` hands it to
:func:`epochbench.exact.packing.solve_packing`, so both families share one model
(:func:`epochbench.exact.packing.packing_model`: jobs that fit alone, one row per
license that can bind, exact integer objective for decimal profits) and the
CP-SAT / CBC / HiGHS backends of ``exact/_binary.py``.

Registered as ``cpsat``, ``milp-cbc``, ``milp-highs`` for ``knapsack``, and
``mkp-bb`` (:func:`knapsack_mkp_bb`: the packing oracle's branch-and-bound
with the node LP, which proves all 30 mknapcb1 problems within 10 s);
``f(inst, *, time_limit, threads, seed=0) -> Result`` with a proven upper
bound on the profit (``None`` when the solver proved none) and the status.  Threads pinned (CBC always serial);
deterministic for a given seed and thread count.
"""
from __future__ import annotations

import time
from dataclasses import replace

from epochbench.instances.core import Result
from epochbench.instances.knapsack import KnapsackInstance
from epochbench.instances.packing import PackingInstance
from epochbench.instances.registry import register

from ._binary import register_exact, warm_up_backends
from .packing import solve_packing
from .packing_bb import NODES, check_nodes, packing_mkp_bb, solve_packing_bb
from .starts import START_SHARE, best_start


def as_packing(inst: KnapsackInstance) -> PackingInstance:
    """The knapsack as a packing instance with the profit objective (same
    job indices).  O(n L)."""
    return PackingInstance.build(inst.capacity, inst.weights, profit=inst.profit, objective="profit",
                                 meta={"name": inst.name}, source=inst.name)


def solve_knapsack(inst: KnapsackInstance, method: str, *, time_limit: float, threads: int = 1,
                   seed: int = 0, warm: bool = True) -> Result:
    """Best license knapsack ([capannini2007] 4.2 MKP) with backend ``method``.

    The packing family's MKP model, started from (and never worse than)
    the best of the knapsack heuristics (:func:`~epochbench.exact.starts.best_start`;
    ``warm=False``: no start); selected jobs in ascending order, a proven
    upper bound or ``None``, status ``optimal`` / ``feasible`` / ``timeout``.
    Exponential in the worst case; ``time_limit`` covers start, build and solve."""
    t0 = time.perf_counter()
    start = best_start(inst, budget=START_SHARE * time_limit) if warm else None
    res = solve_packing(as_packing(inst), method, time_limit=_left(time_limit, t0), threads=threads, seed=seed,
                        start=start, warm=False)
    return replace(res, family=inst.kind, method=method, seconds=time.perf_counter() - t0)


def _left(time_limit: float, t0: float) -> float:
    """What is left of ``time_limit`` seconds counted from ``t0`` (the start
    heuristics took the rest), at least a microsecond: the solvers' own
    time-limit checks want a positive number, and this little stops them at
    once."""
    if not float(time_limit) > 0:
        return time_limit                # the callee says what is wrong with it
    return max(float(time_limit) - (time.perf_counter() - t0), 1e-6)


globals().update(register_exact("knapsack", solve_knapsack))  # knapsack_cpsat, knapsack_milp_cbc, ...


@register("knapsack", "mkp-bb", kind="exact")
def knapsack_mkp_bb(inst: KnapsackInstance, *, time_limit: float, threads: int = 1, seed: int = 0,
                    warm: bool = True, nodes: int | None = NODES) -> Result:
    """Branch-and-bound of the multidimensional knapsack with the node LP, most profit per unit of
    normalised weight first, CP-SAT for what it leaves open (see exact.packing_bb.solve_packing_bb)

    The knapsack as a packing instance with the profit objective
    (:func:`as_packing`), solved by :func:`~epochbench.exact.packing_bb.solve_packing_bb`
    from (and never worse than) the best knapsack heuristic (``warm=False``:
    no start); ``nodes``: search nodes before CP-SAT's first turn (None: the
    search alone).  On OR-Library's mknapcb1 (30 problems, 5 x 100) it
    proves every problem optimal, each at Chu and Beasley's best-known value
    (the default: median 0.19 s, at most 3.2 s; the search alone: median
    0.19 s, at most 1.6 s; before the reduced-cost fixing and the bisection
    of :mod:`epochbench.exact.packing_bb`: median 0.85 s, at most 5.6 s)."""
    t0 = time.perf_counter()
    start = best_start(inst, budget=START_SHARE * time_limit) if warm else None
    res = solve_packing_bb(as_packing(inst), time_limit=_left(time_limit, t0), threads=threads, seed=seed,
                           start=start, warm=False, nodes=nodes)
    return replace(res, family=inst.kind, method="mkp-bb", seconds=time.perf_counter() - t0)


knapsack_mkp_bb.warm_start = True    # takes warm=False (no heuristic start)
knapsack_mkp_bb.check_params = check_nodes    # before a run (epochbench.methods)
_load_knapsack_starts = warm_up_backends(family="knapsack")


def _warm_up() -> None:
    """The search's kernel and CP-SAT (packing_bb's warm-up), and the knapsack heuristics' kernels."""
    packing_mkp_bb.warm_up()
    _load_knapsack_starts()


knapsack_mkp_bb.warm_up = _warm_up
