"""The neutral 0-1 model shared by the exact methods and its three backends.

A problem family states its exact model once as a :class:`BinaryModel`
(binary variables, integer linear rows, an integer objective with its
scale) and hands it to one backend through :func:`run_model`:

``cpsat``       OR-Tools CP-SAT (model written into its proto),
``milp-cbc``    CBC through PuLP (a subprocess, stopped at the deadline),
``milp-highs``  HiGHS in-process (highspy; the model handed over in whole arrays).

Honest results: the time limit is wall time from the call, model building
and the solver hand-over included (each backend gets what is left, and
gives up before starting the solver once nothing is); a backend that
returns no solution reports no bound (CP-SAT's bound on UNKNOWN is 0, not a
proof); :func:`proven` says ``optimal`` only when the solver proved it or a
proved bound meets the value; :func:`quiet_highs` keeps HiGHS's stray
output out of the terminal.  :func:`true_bound` turns the backend's bound
into a valid bound in true objective units.  Used by ``exact/packing.py``
(packing, epochs), ``exact/knapsack.py``, ``exact/assignment.py`` and (the
CBC / HiGHS runners) ``exact/mapping.py``; ``exact/packing.py`` re-exports
the names it used to define.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import re
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from epochbench.instances.lazy import lazy_module
from epochbench.instances.registry import forwards, register

from .starts import beats, better

# the solvers load on first use: registering or listing methods imports none of them
highspy = lazy_module("highspy")
pulp = lazy_module("pulp")
cp_model = lazy_module("ortools.sat.python.cp_model")

METHODS = ("cpsat", "milp-cbc", "milp-highs")

#: CP-SAT objective coefficients stay below this divided by the variable count.
INT_LIMIT = 2**50
#: MILP backends get the integer objective only while its coefficients stay below this.
MILP_INT_LIMIT = 2**31
_TOL = 1e-6  # solver bounds are rounded to the integer grid with this slack
#: largest objective-scaling error (relative to the value) under which a solver's "optimal" on the
#: scaled model is reported as optimal (the solvers' own tolerances are of this order)
TRUSTED_SLACK = 1e-6


# ---- the neutral 0-1 model ---------------------------------------------------------
@dataclass
class BinaryModel:
    """A 0-1 program: ``sense`` (``"max"``/``"min"``) of ``objective @ x``.

    ``rows`` are ``(index, coef, lo, hi)`` with ``lo <= coef @ x[index] <= hi``
    (``None`` = unbounded).  ``objective`` holds integers; the true objective
    is ``objective @ x / scale``.  ``exact`` says whether that is exact;
    otherwise ``objective`` is ``round(scale * weights)`` and ``weights`` the
    true float coefficients (used by the MILP backends).  ``hint`` is a
    feasible 0-1 vector or ``None``.  ``weight_scale``: a power of two the
    MILP backends multiply ``weights`` by when they optimise in floats
    (exact; :func:`milp_weight_scale`: profits far below 1 would otherwise
    sink under the solvers' absolute tolerances), undone by :func:`true_bound`.
    """

    n_vars: int
    sense: str
    objective: list[int]
    scale: float = 1.0
    exact: bool = True
    weights: np.ndarray | None = None
    rows: list[tuple[np.ndarray, np.ndarray, int | None, int | None]] = field(default_factory=list)
    hint: np.ndarray | None = None
    weight_scale: float = 1.0

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
    (``exact=False``).  At ``exact_scale`` the weights are integral only to
    :data:`PROFIT_TOL` (:func:`profit_scale`): one rounded by more than
    floating-point error (1e-14 relative) makes ``exact`` False too, so that
    the rounding's slack is said and counted (:func:`true_bound`; profits
    1000 + i 1e-10 rounded together, and four methods claimed four
    different optima).  Cost O(n).
    """
    w = np.asarray(weights, dtype=float)
    top = float(np.abs(w).max()) if w.size else 0.0
    if top == 0.0:
        return [0] * w.size, 1.0, True
    if exact_scale is not None and top * exact_scale * max(n, 1) < INT_LIMIT:
        ws = w * exact_scale
        exact = bool(np.all(np.abs(ws - np.rint(ws)) <= 1e-14 * np.maximum(np.abs(ws), 1.0)))
        return _rounded(ws), float(exact_scale), exact
    product = top * max(n, 1)
    if not math.isfinite(INT_LIMIT / product):     # no float scale reaches the integers (it overflowed deep inside)
        raise ValueError(f"the objective's largest weight {top!r} is too small for an exact method, which scales "
                         f"the weights onto integers up to 2**50 (largest weight x {max(n, 1)} items must be at "
                         f"least {INT_LIMIT / np.finfo(float).max:.1e}); scale the weights up")
    if math.isfinite(product):
        scale = float(2 ** math.floor(math.log2(INT_LIMIT / product)))
    else:                                          # n weights near the float limit: their product overflows
        scale = float(2.0 ** math.floor(math.log2(INT_LIMIT) - math.log2(top) - math.log2(max(n, 1))))
    return _rounded(w * scale), scale, False


def _rounded(v: np.ndarray) -> list[int]:
    """``[int(round(x)) for x in v]`` (half to even, as Python's ``round``)
    in one numpy pass: the values are below :data:`INT_LIMIT`, exact in
    int64."""
    return np.rint(v).astype(np.int64).tolist()


#: a profit ``p`` is integral at scale ``s`` when ``|p s - round(p s)| <= PROFIT_TOL * s * min(|p|, 1)``
PROFIT_TOL = 1e-9


def profit_scale(profit: np.ndarray) -> int | None:
    """Smallest power of ten ``s`` making every profit integral up to
    :data:`PROFIT_TOL` of its own size (of 1 from 1 on), or None.

    The tolerance is relative below 1 (a profit of 1e-9 is not "integral"
    at scale 1, as it was with an absolute 1e-9: it rounded to 0), so a
    positive profit never rounds to 0 and each is represented to 1e-9 of
    itself; profits of 1 and more keep the absolute 1e-9.  The powers go up
    to 1e9, further for profits below 1 (down to the smallest's own
    digits) while ``max * s`` stays an integer in floating point; past
    that, None: no decimal scale (the callers then scale by a power of two
    and say the objective is inexact).  Cost O(n) per power tried."""
    p = np.abs(np.asarray(profit, dtype=float)).ravel()
    pos = p[p > 0]
    if pos.size == 0:
        return 1
    top, low = float(pos.max()), float(pos.min())
    tol = PROFIT_TOL * np.minimum(p, 1.0)
    last = 9 + max(0, math.ceil(-math.log10(low)))
    for e in range(last + 1):
        if e > 9 and (e > 300 or top * 10.0**e >= 2.0**53):   # no integer representation past here
            return None
        s = 10**e
        with np.errstate(over="ignore", invalid="ignore"):     # an overflow (inf, nan) fails the test
            ps = p * float(s)
            if np.all(np.abs(ps - np.round(ps)) <= tol * s):
                return s
    return None


def milp_weight_scale(weights: np.ndarray) -> float:
    """The power of two the MILP backends multiply their float objective by
    (:attr:`BinaryModel.weight_scale`; exact in floating point): the
    largest ``|weight|`` into [1, 2) when it is below 1; when it is
    :data:`MILP_INT_LIMIT` or more, down towards [2**20, 2**21) but no
    further than keeps the smallest nonzero ``|weight|`` at 1 or more; else
    1.  CBC and HiGHS stop at an absolute gap of about 1e-6, which proves
    nothing about profits of 1e-9; profits all near 1e15 drove CBC to "No
    Solution Exists" on a knapsack whose empty selection is feasible, and
    scaled below 1 the small profits beside one huge one would sink under
    the same tolerance (a 1e12 preference on a pair no matching uses cost
    both MILPs their proof).  O(n)."""
    w = np.abs(np.asarray(weights, dtype=float))
    top = float(w.max()) if w.size else 0.0
    if 0.0 < top < 1.0:
        return math.ldexp(1.0, min(1 - math.frexp(top)[1], 1000))   # top = m 2**k, m in [0.5, 1): 2**(1 - k)
    if MILP_INT_LIMIT <= top < math.inf:
        low = float(w[w > 0].min())
        shift = max(21 - math.frexp(top)[1], 1 - math.frexp(low)[1])    # top near 2**21, low at least 1
        return math.ldexp(1.0, min(shift, 0))
    return 1.0


# ---- wall-time budget --------------------------------------------------------------
def deadline_after(time_limit: float) -> float:
    """The ``time.perf_counter()`` instant ``time_limit`` seconds from now:
    every exact method counts its limit from its own start (model building,
    bounds and the solver hand-over included)."""
    return time.perf_counter() + float(time_limit)


def time_left(deadline: float) -> float:
    """Seconds left until ``deadline`` (negative once past it)."""
    return deadline - time.perf_counter()


def no_time(units: str, solver: str) -> Outcome:
    """The :class:`Outcome` of a backend whose time ran out before the solver
    could start: no solution, no bound."""
    return Outcome("timeout", None, None, units, {"solver": solver, "solver_status": "not started",
                                                  "note": "time limit reached before the solver started"})


def no_solution(out: Outcome) -> str:
    """Why ``out`` has no solution, for a result's note: the solver's crash
    (``solver_error``), the backend's ``reason`` for not running, else the
    time limit."""
    reason, error = out.info.get("reason"), out.info.get("solver_error")
    if error:
        return f"the solver crashed ({error})"
    return f"the solver did not run ({reason})" if reason else "no solver solution in time"


# ---- backends ----------------------------------------------------------------------
def cpsat_model(model: BinaryModel, deadline: float = math.inf) -> cp_model.CpModel | None:
    """``model`` as a CP-SAT model, written into its proto directly: variable
    ``i`` is proto variable ``i``.  About 100 times faster than the
    expression API on large models (160,000 variables: 0.05 s against
    1.7 s), which matters because building counts against the time limit;
    ``None`` when ``deadline`` (``time.perf_counter()`` seconds) passes
    while the rows are written (looked at every 1024 rows: 64,000 rows
    take 0.3 s).  Cost O(n + nonzeros)."""
    m = cp_model.CpModel()
    p = m.proto
    if model.n_vars:
        var = p.variables.add()
        var.domain.extend([0, 1])
        p.variables.extend([var] * (model.n_vars - 1))
    for r, (idx, coef, lo, hi) in enumerate(model.rows):
        if r % 1024 == 0 and time.perf_counter() >= deadline:
            return None
        row = p.constraints.add().linear
        row.vars.extend(idx.tolist())
        row.coeffs.extend(coef.tolist())
        row.domain.extend([cp_model.INT_MIN if lo is None else int(lo), cp_model.INT_MAX if hi is None else int(hi)])
    sign = -1 if model.sense == "max" else 1  # the proto minimises; a maximum is scaled by -1
    p.objective.vars.extend(range(model.n_vars))
    p.objective.coeffs.extend([sign * int(c) for c in model.objective])
    p.objective.scaling_factor = float(sign)
    if model.hint is not None:
        p.solution_hint.vars.extend(range(model.n_vars))
        p.solution_hint.values.extend(np.asarray(model.hint, dtype=np.int64).tolist())
    return m


def cpsat_solve(solver, model) -> int:
    """``solver.solve(model)`` that a Ctrl-C stops as it stops Python: the
    search ends at once and ``KeyboardInterrupt`` is raised, so that no
    search cut short is taken for an answer.

    CP-SAT's own SIGINT handling (``catch_sigint_signal``, on by default)
    ends the search and returns its best solution as if the time were up,
    then leaves SIGINT to the operating system's default: a cut-short
    solve was recorded as a real one, and the next Ctrl-C killed the
    process without Python's clean-up.  It is switched off here.  In the
    main thread the solve runs on a solving thread of this process
    (:func:`_solving_thread`) while the main thread waits, looking at
    pending signals every 50 ms (a signal that another thread received
    wakes no waiter); then, whatever ended the wait (``KeyboardInterrupt``,
    ``SystemExit``, a test's timeout), the search is asked to stop
    (``stop_search``, again until it has: a stop sent before the solver
    has started is lost) and the exception raised again.  Other threads
    (workers), which receive no signals, solve in place, and so does a
    solve started while the solving thread is busy (from a signal handler
    that interrupted the main thread's wait: it would queue behind the
    solve it interrupted).  Returns the solver's status code.

    Notes
    -----
    One thread, kept (idle, it waits for work holding no lock): CP-SAT
    on a fresh thread costs about 0.6 ms more a solve (measured on a
    one-variable model: 0.6 against 1.3 ms), as much as a small epoch's
    whole solve; on a kept one the cost is within noise.
    """
    solver.parameters.catch_sigint_signal = False
    if threading.current_thread() is not threading.main_thread() or _SOLVING:
        return solver.solve(model)
    _SOLVING.append(True)
    job = None
    try:
        job = _submit(solver, model)
        while True:
            try:                        # a signal that another thread received wakes no waiter: look at
                return job.result(timeout=0.05)     # the signals every 50 ms (Python runs their handlers here)
            except _futures().TimeoutError:
                continue
    except BaseException:
        if job is not None:
            job.cancel()                            # not started yet: it never will
            while not job.done():
                solver.stop_search()
                _futures().wait([job], timeout=0.01)
        raise
    finally:
        _SOLVING.clear()


def _submit(solver, model):
    """The solve handed to the solving thread, SIGINT held back meanwhile
    (where the system can), so that a Ctrl-C cannot land after the solve
    is queued and before :func:`cpsat_solve` holds its future: the solve
    would run to its limit unattended, and the next one queue behind it."""
    import signal
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is not None:
        mask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return _solving_thread().submit(solver.solve, model)
    finally:
        if mask is not None:
            mask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _futures():
    import concurrent.futures
    return concurrent.futures


#: (process id, executor) of :func:`_solving_thread`
_SOLVER_THREAD: list = []
#: non-empty while the main thread waits for the solving thread
_SOLVING: list = []


def _solving_thread():
    """A one-thread executor of this process (made anew in a forked child,
    which inherits the object but not its thread)."""
    if not _SOLVER_THREAD or _SOLVER_THREAD[0][0] != os.getpid():
        _SOLVER_THREAD[:] = [(os.getpid(), _futures().ThreadPoolExecutor(1, thread_name_prefix="cpsat-solve"))]
    return _SOLVER_THREAD[0][1]


#: CP-SAT parameters set from the call (``num_search_workers``: the older name of ``num_workers``;
#: both set gave CP-SAT's MODEL_INVALID)
_FROM_CALL = ("max_time_in_seconds", "num_workers", "num_search_workers", "random_seed")


def set_cpsat_params(target, params: dict | None) -> None:
    """Set CP-SAT parameters by name on ``target`` (a solver's
    ``parameters``): a one-line ``ValueError`` for a name CP-SAT does not
    have, one set from the call (time limit, workers, seed) or a value of the
    wrong type."""
    if params is not None and not isinstance(params, dict):
        raise ValueError(f"solver_params must map CP-SAT parameter names to values, got {params!r}")
    for name, value in (params or {}).items():
        if name in _FROM_CALL:
            raise ValueError(f"CP-SAT parameter {name!r} is set from time_limit, threads and seed")
        if not hasattr(target, name):
            raise ValueError(f"{name!r} is not a CP-SAT parameter")
        try:
            setattr(target, name, value)
        except TypeError:
            raise ValueError(f"CP-SAT parameter {name!r} cannot be {value!r}") from None


def check_solver_params(method: str, solver_params: dict | None) -> None:
    """ValueError unless ``solver_params`` are CP-SAT parameters that
    :func:`set_cpsat_params` accepts (tried on a fresh parameter set, nothing
    solved), given to ``cpsat``: the other backends take none."""
    if solver_params and method != "cpsat":
        raise ValueError(f"solver_params are CP-SAT parameters; {method!r} takes none")
    if solver_params is not None:
        set_cpsat_params(cp_model.CpSolver().parameters, solver_params)


#: from this constraint coefficient on, CP-SAT runs without its presolve's inclusion
#: detection (``presolve_inclusion_work_limit = 0``): with it, CP-SAT 9.15 proved wrong
#: optima on random 0-1 knapsack rows scaled by 1e9 to 1e13 (4 of 300 instances against
#: brute force; 0 of 300 scaled by 1e4 to 1e8) and on 1 of 150 mapping instances with ETC
#: of 1e13; without it, 0 of 600 and 0 of 150
CPSAT_LARGE = 2**26


def cpsat_safeguard(parameters, largest: int) -> None:
    """Turn off CP-SAT's presolve inclusion detection on ``parameters`` when
    the largest constraint coefficient reaches :data:`CPSAT_LARGE`."""
    if largest >= CPSAT_LARGE:
        parameters.presolve_inclusion_work_limit = 0


#: a row whose coefficients sum (in absolute value) to this or more is beyond CP-SAT's
#: integer range: it calls the model invalid ("possible integer overflow")
CPSAT_ROW_LIMIT = 2**62


def _widest_row(model: BinaryModel) -> int:
    """The largest sum of absolute coefficients of a row (Python integers: exact)."""
    return max((sum(abs(int(c)) for c in coef) for _, coef, _, _ in model.rows), default=0)


def _who_solves(model: BinaryModel) -> str:
    """The methods to name for a model a MILP backend is not run on: the
    other backends that take its coefficients, else the specialised ones."""
    others = [name for name, ok in (("cpsat", not _cpsat_refuses(model)),
                                    ("milp-highs", not _beyond(model, HIGHS_LARGE))) if ok]
    if others:
        return " and ".join(others) + (" solve" if len(others) > 1 else " solves") + " such data"
    return "mkp-bb (packing, knapsack) and cg (epochs) solve such data"


def _cpsat_refuses(model: BinaryModel, largest: int | None = None) -> bool:
    """Whether a row of ``model`` is beyond CP-SAT's integer range
    (:data:`CPSAT_ROW_LIMIT`; the exact sum only where the largest
    coefficient makes it possible)."""
    largest = _largest(model) if largest is None else largest
    return largest >= CPSAT_ROW_LIMIT // max(model.n_vars, 1) and _widest_row(model) >= CPSAT_ROW_LIMIT


def _largest(model: BinaryModel) -> int:
    """The largest constraint coefficient of ``model`` (absolute value), in
    one numpy pass over all rows (int64 coefficients: exact)."""
    coefs = [coef for _, coef, _, _ in model.rows if coef.size]
    return int(np.abs(np.concatenate(coefs)).max()) if coefs else 0


def _cpsat(model: BinaryModel, deadline: float, threads: int, seed: int, params: dict | None = None) -> Outcome:
    """Solve with CP-SAT (``num_workers = threads``, ``random_seed = seed``,
    any other ``params`` by name, :func:`set_cpsat_params`; large
    coefficients, :func:`cpsat_safeguard`) until ``deadline``
    (``time.perf_counter()`` seconds), model building included.  CP-SAT's
    ``best_objective_bound`` is kept only with a solution: on UNKNOWN it is
    not a proof (0 for an unsolved maximisation).  OPTIMAL is a proof only
    where that bound meets the solution (the objective is integral): a gap
    limit in ``params`` (``relative_gap_limit``, ``absolute_gap_limit``)
    stops CP-SAT with OPTIMAL short of it, and that is ``feasible``."""
    largest = _largest(model)
    if _cpsat_refuses(model, largest):
        return _not_run("int", "CP-SAT", "a row whose coefficients sum to 2**62 or more, beyond CP-SAT's "
                        f"integer range; {_who_solves(model)}")
    s = cp_model.CpSolver()
    cpsat_safeguard(s.parameters, largest)
    set_cpsat_params(s.parameters, params)
    m = cpsat_model(model, deadline)
    left = time_left(deadline)
    if m is None or left <= 0:
        return no_time("int", "CP-SAT")
    s.parameters.max_time_in_seconds = left
    s.parameters.num_workers = max(int(threads), 1)
    s.parameters.random_seed = int(seed)
    code = cpsat_solve(s, m)
    status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
              cp_model.INFEASIBLE: "infeasible", cp_model.UNKNOWN: "timeout"}.get(code)
    if status is None:
        raise RuntimeError(f"CP-SAT: {s.status_name(code)} ({m.validate()})")
    vals = bound = None
    if status in ("optimal", "feasible"):
        vals = np.asarray(s.response_proto.solution, dtype=np.int64)[:model.n_vars]
        bound = float(s.best_objective_bound)
        if status == "optimal" and abs(float(s.objective_value) - bound) >= 0.5:
            status = "feasible"  # stopped by a gap limit (params): OPTIMAL, its bound short of the solution
    return Outcome(status, vals, bound, "int", {"solver": "CP-SAT", "threads": int(s.parameters.num_workers),
                                                "solver_status": s.status_name(code),
                                                "branches": int(s.num_branches)})


