"""``cg``: the pattern model of vector bin packing by column generation,
then price-and-branch (the epochs family; beyond the seeds).

The assignment model of :func:`epochbench.exact.packing.solve_epochs` has
``n U`` variables and a weak LP relaxation; from a few hundred jobs on the
solvers return their start.  The pattern (set-covering) model of Gilmore
and Gomory [gilmore1961] has one variable per *bin pattern*, a set of jobs
that fits in one bin, and the strongest classic LP bound of bin packing;
for vector bin packing it is the model of Caprara and Toth [caprara2001]
(the arc-flow model of VPSolver [brandao2016] has the same LP bound)::

    min sum_p z_p   s.t.   sum_p a_tp z_p >= m_t  (every job type t),  z >= 0

Jobs with the same demand vector are one *type* ``t`` of multiplicity
``m_t``.  The LP is solved by column generation: a HiGHS master over the
patterns found so far gives the duals ``y``; the pricing problem, the most
valuable pattern ``max y @ a`` over the bin's K capacities, is a bounded
multidimensional knapsack, solved

* first by greedy fills (types by ``y_t`` over their normalised size, three
  size measures), which give most columns cheaply;
* when they find none, exactly by the compiled branch-and-bound of
  :mod:`epochbench.exact._mkp_bb` on the duals scaled to integers (rounded
  up, so its optimum bounds the true one from above).

Wentges' dual smoothing [wentges1997] prices at a convex combination of the
duals giving the best bound so far and the current ones, which damps the
master's dual oscillation; a smoothed pricing that finds no column prices
again at the current duals.  Every exact pricing gives Farley's bound
[farley1990] ``sum_t m_t y_t / max(1, v(y))``, a valid lower bound on the
number of bins from any ``y >= 0`` (``y / v(y)`` is dual feasible), so the
bound is rigorous whether or not the LP has converged.

When the bound does not meet the best packing, *dives* look for a better
one: fix the patterns the LP uses at 1 or more (else the largest fractional
one, or later one drawn at random by its value), generate columns for the
jobs left by the greedy fills, repeat, and place the last few jobs first-fit
decreasing.  Then the master is solved as an integer program over every
pattern generated (HiGHS' MIP, started from the best packing) in the time
left: *price-and-branch*.  Both are heuristics for the upper bound; an
over-covered job is dropped from all but one of its bins.  The
start is the best of the family's fast heuristics
(:func:`~epochbench.exact.starts.best_start`), so the result is never worse
than it; status ``optimal`` only when the packing meets the bound
(``info["bound_kind"]``: ``pattern`` when the column-generation bound is
the larger, else ``combinatorial``).

Measured at 10 s (this machine, one thread): every one of the 360 VBP
instances (n = 20 and 40, d = 3 and 5) proven, median 3 ms, the slowest 6 s
(CP-SAT's assignment model: 95.8 % proven); on 20 instances of 250 and 500
jobs drawn from the item pools of classes 1, 4, 6, 7 and 8, 9 proven and
fewer or as many bins as ``cpsat``, ``milp-highs`` and ``lns`` on 18 (mean
132.2 bins against 136.8, 136.9 and 135.1).

References
----------
.. [gilmore1961] P. C. Gilmore, R. E. Gomory. A Linear Programming Approach to the Cutting-Stock
   Problem. Operations Research 9(6), 849-859, 1961. https://doi.org/10.1287/opre.9.6.849.
.. [caprara2001] A. Caprara, P. Toth. Lower bounds and algorithms for the 2-dimensional vector
   packing problem. Discrete Applied Mathematics 111(3), 231-262, 2001.
   https://doi.org/10.1016/S0166-218X(00)00267-5.
.. [brandao2016] F. Brandao, J. P. Pedroso. Bin packing and related problems: General arc-flow
   formulation with graph compression. Computers & Operations Research 69, 56-67, 2016.
   https://doi.org/10.1016/j.cor.2015.11.009.
.. [wentges1997] P. Wentges. Weighted Dantzig-Wolfe decomposition for linear mixed-integer
   programming. International Transactions in Operational Research 4(2), 151-162, 1997.
   https://doi.org/10.1111/j.1475-3995.1997.tb00070.x.
.. [benamor2006] H. Ben Amor, J. Desrosiers, J. M. Valerio de Carvalho. Dual-optimal inequalities for
   stabilized column generation. Operations Research 54(3), 454-463, 2006.
   https://doi.org/10.1287/opre.1060.0278.
.. [farley1990] A. A. Farley. A note on bounding a class of linear programming problems, including
   cutting stock problems. Operations Research 38(5), 922-923, 1990.
   https://doi.org/10.1287/opre.38.5.922.
"""
from __future__ import annotations

