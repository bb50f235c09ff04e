"""Exact models of the ``mapping`` family ([vadhiyar-notes] ETC mapping; R||Cmax with
machine ready times): CP-SAT, MILP (CBC, HiGHS) and the LP relaxation bound.

Model (one for every backend): ``x[i, j] = 1`` when task i runs on machine j,
``u[j] = 1`` when machine j receives a task (only when some ready time is
positive), makespan ``C``::

    min C   s.t.  sum_j x[i, j] = 1                          every task i
                  sum_i etc[i, j] x[i, j] + ready[j] u[j] <= C  every machine j
                  x[i, j] <= u[j]

A start mapping (Min-Min; ``hint=`` to give another) is the hint and the
upper bound ``UB``; ``x[i, j]`` is fixed to 0 where ``ready[j] + etc[i, j] >
UB`` (no mapping as good as the hint uses it).  ``C`` starts at the lower
bound of :meth:`~epochbench.instances.mapping.MappingInstance.lower_bound`.

CP-SAT works on integers: entries on a decimal grid (``etc * 10**d``
integral, d <= 6, column sums below 2**50) are scaled exactly and the
solver's integral bound is the bound; otherwise ``E = floor(s * etc)`` with
``s`` a power of two.  Since ``E <= s * etc`` for every entry, every
mapping's scaled makespan is at most ``s`` times its true one, so ``(scaled
bound) / s`` is a valid bound on the *unscaled* optimum; status ``optimal``
then needs the true makespan of the solution to meet that bound (to 1e-9
relative).

The MILP backends get the float model normalised so that the start's
makespan is 1e4: HiGHS 1.12 returned wrong "optimal" mappings (0.05% to 0.3%
above CP-SAT's proven optimum) on 3 of 42 generated hihi 32 x 4 instances
when given the integer model (coefficients up to 3e8), none with the float
one.  Their ``optimal`` holds to the solver's tolerances (1e-6); their bound
is the solver's dual bound widened by 1e-6 relative.  The model is built in
whole numpy arrays (:func:`milp_model`, a few ms at 512 x 16) and handed to
HiGHS directly (:func:`run_highs`; PuLP's hand-over took 0.2 s there), to CBC
through PuLP's MPS file (:func:`pulp_mapping_model`); each phase looks at the
deadline, and a call whose time runs out before its solver starts returns
its start.

``bnp``: branch-and-price on the configuration LP (:class:`ConfigLP`: one
0-1 knapsack per machine, [martello1997]), after a short
CP-SAT run (``presolve`` seconds, default min(4 s, 15% of the limit); its
incumbent is the start, its proof is kept when it has one; ``presolve=0``:
branch and price alone).  On the integer data of :func:`scaled`; bisection
with root certificates gives the configuration-LP bound, then the decision
"a mapping of makespan <= best - 1?" is searched (after a few seconds of
CP-SAT from the best mapping) until its tree closes.  Why: the assignment LP is weak on
consistent / semi-consistent low-machine-heterogeneity instances (slow
machines get 3 to 5 large tasks; on 64 x 8 the optimum is 0.8% to 3.5%
above it, and CP-SAT / HiGHS bounds stall 0.3% to 1.5% below the optimum
after 30 s), while the knapsack bound is within 0.06% of it and the
search proves those four in 11 to 21 s (measured, 1 thread).

Registered with ``kind="exact"``: ``cpsat``, ``milp-cbc``, ``milp-highs``,
``bnp``; each is ``f(inst, *, time_limit, threads=1, seed=0, hint=None) ->
Result`` (``bnp`` also takes ``presolve``).  :func:`lp_bound` is the LP
relaxation as a rigorous lower bound.
"""
from __future__ import annotations

import functools
import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from epochbench.instances.checks import check_positive, indices
from epochbench.instances.core import InfeasibleSolution, Result
from epochbench.instances.lazy import lazy_module
from epochbench.instances.lazy import njit
from epochbench.instances.mapping import MappingInstance, makespan_lower_bound
from epochbench.instances.registry import forwards, register

from ._binary import (CBC_MARGIN_S, HIGHS_MIP_OPTIONS, HIGHS_ROW_CHUNK, MEETS_RTOL, _highs_scheduler, against,
                      cbc_info, cpsat_safeguard, cpsat_solve, deadline_after, highs_outcome, highs_seconds,
                      on_grid_meets, quiet_highs, refuted, run_cbc, time_left, warm_up_backends)
from .starts import START_SHARE, best_start

# the solvers load on first use (see epochbench.instances.lazy)
highspy = lazy_module("highspy")
pulp = lazy_module("pulp")
cp_model = lazy_module("ortools.sat.python.cp_model")
_optimize = lazy_module("scipy.optimize")
_sparse = lazy_module("scipy.sparse")

METHODS = ("cpsat", "milp-cbc", "milp-highs", "bnp")
#: the methods that take a ``work_weight`` (:func:`solve_mapping`)
WEIGHTED = ("milp-highs", "milp-cbc")
#: largest scaled column sum (sum of a machine's entries + its ready time) for CP-SAT
INT_LIMIT = 2**50
#: the MILP models are normalised so that the start mapping's makespan is this
MILP_NORM = 1e4
_TOL = 1e-6


# ---- integer data ----------------------------------------------------------------------
@dataclass(frozen=True)
class Scaled:
    """``E = etc * scale`` and ``R = ready * scale`` as integers; ``exact``
    when no rounding happened (else ``E = floor(etc * scale)``)."""
    etc: np.ndarray
    ready: np.ndarray
    scale: float
    exact: bool

    def makespan(self, assign: np.ndarray) -> int:
        t, m = self.etc.shape
        load = np.zeros(m, dtype=np.int64)
        np.add.at(load, assign, self.etc[np.arange(t), assign])
        used = np.bincount(assign, minlength=m) > 0
        return int(np.where(used, load + self.ready, 0).max())


def _decimal_scale(values: np.ndarray, max_decimals: int = 6) -> int | None:
    """Smallest 10**d (d <= max_decimals) making every value integral (to float
    precision), or None."""
    for d in range(max_decimals + 1):
        s = 10**d
        v = values * s
        if np.all(np.abs(v - np.round(v)) <= 1e-9 + 8 * np.finfo(float).eps * np.abs(v)):
            return s
    return None


def scaled(inst: MappingInstance, limit: int = INT_LIMIT) -> Scaled:
    """Integer ETC and ready times (exact decimal scaling when it fits under
    ``limit``, else floor at the largest power-of-two scale that does).  O(t m)."""
    col = float(inst.etc.sum(axis=0).max() + inst.ready.max())
    s = _decimal_scale(np.concatenate([inst.etc.ravel(), inst.ready]))
    if s is not None and col * s < limit:
        return Scaled(np.round(inst.etc * s).astype(np.int64), np.round(inst.ready * s).astype(np.int64),
                      float(s), True)
    s = float(2 ** math.floor(math.log2(limit / col)))
    return Scaled(np.floor(inst.etc * s).astype(np.int64), np.floor(inst.ready * s).astype(np.int64), s, False)


# ---- start mapping, bounds -----------------------------------------------------------------
def decimal_grid(inst: MappingInstance) -> float | None:
    """The scale that puts every entry of ``inst`` on whole numbers exactly
    (``10**d``, d <= 6: :func:`_decimal_scale`), or None: :func:`meets`'s
    grid.  O(t m)."""
    s = _decimal_scale(np.concatenate([inst.etc.ravel(), inst.ready]))
    return None if s is None else float(s)


def meets(value: float, bound: float, grid: float | None) -> bool:
    """A mapping of makespan ``value`` meets the lower bound ``bound`` (it
    is optimal): within :data:`~epochbench.exact._binary.MEETS_RTOL`,
    relative, and, where the data lie on a decimal ``grid``
    (:func:`decimal_grid`) that floats hold exactly at this size, on the
    same grid point (both rounded to it).  The relative tolerance alone
    spans about a hundred units at 1e15: a start 50 above the optimum of a
    2 x 2 instance of integers was called optimal (found by a review).  The
    start's test, the LNS's stop and the final status."""
    if value > bound + MEETS_RTOL * abs(bound):
        return False
    if grid is None or max(abs(value), abs(bound)) * grid >= 2.0**52:
        return True
    return on_grid_meets(value, bound, "min", grid)