def _milp_units(model: BinaryModel) -> str:
    """Integer objective for the MILP backends when exact and moderate, else floats."""
    top = max((abs(c) for c in model.objective), default=0)
    return "int" if model.exact and top < MILP_INT_LIMIT else "float"


def _pulp_problem(model: BinaryModel, units: str, deadline: float = math.inf):
    """The model as a ``pulp.LpProblem`` and its variables, or ``None`` when
    ``deadline`` passes while it is built (checked every 64 rows)."""
    sense = pulp.LpMaximize if model.sense == "max" else pulp.LpMinimize
    prob = pulp.LpProblem("epochbench", sense)
    width = len(str(max(model.n_vars - 1, 0)))
    x = [prob.add_variable(f"x{i:0{width}d}", 0, 1, cat=pulp.LpInteger) for i in range(model.n_vars)]
    coefs = model.objective if units == "int" else [float(w) * model.weight_scale for w in model.weights]
    prob += pulp.LpAffineExpression([(v, c) for v, c in zip(x, coefs) if c])
    for r, (idx, coef, lo, hi) in enumerate(model.rows):
        if r % 64 == 0 and time_left(deadline) <= 0:
            return None
        expr = pulp.LpAffineExpression([(x[i], int(c)) for i, c in zip(idx, coef)])
        if lo is not None and lo == hi:
            prob += (expr == lo, f"r{r}")
            continue
        if hi is not None:
            prob += (expr <= hi, f"r{r}u")
        if lo is not None:
            prob += (expr >= lo, f"r{r}l")
    return (prob, x) if time_left(deadline) > 0 else None