import math
import time

import numpy as np

from epochbench.instances.core import Result
from epochbench.instances.lazy import lazy_module
from epochbench.instances.packing import EpochsInstance
from epochbench.instances.registry import forwards, register

from ._binary import HIGHS_MIP_OPTIONS, _highs_scheduler, against, refuted, warm_up_backends
from .packing import conflict_clique, conflicts, epochs_lower_bound, ffd_bins, ffd_order
from .packing_bb import dantzig_rows
from .starts import START_SHARE, best_start, start_info

highspy = lazy_module("highspy")   # loaded on first use

#: a pattern enters the master when its value under the duals exceeds 1 by this much
ENTER_TOL = 1e-7
#: integer units of the largest dual in the exact pricing (values rounded up; sums stay far below 2**63)
PRICE_SCALE = 10**12
#: branch-and-bound nodes between two looks at the clock (and for an improving pattern)
NODE_CHUNK = 500
#: most greedy patterns added to the master per round, most patterns of one exact pricing
COLUMNS_PER_ROUND, EXACT_COLUMNS = 40, 10
#: dual-optimal inequalities per job type (its smallest dominating types)
DOMINATORS = 3
#: weight of the stability centre in Wentges' smoothing
SMOOTHING = 0.5
#: shares of the time left for the root's column generation, then for the dives (the rest: the integer
#: master), and of the dives' time for the integer master after the first dive
ROOT_SHARE, DIVE_SHARE, FIRST_MIP_SHARE = 0.5, 0.6, 0.25
#: master solves (with greedy pricing) per step of a dive
DIVE_ROUNDS = 5
#: a float bound is rounded up only past this much above an integer (rounding noise)
ROUND_TOL = 1e-6


