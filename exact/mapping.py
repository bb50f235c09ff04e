"""Exact models of the ``mapping`` family (seed 002 ETC mapping; R||Cmax with
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
bound of :meth:`~instances.mapping.MappingInstance.lower_bound`.

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
is the solver's dual bound widened by 1e-6 relative.

Registered with ``kind="exact"``: ``cpsat``, ``milp-cbc``, ``milp-highs``;
each is ``f(inst, *, time_limit, threads=1, seed=0, hint=None) -> Result``.
:func:`lp_bound` is the LP relaxation as a rigorous lower bound.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import highspy
import numpy as np
import pulp
from ortools.sat.python import cp_model
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from instances.core import Result
from instances.mapping import MappingInstance
from instances.registry import register

from ._binary import _highs_scheduler, _HiGHSWithStart, _stdout_to_stderr, run_cbc

METHODS = ("cpsat", "milp-cbc", "milp-highs")
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
def minmin_start(inst: MappingInstance) -> np.ndarray:
    """Min-Min (seed 002) in plain numpy, for the hint: lowest task index,
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


def lp_bound(inst: MappingInstance, *, return_x: bool = False):
    """LP relaxation of the model (HiGHS through scipy), made rigorous: the
    duals ``w`` of the machine rows, clipped to >= 0 and normalised to sum 1,
    give the Lagrangian bound ``sum_i min_j w_j etc[i, j]``, valid for every
    ``w`` on the simplex (the LP is solved without ready times: the bound
    ignores them, which keeps it valid; the caller may take the max with
    :meth:`~instances.mapping.MappingInstance.lower_bound`).  Returns the
    bound; with ``return_x``: ``(bound, fractional x (t, m), LP objective)``.
    One LP with t m + 1 variables (0.15 s at 512 x 16)."""
    t, m = inst.etc.shape
    nx = t * m
    # variables: x (task-major), then C; rows: machine loads <= C
    rows = np.concatenate([np.tile(np.arange(m), t), np.arange(m)])
    cols = np.concatenate([np.arange(nx), np.full(m, nx)])
    vals = np.concatenate([inst.etc.ravel(), -np.ones(m)])
    a_ub = coo_matrix((vals, (rows, cols)), shape=(m, nx + 1)).tocsc()
    b_ub = np.zeros(m)  # ready times left out: the bound below ignores them anyway
    a_eq = coo_matrix((np.ones(nx), (np.repeat(np.arange(t), m), np.arange(nx))), shape=(t, nx + 1)).tocsc()
    c = np.zeros(nx + 1)
    c[-1] = 1.0
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(t), bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"{inst.name}: LP relaxation failed ({res.message})")
    w = np.clip(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0, None)
    w = w / w.sum() if w.sum() > 0 else np.full(m, 1.0 / m)
    bound = float((inst.etc * w).min(axis=1).sum())
    if return_x:
        return bound, res.x[:nx].reshape(t, m), float(res.fun)
    return bound


# ---- CP-SAT ------------------------------------------------------------------------------
def _allowed(inst: MappingInstance, hint: np.ndarray, sc: Scaled | None) -> np.ndarray:
    """(t, m) bool: pairs that a mapping at least as good as ``hint`` may use."""
    if sc is None:
        ub = inst.value(hint)
        return inst.etc + inst.ready <= ub * (1 + 1e-12)
    ub = sc.makespan(hint)
    return sc.etc + sc.ready <= ub


def _cpsat(inst, sc: Scaled, hint, allowed, lb_int, time_limit, threads, seed):
    t, m = inst.etc.shape
    model = cp_model.CpModel()
    ub = sc.makespan(hint)
    cmax = model.new_int_var(min(lb_int, ub), ub, "C")
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
    model.minimize(cmax)
    for (i, j), v in x.items():
        model.add_hint(v, int(hint[i] == j))
    model.add_hint(cmax, ub)
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = max(float(time_limit), 0.01)
    s.parameters.num_workers = max(int(threads), 1)
    s.parameters.random_seed = int(seed)
    code = s.solve(model)
    status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible", cp_model.UNKNOWN: "timeout"}.get(code)
    if status is None:  # INFEASIBLE / MODEL_INVALID: the hint is a solution, so a bug
        raise RuntimeError(f"{inst.name}: CP-SAT says {s.status_name(code)} ({model.validate()})")
    assign = None
    if status in ("optimal", "feasible"):
        assign = np.empty(t, dtype=np.int64)
        for (i, j), v in x.items():
            if s.boolean_value(v):
                assign[i] = j
    bound = float(s.best_objective_bound) if status != "timeout" else float(lb_int)
    return status, assign, bound, {"solver": "CP-SAT", "solver_status": s.status_name(code),
                                   "branches": int(s.num_branches)}