def _pulp_values(x) -> np.ndarray:
    return np.array([int((v.varValue or 0.0) > 0.5) for v in x], dtype=np.int64)


_CBC_BOUND = re.compile(r"^(?:Lower|Upper) bound:\s*(\S+)", re.M)
_CBC_RESULT = re.compile(r"^Result - (.*)$", re.M)
#: CBC's own limit is the time left minus this share of it (at least CBC_MARGIN_S):
#: start-up, reading the model, writing the solution
CBC_MARGIN_S, CBC_MARGIN_SHARE = 0.05, 0.05
#: CBC is sent SIGINT (its Ctrl-C: stop, write the best solution) this long after the
#: deadline, and killed CBC_GRACE_SHARE of the time it was given later, at least
#: CBC_GRACE_MIN_S and at most CBC_GRACE_MAX_S (it does not look at the clock in its
#: preprocessing: 160 s on a 1 s limit for a dense 400 x 400 assignment; it overran its own
#: limit by 0.8 to 1.4 s on a 250-item, 10-constraint knapsack, where killing it at once
#: lost its incumbent and bound: a grace as long as the overrun keeps them, a shorter one
#: does not)
CBC_KILL_S = 0.05
CBC_GRACE_MIN_S, CBC_GRACE_SHARE, CBC_GRACE_MAX_S = 0.2, 0.25, 5.0