# ---- job types -----------------------------------------------------------------------
def job_types(inst: EpochsInstance) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Distinct demand vectors: ``(demand (T, K), multiplicity (T,), jobs of
    each type)``, types in first-appearance order.  O(n K log n)."""
    if inst.n == 0:
        return np.zeros((0, inst.k), dtype=np.int64), np.zeros(0, dtype=np.int64), []
    uniq, first, inv = np.unique(inst.demand.astype(np.int64), axis=0, return_index=True, return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    rank = np.argsort(np.argsort(first))           # type ids in first-appearance order
    dem = uniq[np.argsort(first)]
    jobs: list[list[int]] = [[] for _ in range(len(uniq))]
    for j, t in enumerate(rank[inv]):
        jobs[t].append(j)
    return dem, np.array([len(js) for js in jobs], dtype=np.int64), jobs


def max_copies(dem: np.ndarray, mult: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """How many jobs of each type fit in one bin at most (and exist)."""
    with np.errstate(divide="ignore"):
        per = np.where(dem > 0, cap[None, :] // np.maximum(dem, 1), np.iinfo(np.int64).max)
    return np.minimum(per.min(axis=1), mult)


# ---- pricing ---------------------------------------------------------------------------
def greedy_patterns(dem: np.ndarray, cap: np.ndarray, copies: np.ndarray, y: np.ndarray,
                    most: int = COLUMNS_PER_ROUND) -> list[np.ndarray]:
    """Patterns from greedy fills (:func:`epochbench.exact._cg_price.fills`):
    every type with ``y_t > 0`` as the seed, then the types by ``y_t`` over
    their size (normalised sum, normalised maximum).  Returns at most
    ``most`` distinct count vectors whose value under ``y`` exceeds
    ``1 + ENTER_TOL``, most valuable first.  O(T^2 K) per order."""
    from ._cg_price import fills
    live = np.nonzero((y > 0) & (copies > 0))[0]
    if live.size == 0:
        return []
    share = dem[live] / np.maximum(cap, 1)[None, :]
    orders = np.array([live[np.argsort(-(y[live] / np.maximum(size, 1e-12)), kind="stable")]
                       for size in (share.sum(axis=1), share.max(axis=1))], dtype=np.int64)
    out = np.zeros((len(orders) * len(y), len(y)), dtype=np.int64)
    vals = fills(dem, cap.astype(np.int64), copies, y, orders, out)
    picked, seen = [], set()
    for f in np.argsort(-vals, kind="stable"):
        if vals[f] <= 1 + ENTER_TOL or len(picked) >= most:
            break
        key = out[f].tobytes()
        if key not in seen:
            seen.add(key)
            picked.append(out[f].copy())
    return picked


def exact_patterns(dem: np.ndarray, cap: np.ndarray, copies: np.ndarray, y: np.ndarray, deadline: float,
                   above: float = 1.0 + ENTER_TOL, most: int = EXACT_COLUMNS) -> tuple[float | None, list, bool]:
    """Up to ``most`` patterns worth more than ``above`` under ``y``, or a
    proof that none is, by branch-and-bound
    (:func:`epochbench.exact._mkp_bb.search`) on the values ``ceil(y S)``.

    Returns ``(upper, counts, done)``: ``upper`` bounds ``max_p y @ a_p`` from
    above (the search's optimum when it finished, else the largest of the
    values found and the open bound of the rest; None when not even the
    root was bounded), ``counts`` the distinct patterns found and ``done``
    whether the search finished.  The search prunes only against ``above``
    (column generation needs improving columns, not the best one): after
    each chunk of nodes that found a pattern, it is recorded and the
    incumbent reset to ``above``, so the search goes on to others; it
    stops at ``most``.  Exponential in the worst case; a node costs O(K n)
    for the n copies of the types with ``y_t > 0``.
    """
    from . import _mkp_bb as kernel
    live = np.nonzero((y > 0) & (copies > 0))[0]
    if live.size == 0:
        return 0.0, None, True
    scale = PRICE_SCALE / float(y[live].max())
    val = np.ceil(y[live] * scale).astype(np.int64)
    share = (dem[live] / np.maximum(cap, 1)[None, :]).sum(axis=1)
    order = live[np.lexsort((np.arange(live.size), -(val / np.maximum(share, 1e-12))))]
    types = np.repeat(order, copies[order])          # the copies of a type adjacent: only prefixes branch
    c = np.ceil(y[types] * scale).astype(np.int64)
    a = np.ascontiguousarray(dem[types].T.astype(np.int64))
    n, m = len(types), a.shape[0]
    dz, dz_map, dz_order = dantzig_rows(a, cap, c)
    last = np.flatnonzero(np.append(types[1:] != types[:-1], True))
    nxt = last[np.searchsorted(last, np.arange(n))] + 1
    state = np.zeros(kernel.STATE_SIZE, dtype=np.int64)
    state[kernel.S_MODE], state[kernel.S_ROOT] = kernel.ENTER, -1
    # y S <= c < y S + 1, so a pattern of q <= n copies scaled above ``above S + n`` is truly worth
    # more than ``above``: a basic column (worth exactly 1) never stops the search; what is missed is
    # worth at most ``above + n / S``, which the returned bound covers
    floor = int(math.floor(above * scale)) + n
    state[kernel.S_BEST] = floor
    best_x, x = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    stacks = [np.zeros(n + 1, dtype=np.int64) for _ in range(3)]
    fit, rest = np.zeros(n, dtype=np.bool_), np.zeros(m, dtype=np.int64)
    words, res = np.zeros(1, dtype=np.uint64), cap.astype(np.int64).copy()
    fixing = kernel.fixing_scratch(n)                # unused without the node LP
    u = np.zeros(m, dtype=np.int64)
    found, top = {}, floor
    while True:
        done = kernel.search(a, c, u, False, dz, dz_order, dz_map, nxt, state, res, x, best_x, *stacks,
                             fit, rest, words, NODE_CHUNK, np.zeros(0), *fixing, kernel.NEVER)  # no node LP: Dantzig bounds
        if state[kernel.S_BEST] > floor:          # the chunk found a pattern: record it, look for others
            top = max(top, int(state[kernel.S_BEST]))
            count = np.bincount(types[best_x > 0], minlength=len(y))
            found.setdefault(count.tobytes(), count)
            state[kernel.S_BEST] = floor
        if done or len(found) >= most or time.perf_counter() >= deadline:
            break
    if not done:
        rest_bound = int(kernel.open_bound(state, stacks[1], stacks[2]))
        top = -1 if rest_bound < 0 else max(top, rest_bound)   # -1: the root not even bounded
    return (None if top < 0 else top / scale), list(found.values()), bool(done)


# ---- the master ------------------------------------------------------------------------
def dominance_pairs(dem: np.ndarray, most: int = DOMINATORS) -> np.ndarray:
    """Pairs ``(i, j)`` of distinct types with ``dem[i] >= dem[j]`` in every
    resource: for each ``j``, its ``most`` smallest dominators (by total
    demand).  O(T^2 K)."""
    if len(dem) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    dom = np.all(dem[:, None, :] >= dem[None, :, :], axis=2)
    np.fill_diagonal(dom, False)
    size = dem.sum(axis=1)
    pairs = []
    for j in range(len(dem)):
        ii = np.nonzero(dom[:, j])[0]
        for i in ii[np.argsort(size[ii], kind="stable")[:most]]:
            pairs.append((int(i), j))
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


class Master:
    """The restricted master LP ``min sum z_p, A z >= m, z >= 0`` in HiGHS,
    kept between solves (columns added, the basis reused).

    ``pairs`` ``(i, j)``, type ``i`` dominating type ``j`` (every demand at
    least as large), add the dual-optimal inequalities ``y_j <= y_i`` of
    [benamor2006] as zero-cost columns ``e_j - e_i`` (a job of type ``j``
    takes the place of one of type ``i``): they cut off duals that
    oscillate without changing the LP bound.  They are fixed to zero after
    the root (:meth:`use_dominance`): the dives and the integer master need
    an LP whose columns are bins."""

    def __init__(self, mult: np.ndarray, threads: int, pairs: np.ndarray | None = None):
        _highs_scheduler(int(threads))    # HiGHS's one thread pool: reset when the count changes
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.h.setOptionValue("threads", int(threads))
        inf = highspy.kHighsInf
        t = len(mult)
        self.h.addRows(t, mult.astype(float), np.full(t, inf), 0, np.zeros(0, dtype=np.int32),
                       np.zeros(0, dtype=np.int32), np.zeros(0))
        pairs = np.zeros((0, 2), dtype=np.int64) if pairs is None else pairs
        for i, j in pairs:
            self.h.addCol(0.0, 0.0, inf, 2, np.array([j, i], dtype=np.int32), np.array([1.0, -1.0]))
        self.offset = len(pairs)      # the patterns' columns come after the dual-optimal ones
        self.need = mult.copy()
        self.columns: list[np.ndarray] = []
        self.keys: set[bytes] = set()

    def add(self, count: np.ndarray) -> bool:
        """Add pattern ``count`` (per type) unless present; True if added."""
        key = count.tobytes()
        if key in self.keys:
            return False
        idx = np.nonzero(count)[0]
        self.h.addCol(1.0, 0.0, highspy.kHighsInf, idx.size, idx.astype(np.int32), count[idx].astype(float))
        self.columns.append(count.copy())
        self.keys.add(key)
        return True

    def use_dominance(self, on: bool) -> None:
        """Let the dual-optimal columns into the LP (``on``) or fix them to 0."""
        for c in range(self.offset):
            self.h.changeColBounds(c, 0.0, highspy.kHighsInf if on else 0.0)

    def set_need(self, need: np.ndarray) -> None:
        """Coverage ``A z >= need`` (the rows' lower bounds)."""
        for t in np.nonzero(need != self.need)[0]:
            self.h.changeRowBounds(int(t), float(need[t]), highspy.kHighsInf)
        self.need = need.copy()

    def values(self) -> np.ndarray:
        """The columns' values in the last LP solution."""
        return np.asarray(self.h.getSolution().col_value, dtype=float)[self.offset:]

    def solve_lp(self) -> tuple[float, np.ndarray]:
        """``(objective, row duals clipped to >= 0)`` of the current LP."""
        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"pattern master LP: {self.h.modelStatusToString(self.h.getModelStatus())}")
        duals = np.clip(np.asarray(self.h.getSolution().row_dual, dtype=float), 0.0, None)
        return float(self.h.getInfo().objective_function_value), duals

    def solve_integer(self, start: list[np.ndarray], time_limit: float) -> list[np.ndarray] | None:
        """Integer solution of the master over its columns (HiGHS MIP from
        ``start``, patterns added as columns where missing) within
        ``time_limit``: the patterns used, with multiplicity; None without a
        solution.  The master is an LP again afterwards (the dual-optimal
        columns stay fixed to 0)."""
        for p in start:           # a dive's truncated patterns may not be columns yet
            self.add(p)
        h, ncol, off = self.h, len(self.columns), self.offset
        cols = np.arange(off, off + ncol, dtype=np.int32)
        h.changeColsIntegrality(ncol, cols, np.full(ncol, highspy.HighsVarType.kInteger))
        self.use_dominance(False)
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
        lp_options = [(name, h.getOptionValue(name)[1]) for name, _ in HIGHS_MIP_OPTIONS]
        for name, value in HIGHS_MIP_OPTIONS:      # as every HiGHS MILP run (its presolve's rule 13)
            h.setOptionValue(name, value)
        try:
            where = {c.tobytes(): i for i, c in enumerate(self.columns)}
            x0 = np.zeros(off + ncol)
            for p in start:
                x0[off + where[p.tobytes()]] += 1
            sol = highspy.HighsSolution()
            sol.col_value = list(x0)
            sol.value_valid = True
            h.setSolution(sol)
            h.run()
            if h.getInfo().primal_solution_status != 2:   # kSolutionStatusFeasible
                return None
            z = np.rint(np.asarray(h.getSolution().col_value)[off:]).astype(np.int64)
            return [self.columns[i] for i in np.nonzero(z)[0] for _ in range(int(z[i]))]
        finally:
            h.changeColsIntegrality(ncol, cols, np.full(ncol, highspy.HighsVarType.kContinuous))
            h.setOptionValue("time_limit", highspy.kHighsInf)
            for name, value in lp_options:
                h.setOptionValue(name, value)


