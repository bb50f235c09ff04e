"""Exact models of the ``packing`` and ``epochs`` families: CP-SAT and MILP.

Both families are 0-1 programs.  Each is stated once as a small neutral
:class:`BinaryModel` (binary variables, integer linear rows, an integer
objective with its scale; ``exact/_binary.py``) and handed to one of three
backends:

``cpsat``       OR-Tools CP-SAT,
``milp-cbc``    CBC through PuLP (``PULP_CBC_CMD``, a subprocess),
``milp-highs``  HiGHS through PuLP (``pulp.HiGHS``, highspy in-process).

Registered for both families with ``kind="exact"``; each method is
``f(inst, *, time_limit, threads, seed=0) -> Result`` (epochs also takes
``pattern_bound=True``) with the proven bound (packing: an upper bound on the
best objective, ``None`` when the solver proved none; epochs: a lower bound
on the number of epochs, at least the combinatorial one) labelled in
``info["bound_kind"]`` (``solver``, ``combinatorial`` or ``none``) and a
status ``optimal`` (proved) / ``feasible`` / ``timeout`` / ``infeasible``.
``time_limit`` is the wall time of the whole call.  The public entry
points are :func:`solve_packing` and :func:`solve_epochs`; the registered
functions are ``packing_cpsat``, ``packing_milp_cbc``, ``packing_milp_highs``,
``epochs_cpsat``, ``epochs_milp_cbc``, ``epochs_milp_highs``.
"""
from __future__ import annotations

import math
import time
from functools import reduce

import numpy as np

from epochbench.instances.core import Result
from epochbench.instances.lazy import lazy_module
from epochbench.instances.packing import EpochsInstance, PackingInstance, fits_alone
from epochbench.instances.registry import overrun_tolerance

from ._binary import (  # noqa: F401  (public names re-exported: they were defined here)
    BACKENDS, INT_LIMIT, METHODS, MILP_INT_LIMIT, BinaryModel, Outcome, integer_objective, milp_weight_scale,
    profit_scale, no_solution, no_time, proven, register_exact, run_model, status_info, true_bound,
)
from ._binary import against, beats_on, grid_of, refuted
from .starts import START_SHARE, best_start, better, given_start, start_info

_optimize = lazy_module("scipy.optimize")   # loaded on first use
_sparse = lazy_module("scipy.sparse")



def objective_scale(inst: PackingInstance) -> int | None:
    """Integer ``L`` with ``weights * L`` integral: ``K * lcm(capacities)`` for
    utilization, 1 for count, a power of ten for decimal profits; else None."""
    if inst.objective == "count":
        return 1
    if inst.objective == "profit":
        return profit_scale(np.asarray(inst.profit, dtype=float))
    caps = [int(c) for c in inst.capacity if c > 0]
    return inst.k * reduce(math.lcm, caps, 1)