def cbc_seconds(left: float) -> float:
    """CBC's own limit (``-sec``, elapsed time) when ``left`` seconds remain:
    less a margin for its start-up and the solution file, at least 0.01."""
    return max(left - max(CBC_MARGIN_S, CBC_MARGIN_SHARE * left), 0.01)


#: how :func:`run_cbc`'s result line starts when CBC died of a signal (:func:`cbc_info`)
CBC_CRASHED = "crashed: "


def cbc_info(result: str) -> dict:
    """The details of a CBC run whose result line (:func:`run_cbc`) is
    ``result``: ``solver``, ``threads``, ``solver_status``, and when CBC
    crashed ``solver_status="crashed"`` with ``solver_error`` saying how."""
    if result.startswith(CBC_CRASHED):
        return {"solver": "CBC", "threads": 1, "solver_status": "crashed",
                "solver_error": result[len(CBC_CRASHED):]}
    return {"solver": "CBC", "threads": 1, "solver_status": result}


#: prefix of the scratch folders of CBC's files (one per process, in the system's temporary folder)
SCRATCH_PREFIX = "epochbench-cbc-"
_scratch_lock = threading.Lock()
_scratch: list = []       # [pid, path] of this process's folder


def cbc_scratch() -> str:
    """This process's folder for CBC's model, solution and log files,
    ``SCRATCH_PREFIX<pid>`` in the system's temporary folder, made on first
    use and removed at exit.  A process killed during a solve (a sweep's
    worker stopped with its CBC) cannot remove its files, so the first call
    of each process also removes the folders of this user's processes that
    are gone (about 0.5 MB a solve were left in the temporary folder)."""
    with _scratch_lock:
        pid = os.getpid()
        if _scratch and _scratch[0] == pid and os.path.isdir(_scratch[1]):
            return _scratch[1]                        # (a forked child makes its own)
        import atexit
        import shutil
        root = tempfile.gettempdir()
        _sweep_scratch(root)
        path = os.path.join(root, f"{SCRATCH_PREFIX}{pid}")
        if not (_scratch and _scratch[0] == pid):
            shutil.rmtree(path, ignore_errors=True)   # a dead process's, whose pid this one got
            atexit.register(_remove_scratch, pid, path)
        os.makedirs(path, mode=0o700, exist_ok=True)
        _scratch[:] = [pid, path]
        return path


def _remove_scratch(pid: int, path: str) -> None:
    """At exit: the scratch folder of :func:`cbc_scratch`, in the process that made it."""
    if os.getpid() == pid:
        import shutil
        shutil.rmtree(path, ignore_errors=True)


def _sweep_scratch(root: str) -> None:
    """Remove the scratch folders (:func:`cbc_scratch`) in ``root`` that
    belong to this user and to a process that no longer runs."""
    import shutil
    try:
        names = [n for n in os.listdir(root) if n.startswith(SCRATCH_PREFIX)]
    except OSError:
        return
    for name in names:
        pid = name[len(SCRATCH_PREFIX):]
        path = os.path.join(root, name)
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if os.stat(path).st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except (OSError, OverflowError):
            continue


def run_cbc(prob, deadline: float, seed: int, *, warm: bool,
            options: tuple[str, ...] = ()) -> tuple[str, float | None, str]:
    """Solve the PuLP problem ``prob`` with serial CBC (PuLP's bundled
    binary) until ``deadline`` (``time.perf_counter()`` seconds; the MPS
    file, the start-up and the solution read included: CBC gets the time
    left less a margin, is stopped by SIGINT :data:`CBC_KILL_S` after the
    deadline, which it answers with its best solution, and is killed when
    it has not ended :data:`CBC_GRACE_SHARE` of the time it was given after that
    (:data:`CBC_GRACE_MIN_S` to :data:`CBC_GRACE_MAX_S`); the overrun is
    the caller's to report).
    ``options``: more of CBC's command-line options (``"cuts off"``).
    Returns (status, the bound as CBC's log prints it (3 decimals; ``None``
    without a solution, or if it printed none), CBC's result line).  A CBC
    that dies of a signal (a segfault of the bundled binary on a short
    limit, not the deadline kill) is no error of the caller's: status
    ``timeout``, no bound, and the result line :data:`CBC_CRASHED` and why
    (:func:`cbc_info` turns it into ``info["solver_error"]``).  CBC
    always runs serially: the bundled CBC 2.10.3 with ``-threads N`` (N >=
    1) stalls now and then for about 10 s even on tiny models, past its time
    limit (7% of runs with N = 1)."""
    if time_left(deadline) <= 0:
        return "timeout", None, "not started (time limit reached before the solver started)"
    scratch = cbc_scratch()
    fd, log_path = tempfile.mkstemp(prefix="cbc-", suffix=".log", dir=scratch)
    os.close(fd)
    try:
        from ._pulp_solvers import TimedCBC
        grace = min(max(CBC_GRACE_MIN_S, CBC_GRACE_SHARE * time_left(deadline)), CBC_GRACE_MAX_S)
        solver = TimedCBC(lambda: cbc_seconds(time_left(deadline)),          # read when CBC starts
                          lambda: max(time_left(deadline), 0.0) + CBC_KILL_S, grace,
                          msg=False, threads=None, gapRel=0, logPath=log_path, warmStart=warm,
                          timeMode="elapsed", options=[f"randomCbcSeed {int(seed) + 1}", *options])
        solver.tmpDir = scratch                       # the model and solution files beside the log
        prob.solve(solver)
        with open(log_path) as fh:
            log = fh.read()
    finally:
        os.unlink(log_path)
    if solver.killed:
        return "timeout", None, ("stopped at the time limit while starting" if solver.early else
                                 "killed at the time limit (deaf to SIGINT)")
    if solver.crashed:
        return "timeout", None, CBC_CRASHED + solver.crashed
    status = {pulp.LpSolutionOptimal: "optimal", pulp.LpSolutionIntegerFeasible: "feasible",
              pulp.LpSolutionInfeasible: "infeasible"}.get(prob.sol_status, "timeout")
    found, result = _CBC_BOUND.findall(log), _CBC_RESULT.findall(log)
    bound = _finite(found[-1]) if found and status in ("optimal", "feasible") else None
    return status, bound, result[-1].strip() if result else pulp.LpSolution[prob.sol_status]