# ---- MILP through PuLP --------------------------------------------------------------------
def _pulp_model(inst, coef: np.ndarray, ready: np.ndarray, allowed, lb, ub, hint):
    """The model in PuLP (float coefficients, continuous C in [lb, ub])."""
    t, m = inst.etc.shape
    prob = pulp.LpProblem("mapping", pulp.LpMinimize)
    cmax = prob.add_variable("C", lb, ub, cat=pulp.LpContinuous)
    prob += pulp.LpAffineExpression([(cmax, 1)])
    x = {}
    wi, wj = len(str(t - 1)), len(str(m - 1))
    for i in range(t):
        for j in np.flatnonzero(allowed[i]):
            x[i, int(j)] = prob.add_variable(f"x{i:0{wi}d}_{int(j):0{wj}d}", 0, 1, cat=pulp.LpInteger)
    for i in range(t):
        prob += (pulp.LpAffineExpression([(x[i, j], 1) for j in range(m) if (i, j) in x]) == 1, f"a{i}")
    us = {}
    for j in range(m):
        terms = [(x[i, j], float(coef[i, j])) for i in range(t) if (i, j) in x]
        if not terms:
            continue
        if ready[j] > 0:
            u = us[j] = prob.add_variable(f"u{j:0{wj}d}", 0, 1, cat=pulp.LpInteger)
            terms.append((u, float(ready[j])))
            for i in range(t):
                if (i, j) in x:
                    prob += (pulp.LpAffineExpression([(x[i, j], 1), (u, -1)]) <= 0, f"u{i}_{j}")
        prob += (pulp.LpAffineExpression(terms + [(cmax, -1)]) <= 0, f"m{j}")
    start = [(v, float(hint[i] == j)) for (i, j), v in x.items()]
    start += [(u, float(np.any(hint == j))) for j, u in us.items()]
    return prob, x, cmax, start


