"""Exact methods of the ``assignment`` family ([capannini2007] section 5), lexicographic
objective: maximum cardinality first, then maximum total preference.

``hungarian``   :func:`epochbench.instances.assignment.lexicographic_matching` (scipy
                ``linear_sum_assignment`` with ``BIG + p`` on eligible pairs),
                cardinality checked against Hopcroft-Karp.  O((n + m)^3).
``cpsat``,      the 0-1 model of ``exact/_binary.py``: one variable per
``milp-cbc``,   eligible pair, each job and each machine at most once, and
``milp-highs``  ``sum x = nu``, the maximum cardinality computed first
                (Hopcroft-Karp, exact and polynomial); maximise the weight.
                Since ``sum x <= nu`` is valid, that row is a face of the
                bipartite matching polytope, so the LP is integral and the
                MILPs close at the root; the maximum matching found first is
                the hint.

All return a :class:`Result` whose ``value`` is the weight, ``bound`` a
proven upper bound on the weight of every maximum-cardinality matching
(``None`` when the solver proved none: then the status is ``feasible``,
never ``optimal``, even with the Hopcroft-Karp matching as the answer), and
``info["cardinality"]`` / ``info["max_cardinality"]`` (added by the
registry).  Threads pinned, CBC serial; deterministic.
"""
from __future__ import annotations

import time

import numpy as np

from epochbench.instances.assignment import AssignmentInstance, lexicographic_matching, maximum_matching
from epochbench.instances.core import Result
from epochbench.instances.registry import register

from ._binary import (BinaryModel, beats_on, grid_of, integer_objective, milp_weight_scale, no_solution,
                      profit_scale, proven, register_exact, run_model, status_info, true_bound, warm_up_backends)
from .starts import START_SHARE, beats, best_start, better


@register("assignment", "hungarian", kind="exact")
def hungarian(inst: AssignmentInstance, *, time_limit: float = 0.0, threads: int = 1) -> Result:
    """Lexicographic optimum by the Hungarian method ([kuhn1955]; scipy), cardinality
    first (``BIG + p``); ``time_limit`` / ``threads`` are not used (one
    polynomial call).  O((n + m)^3).

    Proven (``optimal``) when the arithmetic is exact: preferences integral
    at a power-of-ten scale to 1e-9 of each one's size
    (:func:`~epochbench.exact._binary.profit_scale`; every positive one stays
    positive, so eligible), scaled to integers, and
    ``(n + m) (BIG + max p) < 2**53``.  Otherwise ``BIG + p`` in floating point
    can lose the smaller preferences, so the matching (or a fast
    heuristic's heavier one of the same cardinality) is returned as
    ``feasible`` with no bound (the 0-1 models handle such data); should
    it come short of the maximum cardinality, Hopcroft-Karp's matching is
    the one returned."""
    t0 = time.perf_counter()
    p = inst.preference
    q, exact = _integral(p)
    pairs = tuple(sorted(lexicographic_matching(q)))
    most = maximum_matching(p)
    nu = len(most)
    note = "preferences too far apart (or not decimal) for exact BIG + p arithmetic: not proven"
    if len(pairs) != nu:      # floating point lost pairs (never on exact data): nothing proved
        note = (f"the Hungarian method matched {len(pairs)} of {nu} pairs (preferences too far apart for "
                "BIG + p in floating point); Hopcroft-Karp's matching, not proven")
        pairs, exact = tuple(sorted(most)), False
    value = inst.value(pairs)
    info = {"solver": "scipy linear_sum_assignment", "bound_kind": "solver" if exact else "none"}
    if not exact:
        info["note"] = note
        heur = best_start(inst, budget=START_SHARE * time_limit, accept=lambda r: len(r.decision) == nu)
        if heur is not None and beats(float(heur.value), value, "max"):  # never worse than a heuristic
            pairs, value = tuple(sorted(tuple(map(int, pq)) for pq in heur.decision)), float(heur.value)
            info["note"] += f"; the heuristic {heur.method}'s heavier matching is returned"
    return Result(inst.kind, "hungarian", pairs, value, "optimal" if exact else "feasible",
                  time.perf_counter() - t0, value if exact else None, info)


def _integral(p: np.ndarray) -> tuple[np.ndarray, bool]:
    """``(q, exact)``: the preferences as integers (decimal scaling) when
    the Hungarian method's ``BIG + q`` sums stay exact in floating point,
    else ``p`` itself and False.  O(n m)."""
    pos = p[p > 0]
    if pos.size == 0:
        return p, True
    s = profit_scale(pos)
    if s is None:
        return p, False
    q = np.where(p > 0, np.round(p * s), 0.0)
    big = min(p.shape) * float(q.max()) + 1.0
    return (q, True) if sum(p.shape) * (big + float(q.max())) < 2.0**53 else (p, False)


