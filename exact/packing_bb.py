"""``mkp-bb``: an exact packing oracle by branch-and-bound, fast enough to run
at every epoch of a simulated stream.

A packing step (start the set of queued jobs that best fills the K
resources: epochbench's statement of the working set "which fully utilizes
all of the resources" of [leinberger1999] section 1, whose heuristics
balance the resources instead) is a 0-1 multidimensional knapsack: one row per
resource (``demand @ x <= capacity - used``) and, with a reservation for the
blocked queue head ([vadhiyar-notes] LOS, "Freedom from starvation"), one row
per resource over the jobs that would still run at the shadow time
(``<= extra``).  On the small or loose knapsacks most epochs are, the
general CP-SAT model of :mod:`epochbench.exact.packing` spends most of its
time on set-up; :func:`solve_packing_bb` solves the same model by a
compiled depth-first branch-and-bound (:mod:`epochbench.exact._mkp_bb`):

* the objective in the exact integer units of
  :func:`~epochbench.exact.packing.packing_model` (utilization, count,
  profit), so that ``optimal`` is a proof, not a float comparison;
* items branched on largest normalised demand first (``max_i A_ij / b_i``,
  the order of first-fit decreasing), with the profit objective on most
  profit per unit of normalised demand first (``c_j / sum_i A_ij / b_i``),
  "take it" first: the first dive is that greedy;
* bounds at every node from the jobs that still fit: the capacity bound
  (utilization is a weighted sum of the loads, so no selection beats, row
  by row, the largest load at most the residual that a subset of the
  fitting jobs reaches: a one-row subset sum on a bit set), and from
  :data:`LP_ROWS` rows on the LP relaxation of all the rows (the
  Lagrangian value of the previous node's duals, then a bounded-variable
  simplex warm-started from them: a bound that simplex rounding cannot make
  too small), below that Dantzig's LP bound of each row alone and of the
  surrogate row ([martello1990] on the Dantzig and surrogate bounds,
  [kellerer2004] on the multidimensional knapsack);
* jobs with the same demand vector and weight are interchangeable: only
  prefixes of each such group are enumerated;
* a warm start from the best fast heuristic
  (:func:`~epochbench.exact.starts.best_start`), never returned worse;
* reduced-cost fixing at every node with the node LP
  ([nemhauser1988]; [vimont2008] for the multidimensional knapsack): the
  jobs whose taking, or leaving, cannot beat the incumbent by the LP's
  duals are decided for the whole subtree;
* a bisection on the optimum's value (:class:`_Ladder`): when the first
  :data:`FIRST_NODES` nodes prove nothing, a series of fresh searches, each
  with its incumbent set just below a target, so that it prunes every node
  that cannot reach the target: it either finds a selection worth the
  target or proves that none is.  The first target is the root bound (an
  aspiration search: a utilization epoch filled exactly on every resource
  proves itself at once), the next ones halve the interval between the best
  value found and the smallest bound proved.  The plain search spends most
  of its nodes improving a poor incumbent (on 10 [leinberger1999] K = 8
  epochs, n = 64: 1,451 to 19,416 nodes from the heuristic start, 43 to
  9,869 with the optimum given), while a target at or above the optimum
  prunes as a proof does;
* turns with CP-SAT: after :data:`NODES` nodes without a proof, CP-SAT
  (:func:`~epochbench.exact.packing.solve_packing`) and the search take
  turns (:func:`_take_turns`), each turn as much work as all before it
  (nodes and CP-SAT's deterministic time, so a solve repeats exactly on
  any machine), until one proves the optimum; CP-SAT starts from the search's
  best selection, without its Chvatal-Gomory, MIR and zero-half cuts
  (:data:`HAND_OVER_PARAMS`: on these small knapsacks they cost more than
  they save), the search takes CP-SAT's selection when better, and the
  smaller of the two proven bounds is kept (``nodes=None``: the search
  alone).  Before the reduced-cost fixing and the bisection, CP-SAT was the
  faster of the two on most [leinberger1999] K = 8 epochs; now its turns
  finish none of the measured epochs first, so they start late
  (:data:`NODES`) and stay as a safety net for epochs the search handles
  badly.

Measured (30 [leinberger1999] epochs, n = 64, uniform requirements, three
seeds; medians): with K = 1 and 2 the search proves almost every epoch in
a few hundred nodes; K = 4: 5.2 ms (p90 9.6), most epochs filled exactly
and found by the aspiration; K = 8: 6.6 ms (p90 70), 975 nodes, where the
search before the fixing and the bisection took 74 ms and 28,506 nodes
alone, 37 ms with CP-SAT's turns; at n = 128, K = 8, 5 of 10 epochs are
proven in 10 s (CP-SAT alone: 4).  Next to ``cpsat``
(bench/benchmarks/bench_oracle.py, 10 instances, 3 calls each, two runs):
n = 64: 6 to 7x faster at K = 1, 16 to 18x at K = 2, 10x at K = 4 (p90 9
ms against 228), 15x at K = 8 (p90 36 to 50 ms against 432); n = 128: 19
to 21x at K = 4; on recorded EASY epochs (n = 64 and 128, K = 1 to 8)
4.8 to 7.6x, every one proven.  On OR-Library's mknapcb1 (profit
objective, n = 100, five rows) all 30 are proven at 10 s, median 0.19 s
(at most 3.2 s).

Registered for ``packing`` as ``mkp-bb`` (``kind="exact"``), with the
conventions of the other exact methods: ``time_limit`` is the wall time of
the whole call, status ``optimal`` only when the search finished (bound =
value), otherwise ``feasible`` with the best selection found and the
largest bound of the subtrees left open, ``info["bound_kind"] = "solver"``
(``timeout`` when not even one job was selected: then no bound,
``bound_kind`` ``none``, as for any exact result without a solution).

References
----------
.. [martello1990] S. Martello, P. Toth. Knapsack Problems: Algorithms and Computer
   Implementations. John Wiley & Sons, 1990.
.. [kellerer2004] H. Kellerer, U. Pferschy, D. Pisinger. Knapsack Problems. Springer, 2004.
   https://doi.org/10.1007/978-3-540-24777-7.
.. [leinberger1999] W. Leinberger, G. Karypis, V. Kumar. Job Scheduling in the Presence of
   Multiple Resource Requirements. Technical Report TR 99-025 (revised May 27, 1999), Department
   of Computer Science and Engineering, University of Minnesota, 1999.
.. [nemhauser1988] G. L. Nemhauser, L. A. Wolsey. Integer and Combinatorial Optimization.
   John Wiley & Sons, 1988.
.. [vimont2008] Y. Vimont, S. Boussier, M. Vasquez. Reduced costs propagation in an efficient
   implicit enumeration for the 01 multidimensional knapsack problem. Journal of Combinatorial
   Optimization 15(2):165-178, 2008.
"""
from __future__ import annotations