def _bins_to_patterns(bins, type_of: np.ndarray, t: int) -> list[np.ndarray]:
    """A packing (lists of jobs) as per-type count vectors."""
    return [np.bincount(type_of[np.asarray(b, dtype=np.int64)], minlength=t).astype(np.int64) for b in bins]


def _patterns_to_bins(patterns: list[np.ndarray], jobs: list[list[int]]) -> list[list[int]]:
    """Count vectors covering every type to a packing of the jobs: each job
    in one bin (surplus copies dropped, which keeps every bin feasible),
    empty bins dropped."""
    left = [list(js) for js in jobs]
    bins = []
    for p in patterns:
        b = []
        for t in np.nonzero(p)[0]:
            take = min(int(p[t]), len(left[t]))
            b += left[t][:take]
            del left[t][:take]
        if b:
            bins.append(sorted(b))
    if any(left):
        raise AssertionError("integer master solution does not cover every job")
    return bins


# ---- the method --------------------------------------------------------------------------
def column_generation(inst: EpochsInstance, *, time_limit: float, threads: int = 1, seed: int = 0,
                      warm: bool = True, smoothing: float = SMOOTHING) -> Result:
    """Fewest epochs by the pattern model: column generation, then
    price-and-branch (``cg``, beyond the seeds).

    Parameters
    ----------
    inst : EpochsInstance
    time_limit : float
        Wall time of the whole call in seconds (start, bounds, column
        generation and the integer master).
    threads : int
        Threads of HiGHS.
    seed : int
        Seed of the randomised dives (the first dive and everything else
        are deterministic).
    warm : bool
        Start from the best fast heuristic (default) or from first-fit
        decreasing only.
    smoothing : float
        Wentges' weight of the stability centre, in [0, 1); 0 turns
        smoothing off.

    Returns
    -------
    Result
        Bins as sorted tuples of jobs, their count, status ``optimal`` (the
        count meets the lower bound) or ``feasible``, and ``bound``, the
        larger of the combinatorial bound (volume, conflict clique,
        Martello-Toth L2) and the rounded-up Farley bound of column
        generation.  ``info``: ``iterations``, ``columns``, ``lp`` (the last
        master objective; the LP optimum when ``converged``),
        ``pattern_bound``, ``exact_pricings``, ``dives`` and ``dive`` (the
        best packing a dive found), ``integer_master`` (what the
        price-and-branch step gave, or that it did not run) and ``start``.

    Notes
    -----
    Exponential in the worst case (each exact pricing is a knapsack); an
    iteration costs a master re-solve and O(T K log T) for the greedy fills
    over T job types.
    """
    if isinstance(time_limit, bool) or not (isinstance(time_limit, (int, float)) and time_limit >= 0):
        raise ValueError(f"time_limit must be a number of seconds >= 0, got {time_limit!r}")
    _check_cg(inst, smoothing=smoothing)
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit)
    if inst.n == 0:
        return Result(inst.kind, "cg", (), 0.0, "optimal", 0.0, 0.0, {"bound_kind": "combinatorial"})
    order = ffd_order(inst)
    lb = epochs_lower_bound(inst, conflict_clique(conflicts(inst), order))
    best = ffd_bins(inst, order)
    info = {"ffd": len(best), "lower_bound": lb, "start": "ffd"}
    if warm and len(best) > lb:
        heur = best_start(inst, budget=START_SHARE * time_limit)
        if heur is not None and len(heur.decision) < len(best):
            best = [list(b) for b in heur.decision]
            info.update(start_info(heur))
    dem, mult, jobs = job_types(inst)
    type_of = np.empty(inst.n, dtype=np.int64)
    for t, js in enumerate(jobs):
        type_of[js] = t
    cg = {"iterations": 0, "exact_pricings": 0, "converged": False, "pattern_bound": None, "lp": None}
    if len(best) > lb:
        best, lb_cg = _generate_and_branch(inst, dem, mult, jobs, type_of, best, lb, deadline, threads,
                                           seed, smoothing, cg)
    else:
        lb_cg = None
    bins = tuple(tuple(sorted(int(j) for j in b)) for b in best if len(b))
    if lb_cg is not None and against(float(len(bins)), float(lb_cg), "min") == "refuted":
        refuted(info, float(lb_cg), float(len(bins)), "the pattern LP")   # the packing's own bound stays
        lb_cg = None
    bound = max(lb, lb_cg or 0)
    where = against(float(len(bins)), float(bound), "min")
    if where == "refuted":      # the packing's lower bound beaten: it erred, nothing is proved
        refuted(info, float(bound), float(len(bins)), "the lower bound")
    status = "optimal" if where == "meets" else "feasible"
    kind = "pattern" if lb_cg is not None and lb_cg > lb else "combinatorial"
    info.update(cg, types=len(mult), bound_kind=kind if where != "refuted" else "none")
    return Result(inst.kind, "cg", bins, float(len(bins)), status, time.perf_counter() - t0,
                  float(len(bins)) if status == "optimal" else None if where == "refuted" else float(bound), info)