def _milp(inst, method, hint, lb_true, time_limit, threads, seed):
    """CBC or HiGHS on the float model normalised so that the start's makespan
    is :data:`MILP_NORM`; returns status, mapping, bound in true units, info."""
    ub_true = inst.value(hint)
    unit = MILP_NORM / ub_true
    coef, ready = inst.etc * unit, inst.ready * unit
    ub, lb = MILP_NORM, min(MILP_NORM, lb_true * unit)
    allowed = _allowed(inst, hint, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        prob, x, cmax, start = _pulp_model(inst, coef, ready, allowed, lb, ub, hint)
        if method == "milp-highs":
            solver = _HiGHSWithStart(start, msg=False, timeLimit=max(float(time_limit), 0.01),
                                     threads=int(threads), gapRel=0, random_seed=int(seed))
            _highs_scheduler(int(threads))
            with _stdout_to_stderr():
                prob.solve(solver)
            h = prob.solverModel
            ms, info = h.getModelStatus(), h.getInfo()
            S = highspy.HighsModelStatus
            has_sol = info.primal_solution_status == 2
            if ms == S.kOptimal:
                status = "optimal"
            elif ms in (S.kTimeLimit, S.kInterrupt, S.kIterationLimit, S.kSolutionLimit, S.kUnknown):
                status = "feasible" if has_sol else "timeout"
            else:
                raise RuntimeError(f"{inst.name}: HiGHS says {h.modelStatusToString(ms)}")
            raw = info.mip_dual_bound
            details = {"solver": "HiGHS", "solver_status": h.modelStatusToString(ms),
                       "nodes": int(info.mip_node_count)}
        else:
            for v, val in start:
                v.setInitialValue(val)
            cmax.setInitialValue(ub)
            status, raw, result = run_cbc(prob, time_limit, seed, warm=True)  # serial CBC (exact/_binary.py)
            if raw is not None:
                raw -= 5e-4  # CBC prints 3 decimals
            details = {"solver": "CBC", "threads": 1, "solver_status": result}
    assign = None
    if status in ("optimal", "feasible"):
        assign = np.full(inst.n, -1, dtype=np.int64)
        for (i, j), v in x.items():
            if (v.varValue or 0.0) > 0.5:
                assign[i] = j
        if (assign < 0).any():  # a solver returned a non-integral point: keep the hint
            assign, status = None, "feasible"
    bound = None
    if raw is not None and math.isfinite(raw):
        bound = (raw - _TOL * max(1.0, abs(raw))) / unit
    details["objective_units"] = "float"
    return status, assign, bound, details


# ---- the solve entry point -------------------------------------------------------------------
def solve_mapping(inst: MappingInstance, method: str, *, time_limit: float, threads: int = 1, seed: int = 0,
                  hint=None) -> Result:
    """Minimum makespan of a mapping instance with backend ``method`` (cpsat,
    milp-cbc, milp-highs); start / hint Min-Min unless ``hint`` is given.
    ``bound``: a proven lower bound on the true (unscaled) optimum; status
    ``optimal`` only when the returned mapping's true makespan meets it."""
    if method not in METHODS:
        raise KeyError(f"unknown exact method {method!r}; known: {', '.join(METHODS)}")
    t0 = time.perf_counter()
    start = minmin_start(inst) if hint is None else np.asarray(hint, dtype=np.int64)
    if start.shape != (inst.n,) or start.min() < 0 or start.max() >= inst.k:
        raise ValueError(f"{inst.name}: hint must give each of {inst.n} tasks a machine in 0..{inst.k - 1}")
    lb = inst.lower_bound()
    start_value = inst.value(start)
    info = {"start_makespan": start_value, "lower_bound": lb}
    if start_value <= lb * (1 + 1e-12):
        return Result(inst.kind, method, tuple(start.tolist()), start_value, "optimal",
                      time.perf_counter() - t0, start_value, {**info, "solver": "none",
                                                               "note": "start meets the lower bound"})
    left = time_limit - (time.perf_counter() - t0)
    if method == "cpsat":
        sc = scaled(inst)
        lb_int = math.ceil(lb * sc.scale * (1 - 1e-12) - 1e-9) if sc.exact else 0
        status, assign, raw, details = _cpsat(inst, sc, start, _allowed(inst, start, sc), lb_int, left,
                                              threads, seed)
        bound = math.ceil(raw - _TOL) / sc.scale
        details["scaling"] = "exact" if sc.exact else "floor"
        details["scale"] = sc.scale
    else:
        status, assign, bound, details = _milp(inst, method, start, lb, left, threads, seed)
    if assign is None:
        assign = start
    value = inst.value(assign)
    if value > start_value:  # never worse than the start the solver was given
        assign, value = start, start_value
    bound = lb if bound is None else max(bound, lb)
    if status == "optimal" and details.get("scaling") == "floor" and value > bound * (1 + 1e-9):
        status = "feasible"  # proven for the rounded data only
    if status == "optimal" or value <= bound * (1 + 1e-12):
        status, bound = "optimal", value
    elif status == "timeout":
        status = "feasible"  # the start mapping is a solution
    return Result(inst.kind, method, tuple(int(j) for j in assign), value, status, time.perf_counter() - t0,
                  min(bound, value), {**info, **details})


def _make(method: str):
    def method_func(inst, *, time_limit: float, threads: int = 1, **params) -> Result:
        return solve_mapping(inst, method, time_limit=time_limit, threads=threads, **params)

    method_func.__name__ = method_func.__qualname__ = f"mapping_{method.replace('-', '_')}"
    method_func.__doc__ = (f"Minimum makespan mapping, {method} (seed 002 ETC mapping; "
                           f"see exact.mapping.solve_mapping)")
    return register("mapping", method, kind="exact")(method_func)


mapping_cpsat = _make("cpsat")
mapping_milp_cbc = _make("milp-cbc")
mapping_milp_highs = _make("milp-highs")