import math
import time

import numpy as np

from epochbench.instances.core import Result
from epochbench.instances.packing import PackingInstance
from epochbench.instances.registry import forwards, register

from ._binary import Outcome, grid_of, proven, status_info, true_bound, warm_up_backends
from .packing import _column_sums, objective_scale, packing_candidates, packing_model, solve_packing
from .starts import START_SHARE, best_start, given_start, start_info

#: nodes of the branch-and-bound before CP-SAT first takes a turn on what it left open (``nodes=`` option;
#: about 0.3 s at n = 64).  With the reduced-cost fixing and the bisection, CP-SAT's turns finished none
#: of the measured epochs first (leinberger n = 64 and 128, K = 1 to 8; recorded epochs; the 11 hardest
#: epochs of a 20,000-job oracle run; mknapcb1), and after 5000 nodes they doubled the time of the hard
#: ones (11 epochs: 5.3 s against 1.2 s for the search alone; mknapcb1 median 0.34 against 0.19 s)
NODES = 100_000
#: after those nodes CP-SAT and the search take turns (:func:`_take_turns`), each turn this many times
#: all the work done before it
TURN = 1.0
#: a search node's work in CP-SAT's deterministic time units, per candidate job (measured: a node
#: takes 1 to 5 us at n = 64 to 128 and 35 us at n = 2797, a unit of CP-SAT's about 2 s)
NODE_DTIME = 2e-8
#: nodes of the bisection's first attempt, the aspiration (:class:`_Ladder`), before it gives up
ASPIRE_NODES = 50_000
#: nodes of the plain search before the bisection on the value (:class:`_Ladder`) takes over
FIRST_NODES = 200
#: the bisection (:class:`_Ladder`) ends with one plain search from its incumbent once the interval
#: between the incumbent and the proved bound is at most this share of what it was after the
#: aspiration (measured, nodes=None: 0.2 / 0.1 / 0.05 give a median of 9.2 / 6.6 / 6.6 ms on 30
#: [leinberger1999] K = 8 epochs, n = 64, and 0.18 / 0.20 / 0.23 s on mknapcb1; no plain search: 6.9 ms
#: and 0.45 s, where the repeated attempts near the optimum each cost about a proof)
LADDER_SHARE = 0.1
#: nodes explored between two looks of the callers at the clock (about a millisecond at n = 64, K = 8;
#: the kernel itself runs in slices of :data:`SLICE_S`, :meth:`_Search.step`)
NODE_CHUNK = 2000
#: seconds of search between two looks at the clock inside :meth:`_Search.step`
SLICE_S = 0.002
#: CP-SAT parameters of its turns (:func:`_take_turns`): without its Chvatal-Gomory, MIR and
#: zero-half cuts CP-SAT proves these small knapsacks 2 to 3 times faster (one thread, from the
#: heuristic start; median of 10 [leinberger1999] epochs, n = 64, K = 8, seeds 1, 2, 3: 24, 34 and
#: 37 ms against 89, 109 and 83 ms with them; K = 4, seed 1: 30 against 75 ms)
HAND_OVER_PARAMS = {"add_cg_cuts": False, "add_mir_cuts": False, "add_zero_half_cuts": False}
#: nodes take the LP bound (:func:`epochbench.exact._mkp_bb._lp_bound`) instead of the Dantzig
#: bounds from this many rows on (0: never); with 2 or 3 rows the Dantzig bounds are as good and
#: cheaper (leinberger n = 64, 30 epochs: K = 2 median 0.3 ms without, 0.4 with; K = 3 1.7 and 1.9;
#: K = 4 15.2 and 7.8)
LP_ROWS = 4
#: ... and up to this many rows: past it a node's LP costs more than it prunes (leinberger n = 20,
#: seeds 1-2: K = 128 10 ms without against 24 with, K = 256 16 against 113, K = 1,000 51 against
#: 235), and at K = 10,000 one node's LP took 14 s, with no look at the clock inside it
LP_MAX_ROWS = 64
#: 64-bit words of the one-row subset-sum bound (rows with a residual above 64 x this use the plain one)
REACH_WORDS = 256