def _price(dem, cap, copies, need, y, points, until, cg, exact=True) -> tuple[list, list]:
    """Patterns with a negative reduced cost under the master's duals ``y``,
    priced at each dual vector of ``points`` in turn (the smoothed one, then
    ``y``): greedy fills first, then (``exact``) the exact pricing.  Returns the new
    patterns and the Farley bounds ``(bound, duals)`` of the exact pricings;
    sets ``cg["converged"]`` when the exact pricing at ``y`` proves that no
    pattern prices out."""
    for at in points:
        new = [p for p in greedy_patterns(dem, cap, copies, at) if y @ p > 1 + ENTER_TOL]
        if new or not exact:
            return new, []
    bounds = []
    for at in points:
        upper, pats, done = exact_patterns(dem, cap, copies, at, until)
        cg["exact_pricings"] += 1
        if upper is not None:
            bounds.append((float(need @ at) / max(1.0, upper), at))
        new = [p for p in pats if y @ p > 1 + ENTER_TOL]
        if new:
            return new, bounds
    cg["converged"] = done   # the exact pricing at y (the last point) finished: the LP is optimal
    return [], bounds


def _converge(master, dem, cap, copies, need, until, smoothing, cg, exact=True,
              rounds: float = math.inf) -> tuple[float, int]:
    """Column generation on ``master`` with coverage ``need`` until the LP
    is optimal (``exact=False``: until the greedy fills find no column), its
    rounded-up value meets the rounded-up Farley bound, the clock reaches
    ``until`` or the master was solved ``rounds`` times.  Returns
    ``(lp, bound)``: the last master objective and the rounded-up Farley
    bound (0 when no exact pricing finished)."""
    farley, centre, lp = 0.0, None, math.inf
    copies = np.minimum(copies, need)
    cg["converged"] = False
    while time.perf_counter() < until and rounds > 0:
        rounds -= 1
        lp, y = master.solve_lp()
        cg["iterations"] += 1
        if math.ceil(lp - ROUND_TOL) <= math.ceil(farley - ROUND_TOL):
            break    # the LP cannot push the rounded bound higher
        points = [y] if centre is None or smoothing == 0 else [smoothing * centre + (1 - smoothing) * y, y]
        new, bounds = _price(dem, cap, copies, need, y, points, until, cg, exact)
        for bound, at in bounds:
            if bound > farley:
                farley, centre = bound, at
        if not new or not any([master.add(p) for p in new]):
            break    # no column prices out (the LP is optimal), or the clock stopped the pricing
    return lp, (math.ceil(farley - ROUND_TOL) if farley > 0 else 0)


