"""The neutral 0-1 model shared by the exact methods and its three backends.

A problem family states its exact model once as a :class:`BinaryModel`
(binary variables, integer linear rows, an integer objective with its
scale) and hands it to one backend through :func:`run_model`:

``cpsat``       OR-Tools CP-SAT,
``milp-cbc``    CBC through PuLP (``PULP_CBC_CMD``, a subprocess),
``milp-highs``  HiGHS through PuLP (``pulp.HiGHS``, highspy in-process).

:func:`true_bound` turns the backend's bound into a valid bound in true
objective units.  Used by ``exact/packing.py`` (packing, epochs),
``exact/knapsack.py`` and ``exact/assignment.py``; moved here unchanged from
``exact/packing.py``, which re-exports every name.
"""
from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import tempfile
import warnings
from dataclasses import dataclass, field

import highspy
import numpy as np
import pulp
from ortools.sat.python import cp_model

from instances.registry import register

METHODS = ("cpsat", "milp-cbc", "milp-highs")

#: CP-SAT objective coefficients stay below this divided by the variable count.
INT_LIMIT = 2**50
#: MILP backends get the integer objective only while its coefficients stay below this.
MILP_INT_LIMIT = 2**31
_TOL = 1e-6  # solver bounds are rounded to the integer grid with this slack


# ---- the neutral 0-1 model ---------------------------------------------------------
@dataclass
class BinaryModel:
    """A 0-1 program: ``sense`` (``"max"``/``"min"``) of ``objective @ x``.

    ``rows`` are ``(index, coef, lo, hi)`` with ``lo <= coef @ x[index] <= hi``
    (``None`` = unbounded).  ``objective`` holds integers; the true objective
    is ``objective @ x / scale``.  ``exact`` says whether that is exact;
    otherwise ``objective`` is ``round(scale * weights)`` and ``weights`` the
    true float coefficients (used by the MILP backends).  ``hint`` is a
    feasible 0-1 vector or ``None``.
    """

    n_vars: int
    sense: str
    objective: list[int]
    scale: float = 1.0
    exact: bool = True
    weights: np.ndarray | None = None
    rows: list[tuple[np.ndarray, np.ndarray, int | None, int | None]] = field(default_factory=list)
    hint: np.ndarray | None = None

    def add_row(self, index, coef, lo=None, hi=None) -> None:
        index, coef = np.asarray(index, dtype=np.int64), np.asarray(coef, dtype=np.int64)
        keep = coef != 0
        self.rows.append((index[keep], coef[keep], lo, hi))


@dataclass
class Outcome:
    """What a backend returns: a status, the 0-1 values (``None`` without a
    solution), the raw objective bound in the units the backend optimised
    (``units``: ``"int"`` = the integer objective, ``"float"`` = ``weights``)
    and solver details."""

    status: str
    x: np.ndarray | None
    bound: float | None
    units: str
    info: dict


def integer_objective(weights: np.ndarray, exact_scale: int | None, n: int):
    """``(coefs, scale, exact)`` with ``coefs = weights * scale`` in integers.

    Uses ``exact_scale`` when given and small enough (``max|coef| * n <
    2**50``); otherwise the largest scale keeping that limit, rounded
    (``exact=False``).  Cost O(n).
    """
    w = np.asarray(weights, dtype=float)
    top = float(np.abs(w).max()) if w.size else 0.0
    if top == 0.0:
        return [0] * w.size, 1.0, True
    if exact_scale is not None and top * exact_scale * max(n, 1) < INT_LIMIT:
        return [int(round(v * exact_scale)) for v in w], float(exact_scale), True
    scale = float(2 ** math.floor(math.log2(INT_LIMIT / (top * max(n, 1)))))
    return [int(round(v * scale)) for v in w], scale, False


def profit_scale(profit: np.ndarray) -> int | None:
    """Smallest power of ten making every profit integral up to 1e-9, or None."""
    for p in range(10):
        s = 10**p
        if np.all(np.abs(profit * s - np.round(profit * s)) <= 1e-9 * s):
            return s
    return None