def dantzig_rows(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Dantzig rows of the search (:func:`epochbench.exact._mkp_bb.search`):
    each row of ``a`` alone, then the surrogate row (the rows weighted by
    ``1 / b_i``), with ``dz_map`` (those weights: the surrogate row's
    capacity is the residual weighted so, a row of ``a`` has its own
    residual) and ``dz_order`` (items by ``c_j / dz_rj``, descending, ties in
    item order).  O(m n log n)."""
    bf = np.maximum(b, 1).astype(float)
    dz = np.vstack([a.astype(float), (a / bf[:, None]).sum(axis=0)[None, :]])
    dz_map = 1.0 / bf
    ratio = np.divide(c[None, :], dz, out=np.full(dz.shape, np.inf), where=dz > 0)
    return dz, dz_map, np.argsort(-ratio, axis=1, kind="stable")


def _node_lp(m: int) -> bool:
    """Whether the search of m rows bounds its nodes by the LP (:data:`LP_ROWS`
    to :data:`LP_MAX_ROWS`; a one-row LP is Dantzig's bound)."""
    return 0 < LP_ROWS <= m <= LP_MAX_ROWS and m > 1


def mkp_arrays(inst: PackingInstance, cand: np.ndarray) -> dict:
    """The 0-1 multidimensional knapsack of ``inst`` over the jobs ``cand``
    (:func:`~epochbench.exact.packing.packing_candidates`), in branching order.

    Parameters
    ----------
    inst : PackingInstance
    cand : ndarray of int
        Jobs that may be selected (each fits alone, positive weight).

    Returns
    -------
    dict
        ``a`` (m x n int64 rows: the resources, then the reservation rows
        that can bind), ``b`` (m), ``c`` (n int64 objective in the model's
        integer units), ``u`` (m int64 multipliers of the capacity bound,
        valid: ``c <= u @ a``), ``use_cap``, ``dz`` / ``dz_order`` /
        ``dz_map`` (the Dantzig rows, their item orders by ratio, and the
        surrogate row's weights of the residual, :func:`dantzig_rows`; no
        rows when the node LP replaces them), ``nxt`` (the next item
        not identical to each one), ``order`` (positions in ``cand`` of the
        items, in branching order) and ``model``
        (:func:`~epochbench.exact.packing.packing_model`: scale, exactness).

    Notes
    -----
    O(n K + n log n + (m + 1) n log n).
    """
    model = packing_model(inst, cand)
    c = np.asarray(model.objective, dtype=np.int64)
    dem = inst.demand[cand].astype(np.int64)
    free = inst.free.astype(np.int64)
    kinds = np.flatnonzero((free > 0) | dem.any(axis=0))  # a row of zeros with capacity 0 constrains nothing
    a, b = dem[:, kinds].T, free[kinds]
    if inst.reservation is not None:
        past = np.asarray(inst.reservation.past_shadow, dtype=bool)[cand]
        extra = np.asarray(inst.reservation.extra, dtype=np.int64)
        late = np.where(past[:, None], dem, 0)
        bind = np.flatnonzero(_column_sums(late) > extra)
        a, b = np.vstack([a, late[:, bind].T]), np.concatenate([b, extra[bind]])
        kinds = np.concatenate([kinds, np.full(bind.size, -1)])
    n = len(cand)
    a, b = np.ascontiguousarray(a, dtype=np.int64).reshape(len(kinds), n), np.asarray(b, dtype=np.int64)
    u = np.zeros(len(kinds), dtype=np.int64)
    scale = objective_scale(inst)
    if inst.objective == "utilization" and model.exact and scale is not None:
        lcm = scale // inst.k
        for i, r in enumerate(kinds):
            if r >= 0 and inst.capacity[r] > 0:
                u[i] = lcm // int(inst.capacity[r])
    use_cap = bool(u.any()) and bool(np.all(c <= u @ a))
    # the branching order (identical jobs adjacent): largest normalised demand first, or with
    # profits the most profit per unit of normalised demand (the MKP greedy, [kellerer2004] chapter 9)
    bf = np.maximum(b, 1).astype(float)
    norm = a / bf[:, None] if a.shape[0] else np.zeros((0, n))
    if inst.objective == "profit":
        key = c / np.maximum(norm.sum(axis=0), 1e-12)
    else:
        key = norm.max(axis=0) if a.shape[0] else np.zeros(n)
    keys = [a[i] for i in range(a.shape[0] - 1, -1, -1)] + [-c, -key]
    order = np.lexsort(keys)
    a, c = np.ascontiguousarray(a[:, order]), np.ascontiguousarray(c[order])
    same = np.zeros(n, dtype=bool)
    if n > 1:
        same[1:] = (c[1:] == c[:-1]) & np.all(a[:, 1:] == a[:, :-1], axis=0)
    # nxt[j]: the first item after j's run of identical items
    last = np.flatnonzero(~np.append(same[1:], False))             # the last item of each run
    nxt = last[np.searchsorted(last, np.arange(n))] + 1
    if _node_lp(a.shape[0]):       # the node LP replaces the Dantzig rows (:class:`_Search`)
        dz, dz_map, dz_order = np.zeros((0, n)), np.zeros(a.shape[0]), np.zeros((0, n), dtype=np.int64)
    else:
        dz, dz_map, dz_order = dantzig_rows(a, b, c)
    return {"a": a, "b": b, "c": c, "u": u, "use_cap": use_cap, "dz": dz, "dz_order": dz_order,
            "dz_map": dz_map, "nxt": nxt, "order": order, "model": model}


def solve_packing_bb(inst: PackingInstance, *, time_limit: float, threads: int = 1, seed: int = 0,
                     start: Result | None = None, warm: bool = True, nodes: int | None = NODES) -> Result:
    """Best start set of a packing instance by branch-and-bound (``mkp-bb``).

    Parameters
    ----------
    inst : PackingInstance
        Any objective of the family (utilization, count, profit), with or
        without a reservation.
    time_limit : float
        Wall time of the whole call in seconds (start, set-up and search).
    threads : int
        Accepted for the exact methods' signature; the search is serial.
    seed : int
        Accepted for the signature; the search is deterministic.
    start : Result, optional
        A feasible selection to start from (default: the best fast
        heuristic, :func:`~epochbench.exact.starts.best_start`, within
        ``START_SHARE`` of the time; ``warm=False``: none).
    warm : bool
        Whether to look for a heuristic start when ``start`` is not given.
    nodes : int or None
        Search nodes before CP-SAT's first turn (default :data:`NODES`; the
        aspiration search's nodes count too; then the two take turns,
        :func:`_take_turns`); None: the search alone until the time limit.

    Returns
    -------
    Result
        The selected jobs in ascending order, their objective, status
        ``optimal`` (search finished; ``bound == value``), ``feasible``
        (time ran out; ``bound`` the largest bound of the open subtrees, in
        objective units, widened by the rounding of an inexact integer
        objective) or ``timeout`` (time ran out with nothing selected; no bound).
        ``info``: ``nodes``, ``start``, ``bound_kind``; after the first
        :data:`NODES` nodes ``turns`` (CP-SAT's turns) and ``cpsat_seconds``
        (their time), and ``finished_by="cpsat"`` with CP-SAT's status when
        CP-SAT's turn proved the optimum.

    Notes
    -----
    Exponential in the worst case; a node costs O((m + 1) n + K n w) for n
    candidate jobs, m <= 2 K rows and w <= 256 words of the one-row
    subset-sum bound (only while the fitting jobs overfill a row).  The compiled kernel is built on the
    first call (cached on disk, ``cache=True``), not at import.
    """
    if not (isinstance(time_limit, (int, float)) and time_limit > 0):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
    check_nodes(inst, nodes=nodes)
    from . import _mkp_bb as kernel
    t0 = time.perf_counter()
    start = given_start(inst, start)
    deadline = t0 + float(time_limit)
    cand = packing_candidates(inst)
    if cand.size == 0:
        return Result(inst.kind, "mkp-bb", (), 0.0, "optimal", time.perf_counter() - t0, 0.0,
                      {"solver": "mkp-bb", "note": "no job fits", "bound_kind": "combinatorial"})
    # the heuristic start is looked for only when the first chunk of the search has not
    # proved an optimum (an optimum is never worse than a heuristic): most epochs need none
    defer = start is None and warm
    p = mkp_arrays(inst, cand)
    # the first nodes leave the deferred start its share of the limit
    run = _Search(p, deadline=deadline - (START_SHARE * float(time_limit) if defer else 0.0))
    _take_start(start, cand, p, run.best_x, run.state)
    done = run.step(FIRST_NODES)         # always: the first dive is the greedy of the branching order
    run.deadline = deadline
    if not done:                         # the first nodes proved nothing: a start, then bisect on the value
        if defer:
            start = best_start(inst, budget=min(START_SHARE * float(time_limit), max(deadline - time.perf_counter(), 0.0)))
            _take_start(start, cand, p, run.best_x, run.state)
        run = _Ladder(run)
        done = run.done()
    while not (done or time.perf_counter() >= deadline
               or (nodes is not None and run.state[kernel.S_NODES] >= nodes)):
        done = run.step(NODE_CHUNK)
    found = _outcome(inst, run, cand, start, done)
    if found[2] != "optimal" and nodes is not None and time.perf_counter() < deadline:
        return _take_turns(inst, run, cand, start, found, t0, deadline, threads, seed)
    return _result(inst, *found, t0)


def _outcome(inst, run: "_Search | _Ladder", cand: np.ndarray, start: Result | None, done: bool) -> tuple:
    """What the search has now: ``(selection, value, status, bound, info)``,
    the bound proved by the search (:meth:`_Search.bound`, :meth:`_Ladder.bound`)
    in true objective units (:func:`~epochbench.exact._binary.true_bound`)."""
    from . import _mkp_bb as kernel
    p, state, best_x = run.p, run.state, run.best_x
    model = p["model"]
    sel = tuple(sorted(int(cand[p["order"][t]]) for t in np.nonzero(best_x)[0]))
    value = inst.value(sel)
    info = {"solver": "mkp-bb", "nodes": int(state[kernel.S_NODES]), "rows": p["a"].shape[0],
            "identical": int(len(cand) - np.unique(p["nxt"]).size), **start_info(start)}
    if isinstance(run, _Ladder):
        info.update({"aspiration": run.aspiration, "attempts": run.attempts})
    if done:
        status, raw = "optimal", float(state[kernel.S_BEST])
    else:
        ob = run.bound()
        status, raw = ("feasible" if sel else "timeout"), (None if ob < 0 else float(ob))
    out = Outcome(status, best_x, raw, "int", {"solver": "mkp-bb"})
    bound, slack = true_bound(model, out)
    info.update({k: v for k, v in status_info(model, out, slack).items() if k not in info})
    status, bound = proven(status, value, bound, "max", slack, info=info, grid=grid_of(model, out))
    return sel, value, status, bound, info


def _result(inst, sel, value, status, bound, info, t0) -> Result:
    if status == "timeout":   # nothing selected in time: no answer, so no bound either (bound_kind none)
        bound = None
    return Result(inst.kind, "mkp-bb", sel, value, status, time.perf_counter() - t0, bound,
                  {**info, "bound_kind": "none" if bound is None else "solver"})


def _take_turns(inst, run: "_Search | _Ladder", cand: np.ndarray, start: Result | None, found: tuple,
                t0: float, deadline: float, threads: int, seed: int) -> Result:
    """CP-SAT and the search take turns on what the search left open
    (``found``: its :func:`_outcome`), each turn :data:`TURN` times all the
    work done before it, until one of them proves an optimum or time runs
    out: whichever of the two suits the instance finishes within a small
    factor of its own time (about four times, plus CP-SAT's set-up at each
    of its turns).  Work is counted in CP-SAT's deterministic time
    (``max_deterministic_time``), a search node as :data:`NODE_DTIME` per
    candidate job, not in wall time, so that the same instance gives the
    same selection on any machine (unless the time limit stops it).  CP-SAT
    (:func:`~epochbench.exact.packing.solve_packing`, :data:`HAND_OVER_PARAMS`)
    starts from the search's best selection, and the search takes CP-SAT's
    when it is better; the smaller of the two proved bounds is kept."""
    from . import _mkp_bb as kernel
    per_node = NODE_DTIME * len(cand)
    turns, cp_seconds, cp_work, cp_bound, done = 0, 0.0, 0.0, None, False
    sel, value, status, bound, info = found
    while True:
        turn = TURN * (int(run.state[kernel.S_NODES]) * per_node + cp_work)
        res = solve_packing(inst, "cpsat", time_limit=max(deadline - time.perf_counter(), 1e-3), threads=threads,
                            seed=seed,
                            solver_params={**HAND_OVER_PARAMS, "max_deterministic_time": turn},
                            start=Result(inst.kind, "mkp-bb", sel, value, "feasible", 0.0, bound))
        turns, cp_seconds, cp_work = turns + 1, cp_seconds + res.seconds, cp_work + turn
        cp_bound = _least(cp_bound, res.bound)
        status, best = proven(res.status, float(res.value), _least(bound, cp_bound), "max", info=info)
        if status == "optimal":
            info.update({"finished_by": "cpsat", "cpsat_status": res.status, "branches": res.info.get("branches"),
                         "turns": turns, "cpsat_seconds": cp_seconds})
            return _result(inst, tuple(res.decision), float(res.value), status, best, info, t0)
        _take_start(res, cand, run.p, run.best_x, run.state)      # CP-SAT's selection when better
        nodes = int(run.state[kernel.S_NODES])
        until = nodes + max(1, int(TURN * (nodes * per_node + cp_work) / per_node))
        while not done and run.state[kernel.S_NODES] < until and time.perf_counter() < deadline:
            done = run.step(min(NODE_CHUNK, until - int(run.state[kernel.S_NODES])))
        sel, value, status, bound, info = _outcome(inst, run, cand, start, done)
        status, bound = proven(status, value, _least(bound, cp_bound), "max", info=info)
        info.update({"turns": turns, "cpsat_seconds": cp_seconds})
        if status == "optimal" or time.perf_counter() >= deadline:
            return _result(inst, sel, value, status, bound, info, t0)


def _least(*bounds: float | None) -> float | None:
    """The smallest of the proved bounds given (None: none proved)."""
    known = [b for b in bounds if b is not None]
    return min(known) if known else None


class _Search:
    """The arrays of one run of the compiled search
    (:func:`epochbench.exact._mkp_bb.search`) on ``p``
    (:func:`mkp_arrays`): its state (incumbent value ``best``; the root
    bound, -1 until the root is evaluated), the incumbent ``best_x``, the
    current vector, residual and stacks, and the scratch arrays."""

    def __init__(self, p: dict, best: int = 0, deadline: float = math.inf):
        from . import _mkp_bb as kernel
        n, m = p["c"].shape[0], p["a"].shape[0]
        self.p, self.deadline = p, deadline
        #: nodes per second of this search's last slice of :meth:`step` (None: none run yet)
        self.rate: float | None = None
        self.state = np.zeros(kernel.STATE_SIZE, dtype=np.int64)
        self.state[kernel.S_MODE], self.state[kernel.S_BEST], self.state[kernel.S_ROOT] = kernel.ENTER, best, -1
        self.res, self.x, self.best_x = p["b"].copy(), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        self.stack_j, self.stack_stage, self.stack_bound = (np.zeros(n + 1, dtype=np.int64) for _ in range(3))
        self.fit, self.rest = np.zeros(n, dtype=np.bool_), np.zeros(m, dtype=np.int64)
        self.fixing = kernel.fixing_scratch(n)
        self.words = np.zeros(REACH_WORDS, dtype=np.uint64)
        lp = _node_lp(m)
        self.lpw = kernel.lp_scratch(m, n) if lp else np.zeros(0)
        # with the node LP, which no single-row Dantzig bound beats, those rows cost more than they prune
        self.dz = tuple(p[k][:0] if lp else p[k] for k in ("dz", "dz_order", "dz_map"))

    def step(self, nodes: int, stop: int | None = None) -> bool:
        """Up to ``nodes`` more nodes, fewer when the incumbent reaches
        ``stop`` or the clock passes ``deadline``; True when the search is
        finished.  The kernel runs in slices of about :data:`SLICE_S`
        seconds (sized by this search's node rate, :attr:`rate`, and by the
        time left; its first slice is one node) with a look at the clock
        between them: a node costs 1 us at n = 64 and 200 us at n = 300
        with the node LP, and 60 ms at K = 10,000, so a fixed count
        overruns a short limit (a rate carried over from an earlier, easier
        search ran 96 such nodes at once: 400 s on a limit of 1 s).  The
        kernel resumes exactly where a slice stopped, so the nodes explored
        are the same as in one call, unless the deadline cuts them short."""
        from . import _mkp_bb as kernel
        p, left = self.p, int(nodes)
        stop_at = kernel.NEVER if stop is None else stop
        while True:
            now = time.perf_counter()
            k = left
            if not math.isinf(self.deadline):
                k = 1 if self.rate is None else max(1, min(left, int(min(SLICE_S, self.deadline - now) * self.rate)))
            before = int(self.state[kernel.S_NODES])
            finished = kernel.search(p["a"], p["c"], p["u"], p["use_cap"], *self.dz, p["nxt"], self.state,
                                     self.res, self.x, self.best_x, self.stack_j, self.stack_stage,
                                     self.stack_bound, self.fit, self.rest, self.words, k, self.lpw,
                                     *self.fixing, stop_at)
            used, spent = int(self.state[kernel.S_NODES]) - before, time.perf_counter() - now
            # nodes per second, for the next slice; from a slice of one node too: a rate set low by a slow
            # slice (the first call's compilation: 186 nodes/s) kept every later slice at one node, one
            # kernel call a node (leinberger n = 64, K = 4: 6 ms -> 11)
            if used and spent > 0:
                self.rate = used / spent
            left -= used
            if (finished or left <= 0 or used < k or self.state[kernel.S_BEST] >= stop_at
                    or time.perf_counter() >= self.deadline):
                return finished

    def bound(self) -> int:
        """The largest bound of the subtrees left open, at least the
        incumbent's value (-1: the root not evaluated yet)."""
        from . import _mkp_bb as kernel
        return int(kernel.open_bound(self.state, self.stack_stage, self.stack_bound))


class _Ladder:
    """Bisection on the optimum's value after the plain search's first
    chunk, in the manner of an aspiration search, repeated: a series of
    fresh searches (*attempts*), each with its incumbent set to one less
    than a target T, so that it prunes every node that cannot reach T.  An
    attempt stops at the first selection worth T or more (the incumbent
    rises to its value), or finishes without one, which proves the optimum
    below T.  The first target is the bound the plain search left (its root
    bound, the aspiration: most [leinberger1999] K = 4 epochs fill every
    resource exactly, and that selection proves itself); the next ones
    halve the interval between the best value found and the smallest
    proved bound; once that interval is narrow (:data:`LADDER_SHARE`), one
    plain search from the incumbent closes it, because an attempt just
    above the optimum costs about a proof.

    Why: with a poor incumbent the plain search spends most of its nodes
    improving it (on 10 [leinberger1999] K = 8 epochs, n = 64: 1,451 to
    19,416 nodes from the heuristic start, 43 to 9,869 once the optimum is
    known), while an attempt with a target at or above the optimum prunes
    as a proof does, and the reduced-cost fixing
    (:func:`epochbench.exact._mkp_bb._fix`) is as strong as its target.

    Same interface as :class:`_Search` for the caller: ``p``, ``state``
    (``S_BEST`` and ``S_NODES`` of the whole solve), ``best_x``,
    :meth:`step` and :meth:`bound`; ``aspiration`` (what the first attempt
    did: ``found``, ``exhausted``, ``stopped`` after :data:`ASPIRE_NODES`
    nodes, or ``skipped``) and ``attempts``."""

    def __init__(self, run: _Search):
        from . import _mkp_bb as kernel
        self.p, self.best_x, self.state = run.p, run.best_x.copy(), run.state.copy()
        self.hi = max(run.bound(), int(run.state[kernel.S_BEST]))    # the optimum is at most hi
        self.deadline = run.deadline
        self.attempt: _Search | None = None
        self.target, self.attempts, self.aspiration = 0, 0, "skipped"
        self.plain, self.span = False, None

    def done(self) -> bool:
        from . import _mkp_bb as kernel
        return self.hi <= self.state[kernel.S_BEST]

    def bound(self) -> int:
        return self.hi

    def step(self, nodes: int) -> bool:
        """Up to ``nodes`` more nodes of attempts; True when the incumbent
        is proven optimal."""
        from . import _mkp_bb as kernel
        left = nodes
        while left > 0 and not self.done() and time.perf_counter() < self.deadline:
            run = self._attempt()
            before = int(run.state[kernel.S_NODES])
            finished = run.step(min(left, NODE_CHUNK), stop=None if self.plain else self.target)
            used = int(run.state[kernel.S_NODES]) - before
            left, self.state[kernel.S_NODES] = left - used, self.state[kernel.S_NODES] + used
            self._learn(run, finished)
        return self.done()

    def _attempt(self) -> _Search:
        """The attempt under way, or the next one: the aspiration (target:
        the bound), then the midpoint of the interval, then, once the
        interval is at most :data:`LADDER_SHARE` of what the aspiration
        left, the plain search from the incumbent, which goes on after it
        finds a better selection.  An attempt whose target the incumbent
        has reached (CP-SAT's selection, in a turn) is dropped."""
        from . import _mkp_bb as kernel
        best = int(self.state[kernel.S_BEST])
        if self.attempt is not None and (self.plain or self.target > best):
            if self.attempt.state[kernel.S_BEST] < best:         # the plain search prunes by the incumbent
                self.attempt.state[kernel.S_BEST] = best
            return self.attempt
        self.plain = self.span is not None and self.hi - best <= LADDER_SHARE * self.span
        if self.plain:
            self.target = best + 1
        else:
            self.target = self.hi if self.attempts == 0 else (best + 1 + self.hi + 1) // 2
        self.attempt, self.attempts = _Search(self.p, best=self.target - 1, deadline=self.deadline), self.attempts + 1
        return self.attempt

    def _learn(self, run: _Search, finished: bool) -> None:
        """What the attempt ``run`` has shown after its last nodes: a better
        incumbent, or a smaller bound when it finished."""
        from . import _mkp_bb as kernel
        # an attempt's incumbent is real once it passes its start (the target - 1, or the incumbent)
        if run.state[kernel.S_BEST] >= self.target and run.state[kernel.S_BEST] > self.state[kernel.S_BEST]:
            self.best_x[:], self.state[kernel.S_BEST] = run.best_x, run.state[kernel.S_BEST]
        if self.plain:
            if finished:                                          # nothing beats the incumbent
                self.hi = int(self.state[kernel.S_BEST])
            return
        if run.state[kernel.S_BEST] >= self.target:               # found; optimal too when finished
            outcome = "found"
            if finished:
                self.hi = int(self.state[kernel.S_BEST])
        elif finished:                                            # nothing reaches the target
            self.hi, outcome = self.target - 1, "exhausted"
        elif self.attempts == 1 and run.state[kernel.S_NODES] >= ASPIRE_NODES:
            outcome = "stopped"                                   # the aspiration gives up
        else:
            return
        if self.attempts == 1:
            self.aspiration = outcome
            self.span = self.hi - int(self.state[kernel.S_BEST])
        self.attempt = None


def _take_start(start: Result | None, cand: np.ndarray, p: dict, best_x: np.ndarray, state: np.ndarray) -> None:
    """Make ``start``'s selection the search's incumbent when it is better
    than the one it has (a better incumbent only prunes more: the search
    may take it at any node)."""
    from . import _mkp_bb as kernel
    if start is None:
        return
    x = np.zeros_like(best_x)
    where = {int(cand[p["order"][t]]): t for t in range(len(cand))}   # branching positions
    for j in start.decision:
        if int(j) in where:
            x[where[int(j)]] = 1
    value = int(p["c"] @ x)
    if value > state[kernel.S_BEST] or not best_x.any():
        best_x[:] = x
        state[kernel.S_BEST] = value


def check_nodes(inst, *, nodes=NODES, **_) -> None:
    """``nodes`` checked: an integer >= 1 or None (the ``check_params`` hook
    of both ``mkp-bb`` methods: before a run, nothing solved)."""
    if nodes is not None and (isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) or nodes < 1):
        raise ValueError(f"nodes must be an integer >= 1 or None, got {nodes!r}")


@register("packing", "mkp-bb", kind="exact")
def packing_mkp_bb(inst, *, time_limit: float, threads: int = 1, **params) -> Result:
    """Branch-and-bound of the multidimensional knapsack: capacity, subset-sum and Dantzig bounds, identical
    jobs as counts, warm start, CP-SAT for what it leaves open (see exact.packing_bb.solve_packing_bb)"""
    return solve_packing_bb(inst, time_limit=time_limit, threads=threads, **params)


forwards(packing_mkp_bb, solve_packing_bb)
packing_mkp_bb.warm_start = True     # takes warm=False (no heuristic start)
packing_mkp_bb.check_params = check_nodes     # before a run (epochbench.methods)


def _warm_up() -> None:
    """Load the compiled search (numba's cache), CP-SAT (its turns) and the
    start heuristics' kernels before the clock starts; also the open
    subtrees' bound, which only a search that its first nodes do not finish
    reads (:class:`_Ladder`): a first solve of such an epoch compiled it on
    the clock (a K = 8 epoch's first call took 0.25 to 0.48 s on a 0.05 s
    limit with an empty cache)."""
    _load_cpsat()
    if not _WARM:
        tiny = PackingInstance.build([2], [[1]], meta={"name": "warm-up"})
        solve_packing_bb(tiny, time_limit=10.0, warm=False, nodes=None)
        _Search(mkp_arrays(tiny, packing_candidates(tiny)), deadline=math.inf).bound()
        _WARM.append(True)


_WARM: list = []
_load_cpsat = warm_up_backends("cpsat", family="packing")
packing_mkp_bb.warm_up = _warm_up