def _dive(master, dem, cap, copies, mult, best_len, until, smoothing, cg, rng=None) -> list[np.ndarray] | None:
    """Diving heuristic with column generation: fix the patterns the LP uses
    at 1 or more (else the largest fractional one; with ``rng``, one drawn
    with probability proportional to its value), each cut to the jobs still
    needed and topped up with them where room is left; generate columns for
    what is left by the greedy fills, repeat; when one bin short of
    ``best_len`` (or out of time, or when the LP covers what is left only
    through the dominance columns), the jobs left go first-fit decreasing
    into the fixed bins' room, then new bins.  Returns the patterns (each a
    bin) when fewer than ``best_len``, else None."""
    need, partial = mult.copy(), []
    while need.any() and len(partial) < best_len - 1 and time.perf_counter() < until:
        master.set_need(need)
        _converge(master, dem, cap, copies, need, until, smoothing, cg, exact=False, rounds=DIVE_ROUNDS)
        z = master.values()
        useful = np.array([bool((np.minimum(c, need) > 0).any()) for c in master.columns]) & (z > 1e-9)
        if not useful.any():
            break
        z = np.where(useful, z, 0.0)
        whole = np.nonzero(z >= 1 - 1e-6)[0]
        picks = [(i, int(math.floor(z[i] + 1e-6))) for i in whole] or [(_fractional(z, rng), 1)]
        for i, times in picks:
            for _ in range(times):
                q = _top_up(np.minimum(master.columns[i], need), need, dem, cap)
                if q.any():
                    partial.append(q)
                    need = need - q
    done = _first_fit(partial, need, dem, cap)
    cg["dive_bins"] = len(done)
    return done if len(done) < best_len else None