def _finite(text: str) -> float | None:
    """``text`` as a float when it is a finite number of plausible size (CBC
    prints 1e50 and the like for "none"), else None."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) and abs(v) < 1e40 else None


#: a constraint coefficient or bound at least this large and CBC is not run: on vector bin
#: packing models with capacities of 1e8 to 1e13, CBC 2.10 proved optima a bin above the true
#: one (7 of 120 random runs), where CP-SAT proved the right one; on random packing steps of 5 to
#: 10 jobs against brute force it proved utilization optima a unit short at capacities of 8.7e5
#: (1 of 165 near 1e6) and 2.25e7 (1 of 300 near 3e7), the second even without preprocessing
CBC_LARGE = 1e6
#: a constraint coefficient or bound at least this large and CBC runs without its integer
#: preprocessing and its cuts (:data:`CBC_CAREFUL_OPTIONS`): with them CBC proved 0.950 for 0.9999
#: on a 6-job packing step of capacity 69,190 (1 of 500 random steps near 1e5) and a unit short at
#: 8.7e5; without the preprocessing alone, still 90,184 for 90,188 and three more (an audit: 3 of
#: 874 one-resource steps of near-tying demands with capacities near 1e5 and 5e5); without both,
#: none wrong in 5,038 such steps.  None wrong with both on in 1,000 random steps near 1e3 and 1e4,
#: nor in an audit's 10,000 small ones.  Without cuts CBC proved 10 OR-Library and random 100-item
#: knapsacks in 9.5 s where it took 15.5 s with them
CBC_CAREFUL = 1e4
CBC_CAREFUL_OPTIONS = ("preprocess off", "cuts off")


def _not_run(units: str, solver: str, reason: str) -> Outcome:
    """The outcome of a backend not run on data beyond its range (no
    solution, no bound, the ``reason``)."""
    return Outcome("timeout", None, None, units, {"solver": solver, "solver_status": "not run", "reason": reason})


def _out_of_range(model: BinaryModel, units: str, solver: str, limit: float) -> Outcome:
    """:func:`_not_run` for a model with a coefficient or bound of ``limit``
    or more (:func:`_magnitude`), naming the methods that solve it."""
    return _not_run(units, solver, f"a constraint coefficient or bound of {limit:.0e} or more, beyond the range "
                    f"where {solver}'s proofs hold; {_who_solves(model)}")


#: why CBC gets no MIP start of a 0-1 model (the model's hint; the caller still returns the start
#: when CBC finds nothing as good): CBC 2.10.3 given one (``-mips``) now and then proves it optimal
#: at the root where a better solution exists, its probing fixing the columns of the optimum: on
#: 10-item knapsacks a 1.582 for the optimum 1.776 (an audit), and 8 of 2,000 random 0-1 knapsacks
#: of 4 to 11 items and 1 to 3 constraints against brute force, where the same runs without the
#: start were all right
CBC_WRONG_START = "CBC 2.10.3 proves a MIP start optimal at the root now and then where it is not"


#: CBC's options on a float objective: it otherwise takes a solution as better only by its
#: cutoff increment (about 1e-5), and "proved" utilization optima up to 8e-6 short, beyond the
#: 1e-6 that ``objective_scaling`` promises (6 of 150 random packing steps with capacities near 1e6,
#: against brute force; none beyond it in about 4,500 with the increment at 1e-10, capacities 1e5
#: to 3e7)
CBC_FLOAT_OPTIONS = ("increment 1e-10",)


def _cbc(model: BinaryModel, deadline: float, threads: int, seed: int) -> Outcome:
    """Solve with CBC (:func:`run_cbc`, always serial, without the model's
    hint as a MIP start: :data:`CBC_WRONG_START`); the bound read from
    CBC's log is widened by 5e-4 towards safety (it prints 3 decimals).  Not
    run (no solution, no bound, a ``reason``) when a coefficient or bound
    reaches :data:`CBC_LARGE`; without its preprocessing and cuts from
    :data:`CBC_CAREFUL`; a float objective with :data:`CBC_FLOAT_OPTIONS`."""
    units, size = _milp_units(model), _magnitude(model)
    if size >= CBC_LARGE:
        return _out_of_range(model, units, "CBC", CBC_LARGE)
    if time_left(deadline) <= 0:
        return no_time(units, "CBC")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        built = _pulp_problem(model, units, deadline)
        if built is None:
            return no_time(units, "CBC")
        prob, x = built
        options = (CBC_FLOAT_OPTIONS if units == "float" else ()) + (
            CBC_CAREFUL_OPTIONS if size >= CBC_CAREFUL else ())
        # no MIP start: CBC_WRONG_START
        status, raw, result = run_cbc(prob, deadline, seed, warm=False, options=options)
    bound = None
    if raw is not None:
        bound = raw + 5e-4 if model.sense == "max" else raw - 5e-4
    vals = _pulp_values(x) if status in ("optimal", "feasible") else None
    return Outcome(status, vals, bound, units, cbc_info(result))


#: lines HiGHS 1.12 prints even with output off (one per improving MIP solution)
HIGHS_NOISE = re.compile(r"HighsMipSolverData::transformNewIntegerFeasibleSolution")


def _flush_c_streams() -> None:
    """Flush the C library's stdio buffers (HiGHS prints with ``printf``)."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):  # no C library handle here: nothing to flush
        pass