def assignment_model(p: np.ndarray, nu: int, hint: list[tuple[int, int]]) -> tuple[BinaryModel, np.ndarray]:
    """0-1 model over the eligible pairs (``keys``: (job, machine) per
    variable): rows ``sum_m x[i, m] <= 1``, ``sum_i x[i, m] <= 1`` and
    ``sum x = nu``; maximise ``sum p x`` (integer objective, exact for
    decimal preferences).  O(E)."""
    keys = np.argwhere(p > 0)
    w = p[keys[:, 0], keys[:, 1]] if keys.size else np.zeros(0)
    coefs, scale, exact = integer_objective(w, profit_scale(w), len(w))
    model = BinaryModel(len(w), "max", coefs, scale, exact, w)
    model.weight_scale = milp_weight_scale(w)      # preferences of any size: the MILPs' float objective near 1
    for axis, size in ((0, p.shape[0]), (1, p.shape[1])):
        owner = keys[:, axis] if keys.size else np.zeros(0, dtype=np.int64)
        order = np.argsort(owner, kind="stable")
        starts = np.searchsorted(owner[order], np.arange(size + 1))
        for a in range(size):
            idx = order[starts[a]:starts[a + 1]]
            if idx.size > 1:
                model.add_row(idx, np.ones(idx.size, dtype=np.int64), None, 1)
    model.add_row(np.arange(len(w)), np.ones(len(w), dtype=np.int64), nu, nu)
    pos = np.full(p.shape, -1, dtype=np.int64)         # variable of each eligible pair
    pos[keys[:, 0], keys[:, 1]] = np.arange(len(keys))
    model.hint = np.zeros(len(w), dtype=np.int64)
    for i, k in hint:
        if pos[i, k] < 0:
            raise KeyError((i, k))                      # as the dict lookup did: the hint is not eligible
        model.hint[pos[i, k]] = 1
    return model, keys


def solve_assignment(inst: AssignmentInstance, method: str, *, time_limit: float, threads: int = 1,
                     seed: int = 0, warm: bool = True) -> Result:
    """Lexicographic optimum matching ([capannini2007] section 5) with backend ``method``.

    Maximum cardinality nu by Hopcroft-Karp, then the heaviest matching of
    nu pairs by the 0-1 model (:func:`assignment_model`).  ``bound``: an upper bound on the weight of
    any maximum-cardinality matching, ``None`` when the solver proved none.
    The hint, and the answer when the solver finds nothing better in time,
    is the heaviest of the Hopcroft-Karp matching and the family's fast
    heuristics' matchings of cardinality nu (:func:`~epochbench.exact.starts.best_start`;
    ``warm=False``: Hopcroft-Karp only).  ``time_limit`` covers build and solve."""
    t0 = time.perf_counter()
    p = inst.preference
    start = maximum_matching(p)
    nu = len(start)
    if nu == 0:
        return Result(inst.kind, method, (), 0.0, "optimal", time.perf_counter() - t0, 0.0,
                      {"solver": "none", "note": "no eligible pair", "bound_kind": "combinatorial"})
    origin = "hopcroft-karp"
    if warm:
        heur = best_start(inst, budget=START_SHARE * time_limit, accept=lambda r: len(r.decision) == nu)
        if heur is not None and inst.value(heur.decision) > inst.value(start):
            start, origin = [tuple(map(int, pq)) for pq in heur.decision], heur.method
    model, keys = assignment_model(p, nu, start)
    out = run_model(model, method, time_limit - (time.perf_counter() - t0), threads, seed)
    bound, slack = true_bound(model, out)
    grid = grid_of(model, out)
    info = {**status_info(model, out, slack), "start": origin}
    if out.x is None:  # no solution in time: the start matching, nothing proved
        pairs, status = tuple(sorted(start)), "feasible"
        info["note"] = f"{no_solution(out)}; the start matching ({origin})"
    else:
        pairs = tuple(sorted((int(i), int(k)) for i, k in keys[out.x.astype(bool)]))
        status = out.status
        a, b = inst.value(tuple(start)), inst.value(pairs)
        if beats_on(grid, a, b, "max"):                          # a tie but for rounding keeps the proof
            tie = not better(a, b, "max")
            pairs, status = tuple(sorted(start)), status if tie else "feasible"
            info["note"] = f"the solver's answer was lighter than the start ({origin}); the start is returned"
    value = inst.value(pairs)
    status, bound = proven(status, value, bound, "max", slack, info=info, grid=grid)
    info["bound_kind"] = "none" if bound is None else "solver"
    return Result(inst.kind, method, pairs, value, status, time.perf_counter() - t0, bound, info)


globals().update(register_exact("assignment", solve_assignment))  # assignment_cpsat, ...
#: SciPy's matching modules and the start heuristics' kernels load before the clock starts: the starts
#: run only on inexact data, but a first call on such data counted their loading in its time (1.4 s
#: against a limit of 0.05 s, 0.02-0.04 s once loaded)
hungarian.warm_up = warm_up_backends("scipy-matching", family="assignment")