def _top_up(q: np.ndarray, need: np.ndarray, dem: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Bin ``q`` (at most ``need``) with the jobs still needed added, largest
    normalised demand first, as many of each as fit.  O(T K)."""
    q = q.copy()
    room = cap - q @ dem
    share = (dem / np.maximum(cap, 1)[None, :]).max(axis=1)
    for t in np.argsort(-share, kind="stable"):
        left = int(need[t] - q[t])
        if left <= 0:
            continue
        d = dem[t]
        fit = left if not (d > 0).any() else min(left, int((room[d > 0] // d[d > 0]).min()))
        if fit > 0:
            q[t] += fit
            room = room - fit * d
    return q


def _fractional(z: np.ndarray, rng) -> int:
    """The column to fix when none is at 1: the largest, or (``rng``) one
    drawn with probability proportional to its value."""
    if rng is None:
        return int(np.argmax(z))
    w = np.clip(z, 0.0, None)
    return int(rng.choice(len(z), p=w / w.sum()))


def _first_fit(patterns: list[np.ndarray], need: np.ndarray, dem: np.ndarray, cap: np.ndarray) -> list[np.ndarray]:
    """``patterns`` plus the ``need`` jobs left, each (largest normalised
    demand first) in the first pattern with room, else in a new one.
    O(J B K) for J jobs left and B bins."""
    bins = [p.copy() for p in patterns]
    loads = [p @ dem for p in bins]
    share = (dem / np.maximum(cap, 1)[None, :]).max(axis=1)
    for t in np.argsort(-share, kind="stable"):
        for _ in range(int(need[t])):
            for b, load in enumerate(loads):
                if np.all(load + dem[t] <= cap):
                    bins[b][t] += 1
                    load += dem[t]
                    break
            else:
                bins.append(np.eye(1, len(need), t, dtype=np.int64)[0])
                loads.append(dem[t].astype(np.int64).copy())
    return bins


def _share(deadline: float, share: float) -> float:
    """The clock time when ``share`` of the time left until ``deadline`` is spent."""
    now = time.perf_counter()
    return now + share * max(0.0, deadline - now)


def _integer_master(master, best, jobs, type_of, until, cg) -> list[list[int]]:
    """The integer master from ``best`` until ``until``; its packing when
    it has fewer bins, else ``best``.  Notes the outcome in ``cg``."""
    found = master.solve_integer(_bins_to_patterns(best, type_of, len(jobs)), until - time.perf_counter())
    cg["integer_master"] = "no better packing"
    if found is not None and len(found) < len(best):
        best = _patterns_to_bins(found, jobs)
        cg["integer_master"] = f"{len(best)} bins"
    return best


def _generate_and_branch(inst, dem, mult, jobs, type_of, best, lb, deadline, threads, seed, smoothing, cg):
    """Column generation from ``best``'s bins (:data:`ROOT_SHARE` of the
    time), dives (:data:`DIVE_SHARE` of the rest: the first by the largest
    values, then the integer master for a share of their time, then dives
    randomised by ``seed``), then the integer master.
    Returns ``(best packing, rounded-up Farley bound or None)`` and fills
    ``cg`` (the counters of :func:`column_generation`'s ``info``)."""
    cap = inst.capacity.astype(np.int64)
    copies = max_copies(dem, mult, cap)
    master = Master(mult, threads, dominance_pairs(dem))
    for p in _bins_to_patterns(best, type_of, len(mult)):
        master.add(p)
    for t in range(len(mult)):                      # singletons: every type coverable on its own
        single = np.zeros(len(mult), dtype=np.int64)
        single[t] = 1
        master.add(single)
    lp, lb_cg = _converge(master, dem, cap, copies, mult, _share(deadline, ROOT_SHARE), smoothing, cg)
    cg.update(lp=lp, pattern_bound=lb_cg or None, root_iterations=cg["iterations"])
    converged = cg["converged"]
    bound = max(lb, lb_cg)
    master.use_dominance(False)     # from here on the LP's columns are bins: no job stands in for another
    dive_until, cg["dives"], cg["integer_master"] = _share(deadline, DIVE_SHARE), 0, "not run"
    rng = np.random.default_rng(seed)
    while len(best) > bound and time.perf_counter() < dive_until:
        # the first dive by the largest values, then the integer master on its columns, then randomised dives
        dived = _dive(master, dem, cap, copies, mult, len(best), dive_until, smoothing, cg,
                      rng if cg["dives"] else None)
        cg["dives"] += 1
        master.set_need(mult)
        if dived is not None:
            best = _patterns_to_bins(dived, jobs)
            cg["dive"] = f"{len(best)} bins"
        if cg["dives"] == 1 and len(best) > bound:
            best = _integer_master(master, best, jobs, type_of, _share(dive_until, FIRST_MIP_SHARE), cg)
    cg["columns"] = len(master.columns)
    if len(best) > bound and time.perf_counter() < deadline:
        best = _integer_master(master, best, jobs, type_of, deadline, cg)
    cg["converged"] = converged
    return best, (lb_cg or None)


def _check_cg(inst, *, smoothing=0.5, **_) -> None:
    """The parameters of :func:`column_generation` checked (its
    ``check_params`` hook: before a run, nothing solved)."""
    if isinstance(smoothing, bool) or not isinstance(smoothing, (int, float, np.integer, np.floating)) \
            or not 0 <= smoothing < 1:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing!r}")