def _utilization_coefs(inst: PackingInstance, cand: np.ndarray, scale: int) -> list[int]:
    """Exact integer ``scale * w_j`` for the utilization objective (Python ints)."""
    lcm = scale // inst.k
    per = np.array([lcm // int(c) if c > 0 else 0 for c in inst.capacity], dtype=np.int64)
    # exact in int64: demand <= capacity, so each term is <= lcm and the sum <= scale (< INT_LIMIT)
    return (inst.demand[cand].astype(np.int64) @ per).tolist()


# ---- packing -------------------------------------------------------------------------
def packing_candidates(inst: PackingInstance) -> np.ndarray:
    """Jobs that fit alone (in ``free`` and, if flagged past the shadow, in
    ``extra``) and have a positive weight; the others are never selected."""
    return np.nonzero(fits_alone(inst) & (inst.weights() > 0))[0]


def packing_model(inst: PackingInstance, cand: np.ndarray) -> BinaryModel:
    """0-1 multidimensional knapsack over ``cand`` (start the set of queued jobs that
    best fills the K resources: epochbench's statement of [leinberger1999]
    section 1's working set "which fully utilizes all of the resources"; [vadhiyar-notes] LOS
    "Freedom from starvation": jobs running past the shadow time fit in
    ``extra``).  Rows that can never bind are left out.  Cost O(n K)."""
    w = inst.weights()[cand]
    scale = objective_scale(inst)
    n = len(cand)
    if inst.objective == "utilization" and scale is not None and scale * max(n, 1) < INT_LIMIT:
        coefs, fscale, exact = _utilization_coefs(inst, cand, scale), float(scale), True
    else:
        coefs, fscale, exact = integer_objective(w, scale, n)
    model = BinaryModel(n, "max", coefs, fscale, exact, w)
    if inst.objective == "profit":   # profits of any size: the MILPs' float objective brought near 1
        model.weight_scale = milp_weight_scale(w)
    dem = inst.demand[cand]
    pos = np.arange(n)
    free = inst.free
    for r in np.flatnonzero(_column_sums(dem) > free):
        model.add_row(pos, dem[:, r], None, int(free[r]))
    if inst.reservation is not None:
        past = np.nonzero(np.asarray(inst.reservation.past_shadow, dtype=bool)[cand])[0]
        extra = inst.reservation.extra
        for r in np.flatnonzero(_column_sums(dem[past]) > extra):
            model.add_row(past, dem[past, r], None, int(extra[r]))
    return model


def _column_sums(dem: np.ndarray) -> np.ndarray:
    """Exact column sums of non-negative int64 demands: int64 while they
    cannot overflow, Python integers otherwise (an int64 sum that wrapped
    negative left a binding row out of the model).  O(n K)."""
    if dem.size and int(dem.max()) > np.iinfo(np.int64).max // dem.shape[0]:
        return dem.sum(axis=0, dtype=object)
    return dem.sum(axis=0)


def solve_packing(inst: PackingInstance, method: str, *, time_limit: float, threads: int = 1,
                  seed: int = 0, start: Result | None = None, warm: bool = True,
                  solver_params: dict | None = None) -> Result:
    """Best start set of a packing instance with backend ``method``.

    Returns the selected jobs in ascending order, their objective
    (``inst.value``), a proven upper bound (``None`` when the solver proved
    none) and the status.  The solver starts from ``start`` (default: the
    best of the family's fast heuristics, :func:`~epochbench.exact.starts.best_start`;
    ``warm=False``: no start) as a hint, and the result is never worse
    than it: when the solver's incumbent is worse, or it found none in
    time, the start is returned (status ``feasible``, or ``optimal`` when
    the solver's bound proves it).  ``solver_params``: CP-SAT parameters by
    name (``cpsat`` only; an unknown name is a one-line ``ValueError``).
    Exponential in the worst case; ``time_limit`` covers the start, the
    model build and the solve.
    """
    t0 = time.perf_counter()
    start = given_start(inst, start)
    cand = packing_candidates(inst)
    if cand.size == 0:
        return Result(inst.kind, method, (), 0.0, "optimal", time.perf_counter() - t0, 0.0,
                      {"solver": "none", "note": "no job fits", "bound_kind": "combinatorial"})
    if start is None and warm:
        start = best_start(inst, budget=START_SHARE * time_limit)
    model = packing_model(inst, cand)
    if start is not None:
        chosen = {int(j) for j in start.decision}
        model.hint = np.array([int(int(j) in chosen) for j in cand], dtype=np.int64)
    out = run_model(model, method, time_limit - (time.perf_counter() - t0), threads, seed, solver_params)
    bound, slack = true_bound(model, out)
    grid = grid_of(model, out)
    info = {**status_info(model, out, slack), **start_info(start)}
    if out.status == "infeasible":  # () is feasible: the solver erred (CBC did on profits near 1e15)
        info["solver_error"] = (f"{out.info.get('solver', method)} called the model infeasible, but selecting "
                                "nothing is feasible; nothing is proved")
    if out.x is not None:
        sel = tuple(int(j) for j in sorted(cand[out.x.astype(bool)]))
        value, status = inst.value(sel), out.status
        worse = start is not None and beats_on(grid, float(start.value), value, "max")
        note = "the solver's answer was worse than the start ({}); the start is returned"
    elif start is not None:
        worse, note = True, no_solution(out) + "; the start ({})"
    else:  # no solution and no start: no answer (a simulator's oracle step falls back to its own rule)
        status = "timeout" if out.status == "infeasible" else out.status
        return Result(inst.kind, method, (), 0.0, status, time.perf_counter() - t0, None,
                      {**info, "bound_kind": "none"})
    if worse:   # the start's value; a proof stands where the answer ties with the start but for rounding
        tie = out.x is not None and not better(float(start.value), value, "max")
        sel, value = tuple(sorted(int(j) for j in start.decision)), float(start.value)
        status = status if tie else "feasible"
        info["note"] = note.format(start.method)
    status, bound = proven(status, value, bound, "max", slack, info=info, grid=grid)
    if status == "timeout":   # no answer, no bound (bound_kind none)
        bound = None
    return Result(inst.kind, method, sel, value, status, time.perf_counter() - t0, bound,
                  {**info, "bound_kind": "none" if bound is None else "solver"})


# ---- epochs --------------------------------------------------------------------------
def ffd_order(inst: EpochsInstance) -> np.ndarray:
    """Jobs by largest normalised demand ``max_k d[j,k] / c[k]``, descending
    (ties by index).  Cost O(n K + n log n)."""
    cap = inst.capacity.astype(float)
    share = np.divide(inst.demand, cap, out=np.zeros(inst.demand.shape), where=cap > 0)
    key = share.max(axis=1) if inst.n else np.zeros(0)
    return np.lexsort((np.arange(inst.n), -key))


def ffd_bins(inst: EpochsInstance, order: np.ndarray | None = None) -> list[list[int]]:
    """First-fit decreasing vector bin packing: each job in :func:`ffd_order`
    goes to the first bin it fits.  An upper bound for the exact model.
    Cost O(n B K) for B bins, one numpy pass over the open bins per job
    (n = 500, B = 146: 5 ms, against 100 ms bin by bin)."""
    order = ffd_order(inst) if order is None else order
    bins: list[list[int]] = []
    room = np.empty((max(inst.n, 1), inst.k), dtype=np.int64)   # capacity left in each open bin
    for j in order:
        d = inst.demand[j]
        fits = np.flatnonzero(np.all(d <= room[:len(bins)], axis=1)) if bins else ()
        if len(fits):
            b = int(fits[0])
            bins[b].append(int(j))
            room[b] -= d                                # d <= room: no int64 overflow
        else:
            room[len(bins)] = inst.capacity - d          # d <= capacity (a checked instance)
            bins.append([int(j)])
    return bins


def conflicts(inst: EpochsInstance) -> np.ndarray:
    """``C[i, j]``: jobs i and j cannot share a bin (i != j).  O(n^2 K) time,
    O(n^2) memory."""
    c = np.zeros((inst.n, inst.n), dtype=bool)
    for r in range(inst.k):
        d = inst.demand[:, r]
        c |= d[:, None] > inst.capacity[r] - d[None, :]   # d <= capacity: no int64 overflow
    np.fill_diagonal(c, False)
    return c


def conflict_clique(conf: np.ndarray, order: np.ndarray) -> list[int]:
    """Jobs pairwise in conflict, each needing its own bin: the larger of two
    greedy cliques (jobs by ``order``; jobs by conflict degree).  O(n^2)."""
    best: list[int] = []
    deg = conf.sum(axis=1)
    for seq in (order, sorted(order, key=lambda j: -deg[j])):
        clique: list[int] = []
        for j in seq:
            if all(conf[j, i] for i in clique):
                clique.append(int(j))
        best = clique if len(clique) > len(best) else best
    return best


def l2_bound(sizes: np.ndarray, cap: int) -> int:
    """Martello-Toth L2 bound of one-dimensional bin packing (max over
    thresholds ``a <= cap/2`` of big items plus the overflow of medium ones).
    The items sorted once; each threshold's counts and sums come from
    prefix sums (Python integers: exact).  O(n log n)."""
    s = np.asarray(sizes, dtype=np.int64)
    if cap <= 0 or s.size == 0:
        return 0
    big = s > cap - s                    # 2 s > cap without int64 overflow (s <= cap)
    half, small = np.sort(s[big]), np.sort(s[~big])
    half_sum = [0] + np.cumsum(half.astype(object)).tolist()        # prefix sums, exact
    small_sum = [0] + np.cumsum(small.astype(object)).tolist()
    thresholds = np.unique(np.concatenate(([0], small)))
    # j2: big items with s <= cap - a (the others, j1, need a bin of their own whatever a is)
    n2 = np.searchsorted(half, cap - thresholds, side="right").tolist()
    n3 = np.searchsorted(small, thresholds, side="left").tolist()   # small items below a
    best, cap = 0, int(cap)
    for k2, k3 in zip(n2, n3):
        room = k2 * cap - half_sum[k2]
        extra = max(0, -(-(small_sum[-1] - small_sum[k3] - room) // cap))
        best = max(best, extra)
    return half.size + best


def epochs_lower_bound(inst: EpochsInstance, clique: list[int]) -> int:
    """max of ``inst.lower_bound()`` (volume), the conflict clique size and the
    Martello-Toth L2 bound of every resource taken alone."""
    l2 = max((l2_bound(inst.demand[:, r], int(inst.capacity[r])) for r in range(inst.k)), default=0)
    return max(inst.lower_bound(), len(clique), l2)


def bin_patterns(inst: EpochsInstance, max_patterns: int = 20000,
                 deadline: float = math.inf) -> list[np.ndarray] | None:
    """Every non-empty set of jobs fitting in one bin, level by level: entry
    ``k-1`` is an array ``(m_k, k)`` of ascending job indices.  ``None`` once
    more than ``max_patterns`` exist, or past ``deadline``
    (``time.perf_counter()`` seconds; both are looked at after each chunk
    of 2048 patterns grown, not only after a whole level: a level of
    triples of 200 jobs took 0.8 s before it was found to be too many).
    Cost O(P n K) for P patterns."""
    n, dem, cap = inst.n, inst.demand, inst.capacity
    members = np.arange(n, dtype=np.int64)[:, None]
    loads = dem.astype(np.int64)
    levels, total = [members], n
    while members.size:
        grow, last = [], members[:, -1]
        for lo in range(0, len(members), 2048):  # chunks bound the (m, n, K) temporary
            fits = np.all(loads[lo:lo + 2048, None, :] + dem[None, :, :] <= cap, axis=2)
            fits &= np.arange(n)[None, :] > last[lo:lo + 2048, None]
            p, j = np.nonzero(fits)
            grow.append((p + lo, j))
            total += p.size
            if total > max_patterns or time.perf_counter() > deadline:
                return None
        p = np.concatenate([g[0] for g in grow])
        j = np.concatenate([g[1] for g in grow])
        members = np.concatenate([members[p], j[:, None]], axis=1)
        loads = loads[p] + dem[j]
        if members.size:
            levels.append(members)
    return levels


def pattern_lower_bound(inst: EpochsInstance, max_patterns: int = 20000,
                        time_limit: float = math.inf) -> int | None:
    """Gilmore-Gomory bound: ``ceil`` of the LP ``min sum z_p`` over all bin
    patterns ``p`` covering every job (vector bin packing's strongest classic
    LP bound).  Made rigorous from the LP dual ``y``: clipped to ``y >= 0``
    and scaled so no pattern exceeds 1, ``sum y`` is a valid bound.  ``None``
    when there are more than ``max_patterns`` patterns or the LP does not
    finish within ``time_limit`` seconds.  One LP (HiGHS)."""
    t0 = time.perf_counter()
    if not time_limit > 0:
        return None
    levels = bin_patterns(inst, max_patterns, t0 + time_limit)
    left = time_limit - (time.perf_counter() - t0)
    if levels is None or inst.n == 0 or left <= 0:
        return None
    rows = np.concatenate([m.ravel() for m in levels])
    cols = np.concatenate([np.repeat(np.arange(len(m)), m.shape[1]) + off
                           for m, off in zip(levels, np.cumsum([0] + [len(m) for m in levels[:-1]]))])
    npat = sum(len(m) for m in levels)
    a = _sparse.csc_matrix((np.ones(rows.size), (rows, cols)), shape=(inst.n, npat))
    opts = {"time_limit": left} if math.isfinite(left) else {}
    res = _optimize.linprog(np.ones(npat), A_ub=-a, b_ub=-np.ones(inst.n), bounds=(0, None), method="highs",
                            options=opts)
    if res.status != 0:
        return None
    y = np.clip(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0, None)
    worst = max(1.0, float((a.T @ y).max()))
    return int(math.ceil(y.sum() / worst - 1e-9))


def canonical_bins(bins, pos: dict[int, int]) -> list[list[int]]:
    """Relabel bins by the smallest model position they hold, so the job at
    position ``i`` sits in a bin ``<= i`` (the symmetry breaking of
    :func:`epochs_model`); empty bins dropped."""
    full = [list(b) for b in bins if len(b)]
    return sorted(full, key=lambda b: min(pos[j] for j in b))


def epochs_model(inst: EpochsInstance, order: np.ndarray, n_clique: int, start: list[list[int]], lb: int,
                 conf: np.ndarray, fill: bool = True, deadline: float = math.inf):
    """Assignment model of vector bin packing with ``U = len(start)`` bins
    ([leinberger1999] figure 1, "UNC": the fewest epochs that run the whole queue).

    ``order`` puts a conflict clique first (its ``n_clique`` jobs are fixed
    to bins ``0..n_clique-1``), then the rest by FFD order.  Variables
    ``x[i,b]`` (the job at position ``i`` in bin ``b <= i``, never in the bin
    of a clique job it conflicts with) and ``y[b]``; each job in one bin, bin
    loads within ``capacity * y[b]``, ``x[i,b] <= y[b]``, ``y[b] >= y[b+1]``,
    ``y[b] = 1`` for ``b < lb``.  Minimise ``sum y``.  ``start`` (a packing
    in canonical bin order) becomes the hint.  Returns the model and
    ``xkey``, (position, bin) per x-variable, or ``None`` when ``deadline``
    (``time.perf_counter()`` seconds) passes while it is built (n = 500,
    U = 146: 0.3 s).  O(n U) variables.
    """
    n, ub = inst.n, len(start)
    xkey = [(i, i) for i in range(n_clique)]
    xkey += [(i, b) for i in range(n_clique, n) for b in range(min(i + 1, ub))
             if b >= n_clique or not conf[order[i], order[b]]]
    ny = len(xkey)
    model = BinaryModel(ny + ub, "min", [0] * ny + [1] * ub)
    by_bin: list[list[int]] = [[] for _ in range(ub)]
    by_job: list[list[int]] = [[] for _ in range(n)]
    for v, (i, b) in enumerate(xkey):
        by_bin[b].append(v)
        by_job[i].append(v)
    for vs in by_job:
        model.add_row(vs, [1] * len(vs), 1, 1)
    dem, cap = _reduced_rows(inst.demand[order], inst.capacity)
    link = np.array([1, -1], dtype=np.int64)
    for b, vs in enumerate(by_bin):
        if b % 8 == 0 and time.perf_counter() >= deadline:
            return None
        pos = [xkey[v][0] for v in vs]
        for r in range(inst.k):
            col = dem[pos, r]
            if col.sum() > cap[r]:
                model.add_row(vs + [ny + b], list(col) + [-int(cap[r])], None, 0)
        for v in vs:             # x <= y: coefficients without zeros, no need for add_row's filter
            model.rows.append((np.array([v, ny + b], dtype=np.int64), link, None, 0))
    if fill and not _fill_rows(model, dem, cap, xkey, by_bin, ny, ub, deadline):
        return None
    if time.perf_counter() >= deadline:
        return None
    for b in range(ub):
        if b < lb:
            model.add_row([ny + b], [1], 1, 1)
        if b + 1 < ub:
            model.add_row([ny + b + 1, ny + b], [1, -1], None, 0)
    model.hint = _epochs_hint(order, start, xkey, ny)
    return model, xkey


#: the redundant rows of :func:`_fill_rows` are left out for a resource whose total
#: demand (after :func:`_reduced_rows`) is above this: their coefficients reach the
#: total, and with coefficients of 1e10 and more CP-SAT and CBC proved wrong optima
#: (a bin more than the optimum) on instances whose model is right without them
FILL_LIMIT = 2**24


def _reduced_rows(dem: np.ndarray, capacity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Demands (rows in model order) and capacities with each resource divided
    by the gcd of its capacity and demands: the same packings, smaller
    coefficients (memory in bytes, say, is often a multiple of 2**20).
    Python integers, so that no sum overflows.  O(n K)."""
    dem = np.asarray(dem, dtype=np.int64)
    cap = np.asarray(capacity, dtype=np.int64)
    g = np.gcd.reduce(np.vstack([cap[None, :], dem]), axis=0)
    g = np.where(g > 0, g, 1)
    return (dem // g).astype(object), (cap // g).astype(object)


def _fill_rows(model, dem, cap, xkey, by_bin, ny, ub, deadline: float = math.inf) -> bool:
    """Redundant rows: with ``S = sum y`` bins open, an open bin ``b`` holds at
    least ``total[r] - (S - 1) * cap[r]`` of resource r (the others hold at
    most ``cap[r]`` each): ``load[b,r] + cap[r] * S - total[r] * y[b] >= cap[r]``.
    ``dem`` and ``cap`` as :func:`_reduced_rows` gives them; a resource whose
    total is over :data:`FILL_LIMIT` gets none.  False when ``deadline``
    passed before they were all added."""
    for r in range(dem.shape[1]):
        cap_r, total = int(cap[r]), int(sum(dem[:, r]))
        if total <= cap_r or total > FILL_LIMIT:
            continue
        for b, vs in enumerate(by_bin):
            if b % 8 == 0 and time.perf_counter() >= deadline:
                return False
            coef = [int(dem[xkey[v][0], r]) for v in vs] + [cap_r - total if b2 == b else cap_r for b2 in range(ub)]
            model.add_row(vs + [ny + b2 for b2 in range(ub)], coef, cap_r, None)
    return True


def _epochs_hint(order, start, xkey, ny) -> np.ndarray:
    """``start`` as a 0-1 vector of :func:`epochs_model`."""
    pos = {int(j): i for i, j in enumerate(order)}
    where = {(pos[j], b) for b, jobs in enumerate(start) for j in jobs}
    hint = np.zeros(ny + len(start), dtype=np.int64)
    for v, key in enumerate(xkey):
        hint[v] = key in where
    hint[ny:] = 1
    if int(hint[:ny].sum()) != len(pos):
        raise AssertionError("start packing is not a point of the epochs model")
    return hint


def _bins_tuple(bins) -> tuple[tuple[int, ...], ...]:
    """Bins as sorted tuples, empty ones dropped, in order of the bin index."""
    return tuple(tuple(sorted(int(j) for j in b)) for b in bins if len(b))


def solve_epochs(inst: EpochsInstance, method: str, *, time_limit: float, threads: int = 1,
                 seed: int = 0, pattern_bound: bool = True, warm: bool = True) -> Result:
    """Fewest epochs running every job of an epochs instance with backend
    ``method``: the best of FFD and the family's fast heuristics
    (:func:`~epochbench.exact.starts.best_start`; ``warm=False``: FFD only)
    gives the upper bound and the hint, and is returned when the solver
    finds nothing better in time; a conflict clique,
    the volume and L2 bounds and (``pattern_bound``, at most 20000 patterns)
    the Gilmore-Gomory LP bound give the lower bound; the solver is skipped
    when they meet.  ``bound``: a proven lower bound on the number of epochs."""
    t0 = time.perf_counter()
    ffd_ord = ffd_order(inst)
    conf = conflicts(inst)
    clique = conflict_clique(conf, ffd_ord)
    lb = epochs_lower_bound(inst, clique)
    in_clique = set(clique)
    order = np.array(clique + [int(j) for j in ffd_ord if int(j) not in in_clique], dtype=np.int64)
    ffd = min((ffd_bins(inst, ffd_ord), ffd_bins(inst, order)), key=len)
    info = {"ffd": len(ffd), "lower_bound": lb, "clique": len(clique), "start": "ffd"}
    phases = {"bounds": time.perf_counter() - t0}
    # the heuristics get their share of the limit, or what is left of it (FFD is a start already)
    share = min(START_SHARE * time_limit, time_limit - (time.perf_counter() - t0))
    if warm and len(ffd) > lb and share > 0:
        heur = best_start(inst, budget=share)
        if heur is not None and len(heur.decision) < len(ffd):
            ffd = [list(b) for b in heur.decision]
            info.update(start_info(heur))
        phases["start"] = time.perf_counter() - t0 - sum(phases.values())
    if len(ffd) > lb and pattern_bound:
        plb = pattern_lower_bound(inst, time_limit=time_limit - (time.perf_counter() - t0))
        info["pattern_bound"] = plb
        lb = max(lb, plb or 0)
        info["lower_bound"] = lb
        phases["pattern_bound"] = time.perf_counter() - t0 - sum(phases.values())
    if len(ffd) <= lb:
        return Result(inst.kind, method, _bins_tuple(ffd), float(len(ffd)), "optimal",
                      time.perf_counter() - t0, float(len(ffd)),
                      {"solver": "none", "note": f"the start ({info['start']}) meets the lower bound", **info,
                       "bound_kind": "combinatorial"})
    start = canonical_bins(ffd, {int(j): i for i, j in enumerate(order)})
    deadline = t0 + time_limit
    built = None
    if time.perf_counter() < deadline:
        built = epochs_model(inst, order, len(clique), start, lb, conf, deadline=deadline)
        phases["model"] = time.perf_counter() - t0 - sum(phases.values())
    if built is None:     # the bounds or the model took the time: the start packing, unsolved
        model, out = None, no_time("int", method)
        bound, info = None, {**out.info, **info}
    else:
        model, xkey = built
        out = run_model(model, method, time_limit - (time.perf_counter() - t0), threads, seed)
        phases["solver"] = time.perf_counter() - t0 - sum(phases.values())
        bound, slack = true_bound(model, out)
        info = {**status_info(model, out, slack), **info}
    if time.perf_counter() - t0 > time_limit + overrun_tolerance(time_limit):   # what took the time
        info["phases"] = {k: round(v, 4) for k, v in phases.items()}
    kind = "solver" if out.status == "optimal" or (bound is not None and bound > lb) else "combinatorial"
    solver_bound, bound = bound, float(lb) if bound is None else max(float(lb), bound)
    if out.x is None:
        if out.status == "infeasible":  # cannot happen: the FFD packing is feasible
            raise RuntimeError(f"{inst.name}: {method} calls the epochs model infeasible")
        bins, status = _bins_tuple(start), "feasible"
        info["note"] = f"{no_solution(out)}; the start packing ({info['start']})"
    else:
        bins = [[] for _ in range(len(start))]
        for v, (i, b) in enumerate(xkey):
            if out.x[v]:
                bins[b].append(int(order[i]))
        bins, status = _bins_tuple(bins), out.status
    value = float(len(bins))
    if solver_bound is not None and against(value, solver_bound, "min") == "refuted":
        refuted(info, solver_bound, value, out.info.get("solver", method))   # the packing's own lower bound stays
        bound, kind, status = float(lb), "combinatorial", "feasible"
    status, bound = proven(status, value, bound, "min", info=info)
    return Result(inst.kind, method, bins, value, status, time.perf_counter() - t0, bound,
                  {**info, "bound_kind": kind})


# ---- registration --------------------------------------------------------------------
globals().update(register_exact("packing", solve_packing))  # packing_cpsat, packing_milp_cbc, ...
globals().update(register_exact("epochs", solve_epochs))    # epochs_cpsat, epochs_milp_highs, ...