@contextlib.contextmanager
def quiet_highs():
    """Run the block with file descriptors 1 and 2 sent to a temporary file;
    afterwards drop the lines matching :data:`HIGHS_NOISE` and write the
    rest to stderr.  HiGHS 1.12 prints MIP diagnostics to fd 1 or 2 even
    with output off; this keeps them out of the user's terminal and keeps
    ``solve --json`` stdout one JSON object."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            yield
        finally:
            _flush_c_streams()
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            tmp.seek(0)
            text = tmp.read().decode("utf-8", errors="replace")
            rest = "".join(line for line in text.splitlines(True) if not HIGHS_NOISE.search(line))
            if rest:
                sys.stderr.write(rest)
                sys.stderr.flush()


_HIGHS_THREADS: list[int] = []  # thread count of HiGHS's global scheduler, once set


def _highs_scheduler(threads: int) -> None:
    """HiGHS keeps one global thread pool: a run asking another thread count
    fails unless the pool is reset first (highspy 1.12)."""
    if _HIGHS_THREADS and _HIGHS_THREADS[0] != threads:
        highspy.Highs.resetGlobalScheduler(True)
    _HIGHS_THREADS[:] = [threads]


def highs_outcome(h, where: str = "HiGHS", detail=lambda: "") -> tuple[str, float | None, dict]:
    """(status, dual bound in the model's own sense or ``None``, details)
    of the highspy model ``h`` after its run; a model status that is no
    answer (a load or model error) is a RuntimeError naming ``where`` and
    ``detail()``."""
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
        raise RuntimeError(f"{where}: HiGHS says {h.modelStatusToString(ms)} ({detail()})")
    bound = info.mip_dual_bound if status in ("optimal", "feasible") else None
    bound = None if bound is None or not math.isfinite(bound) else bound
    return status, bound, {"solver": "HiGHS", "solver_status": h.modelStatusToString(ms),
                           "nodes": int(info.mip_node_count)}


#: HiGHS's own limit is the time left minus this share of it (at least HIGHS_MARGIN_S, at most
#: HIGHS_MARGIN_MAX_S): it stops 10 to 20 ms after its limit on a 150 x 150 assignment, and the
#: solution is read after it
HIGHS_MARGIN_S, HIGHS_MARGIN_SHARE, HIGHS_MARGIN_MAX_S = 0.01, 0.05, 0.1


def highs_seconds(left: float) -> float:
    """HiGHS's ``time_limit`` when ``left`` seconds remain: less a margin
    for its late stop and reading the solution, at least 1 ms."""
    return max(left - min(max(HIGHS_MARGIN_S, HIGHS_MARGIN_SHARE * left), HIGHS_MARGIN_MAX_S), 1e-3)


#: rows handed to highspy per ``addRows`` call by :func:`highs_model`, with a look at the clock between
HIGHS_ROW_CHUNK = 4096


def highs_model(model: BinaryModel, units: str, deadline: float = math.inf):
    """``model`` as a ``highspy.Highs`` (output off), minimising (a maximum
    times -1, as PuLP states it), column ``i`` = variable ``i``, the
    objective in ``units`` (:func:`_milp_units`): handed over in whole
    arrays (a few ms for 10,000 variables), the rows :data:`HIGHS_ROW_CHUNK`
    at a time.  ``None`` when ``deadline`` passes while it is built.
    O(n + nonzeros)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    n = model.n_vars
    sign = -1.0 if model.sense == "max" else 1.0
    cost = sign * (np.asarray(model.objective, dtype=float) if units == "int"
                   else np.asarray(model.weights, dtype=float) * model.weight_scale).reshape(n)
    none_i, none_f = np.zeros(0, dtype=np.int32), np.zeros(0)
    if n:
        h.addCols(n, cost, np.zeros(n), np.ones(n), 0, none_i, none_i, none_f)
        h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * n))
    inf = highspy.kHighsInf
    for lo_r in range(0, len(model.rows), HIGHS_ROW_CHUNK):
        if time_left(deadline) <= 0:
            return None
        chunk = model.rows[lo_r:lo_r + HIGHS_ROW_CHUNK]
        sizes = np.array([len(idx) for idx, _, _, _ in chunk], dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int32)
        index = np.concatenate([idx for idx, _, _, _ in chunk]).astype(np.int32) if sizes.sum() else none_i
        value = (np.concatenate([np.asarray(c, dtype=float) for _, c, _, _ in chunk]) if sizes.sum() else none_f)
        lower = np.array([-inf if lo is None else float(lo) for _, _, lo, _ in chunk])
        upper = np.array([inf if hi is None else float(hi) for _, _, _, hi in chunk])
        h.addRows(len(chunk), lower, upper, int(sizes.sum()), starts, index, value)
    return h if time_left(deadline) > 0 else None


#: constraint coefficients or bounds from which milp-highs is not run: HiGHS calls 1e15 and more
#: a model error (``large_matrix_value``), and below it chose selections over capacity (a unit at
#: 2.3e6; 3 of 1,000 random packing steps of 5 to 10 jobs with capacities near 3e6, 11 of 150 near
#: 1e8, its feasibility tolerances being relative to rows it scales) and proved wrong optima (an
#: audit's profit step at 1e11: 9 for 11); none of either in 3,000 with capacities up to 1e6 (but
#: near-ties within ``objective_scaling``'s slack go either way: a review found 6 of 80 such steps near
#: 1e5 proved up to 1.3e-8 of the value short of CP-SAT's, the README says so).
#: Tighter tolerances without presolve mended those near 1e7 and broke one at 1.7e5 that the
#: defaults get right, so the range is cut rather than the options changed
HIGHS_LARGE = 1e6
#: HiGHS options of every MILP run here.  ``presolve_rule_off`` bit 13 is
#: presolve's rule "parallel rows and columns" (``kPresolveRuleParallelRowsAndCols``):
#: on a packing epoch of 60 jobs and 66 resources (utilization objective, every
#: coefficient below 40) HiGHS 1.12 with it reported an optimum of 0.6128 with
#: its dual bound equal, where CP-SAT, CBC, mkp-bb and HiGHS without that one
#: rule prove 0.6498 (a fuzzing review; HiGHS's issue tracker has more such
#: presolve reports).  Without the rule, milp-highs on 40 leinberger epochs
#: (n = 64, K = 4 and 8; n = 128, K = 2) took the same time within noise, all
#: proven, the same values.
HIGHS_MIP_OPTIONS = (("presolve_rule_off", 1 << 13),)
#: HiGHS 1.12's MIP presolve has a pass over dominated columns that does not look at the
#: clock, and no option turns it off alone (not ``presolve_rule_off``, every bit tried).  Its
#: work grows with the sum over rows of (nonzeros in the row)**2, at about 5e7 to 7.5e7 a
#: second here: a packing epoch of 19,675 jobs on K = 4 (1.5e9) spent 20 s in it on a 1 s
#: limit, and answered nothing; 10,000 jobs (3.5e8) 7 s, 5,000 (9.7e7) 1.5 s.  When that
#: work is above ``HIGHS_PRESOLVE_RATE`` times the seconds left, and above
#: ``HIGHS_PRESOLVE_FLOOR`` (so that no model of the sizes the benchmarks solve, 1.3e5 at
#: n = 128 and K = 8, ever changes), milp-highs runs without presolve, and says so in
#: ``info["highs_presolve"]``: at 19,675 jobs it then stops at its limit (0.95 s).
HIGHS_PRESOLVE_RATE, HIGHS_PRESOLVE_FLOOR = 2e7, 1e7


def _presolve_work(model: BinaryModel) -> int:
    """The sum over the rows of ``model`` of their nonzeros squared: what
    HiGHS's dominated-columns pass costs (:data:`HIGHS_PRESOLVE_RATE`)."""
    return sum(len(index) ** 2 for index, _, _, _ in model.rows)