def minmin_start(inst: MappingInstance) -> np.ndarray:
    """Min-Min ([vadhiyar-notes]) in plain numpy, for the hint: lowest task index,
    then lowest machine index, on ties (heuristics/mapping.py has the fast
    version; the two packages do not import each other).  O(t^2 m)."""
    t, m = inst.etc.shape
    mat = inst.ready.astype(float).copy()
    left = np.ones(t, dtype=bool)
    out = np.empty(t, dtype=np.int64)
    rows = np.arange(t)
    for _ in range(t):
        ct = mat + inst.etc
        best = ct.argmin(axis=1)
        bct = np.where(left, ct[rows, best], np.inf)
        i = int(bct.argmin())
        out[i] = best[i]
        mat[best[i]] += inst.etc[i, best[i]]
        left[i] = False
    return out


@dataclass(frozen=True)
class Relaxation:
    """The LP relaxation of :func:`lp_relaxation`: ``bound`` (Lagrangian,
    rigorous), ``weights`` (the machine rows' duals, >= 0, summing to 1),
    ``x`` (the fractional mapping, t x m) and ``objective`` (the LP's value)."""
    bound: float
    weights: np.ndarray
    x: np.ndarray
    objective: float


#: ETC entries above this are divided by a power of two in the LP relaxation (HiGHS's matrix range)
LP_UNIT_LIMIT = 2.0**40


def lp_relaxation(inst: MappingInstance) -> Relaxation:
    """LP relaxation of the model (HiGHS through scipy), made rigorous: the
    duals ``w`` of the machine rows, clipped to >= 0 and normalised to sum 1,
    give the Lagrangian bound ``sum_i min_j w_j etc[i, j]``, valid for every
    ``w`` on the simplex (the LP is solved without ready times: the bound
    ignores them, which keeps it valid; the caller may take the max with
    :meth:`~epochbench.instances.mapping.MappingInstance.lower_bound`).
    One LP with t m + 1 variables (0.15 s at 512 x 16)."""
    t, m = inst.etc.shape
    nx = t * m
    # HiGHS refuses matrix entries of 1e15 or more: very large data are solved divided by a power of
    # two (exact, the same LP up to the unit; the duals are normalised anyway, the bound uses inst.etc)
    top = float(inst.etc.max()) if inst.etc.size else 0.0
    unit = 2.0 ** math.ceil(math.log2(top / LP_UNIT_LIMIT)) if top > LP_UNIT_LIMIT else 1.0
    # variables: x (task-major), then C; rows: machine loads <= C
    rows = np.concatenate([np.tile(np.arange(m), t), np.arange(m)])
    cols = np.concatenate([np.arange(nx), np.full(m, nx)])
    vals = np.concatenate([inst.etc.ravel() / unit, -np.ones(m)])
    a_ub = _sparse.coo_matrix((vals, (rows, cols)), shape=(m, nx + 1)).tocsc()
    b_ub = np.zeros(m)  # ready times left out: the bound below ignores them anyway
    a_eq = _sparse.coo_matrix((np.ones(nx), (np.repeat(np.arange(t), m), np.arange(nx))), shape=(t, nx + 1)).tocsc()
    c = np.zeros(nx + 1)
    c[-1] = 1.0
    res = _optimize.linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(t), bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"{inst.name}: LP relaxation failed ({res.message})")
    w = np.clip(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0, None)
    w = w / w.sum() if w.sum() > 0 else np.full(m, 1.0 / m)
    return Relaxation(float((inst.etc * w).min(axis=1).sum()), w, res.x[:nx].reshape(t, m), float(res.fun) * unit)


def lp_bound(inst: MappingInstance) -> float:
    """The bound of :func:`lp_relaxation` (which also gives its duals and solution)."""
    return lp_relaxation(inst).bound


# ---- CP-SAT ------------------------------------------------------------------------------
def _allowed(inst: MappingInstance, hint: np.ndarray, sc: Scaled | None) -> np.ndarray:
    """(t, m) bool: pairs that a mapping at least as good as ``hint`` may use."""
    if sc is None:
        ub = inst.value(hint)
        return inst.etc + inst.ready <= ub * (1 + 1e-12)
    ub = sc.makespan(hint)
    return sc.etc + sc.ready <= ub


def _cpsat(inst, sc: Scaled, hint, allowed, lb_int, deadline, threads, seed, floor: int = 0,
           weights: tuple[int, int] | None = None):
    """CP-SAT on the integer model, ``C`` at most the hint's makespan, until
    ``deadline`` (``time.perf_counter()`` seconds, model building included).
    The bound is ``lb_int`` unless CP-SAT returned a solution with its own.

    For the LNS's repairs (:mod:`epochbench.exact.mapping_lns`): ``C`` at
    least ``floor`` (the finishing time of the machines outside the model),
    and with ``weights = (a, b)`` the objective ``a C + b (total work)``
    instead of ``C``, or ``a C + sum_j b[j] (work on machine j)`` when ``b``
    is an array of m integers (its bound is then of that objective)."""
    t, m = inst.etc.shape
    model = cp_model.CpModel()
    ub = max(sc.makespan(hint), int(floor))
    cmax = model.new_int_var(max(min(lb_int, ub), int(floor)), ub, "C")
    x = {}
    for i in range(t):
        vs = []
        for j in np.flatnonzero(allowed[i]):
            v = model.new_bool_var(f"x{i}_{j}")
            x[i, int(j)] = v
            vs.append(v)
        model.add_exactly_one(vs)
    ready = inst.has_ready
    for j in range(m):
        terms = [(x[i, j], int(sc.etc[i, j])) for i in range(t) if (i, j) in x]
        if not terms:
            continue
        vars_, coefs = zip(*terms)
        expr = cp_model.LinearExpr.weighted_sum(list(vars_), list(coefs))
        if ready and sc.ready[j] > 0:
            u = model.new_bool_var(f"u{j}")
            for v in vars_:
                model.add_implication(v, u)
            model.add(expr + int(sc.ready[j]) * u <= cmax)
            model.add_hint(u, int(np.any(hint == j)))
        else:
            model.add(expr <= cmax)
    if weights is None:
        model.minimize(cmax)
    else:
        q = np.broadcast_to(np.asarray(weights[1], dtype=np.int64), (m,))   # one weight, or one per machine
        (vs, cs) = zip(*[(v, int(q[j]) * int(sc.etc[i, j])) for (i, j), v in x.items()])
        model.minimize(int(weights[0]) * cmax + cp_model.LinearExpr.weighted_sum(vs, cs))
    for (i, j), v in x.items():
        model.add_hint(v, int(hint[i] == j))
    model.add_hint(cmax, ub)
    left = time_left(deadline)
    if left <= 0:
        return "timeout", None, float(lb_int), {"solver": "CP-SAT", "solver_status": "not started",
                                                "branches": 0}
    s = cp_model.CpSolver()
    cpsat_safeguard(s.parameters, int(sc.etc.max(initial=0)) + int(sc.ready.max(initial=0)))
    s.parameters.max_time_in_seconds = left
    s.parameters.num_workers = max(int(threads), 1)
    s.parameters.random_seed = int(seed)
    code = cpsat_solve(s, model)
    status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible", cp_model.UNKNOWN: "timeout"}.get(code)
    if status is None:  # INFEASIBLE / MODEL_INVALID: the hint is a solution, so a bug
        raise RuntimeError(f"{inst.name}: CP-SAT says {s.status_name(code)} ({model.validate()})")
    assign = None
    if status in ("optimal", "feasible"):
        assign = np.empty(t, dtype=np.int64)
        for (i, j), v in x.items():
            if s.boolean_value(v):
                assign[i] = j
    bound = max(float(s.best_objective_bound), float(lb_int)) if status != "timeout" else float(lb_int)
    return status, assign, bound, {"solver": "CP-SAT", "solver_status": s.status_name(code),
                                   "branches": int(s.num_branches)}


# ---- configuration LP: knapsack (Lagrangian) bound and variable fixing ----------------------
#: knapsack capacities above this many units are put on a grid of this size (floor weights
#: for bounds, ceil weights for columns); below it the integer data are used as they are
CFG_GRID = 2**16
#: pricing grids tried before :data:`CFG_GRID` (cheap rounds first)
CFG_COARSE = (2**11, 2**13)
#: dual smoothing of the column generation: price at CFG_SMOOTH * center + (1 - CFG_SMOOTH) * duals
CFG_SMOOTH = 0.5
#: before its first decision ``bnp`` runs CP-SAT from the best mapping for min(IMPROVE_S, IMPROVE_SHARE * time left)
IMPROVE_S, IMPROVE_SHARE = 3.0, 0.2
#: node limit of the exact knapsack (:func:`_knap_bb`) used above the grid
KNAP_BB_NODES = 20000
#: ``bnp`` first runs CP-SAT for min(PRESOLVE_S, PRESOLVE_SHARE * time limit) seconds
PRESOLVE_S, PRESOLVE_SHARE = 4.0, 0.15
#: the root-only bisection of :func:`_bnp` stops at this relative width or after this
#: share of the time left (on c_hihi 64 x 8 it took all 26 s otherwise)
ROOT_TOL, ROOT_SHARE = 1e-4, 0.3