@register("epochs", "cg", kind="exact")
def epochs_cg(inst, *, time_limit: float, threads: int = 1, **params) -> Result:
    """Pattern model by column generation (greedy and branch-and-bound pricing, Wentges smoothing, Farley
    bound), then price-and-branch (beyond the seeds; see exact.epochs_cg.column_generation)"""
    return column_generation(inst, time_limit=time_limit, threads=threads, **params)


forwards(epochs_cg, column_generation)
epochs_cg.warm_start = True          # takes warm=False (start from FFD only)
epochs_cg.check_params = _check_cg   # before a run (epochbench.methods)
_load_highs = warm_up_backends("milp-highs", family="epochs")


def _warm_up() -> None:
    """Load HiGHS, the start heuristics' kernels and the two pricing kernels
    (numba's cache) before the clock starts: one call on seven jobs whose
    bound needs the pattern model (5 combinatorial, 6 bins)."""
    _load_highs()
    if not _WARM:
        tiny = EpochsInstance.build([10, 10], [[4, 2], [4, 4], [4, 9], [9, 4], [9, 7], [5, 5], [9, 5]],
                                    meta={"name": "warm-up"})
        column_generation(tiny, time_limit=10.0, warm=False)
        _WARM.append(True)


_WARM: list = []
epochs_cg.warm_up = _warm_up   # loads before the clock starts