# ---- backends ----------------------------------------------------------------------
def _cpsat(model: BinaryModel, time_limit: float, threads: int, seed: int) -> Outcome:
    """Solve with CP-SAT (``num_workers = threads``, ``random_seed = seed``)."""
    m = cp_model.CpModel()
    x = [m.new_bool_var(f"x{i}") for i in range(model.n_vars)]
    for idx, coef, lo, hi in model.rows:
        expr = cp_model.LinearExpr.weighted_sum([x[i] for i in idx], coef.tolist())
        m.add_linear_constraint(expr, cp_model.INT_MIN if lo is None else lo,
                                cp_model.INT_MAX if hi is None else hi)
    obj = cp_model.LinearExpr.weighted_sum(x, model.objective)
    m.maximize(obj) if model.sense == "max" else m.minimize(obj)
    if model.hint is not None:
        for v, h in zip(x, model.hint):
            m.add_hint(v, int(h))
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = max(float(time_limit), 0.0)
    s.parameters.num_workers = max(int(threads), 1)
    s.parameters.random_seed = int(seed)
    code = s.solve(m)
    status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
              cp_model.INFEASIBLE: "infeasible", cp_model.UNKNOWN: "timeout"}.get(code)
    if status is None:
        raise RuntimeError(f"CP-SAT: {s.status_name(code)} ({m.validate()})")
    vals = None
    if status in ("optimal", "feasible"):
        vals = np.array([int(s.boolean_value(v)) for v in x], dtype=np.int64)
    bound = float(s.best_objective_bound) if status != "infeasible" else None
    return Outcome(status, vals, bound, "int", {"solver": "CP-SAT", "solver_status": s.status_name(code),
                                                "branches": int(s.num_branches)})


def _milp_units(model: BinaryModel) -> str:
    """Integer objective for the MILP backends when exact and moderate, else floats."""
    top = max((abs(c) for c in model.objective), default=0)
    return "int" if model.exact and top < MILP_INT_LIMIT else "float"


def _pulp_problem(model: BinaryModel, units: str):
    """The model as a ``pulp.LpProblem`` and its variables."""
    sense = pulp.LpMaximize if model.sense == "max" else pulp.LpMinimize
    prob = pulp.LpProblem("epochbench", sense)
    width = len(str(max(model.n_vars - 1, 0)))
    x = [prob.add_variable(f"x{i:0{width}d}", 0, 1, cat=pulp.LpInteger) for i in range(model.n_vars)]
    coefs = model.objective if units == "int" else [float(w) for w in model.weights]
    prob += pulp.LpAffineExpression([(v, c) for v, c in zip(x, coefs) if c])
    for r, (idx, coef, lo, hi) in enumerate(model.rows):
        expr = pulp.LpAffineExpression([(x[i], int(c)) for i, c in zip(idx, coef)])
        if lo is not None and lo == hi:
            prob += (expr == lo, f"r{r}")
            continue
        if hi is not None:
            prob += (expr <= hi, f"r{r}u")
        if lo is not None:
            prob += (expr >= lo, f"r{r}l")
    return prob, x


def _pulp_values(x) -> np.ndarray:
    return np.array([int((v.varValue or 0.0) > 0.5) for v in x], dtype=np.int64)


_CBC_BOUND = re.compile(r"^(?:Lower|Upper) bound:\s*(\S+)", re.M)
_CBC_RESULT = re.compile(r"^Result - (.*)$", re.M)