@njit(cache=True)
def _knap(w, p, cap):
    """0-1 knapsack by dense DP: the largest ``sum p[k]`` over sets with
    ``sum w[k] <= cap`` (items with ``p <= 0`` or ``w > cap`` skipped) and one
    best set (bool mask).  O(n cap) time, O(n cap) bits."""
    n = w.shape[0]
    f = np.zeros(cap + 1)
    keep = np.zeros((n, cap + 1), dtype=np.bool_)
    for k in range(n):
        wk, pk = w[k], p[k]
        if pk <= 0.0 or wk > cap:
            continue
        for c in range(cap, wk - 1, -1):
            v = f[c - wk] + pk
            if v > f[c]:
                f[c] = v
                keep[k, c] = True
    sel = np.zeros(n, dtype=np.bool_)
    c = cap
    for k in range(n - 1, -1, -1):
        if keep[k, c]:
            sel[k] = True
            c -= w[k]
    return f[cap], sel


@njit(cache=True)
def _knap_bb(w, p, cap, best, limit):
    """Exact 0-1 knapsack by depth-first branch and bound (Horowitz and
    Sahni; items taken in the order given, which should be by ``p / w``
    falling, with the fractional bound), for capacities too large for
    :func:`_knap`.  ``best``: a value known to be reachable (prunes from the
    start).  Returns ``(value, mask, complete)``; value > ``best`` only with
    a set in ``mask``; ``complete`` False when ``limit`` nodes were not
    enough (then ``value`` is only a lower bound).  O(limit * n)."""
    n = w.shape[0]
    take = np.zeros(n, dtype=np.bool_)
    out = np.zeros(n, dtype=np.bool_)
    state = np.zeros(n + 1, dtype=np.int8)  # 1: took item k, 2: both branches of k done / skipped
    k, cw, cp, nodes = 0, 0, 0.0, 0
    while True:
        if cp > best:
            best = cp
            out[:] = take
        prune = k == n
        if not prune:
            ub, rem, kk = cp, cap - cw, k
            while kk < n and w[kk] <= rem:
                ub += p[kk]
                rem -= w[kk]
                kk += 1
            if kk < n:
                ub += p[kk] * rem / w[kk]
            prune = ub <= best * (1.0 + 1e-12) + 1e-12
        if prune:
            k -= 1
            while k >= 0 and state[k] == 2:
                state[k] = 0
                k -= 1
            if k < 0:
                return best, out, True
            cw -= w[k]
            cp -= p[k]
            take[k] = False
            state[k] = 2
            k += 1
            continue
        nodes += 1
        if nodes > limit:
            return best, out, False
        if cw + w[k] <= cap:
            take[k] = True
            state[k] = 1
            cw += w[k]
            cp += p[k]
        else:
            state[k] = 2
        k += 1


def _knap_exact(w, p, cap, lb_val, limit=None):
    """``(value, mask or None, complete)``: the exact knapsack of integer
    weights ``w`` (any size) by :func:`_knap_bb` over the items with ``p > 0``
    and ``w <= cap``, sorted by ``p / w``; ``lb_val`` a reachable value."""
    use = np.flatnonzero((p > 0) & (w <= cap))
    if use.size == 0:
        return 0.0, np.zeros(w.shape[0], dtype=bool), True
    order = use[np.argsort(-p[use] / np.maximum(w[use], 1e-300), kind="stable")]
    val, sel, complete = _knap_bb(w[order].astype(np.int64), p[order].astype(np.float64), int(cap),
                                  float(lb_val), int(KNAP_BB_NODES if limit is None else limit))
    mask = np.zeros(w.shape[0], dtype=bool)
    mask[order[sel]] = True
    return val, (mask if mask.any() else None), complete


def _descent(E: np.ndarray, R: np.ndarray, assign: np.ndarray, rounds: int = 200) -> np.ndarray:
    """Local descent on the integer data: move a task off the most loaded
    machine, or swap it with a task elsewhere, while that lowers the larger
    of the two finishing times below the current makespan (ties: most
    decrease).  The primal heuristic of :meth:`ConfigLP.decide` after LP
    rounding.  O(rounds * (t m + t^2 / m))."""
    a = assign.copy()
    t, m = E.shape
    rows = np.arange(t)
    for _ in range(rounds):
        load = np.bincount(a, weights=E[rows, a], minlength=m).astype(np.int64)
        used = np.bincount(a, minlength=m) > 0
        fin = np.where(used, load + R, 0)
        c = int(fin.argmax())
        top = fin[c]
        on = np.flatnonzero(a == c)
        base_k = load + R  # finishing time of machine k once it receives a task
        # moves: task i (on c) to machine k
        new_c = top - E[on, c]                                  # (n_c,)
        new_k = base_k[None, :] + E[on, :]                      # (n_c, m)
        mv = np.maximum(np.where(on.size > 1, new_c, 0)[:, None], new_k)
        mv[:, c] = top
        # swaps: task i (on c) with task l (on k != c)
        off = np.flatnonzero(a != c)
        k_of = a[off]
        sw_c = top - E[on, c][:, None] + E[off, c][None, :]      # (n_c, n_off)
        sw_k = (fin[k_of] - E[off, k_of])[None, :] + E[on][:, k_of]
        sw = np.maximum(sw_c, sw_k)
        best_mv = mv.min() if mv.size else top
        best_sw = sw.min() if sw.size else top
        if min(best_mv, best_sw) >= top:
            break
        if best_mv <= best_sw:
            i, k = np.unravel_index(int(mv.argmin()), mv.shape)
            a[on[i]] = k
        else:
            i, l = np.unravel_index(int(sw.argmin()), sw.shape)
            a[on[i]], a[off[l]] = a[off[l]], c
    return a