def _magnitude(model: BinaryModel) -> int:
    """The largest constraint coefficient or row bound of ``model`` (absolute
    values): the MILPs' tolerances scale with both (CBC proved a packing step
    with capacity 2.25e7 a unit short)."""
    bounds = (abs(b) for _, _, lo, hi in model.rows for b in (lo, hi) if b is not None)
    return max(_largest(model), max(bounds, default=0))


def _beyond(model: BinaryModel, limit: float) -> bool:
    """Whether a row of ``model`` has a coefficient or a bound of ``limit``
    or more (:func:`_magnitude`)."""
    return _magnitude(model) >= limit


def _highs(model: BinaryModel, deadline: float, threads: int, seed: int) -> Outcome:
    """Solve with HiGHS in-process: the model handed to highspy directly
    (:func:`highs_model`), the hint as its start, its time limit what is
    left when it starts, stray output filtered (:func:`quiet_highs`); not
    run (no solution, no bound, a ``reason`` in the details) when a
    coefficient or bound reaches :data:`HIGHS_LARGE`."""
    units = _milp_units(model)
    if _beyond(model, HIGHS_LARGE):
        return _out_of_range(model, units, "HiGHS", HIGHS_LARGE)
    if time_left(deadline) <= 0:
        return no_time(units, "HiGHS")
    h = highs_model(model, units, deadline)
    if h is None:
        return no_time(units, "HiGHS")
    n = model.n_vars
    if model.hint is not None and n:
        h.setSolution(n, np.arange(n, dtype=np.int32), np.asarray(model.hint, dtype=float))
    left = time_left(deadline)
    for name, value in (("threads", int(threads)), ("mip_rel_gap", 0.0), ("random_seed", int(seed)),
                        ("time_limit", highs_seconds(left)), *HIGHS_MIP_OPTIONS):
        h.setOptionValue(name, value)
    work = _presolve_work(model)
    no_presolve = work > max(HIGHS_PRESOLVE_FLOOR, HIGHS_PRESOLVE_RATE * left)
    if no_presolve:
        h.setOptionValue("presolve", "off")
    _highs_scheduler(int(threads))
    with quiet_highs():
        h.run()
    status, bound, details = highs_outcome(h)
    details["threads"] = int(threads)
    if no_presolve:
        details["highs_presolve"] = (f"off: its dominated-columns pass ({work:.3g} row nonzeros squared) "
                                     f"would not look at the clock in the {left:.3g} s left")
    if bound is not None and model.sense == "max":
        bound = -bound
    vals = None
    if status in ("optimal", "feasible"):
        vals = (np.asarray(h.getSolution().col_value, dtype=float)[:n] > 0.5).astype(np.int64)
    return Outcome(status, vals, bound, units, details)


BACKENDS = {"cpsat": _cpsat, "milp-cbc": _cbc, "milp-highs": _highs}


def run_model(model: BinaryModel, method: str, time_limit: float, threads: int, seed: int = 0,
              solver_params: dict | None = None) -> Outcome:
    """Solve ``model`` with backend ``method`` (one of :data:`METHODS`) in at
    most ``time_limit`` seconds of wall time from this call, the backend's
    own model building included; ``solver_params``: CP-SAT parameters by
    name (``cpsat`` only, :func:`set_cpsat_params`).

    Returns the backend's :class:`Outcome`: ``bound`` is ``None`` unless the
    backend returned a solution with it (a bound without a solution is not
    trusted: CP-SAT reports 0 on UNKNOWN, CBC's log may be cut short)."""
    try:
        backend = BACKENDS[method]
    except KeyError:
        raise KeyError(f"unknown exact method {method!r}; known: {', '.join(METHODS)}") from None
    check_solver_params(method, solver_params)
    extra = {"params": solver_params} if solver_params else {}
    out = backend(model, deadline_after(time_limit), threads, seed, **extra)
    if out.x is None:
        out.bound = None
    return out


def true_bound(model: BinaryModel, out: Outcome) -> tuple[float | None, float]:
    """``(bound, slack)``: the backend's bound in true objective units, made
    valid (rounded onto the integer grid where the objective is integral,
    widened by the rounding error where it is not), and the largest error the
    objective scaling could hide (0 when exact; without a bound, what it
    could hide at a bound of 1 in the backend's units: a CBC "optimal"
    whose log gave no bound was taken at its word, on preferences from
    3e-9 to 3e15 a 12.5 % weight short)."""
    if out.bound is None:
        if out.units == "float":
            return None, _TOL / model.weight_scale
        return None, (0.0 if model.exact else 0.5 * model.n_vars / model.scale)
    sign = 1.0 if model.sense == "max" else -1.0
    if out.units == "float":     # in units of weights * weight_scale (a power of two: exact)
        b = out.bound + sign * _TOL * max(1.0, abs(out.bound))
        return b / model.weight_scale, _TOL * max(1.0, abs(out.bound)) / model.weight_scale
    b = math.floor(out.bound + _TOL) if sign > 0 else math.ceil(out.bound - _TOL)
    if model.exact:
        return b / model.scale, 0.0
    slack = 0.5 * model.n_vars / model.scale
    return b / model.scale + sign * slack, slack


#: how far short of a proved bound a solution may fall and still meet it
#: (be optimal), relative: the rounding of the float sums behind both (about
#: 512 units in the last place, a sum of as many terms at worst).  A refutation takes more (:func:`against`).
#: It was :func:`~epochbench.exact.starts.better`'s 1e-12 both ways, which
#: hides whole units at objectives of 1e15 (found by a fuzzing review: every
#: exact mapping method called a start 998 above the bound optimal on a
#: 2 x 2 instance of integers).
MEETS_RTOL = 2.0**-43


def against(value: float, bound: float, sense: str) -> str:
    """Where a proved ``bound`` stands against a checked solution of
    objective ``value``: ``"meets"`` (the solution is optimal: short of the
    bound by at most :data:`MEETS_RTOL` of the larger, relative, so that
    objectives of 1e-12 and less are objectives too, or beyond it by at
    most 1e-12 of it, float noise), ``"open"`` (on the side where a bound
    belongs, farther than that) or ``"refuted"`` (beyond it by more: no
    valid bound can be there; the solver, or the code that proved the
    bound, erred).  The refutation's tolerance is
    :func:`~epochbench.exact.starts.better`'s: a correct proof is never
    withdrawn for the rounding of a sum."""
    if better(value, bound, sense):               # the solution beats the bound
        return "refuted"
    tol = MEETS_RTOL * max(abs(value), abs(bound))
    short = bound > value + tol if sense == "max" else bound < value - tol
    return "open" if short else "meets"


def refuted(info: dict | None, bound: float, value: float, who: str = "the solver") -> None:
    """Say in ``info["withdrawn"]`` (as :func:`epochbench.instances.registry.honest`
    does of a claim it withdraws) that ``who``'s bound was refuted by a
    checked solution of objective ``value``, so nothing is proved."""
    if info is not None:
        why = f"{who}'s bound {bound!r} is beaten by a checked solution of value {value!r}; nothing is proved"
        before = info.get("withdrawn")
        if not before:
            info["withdrawn"] = why
        elif why not in before:                  # a method that meets it again at every turn says it once
            info["withdrawn"] = f"{before}; {why}"