def run_cbc(prob, time_limit: float, seed: int, *, warm: bool) -> tuple[str, float | None, str]:
    """Solve the PuLP problem ``prob`` with serial CBC (PuLP's bundled
    binary).  Returns (status, the bound as CBC's log prints it (3 decimals;
    ``None`` if it printed none), CBC's result line).  CBC always runs
    serially: the bundled CBC 2.10.3 with ``-threads N`` (N >= 1) stalls now
    and then for about 10 s even on tiny models, past its time limit (7% of
    runs with N = 1)."""
    fd, log_path = tempfile.mkstemp(prefix="epochbench-cbc-", suffix=".log")
    os.close(fd)
    try:
        solver = pulp.PULP_CBC_CMD(msg=False, timeLimit=max(float(time_limit), 0.01), threads=None,
                                   gapRel=0, logPath=log_path, warmStart=warm,
                                   options=[f"randomCbcSeed {int(seed) + 1}"])
        prob.solve(solver)
        with open(log_path) as fh:
            log = fh.read()
    finally:
        os.unlink(log_path)
    status = {pulp.LpSolutionOptimal: "optimal", pulp.LpSolutionIntegerFeasible: "feasible",
              pulp.LpSolutionInfeasible: "infeasible"}.get(prob.sol_status, "timeout")
    found, result = _CBC_BOUND.findall(log), _CBC_RESULT.findall(log)
    return (status, float(found[-1]) if found else None,
            result[-1].strip() if result else pulp.LpSolution[prob.sol_status])