class ConfigLP:
    """Branch-and-price on the configuration LP of R||Cmax for the decision
    "is there a mapping of makespan ``<= T``?" (integer data ``E``, ``R`` of
    :func:`scaled`).  Bound: the Lagrangian dual of the assignment
    constraints, one 0-1 knapsack per machine (Martello, Soumis and Toth
    1997; the LP of :func:`lp_bound` strengthened by the capacity ``T -
    R[j]`` of every machine; [vadhiyar-notes]'s ETC model).

    For any ``u >= 0``, a mapping of makespan ``<= T`` gives ``sum_i u_i =
    sum_j u(S_j) <= sum_j K_j(u)``, ``K_j`` the best knapsack of machine j; so
    ``sum_i u_i > sum_j K_j(u)`` proves that no mapping (within a node's
    restrictions) has makespan ``<= T``.  Column generation (HiGHS master,
    DP pricing) looks for such a ``u``; where none exists, the master's
    fractional mapping picks a task-machine pair to branch on (task i on
    machine j, or not), depth first.  ``K_j`` is computed on floor weights (a
    relaxation: an upper bound, so the proof stays valid) and columns on
    ceil weights (sets that truly fit); both are ``E`` itself when the
    capacity is at most :data:`CFG_GRID` units.  Columns are kept in a pool
    for later nodes and trial values.  Cost per pricing round: m DPs of
    O(t * min(capacity, grid))."""

    def __init__(self, E: np.ndarray, R: np.ndarray, threads: int = 1):
        self.E = np.asarray(E, dtype=np.int64)
        self.R = np.asarray(R, dtype=np.int64)
        self.threads = int(threads)
        self._cols: list[tuple[int, np.ndarray, int]] = []  # (machine, task mask, load)
        self._keys: set = set()
        self.rounds = 0
        self.nodes = 0

    # ---- column pool ----
    def _add(self, j: int, mask: np.ndarray) -> None:
        key = (j, np.packbits(mask).tobytes())
        if key not in self._keys:
            self._keys.add(key)
            self._cols.append((j, mask.copy(), int(self.E[mask, j].sum())))

    def add_mapping(self, assign) -> None:
        """Put the machine sets of a mapping into the column pool."""
        a = np.asarray(assign, dtype=np.int64)
        for j in range(self.E.shape[1]):
            if (a == j).any():
                self._add(j, a == j)

    def _weights(self, j: int, T: int, up: bool, grid: int = CFG_GRID):
        """(weights, capacity) of machine j at makespan T on a grid of ``grid``
        units (the integer data when the capacity is at most ``grid``);
        ``up``: floor weights (a relaxation) else ceil weights (a
        restriction); None when the machine cannot be used (ready time > T)."""
        cap = T - int(self.R[j])
        if cap < 0:
            return None
        w = self.E[:, j]
        if cap <= grid:
            return w.copy(), cap
        if int(w.max()) < 2**62 // grid:  # w * grid fits in int64
            return ((w * grid) // cap if up else -((-w * grid) // cap)), grid
        out = [(int(v) * grid) // cap if up else -((-int(v) * grid) // cap) for v in w]
        return np.array(out, dtype=np.int64), grid

    # ---- one node ----
    def _node_lp(self, T: int, force: np.ndarray, ok: np.ndarray, deadline: float):
        """Column generation at one node: ``force[i]`` = machine task i is
        fixed to (-1: free), ``ok[i, j]`` = task i may run on machine j.
        Returns ``("infeasible", None)`` with a certificate, ``("lp", x)``
        with the master's fractional mapping x (t, m) when no certificate
        was found, or ``("timeout", None)``."""
        E, R = self.E, self.R
        t, m = E.shape
        forced = [force == j for j in range(m)]
        base = np.array([int(E[forced[j], j].sum()) for j in range(m)])
        for j in range(m):
            if forced[j].any() and base[j] + R[j] > T:
                return "infeasible", None
        free = force < 0
        cols = []
        for j in range(m):
            if forced[j].any():
                cols.append((j, np.flatnonzero(forced[j])))
            for i in np.flatnonzero(free & ok[:, j] & (E[:, j] + base[j] + R[j] <= T)):
                S = forced[j].copy()
                S[i] = True
                cols.append((j, np.flatnonzero(S)))
        if self._cols:
            mach = np.array([c[0] for c in self._cols])
            masks = np.array([c[1] for c in self._cols])
            loads = np.array([c[2] for c in self._cols])
            okm = ok & (free[:, None] | (force[:, None] == np.arange(m)[None, :]))  # (t, m)
            good = (loads + R[mach] <= T) & ~(masks & ~okm[:, mach].T).any(axis=1)
            good &= ~(np.stack(forced)[mach] & ~masks).any(axis=1)
            cols += [(int(mach[r]), np.flatnonzero(masks[r])) for r in np.flatnonzero(good)]
        n = t + m
        _highs_scheduler(self.threads)    # HiGHS's one thread pool: reset when the count changes
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", self.threads)
        cost = np.concatenate([-np.ones(t), np.ones(m)])
        upper = np.concatenate([np.ones(t), np.full(m, highspy.kHighsInf)])
        h.addCols(n, cost, np.zeros(n), upper, 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        rows: list[tuple[int, np.ndarray]] = []

        def add_rows(new):
            starts, idx, val = [], [], []
            for j, S in new:
                starts.append(len(idx))
                idx.extend(S.tolist())
                idx.append(t + j)
                val.extend([1.0] * len(S))
                val.append(-1.0)
            h.addRows(len(new), np.full(len(new), -highspy.kHighsInf), np.zeros(len(new)), len(idx),
                      np.array(starts, np.int32), np.array(idx, np.int32), np.array(val))
            rows.extend(new)

        if cols:
            add_rows(cols)
        top = max([T - int(R[j]) for j in range(m)] + [0])
        items = [free & ok[:, j] for j in range(m)]
        def price(u, wts, final, grid):
            """Best column per machine at duals u (exact knapsack above the grid
            when branch and bound finishes), sum of their values (a lower bound
            on sum_j K_j), the part of it known exact, the machines left loose."""
            out, k_lb, k_ub, loose = [], 0.0, 0.0, []
            for j in range(m):
                if wts[j] is None:
                    continue
                w, cap = wts[j]
                pj = np.where(items[j], u, 0.0)
                cap -= int(w[forced[j]].sum())
                val, sel = _knap(w, pj, cap) if cap >= 0 else (0.0, np.zeros(t, dtype=bool))
                exact_j = T - int(R[j]) <= grid  # the grid weights are E itself
                if final and not exact_j:
                    bval, bsel, exact_j = _knap_exact(E[:, j], pj, T - int(R[j]) - int(base[j]), val)
                    if bsel is not None and bval > val:
                        val, sel = bval, bsel
                val += u[forced[j]].sum()
                k_lb += val
                if exact_j:
                    k_ub += val
                else:
                    loose.append(j)
                out.append((j, sel | forced[j]))
            return out, k_lb, k_ub, loose

        for grid in [g for g in CFG_COARSE if g < min(top, CFG_GRID)] + [CFG_GRID]:
            final = grid == CFG_GRID
            wts = [self._weights(j, T, False, grid) for j in range(m)]
            center, phi_c = None, -np.inf  # stability center (Wentges smoothing)
            while True:
                if time.perf_counter() > deadline:
                    return "timeout", None
                self.rounds += 1
                # one master LP bounded too; HiGHS's time_limit counts every run of this object, so the
                # seconds left go on top of those it has run already
                h.setOptionValue("time_limit", h.getRunTime() + highs_seconds(time_left(deadline)))
                h.run()
                if h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
                    return "timeout", None
                if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                    raise RuntimeError(f"config LP master: HiGHS says {h.modelStatusToString(h.getModelStatus())}")
                sol = h.getSolution()
                xv = np.asarray(sol.col_value)
                u, pi = np.clip(xv[:t], 0.0, 1.0), xv[t:]
                if -h.getInfo().objective_function_value <= 1e-9:  # restricted master covers every task
                    return "lp", self._fractional(rows, np.asarray(sol.row_dual), t, m)
                alpha = CFG_SMOOTH if center is not None else 0.0
                while True:
                    if time.perf_counter() > deadline:
                        return "timeout", None
                    us = alpha * center + (1.0 - alpha) * u if alpha > 0 else u
                    cols_s, k_lb, k_ub, loose = price(us, wts, final, grid)
                    if us.sum() - k_lb > phi_c:
                        center, phi_c = us, us.sum() - k_lb
                    if us.sum() - k_lb > 1e-9:  # necessary for a certificate (loose machines: floor weights)
                        k_ub += self._k_upper(us, T, forced, items, grid, loose)
                        if us.sum() - k_ub > 1e-9:
                            return "infeasible", us
                    new = []
                    for j, S in cols_s:
                        assert int(E[S, j].sum()) + R[j] <= T, "priced column exceeds the capacity"
                        if u[S].sum() > pi[j] + 1e-9:  # improves the master at its own duals
                            self._add(j, S)
                            new.append((j, np.flatnonzero(S)))
                    if new or alpha == 0.0:
                        break
                    alpha = 0.0  # mispricing: price at the master's duals
                if not new:
                    break
                add_rows(new)
        return "lp", self._fractional(rows, np.asarray(h.getSolution().row_dual), t, m)

    def _k_upper(self, u, T, forced, items, grid, machines) -> float:
        """``sum_j`` over ``machines`` of upper bounds on ``K_j(u)`` within a
        node (floor weights on the grid)."""
        total = 0.0
        for j in machines:
            wc = self._weights(j, T, True, grid)
            if wc is None:
                continue
            w, cap = wc
            cap -= int(w[forced[j]].sum())
            total += u[forced[j]].sum()
            if cap >= 0:
                total += _knap(w, np.where(items[j], u, 0.0), cap)[0]
        return total

    @staticmethod
    def _fractional(rows, duals, t, m) -> np.ndarray:
        """x[i, j]: the master's share of task i on machine j (the row duals of
        the dual master are the configurations' weights)."""
        x = np.zeros((t, m))
        lam = np.abs(duals)
        for (j, S), v in zip(rows, lam):
            if v > 1e-12:
                x[S, j] += v
        return x

    # ---- branch and price ----
    def decide(self, T: int, deadline: float):
        """``("infeasible", None)`` when no mapping has makespan ``<= T`` (the
        search tree closed), ``("feasible", mapping)`` with one that has, or
        ``("timeout", None)``.  Depth first; the branch "task i on machine
        j" first, on the pair whose master share is nearest 1/2.  At every
        node the master's largest shares, improved by :func:`_descent`, are
        tried as a mapping."""
        E, R = self.E, self.R
        t, m = E.shape
        stack = [(np.full(t, -1, dtype=np.int64), E + R[None, :] <= T)]

        def fits(a):  # makespan of mapping a at most T
            loads = np.bincount(a, weights=E[np.arange(t), a], minlength=m)
            return bool(np.all((np.bincount(a, minlength=m) == 0) | (loads + R <= T)))

        while stack:
            force, ok = stack.pop()
            self.nodes += 1
            if (~ok.any(axis=1) & (force < 0)).any():
                continue
            status, x = self._node_lp(T, force, ok, deadline)
            if status == "timeout":
                return "timeout", None
            if status == "infeasible":
                continue
            # rounding: the largest share of each task
            cand = np.where(force >= 0, force, np.where(ok, x, -1.0).argmax(axis=1))
            if not fits(cand):
                cand = _descent(E, R, cand)  # any mapping within T answers the decision, node or not
            if fits(cand):
                self.add_mapping(cand)
                return "feasible", cand
            frac = np.where(ok & (force < 0)[:, None], np.minimum(x, 1.0 - x), -1.0)
            i, j = np.unravel_index(int(frac.argmax()), frac.shape)
            if frac[i, j] <= 1e-9:  # integral but over T after rounding: branch on the largest share
                share = np.where(ok & (force < 0)[:, None], x, -1.0)
                i, j = np.unravel_index(int(share.argmax()), share.shape)
                if share[i, j] < 0:
                    continue  # every task fixed and over T
            no = ok.copy()
            no[i, j] = False
            stack.append((force, no))
            yes_f = force.copy()
            yes_f[i] = j
            stack.append((yes_f, ok))
        return "infeasible", None

    def prove(self, T: int, deadline: float) -> bool:
        """Root node only: True when the configuration LP alone shows that no
        mapping has makespan ``<= T``."""
        t, m = self.E.shape
        status, _ = self._node_lp(T, np.full(t, -1, dtype=np.int64), self.E + self.R[None, :] <= T, deadline)
        return status == "infeasible"


def _bnp(inst, sc: Scaled, start: np.ndarray, lo: int, deadline: float, threads: int, improve=None):
    """Makespan on the integer data by :class:`ConfigLP`: bisection on the
    trial makespan T with root-node certificates only (the configuration-LP
    bound ``lo``; at most :data:`ROOT_SHARE` of the time left), then
    descent: once ``improve(best, lo, seconds)`` (a short CP-SAT run from
    the best mapping with ``C >= lo``; it finds better mappings more often
    than the tree does, and proves when it reaches ``lo``), then the full
    branch-and-price decision at ``T = best - 1``, until a tree closes (the
    best is optimal) or time runs out; a mapping found becomes the best.
    (Bisecting between ``lo`` and the best instead cost more: every closed
    tree near the optimum takes seconds.)  Returns status, mapping, ``lo``
    (integer units: no mapping is below it), details."""
    cfg = ConfigLP(sc.etc, sc.ready, threads)
    cfg.add_mapping(start)
    best, hi = start, sc.makespan(start)
    lo = max(lo, _scaled_lower_bound(sc))
    tol = max(1, int(hi * ROOT_TOL))
    b = hi - 1
    now = time.perf_counter()
    stop = now + ROOT_SHARE * max(deadline - now, 0.0)
    while b - lo > tol and time.perf_counter() < stop:  # root only: the configuration-LP bound
        mid = (lo + b) // 2
        if cfg.prove(mid, stop):
            lo = mid + 1
        else:
            b = mid - 1
    root = lo
    while lo < hi and time.perf_counter() < deadline:  # descent: is there a mapping below the best?
        if improve is not None:  # once: a few seconds of CP-SAT from the best, with the bound lo
            st, a, raw = improve(best, lo, min(IMPROVE_S, IMPROVE_SHARE * (deadline - time.perf_counter())))
            improve = None
            lo = max(lo, raw)
            if a is not None and sc.makespan(a) < hi:
                best, hi = a, sc.makespan(a)
            if st == "optimal" or lo >= hi:
                lo = max(lo, hi) if st == "optimal" else lo
                break
        status, assign = cfg.decide(hi - 1, deadline)
        if status == "infeasible":
            lo = hi
        elif status == "feasible":
            best, hi = assign, sc.makespan(assign)
        else:
            break
    status = "optimal" if lo >= hi else "feasible"
    return status, best, min(lo, hi), {"solver": "branch-and-price (configuration LP, HiGHS master)",
                                     "config_lp_bound": root / sc.scale, "nodes": cfg.nodes,
                                     "pricing_rounds": cfg.rounds, "columns": len(cfg._cols)}


def _scaled_lower_bound(sc: Scaled) -> int:
    """An integer lower bound on the optimum of the integer data (the
    instance's cheap bounds on ``E``, ``R``; relative 1e-9 off for rounding).
    On the arrays, not through an instance: data floored onto a coarse grid
    can have every task taking 0 on a machine ready at 0, which no instance
    holds (found by a fuzzing review: ``bnp`` raised ``InstanceError`` on
    an instance of entries 1e-9 to 1e15 whenever its presolve proved
    nothing)."""
    lb = makespan_lower_bound(sc.etc.astype(float), sc.ready.astype(float))
    return max(int(math.ceil(lb * (1 - 1e-9) - 1e-6)), 0)


# ---- the MILP: one array model, handed to HiGHS directly and to CBC through PuLP ------------
@dataclass
class MilpModel:
    """The MILP of the module docstring (float data, normalised) as arrays,
    its columns and rows in the order PuLP handed them to HiGHS before (the
    columns sorted by name, the rows as added), so that HiGHS gets the same
    model.  Column 0 is ``C`` in [``col_lower[0]``, ``col_upper[0]``], then
    ``u[j]`` for each machine of ``u_machines`` (a positive ready time and
    some allowed task), then ``x[i, j]`` for the allowed pairs (``xi``,
    ``xj``), task by task.  Rows (CSR ``starts``, ``index``, ``value``;
    bounds ``lower``, ``upper``): one per task (``sum_j x[i, j] = 1``), then
    for each machine with an allowed task its ``x[i, j] - u[j] <= 0`` rows
    (``u`` machines only) and its load row ``sum_i coef[i, j] x[i, j] +
    ready[j] u[j] - C <= 0`` (zero coefficients left out, as PuLP did).
    ``row_task`` / ``row_machine``: the task / machine of each row (-1 for
    none; they name the rows for PuLP).  ``start``: (columns, values) of the
    hint for ``x`` then ``u`` (``C`` is left to the solver).  ``weighted``:
    the objective has a work term.  ``solution``: the solver's column
    values, set by :func:`run_highs` when it returns a solution (as PuLP
    sets its variables' values)."""
    n_tasks: int
    n_machines: int
    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    u_machines: np.ndarray
    xi: np.ndarray
    xj: np.ndarray
    starts: np.ndarray
    index: np.ndarray
    value: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    row_task: np.ndarray
    row_machine: np.ndarray
    start: tuple[np.ndarray, np.ndarray]
    weighted: bool
    solution: np.ndarray | None = None

    @property
    def x0(self) -> int:
        """The column of the first ``x``."""
        return 1 + int(self.u_machines.size)

    @property
    def n_rows(self) -> int:
        return int(self.starts.size) - 1

    def assignment(self, values) -> np.ndarray | None:
        """The mapping of the column ``values``: ``None`` without values or
        when some task has no ``x`` above 0.5 (a non-integral point)."""
        if values is None:
            return None
        on = np.asarray(values, dtype=float)[self.x0:self.x0 + self.xi.size] > 0.5
        assign = np.full(self.n_tasks, -1, dtype=np.int64)
        assign[self.xi[on]] = self.xj[on]
        return None if (assign < 0).any() else assign


def milp_model(coef: np.ndarray, ready: np.ndarray, allowed: np.ndarray, lb: float, ub: float, hint: np.ndarray,
               work_weight: float = 0.0, prices=None, deadline: float = math.inf) -> MilpModel | None:
    """The MILP (objective ``C``, plus ``work_weight`` x (total work) / m when
    positive, or ``work_weight`` x sum_j ``prices[j]`` x (work on machine j)
    when ``prices`` (m numbers) are given; ``C`` in [``lb``, ``ub``]; ``x``
    for the ``allowed`` pairs only) as a :class:`MilpModel`, in whole numpy
    arrays; ``None`` when ``deadline`` (``time.perf_counter()`` seconds)
    passes while it is built (looked at once per machine).  O(t m); 2 ms
    at 512 x 16 (PuLP took 45 ms, and its hand-over to HiGHS 0.15 s more)."""
    t, m = coef.shape
    xi, xj = (a.astype(np.int64) for a in np.nonzero(allowed))   # task-major: the x's name order
    nx = xi.size
    per_machine = np.bincount(xj, minlength=m)
    u_machines = np.flatnonzero((per_machine > 0) & (np.asarray(ready) > 0))
    ucol = np.full(m, -1, dtype=np.int64)
    ucol[u_machines] = 1 + np.arange(u_machines.size)
    x0 = 1 + u_machines.size
    cost = np.zeros(x0 + nx)
    cost[0] = 1.0
    if work_weight > 0:
        w = (np.full(m, float(work_weight) / m) if prices is None
             else float(work_weight) * np.asarray(prices, dtype=float))
        cost[x0:] = w[xj] * coef[xi, xj]
    col_lower, col_upper = np.zeros(x0 + nx), np.ones(x0 + nx)
    col_lower[0], col_upper[0] = float(lb), float(ub)
    # one row per task, then machine by machine its x <= u rows and its load row
    lengths, index, value = [np.bincount(xi, minlength=t)], [x0 + np.arange(nx)], [np.ones(nx)]
    lower, upper = [np.ones(t)], [np.ones(t)]
    row_task, row_machine = [np.arange(t)], [np.full(t, -1)]
    order = np.argsort(xj, kind="stable")   # machine by machine, task by task
    cuts = np.concatenate(([0], np.cumsum(per_machine)))
    for j in range(m):
        if time_left(deadline) <= 0:
            return None
        ks = order[cuts[j]:cuts[j + 1]]
        if ks.size == 0:
            continue
        cols, n = x0 + ks, ks.size
        if ucol[j] >= 0:
            lengths.append(np.full(n, 2))
            index.append(np.column_stack([cols, np.full(n, ucol[j])]).ravel())
            value.append(np.tile([1.0, -1.0], n))
            lower.append(np.full(n, -math.inf))
            upper.append(np.zeros(n))
            row_task.append(xi[ks])
            row_machine.append(np.full(n, j))
        c = np.asarray(coef[xi[ks], j], dtype=float)
        nz = c != 0
        tail_i, tail_v = ([ucol[j], 0], [float(ready[j]), -1.0]) if ucol[j] >= 0 else ([0], [-1.0])
        lengths.append(np.array([int(nz.sum()) + len(tail_i)]))
        index.append(np.concatenate([cols[nz], tail_i]))
        value.append(np.concatenate([c[nz], tail_v]))
        lower.append(np.array([-math.inf]))
        upper.append(np.zeros(1))
        row_task.append(np.array([-1]))
        row_machine.append(np.array([j]))
    start_x = (np.asarray(hint)[xi] == xj).astype(float)
    start_u = np.array([float(np.any(hint == j)) for j in u_machines])
    return MilpModel(t, m, cost, col_lower, col_upper, u_machines, xi, xj,
                     np.concatenate(([0], np.cumsum(np.concatenate(lengths)))).astype(np.int64),
                     np.concatenate(index).astype(np.int64), np.concatenate(value),
                     np.concatenate(lower), np.concatenate(upper),
                     np.concatenate(row_task).astype(np.int64), np.concatenate(row_machine).astype(np.int64),
                     (np.concatenate([x0 + np.arange(nx), ucol[u_machines]]).astype(np.int64),
                      np.concatenate([start_x, start_u])),
                     bool(work_weight > 0))


def highs_mapping_model(model: MilpModel, deadline: float = math.inf):
    """``model`` as a ``highspy.Highs`` (output off): the columns in one call,
    the rows :data:`~epochbench.exact._binary.HIGHS_ROW_CHUNK` at a time
    with a look at the clock before each; ``None`` when ``deadline``
    passes while it is built.  O(columns + nonzeros)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    n = model.cost.size
    none_i = np.zeros(0, dtype=np.int32)
    h.addCols(n, model.cost, model.col_lower, model.col_upper, 0, none_i, none_i, np.zeros(0))
    ints = np.arange(1, n, dtype=np.int32)   # every column but C
    if ints.size:
        h.changeColsIntegrality(ints.size, ints, np.array([highspy.HighsVarType.kInteger] * ints.size))
    inf = highspy.kHighsInf
    lower = np.where(np.isinf(model.lower), -inf, model.lower)
    upper = np.where(np.isinf(model.upper), inf, model.upper)
    for r0 in range(0, model.n_rows, HIGHS_ROW_CHUNK):
        if time_left(deadline) <= 0:
            return None
        r1 = min(r0 + HIGHS_ROW_CHUNK, model.n_rows)
        a, b = int(model.starts[r0]), int(model.starts[r1])
        h.addRows(r1 - r0, lower[r0:r1], upper[r0:r1], b - a, (model.starts[r0:r1] - a).astype(np.int32),
                  model.index[a:b].astype(np.int32), model.value[a:b])
    return h if time_left(deadline) > 0 else None


def run_highs(model: MilpModel, deadline: float, threads: int, seed: int, where: str = "HiGHS"
              ) -> tuple[str, float | None, dict]:
    """HiGHS in-process on ``model`` (handed over by
    :func:`highs_mapping_model`), the hint as its start, its own time limit
    what is left less a margin (:func:`~epochbench.exact._binary.highs_seconds`),
    until ``deadline`` (``time.perf_counter()`` seconds, the hand-over
    included).  Returns (status, the dual bound or ``None``, details), the
    column values in ``model.solution`` when it found a solution; status
    ``timeout`` and solver status ``not started`` when the deadline passes
    first."""
    h = highs_mapping_model(model, deadline) if time_left(deadline) > 0 else None
    if h is None:
        return "timeout", None, {"solver": "HiGHS", "solver_status": "not started",
                                 "note": "time limit reached before the solver started"}
    cols, vals = model.start
    if cols.size:
        h.setSolution(int(cols.size), cols.astype(np.int32), vals)
    for name, value in (("mip_rel_gap", 0.0), ("threads", int(threads)), ("random_seed", int(seed)),
                        ("time_limit", highs_seconds(time_left(deadline))), *HIGHS_MIP_OPTIONS):
        h.setOptionValue(name, value)
    _highs_scheduler(int(threads))
    with quiet_highs():
        h.run()
    status, bound, details = highs_outcome(h, where, lambda: "mapping MILP")
    if status in ("optimal", "feasible"):
        model.solution = np.asarray(h.getSolution().col_value, dtype=float)
    return status, bound, details


#: the PuLP model for CBC is built checking the clock every this many rows
PULP_ROW_CHECK = 256
#: CBC is not started when less than this many times the PuLP build's seconds (plus CBC's
#: margin, :data:`~epochbench.exact._binary.CBC_MARGIN_S`) is left: PuLP's MPS file takes
#: about as long to write as the model took to build, and CBC as long again and more to read
#: it (512 x 16: build 0.045 s, MPS 0.05 s, CBC with ``-sec 0.01`` 0.085 s); started with
#: less, CBC was still starting at the deadline (then stopped or killed) and returned nothing
CBC_HANDOVER = 3.0


def pulp_mapping_model(model: MilpModel, deadline: float = math.inf):
    """``model`` as a ``pulp.LpProblem`` (CBC reads it from PuLP's MPS file):
    the variables ``C``, ``u{j}``, ``x{i}_{j}``, the rows ``a{i}``,
    ``u{i}_{j}``, ``m{j}``; the hint set as the variables' initial values
    (``C`` at its upper bound).  Returns (problem, its variables in column
    order), or ``None`` when ``deadline`` passes while it is built."""
    t, m = model.n_tasks, model.n_machines
    wi, wj = len(str(max(t - 1, 0))), len(str(max(m - 1, 0)))
    prob = pulp.LpProblem("mapping", pulp.LpMinimize)
    var, integer, affine = prob.add_variable, pulp.LpInteger, pulp.LpAffineExpression
    cols = [var("C", float(model.col_lower[0]), float(model.col_upper[0]), cat=pulp.LpContinuous)]
    cols += [var(f"u{j:0{wj}d}", 0, 1, cat=integer) for j in model.u_machines.tolist()]
    cols += [var(f"x{i:0{wi}d}_{j:0{wj}d}", 0, 1, cat=integer) for i, j in zip(model.xi.tolist(), model.xj.tolist())]
    x0 = model.x0
    prob += affine([(cols[0], 1)] + ([(cols[k], c) for k, c in enumerate(model.cost[x0:].tolist(), x0)]
                                     if model.weighted else []))
    starts, index, value = model.starts.tolist(), model.index.tolist(), model.value.tolist()
    tasks, machines = model.row_task.tolist(), model.row_machine.tolist()
    for r in range(model.n_rows):
        if r % PULP_ROW_CHECK == 0 and time_left(deadline) <= 0:
            return None
        a, b = starts[r], starts[r + 1]
        expr = affine([(cols[k], v) for k, v in zip(index[a:b], value[a:b])])
        i, j = tasks[r], machines[r]
        if j < 0:
            prob += (expr == 1, f"a{i}")
        elif i >= 0:
            prob += (expr <= 0, f"u{i}_{j}")
        else:
            prob += (expr <= 0, f"m{j}")
    for k, v in zip(*(a.tolist() for a in model.start)):
        cols[k].setInitialValue(v)
    cols[0].setInitialValue(float(model.col_upper[0]))
    return (prob, cols) if time_left(deadline) > 0 else None


def _milp(inst, method, hint, lb_true, deadline, threads, seed, work_weight: float = 0.0, prices=None):
    """CBC or HiGHS on the float model normalised so that the start's makespan
    is :data:`MILP_NORM` (:func:`milp_model`; HiGHS gets it directly,
    CBC through PuLP, :func:`pulp_mapping_model`), until ``deadline``
    (``time.perf_counter()`` seconds, model building included); returns
    status (``timeout``, solver status ``not started``, when the deadline
    passes before the solver starts), mapping, bound in true units (``None``
    when the solver proved none), info.  With ``work_weight`` w > 0 the
    objective is C + w (total work) / m and the bound returned is the
    solver's divided by 1 + w, a bound on the makespan (see
    :func:`solve_mapping`); ``prices`` (m numbers >= 0 summing to 1) price
    the work per machine instead."""
    solver = "HiGHS" if method == "milp-highs" else "CBC"
    not_started = ("timeout", None, None, {"solver": solver, "solver_status": "not started",
                                           "note": "time limit reached before the solver started",
                                           "objective_units": "float"})
    if time_left(deadline) <= 0:
        return not_started
    ub_true = inst.value(hint)
    unit = MILP_NORM / ub_true
    coef, ready = inst.etc * unit, inst.ready * unit
    ub, lb = MILP_NORM, min(MILP_NORM, lb_true * unit)
    model = milp_model(coef, ready, _allowed(inst, hint, None), lb, ub, hint, work_weight, prices, deadline)
    if model is None:
        return not_started
    if method == "milp-highs":
        status, raw, details = run_highs(model, deadline, threads, seed, where=inst.name)
        values = model.solution
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            t_build = time.perf_counter()
            built = pulp_mapping_model(model, deadline)
            if built is None:
                return not_started
            if time_left(deadline) < CBC_HANDOVER * (time.perf_counter() - t_build) + CBC_MARGIN_S:
                return (*not_started[:3], {**not_started[3], "note": "too little time left to hand the "
                                           "model to CBC (MPS file, CBC reading it) before the time limit"})
            prob, cols = built
            status, raw, result = run_cbc(prob, deadline, seed, warm=True)  # serial CBC (exact/_binary.py)
        if raw is not None:
            raw -= 5e-4  # CBC prints 3 decimals
        details = cbc_info(result)
        values = [v.varValue or 0.0 for v in cols] if status in ("optimal", "feasible") else None
    assign = None
    if status in ("optimal", "feasible"):
        assign = model.assignment(values)
        if assign is None:  # a solver returned a non-integral point: keep the hint
            status = "feasible"
    bound = None
    if raw is not None and math.isfinite(raw):
        bound = (raw - _TOL * max(1.0, abs(raw))) / unit / (1.0 + work_weight)
    details["objective_units"] = "float"
    return status, assign, bound, details


# ---- the solve entry point -------------------------------------------------------------------
def start_mapping(inst: MappingInstance, hint=None, warm: bool = True, budget: float = 0.0) -> tuple[np.ndarray, str]:
    """The start of an exact or LNS call and where it came from: ``hint``
    (checked: a machine in 0..m-1 per task), else the best of Min-Min and,
    with ``warm``, the fast heuristics run within ``budget`` seconds
    (:func:`~epochbench.exact.starts.best_start`)."""
    start = minmin_start(inst) if hint is None else check_hint(inst, hint)
    origin = "minmin" if hint is None else "hint"
    if hint is None and warm:
        heur = best_start(inst, budget=budget)
        if heur is not None and heur.value < inst.value(start):
            start, origin = np.asarray(heur.decision, dtype=np.int64), heur.method
    return start, origin


def check_hint(inst: MappingInstance, hint) -> np.ndarray:
    """``hint`` as a mapping (a machine in 0..m-1 per task), else a one-line
    ValueError: integers only, as the decision checker takes them
    (:func:`epochbench.instances.mapping.check_mapping`; a float such as
    ``0.9`` was cut to 0 and 1e30 overflowed); a comma-separated string of
    them, as ``--param hint=0,1,0`` gives, too."""
    need = f"hint must give each of {inst.n} tasks a machine in 0..{inst.k - 1}"
    if inst.n == 1 and isinstance(hint, (int, np.integer)) and not isinstance(hint, bool):
        hint = [hint]              # --param hint=0 of a one-task instance: read as a number
    if isinstance(hint, str):
        try:
            hint = [int(x) for x in hint.split(",")]
        except ValueError:
            raise ValueError(f"{inst.name}: hint {hint!r} is not comma-separated whole numbers ({need})") from None
    try:
        start = indices(hint, inst.k, f"{inst.name}: hint", noun="machine", item="of task")
    except InfeasibleSolution as exc:
        raise ValueError(f"{exc} ({need})") from None
    if len(start) != inst.n:
        raise ValueError(f"{inst.name}: {need}, got {len(start)} entries")
    return np.asarray(start, dtype=np.int64)


def check_work_weight(method: str, work_weight) -> float:
    """``work_weight`` as a float: finite, >= 0, positive only for a method
    of :data:`WEIGHTED`; ValueError otherwise."""
    try:
        work_weight = float(work_weight)
    except (TypeError, ValueError):
        raise ValueError(f"work_weight must be a finite number >= 0, got {work_weight!r}") from None
    if not (math.isfinite(work_weight) and work_weight >= 0):
        raise ValueError(f"work_weight must be a finite number >= 0, got {work_weight!r}")
    if work_weight > 0 and method not in WEIGHTED:
        raise ValueError(f"work_weight is a parameter of {' and '.join(WEIGHTED)}, not {method}")
    return work_weight


def check_presolve(method: str, presolve) -> float | None:
    """``presolve`` (seconds of ``bnp``'s CP-SAT run) as a float: a finite
    number >= 0, given to ``bnp`` only; None (its default share) stays None.
    ValueError otherwise (cpsat and the MILPs ignored it, and ``bnp`` read
    NaN or -1 as no presolve)."""
    if presolve is None:
        return None
    if method != "bnp":
        raise ValueError(f"presolve is a parameter of bnp, not {method}")
    check_positive("bnp", "presolve", presolve, zero=True)
    return float(presolve)


def _check_mapping(method: str, inst: MappingInstance, *, hint=None, work_weight=0.0, work_prices=None,
                   presolve=None, **_) -> None:
    """The ``check_params`` hook of the exact mapping methods: their
    parameters checked on ``inst`` before a run, nothing solved."""
    if hint is not None:
        check_hint(inst, hint)
    check_presolve(method, presolve)
    _work_prices(inst, check_work_weight(method, work_weight), work_prices)


def _work_prices(inst: MappingInstance, work_weight: float, prices) -> np.ndarray | None:
    """``prices`` checked (m finite numbers >= 0, not all 0, as a sequence or
    a comma-separated string as ``--param work_prices=1,2,1`` gives; a
    positive ``work_weight``) and normalised to sum 1; None stays None (1 / m
    each)."""
    if prices is None:
        return None
    if work_weight <= 0:
        raise ValueError("work_prices price the work term: give a positive work_weight too")
    try:
        p = np.asarray(prices.split(",") if isinstance(prices, str) else prices, dtype=float)
    except (TypeError, ValueError):
        p = np.array([np.nan])
    if p.shape != (inst.k,) or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
        raise ValueError(f"work_prices must be {inst.k} finite numbers >= 0, not all 0 (one per machine), "
                         f"got {prices!r}")
    return p / p.sum()


def solve_mapping(inst: MappingInstance, method: str, *, time_limit: float, threads: int = 1, seed: int = 0,
                  hint=None, presolve: float | None = None, warm: bool = True, work_weight: float = 0.0,
                  work_prices=None) -> Result:
    """Minimum makespan of a mapping instance with backend ``method`` (cpsat,
    milp-cbc, milp-highs); start / hint: ``hint`` when given, else the best
    of Min-Min and the family's fast heuristics
    (:func:`~epochbench.exact.starts.best_start`; ``warm=False``: Min-Min);
    the result is never worse than the start.
    ``bound``: a proven lower bound on the true (unscaled) optimum (at least
    :meth:`~epochbench.instances.mapping.MappingInstance.lower_bound`;
    ``info["bound_kind"]`` says ``solver`` when the backend proved more,
    else ``combinatorial``); status ``optimal`` only when the returned
    mapping's true makespan meets it.  ``time_limit`` is the wall time of
    the whole call (start mapping, model building and solver).
    ``work_weight`` (``milp-highs`` and ``milp-cbc`` only; default 0): the
    model minimises C + ``work_weight`` x (total processing time) / m, which
    steers the solver toward mappings that do less work in all at nearly the
    same makespan (the mapping LNS's first phase,
    :func:`epochbench.exact.mapping_lns.lns`); the solver's bound B on that
    objective then gives the makespan bound B / (1 + ``work_weight``) (the
    total work is at most m C), and the status is ``optimal`` only when the
    mapping meets the bound.
    ``work_prices`` (with a positive ``work_weight``; default 1 / m each):
    the price of a unit of work on each machine, m finite numbers >= 0, not
    all 0, normalised here to sum 1; the objective is then C +
    ``work_weight`` x sum_j price_j x (work on machine j), and the bound
    stays B / (1 + ``work_weight``) (the priced work is at most C).  The
    LNS passes the LP relaxation's machine duals."""
    if method not in METHODS:
        raise KeyError(f"unknown exact method {method!r}; known: {', '.join(METHODS)}")
    work_weight = check_work_weight(method, work_weight)
    work_prices = _work_prices(inst, work_weight, work_prices)
    presolve = check_presolve(method, presolve)
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit)
    start, origin = start_mapping(inst, hint, warm, START_SHARE * float(time_limit))
    lb = inst.lower_bound()
    start_value = inst.value(start)
    info = {"start_makespan": start_value, "lower_bound": lb, "start": origin}
    grid = decimal_grid(inst)
    if meets(start_value, lb, grid):
        return Result(inst.kind, method, tuple(start.tolist()), start_value, "optimal",
                      time.perf_counter() - t0, start_value, {**info, "solver": "none", "bound_kind": "combinatorial",
                                                               "note": "start meets the lower bound"})
    if method in ("cpsat", "bnp"):
        sc = scaled(inst)
        lb_int = math.ceil(lb * sc.scale * (1 - 1e-12) - 1e-9) if sc.exact else 0
    if method == "cpsat":
        status, assign, raw, details = _cpsat(inst, sc, start, _allowed(inst, start, sc), lb_int, deadline,
                                              threads, seed)
        bound = math.ceil(raw - _TOL) / sc.scale
        by_solver = status != "timeout"  # else raw is lb_int, the lower bound on the integer grid
    elif method == "bnp":
        left = time_left(deadline)
        pre = min(PRESOLVE_S, PRESOLVE_SHARE * left) if presolve is None else min(presolve, left)
        lo, first, pre_info = 0, start, {}
        if pre > 0:  # a short CP-SAT run: incumbent and bound (and the proof on easy instances)
            st, a, raw, d = _cpsat(inst, sc, start, _allowed(inst, start, sc), lb_int, deadline_after(pre),
                                   threads, seed)
            if a is not None and sc.makespan(a) <= sc.makespan(start):
                first = a
            lo = math.ceil(raw - _TOL)
            pre_info = {"presolve_s": pre, "presolve_status": st, "presolve_branches": d["branches"]}
        if pre > 0 and st == "optimal":
            status, assign, raw, details = "optimal", first, lo, {"solver": "CP-SAT (presolve)"}
        else:
            def improve(best, lo_int, seconds):
                st, a, raw, _ = _cpsat(inst, sc, best, _allowed(inst, best, sc), lo_int,
                                       min(deadline_after(seconds), deadline), threads, seed)
                return st, a, math.ceil(raw - _TOL)

            status, assign, raw, details = _bnp(inst, sc, first, lo, deadline, threads,
                                                improve if pre > 0 else None)
        details.update(pre_info)
        bound = raw / sc.scale
        by_solver = True
    else:
        status, assign, bound, details = _milp(inst, method, start, lb, deadline, threads, seed, work_weight,
                                               work_prices)
        by_solver = bound is not None
        if work_weight > 0:
            details["work_weight"] = work_weight
            if work_prices is not None:
                details["work_prices"] = [float(v) for v in work_prices]
            if status == "optimal":  # optimal for the weighted objective, not for the makespan
                status = "feasible"
    if method in ("cpsat", "bnp"):
        details["scaling"] = "exact" if sc.exact else "floor"
        details["scale"] = sc.scale
        if sc.exact and bound is not None and bound * sc.scale <= lb_int + _TOL:
            by_solver = False   # the instance's lower bound rounded up to the makespans' grid: combinatorial
    if assign is None:
        assign = start
    value = inst.value(assign)
    solver = details.get("solver", method)
    if value > start_value:  # never worse than the start the solver was given
        if status == "optimal" and against(start_value, value, "min") != "meets":  # not a tie by rounding
            bound = value if bound is None else bound    # still a bound: the check below refutes it, or not
            status = "feasible"
            info["note"] = f"{solver}'s optimum was worse than the start ({origin}); the start is returned"
        assign, value = start, start_value
    if bound is not None and against(value, bound, "min") == "refuted":
        refuted(info, bound, value, solver)  # the lower bound of the instance stays
        status, bound, by_solver = "feasible", None, False
    by_solver = status == "optimal" or (by_solver and bound is not None and bound > lb)
    details["bound_kind"] = "solver" if by_solver else "combinatorial"
    bound = lb if bound is None else max(bound, lb)
    if status == "optimal" and details.get("scaling") == "floor" and value > bound * (1 + 1e-9):
        status = "feasible"  # proven for the rounded data only
    if status == "optimal" or (against(value, bound, "min") == "meets" and meets(value, bound, grid)):
        status, bound = "optimal", value
    elif status == "timeout":
        status = "feasible"  # the start mapping is a solution
    return Result(inst.kind, method, tuple(int(j) for j in assign), value, status, time.perf_counter() - t0,
                  min(bound, value), {**info, **details})


def _make(method: str):
    def method_func(inst, *, time_limit: float, threads: int = 1, **params) -> Result:
        return solve_mapping(inst, method, time_limit=time_limit, threads=threads, **params)

    method_func.__name__ = method_func.__qualname__ = f"mapping_{method.replace('-', '_')}"
    method_func.__doc__ = (f"Minimum makespan mapping, {method} ([vadhiyar-notes] ETC mapping; "
                           f"see exact.mapping.solve_mapping)")
    method_func.warm_start = True        # takes warm=False (start from Min-Min only)
    method_func.warm_up = _warm_up(method)
    method_func.check_params = functools.partial(_check_mapping, method)   # before a run (epochbench.methods)
    method_func.accepts = ("seed", "hint", "warm", *(("presolve",) if method == "bnp" else ()),
                           *(("work_weight", "work_prices") if method in WEIGHTED else ()))
    return register("mapping", method, kind="exact")(forwards(method_func, solve_mapping, drop=("method",)))


#: the solvers each mapping method may call (its own, the LP bound's SciPy, CP-SAT's polish)
WARM_UP = {"cpsat": ("cpsat", "scipy"), "milp-cbc": ("milp-cbc", "scipy"), "milp-highs": ("milp-highs", "scipy"),
           "bnp": ("cpsat", "milp-highs", "scipy")}


def _warm_up(method: str):
    """The ``warm_up`` hook of mapping method ``method``, run before the
    clock starts: its solvers and the start heuristics' kernels
    (:func:`~epochbench.exact._binary.warm_up_backends`) and, for ``bnp``,
    its pricing kernels (:func:`_warm_knapsacks`)."""
    backends = warm_up_backends(*WARM_UP[method], family="mapping")
    if method != "bnp":
        return backends

    def warm_up() -> None:
        backends()
        _warm_knapsacks()
    return warm_up


def _warm_knapsacks() -> None:
    """Load (or compile, on an empty cache) :func:`_knap` and
    :func:`_knap_bb` with the argument types ``bnp``'s calls give them
    (int64 weights, float64 profits, int capacity, float value, int node
    limit).  They were compiled inside the first timed call: with an empty
    cache a 30 x 5 ``braun-range`` instance took 0.8 s on a 0.3 s limit
    and came back feasible, where a warm call proves it optimal in 0.2 s."""
    w, p = np.ones(1, dtype=np.int64), np.ones(1)
    _knap(w, p, 1)
    _knap_bb(w, p, 1, 0.0, 1)


mapping_cpsat = _make("cpsat")
mapping_milp_cbc = _make("milp-cbc")
mapping_milp_highs = _make("milp-highs")
mapping_bnp = _make("bnp")