def grid_of(model: BinaryModel, out: Outcome) -> float | None:
    """The scale that puts the objective on whole numbers exactly (the
    model's, where :func:`true_bound` rounds the bound onto that grid), for
    :func:`proven`; None where it does not (an inexact or float objective)."""
    return model.scale if model.exact and out.units != "float" else None


def on_grid_meets(value: float, bound: float, sense: str, grid: float) -> bool:
    """A solution of objective ``value`` meets ``bound`` on the whole-number
    grid of the objective (``value * grid`` and ``bound * grid`` rounded to
    integers, compared exactly): what :func:`against`'s relative tolerance
    cannot tell at 1e15, where it spans about a hundred units."""
    v, b = round(value * grid), round(bound * grid)
    return v >= b if sense == "max" else v <= b


def beats_on(grid: float | None, a: float, b: float, sense: str) -> bool:
    """A checked decision of value ``a`` is better than one of value ``b``:
    by a step of the objective's whole-number ``grid`` where it has one
    (:func:`grid_of`; a sum that differs in its last bit is the same value),
    else by any amount (:func:`~epochbench.exact.starts.beats`).  How an
    exact method keeps the better of its start and the solver's answer."""
    return beats(a, b, sense) if grid is None else not on_grid_meets(b, a, sense, grid)


def proven(status: str, value: float, bound: float | None, sense: str,
           slack: float = 0.0, info: dict | None = None, grid: float | None = None) -> tuple[str, float | None]:
    """``(status, bound)`` of a solution of objective ``value`` given the
    solver's ``status`` and a *proved* ``bound`` (``None``: nothing proved).

    ``optimal`` only when the solver proved it or the bound meets the value
    (:func:`against`); the bound is then the value.  A bound that a checked
    solution beats (below ``value`` for ``sense="max"``) proves nothing, and
    neither does the solver's ``optimal`` beside it: the result is
    ``feasible`` without a bound, and ``info["withdrawn"]`` says why (a
    solver's answer worse than the start it was given, which the start
    replaced, beside a bound at that answer's value, had been called
    optimal at the start's).  The solver's proof
    counts only when the model's objective scaling could hide at most
    ``slack`` (:func:`true_bound`) of at most :data:`TRUSTED_SLACK` of the
    value (or the bound): a proof on a coarsely rounded objective is one for the rounded
    data, so the status is then ``feasible`` with the widened bound.
    Otherwise the status stays (``feasible``) and the bound is passed
    through; without a proved bound there is none (never a made-up one).
    ``grid`` (:func:`grid_of`): where the objective is on whole numbers, a
    bound that the solver did not call optimal meets the value only on that
    grid exactly (:func:`on_grid_meets`)."""
    if status == "optimal" and slack > TRUSTED_SLACK * max(1.0, abs(value), abs(bound or 0.0)):
        status = "feasible"
    if bound is None:
        return status, (value if status == "optimal" else None)
    where = against(value, bound, sense)
    if where == "refuted":
        refuted(info, bound, value)
        return "feasible", None
    if where == "meets" and status != "optimal" and grid and not on_grid_meets(value, bound, sense, grid):
        where = "open"
    if status == "optimal" or where == "meets":
        return "optimal", value
    return status, bound


def status_info(model: BinaryModel, out: Outcome, slack: float) -> dict:
    """The backend's details plus the objective units, and a note when the
    objective was scaled inexactly (``slack`` from :func:`true_bound`)."""
    info = {**out.info, "objective_units": out.units}
    if not model.exact or out.units == "float":
        info["objective_scaling"] = f"inexact; optimal means within {slack:.3g}"
    return info


#: the solver modules of each backend, loaded on first use (:func:`warm_up_backends`)
BACKEND_MODULES = {"cpsat": ("ortools.sat.python.cp_model",), "milp-cbc": ("pulp", "epochbench.exact._pulp_solvers"),
                   "milp-highs": ("pulp", "highspy", "epochbench.exact._pulp_solvers"),
                   "scipy": ("scipy.optimize", "scipy.sparse"),
                   "scipy-matching": ("scipy.optimize", "scipy.sparse", "scipy.sparse.csgraph")}
#: backends a family's exact methods use besides their own (epochs: SciPy's LP for the pattern bound;
#: assignment: SciPy's Hopcroft-Karp, the maximum cardinality and the cold start, 0.1 to 0.3 s to import)
FAMILY_BACKENDS = {"epochs": ("scipy",), "assignment": ("scipy-matching",)}


def warm_up_backends(*backends: str, family: str | None = None):
    """A ``warm_up`` hook for a method of ``family`` solving with ``backends``:
    :func:`epochbench.instances.registry.solve` calls it before the clock
    starts, so that a method's first timed call pays neither for importing
    its solver (the solvers load on first use) nor for the compiled kernels
    of the family's start heuristics (:func:`~epochbench.exact.starts.warm_up_starts`)."""
    from epochbench.instances.lazy import import_module
    done = []

    def warm_up() -> None:
        if done:
            return
        for backend in backends:
            for name in BACKEND_MODULES[backend]:
                import_module(name)
        if family is not None:
            from .starts import warm_up_starts
            warm_up_starts(family)
        done.append(True)
    return warm_up


def _check_exact(method: str, inst, *, solver_params: dict | None = None, **_) -> None:
    """The ``check_params`` hook of the methods :func:`register_exact`
    registers: their parameters checked before a run, nothing solved."""
    check_solver_params(method, solver_params)


def _method_doc(solve, method: str) -> str:
    """The docstring of ``solve``'s method ``method``, what listings show: the
    first sentence of ``solve``'s, its ``method`` named ("Best start set of
    a packing instance with backend cpsat; see solve_packing.").  The first
    line alone showed "with backend method." or stopped at "with backend"."""
    from epochbench.instances.catalog import first_sentence
    said = first_sentence(solve.__doc__).rstrip(".")
    said = said.replace("``method``", method) if "``method``" in said else f"{said} ({method})"
    return f"{said}; see {solve.__name__}."


def register_exact(family: str, solve) -> dict:
    """Register ``solve(inst, method, *, time_limit, threads, **params)`` as
    the exact methods :data:`METHODS` of ``family``; returns the registered
    functions by name (``{family}_{method}``, e.g. ``packing_milp_highs``)
    for the caller's namespace.  Each one's docstring is :func:`_method_doc`."""
    def make(method: str):
        def method_func(inst, *, time_limit: float, threads: int = 1, **params):
            return solve(inst, method, time_limit=time_limit, threads=threads, **params)

        method_func.__name__ = method_func.__qualname__ = f"{family}_{method.replace('-', '_')}"
        method_func.__module__ = solve.__module__   # whose namespace holds it: pickled by reference (it was
        # looked up here, failed, and every task of a sweep pickled it by value)
        method_func.__doc__ = _method_doc(solve, method)
        method_func.warm_start = True        # takes warm=False (start cold: no heuristic start)
        method_func.warm_up = warm_up_backends(method, *FAMILY_BACKENDS.get(family, ()), family=family)
        method_func.check_params = functools.partial(_check_exact, method)   # before a run (epochbench.methods)
        return register(family, method, kind="exact")(forwards(method_func, solve, drop=("method",)))

    return {f.__name__: f for f in map(make, METHODS)}