def _cbc(model: BinaryModel, time_limit: float, threads: int, seed: int) -> Outcome:
    """Solve with CBC (:func:`run_cbc`, always serial); the bound read from
    CBC's log is widened by 5e-4 towards safety (it prints 3 decimals)."""
    units = _milp_units(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        prob, x = _pulp_problem(model, units)
        warm = model.hint is not None
        if warm:
            for v, h in zip(x, model.hint):
                v.setInitialValue(int(h))
        status, raw, result = run_cbc(prob, time_limit, seed, warm=warm)
    bound = None
    if raw is not None:
        bound = raw + 5e-4 if model.sense == "max" else raw - 5e-4
    vals = _pulp_values(x) if status in ("optimal", "feasible") else None
    return Outcome(status, vals, bound, units, {"solver": "CBC", "threads": 1, "solver_status": result})


@contextlib.contextmanager
def _stdout_to_stderr():
    """HiGHS 1.12 prints some MIP diagnostics to file descriptor 1 even with
    output off; send them to stderr so that ``solve --json`` stays one object."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


_HIGHS_THREADS: list[int] = []  # thread count of HiGHS's global scheduler, once set


def _highs_scheduler(threads: int) -> None:
    """HiGHS keeps one global thread pool: a run asking another thread count
    fails unless the pool is reset first (highspy 1.12)."""
    if _HIGHS_THREADS and _HIGHS_THREADS[0] != threads:
        highspy.Highs.resetGlobalScheduler(True)
    _HIGHS_THREADS[:] = [threads]


class _HiGHSWithStart(pulp.HiGHS):
    """``pulp.HiGHS`` that hands HiGHS a starting solution before the run."""

    def __init__(self, start=None, **kwargs):
        super().__init__(**kwargs)
        self.start = start or []  # (LpVariable, value) pairs

    def callSolver(self, lp):
        pairs = [(v.index, float(val)) for v, val in self.start if getattr(v, "index", None) is not None]
        if pairs:
            idx, val = zip(*pairs)
            lp.solverModel.setSolution(len(idx), np.array(idx, dtype=np.int32), np.array(val))
        lp.solverModel.run()


def run_highs(prob, start, time_limit: float, threads: int, seed: int, where: str = "HiGHS"
              ) -> tuple[str, float | None, dict]:
    """Solve the PuLP problem ``prob`` with HiGHS in-process (``start``:
    [(variable, value)] warm start or ``None``).  Returns (status, the dual
    bound in the model's own sense, ``None`` if not finite; details); status
    and bound come from the highspy model PuLP leaves on ``prob.solverModel``."""
    solver = _HiGHSWithStart(start, msg=False, timeLimit=max(float(time_limit), 0.01), threads=int(threads),
                             gapRel=0, random_seed=int(seed))
    _highs_scheduler(int(threads))
    with _stdout_to_stderr():
        prob.solve(solver)
    h = prob.solverModel
    ms, info = h.getModelStatus(), h.getInfo()
    S = highspy.HighsModelStatus
    has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
    if ms == S.kOptimal:
        status = "optimal"
    elif ms in (S.kInfeasible, S.kUnboundedOrInfeasible):
        status = "infeasible"
    elif ms in (S.kTimeLimit, S.kInterrupt, S.kIterationLimit, S.kSolutionLimit, S.kObjectiveBound,
                S.kObjectiveTarget, S.kUnknown):
        status = "feasible" if has_sol else "timeout"
    else:
        raise RuntimeError(f"{where}: HiGHS says {h.modelStatusToString(ms)} "
                           f"(pulp status {pulp.LpStatus[prob.status]})")
    bound = info.mip_dual_bound
    bound = None if bound is None or not math.isfinite(bound) else bound
    return status, bound, {"solver": "HiGHS", "solver_status": h.modelStatusToString(ms),
                           "nodes": int(info.mip_node_count)}


def _highs(model: BinaryModel, time_limit: float, threads: int, seed: int) -> Outcome:
    """Solve with HiGHS in-process (:func:`run_highs`)."""
    units = _milp_units(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        prob, x = _pulp_problem(model, units)
        start = None if model.hint is None else list(zip(x, model.hint.tolist()))
        status, bound, details = run_highs(prob, start, time_limit, threads, seed)
    if bound is not None and model.sense == "max":
        bound = -bound
    vals = _pulp_values(x) if status in ("optimal", "feasible") else None
    return Outcome(status, vals, bound, units, details)


BACKENDS = {"cpsat": _cpsat, "milp-cbc": _cbc, "milp-highs": _highs}


def run_model(model: BinaryModel, method: str, time_limit: float, threads: int, seed: int = 0) -> Outcome:
    """Solve ``model`` with backend ``method`` (one of :data:`METHODS`)."""
    try:
        backend = BACKENDS[method]
    except KeyError:
        raise KeyError(f"unknown exact method {method!r}; known: {', '.join(METHODS)}") from None
    return backend(model, time_limit, threads, seed)


def true_bound(model: BinaryModel, out: Outcome) -> tuple[float | None, float]:
    """``(bound, slack)``: the backend's bound in true objective units, made
    valid (rounded onto the integer grid where the objective is integral,
    widened by the rounding error where it is not), and the largest error the
    objective scaling could hide (0 when exact)."""
    if out.bound is None:
        return None, 0.0
    sign = 1.0 if model.sense == "max" else -1.0
    if out.units == "float":
        b = out.bound + sign * _TOL * max(1.0, abs(out.bound))
        return b, _TOL * max(1.0, abs(out.bound))
    b = math.floor(out.bound + _TOL) if sign > 0 else math.ceil(out.bound - _TOL)
    if model.exact:
        return b / model.scale, 0.0
    slack = 0.5 * model.n_vars / model.scale
    return b / model.scale + sign * slack, slack


def status_info(model: BinaryModel, out: Outcome, slack: float) -> dict:
    """The backend's details plus the objective units, and a note when the
    objective was scaled inexactly (``slack`` from :func:`true_bound`)."""
    info = {**out.info, "objective_units": out.units}
    if not model.exact or out.units == "float":
        info["objective_scaling"] = f"inexact; optimal means within {slack:.3g}"
    return info


def register_exact(family: str, solve) -> dict:
    """Register ``solve(inst, method, *, time_limit, threads, **params)`` as
    the exact methods :data:`METHODS` of ``family``; returns the registered
    functions by name (``{family}_{method}``, e.g. ``packing_milp_highs``)
    for the caller's namespace.  Each one's docstring is the first line of
    ``solve``'s plus the method."""
    def make(method: str):
        def method_func(inst, *, time_limit: float, threads: int = 1, **params):
            return solve(inst, method, time_limit=time_limit, threads=threads, **params)

        method_func.__name__ = method_func.__qualname__ = f"{family}_{method.replace('-', '_')}"
        method_func.__doc__ = f"{solve.__doc__.splitlines()[0]} [{method}; see {solve.__name__}]"
        return register(family, method, kind="exact")(method_func)

    return {f.__name__: f for f in map(make, METHODS)}
