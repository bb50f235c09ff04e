"""Bin elimination by large-neighbourhood search for the epochs family
(vector bin packing; beyond the seeds).

From a few hundred jobs on, the assignment model of
:func:`epochbench.exact.packing.solve_epochs` is too large for the solvers
to improve on their start within seconds.  :func:`lns` works on a few bins
at a time instead, in the manner of Shaw's large neighbourhood search
[shaw1998]: it takes the emptiest bin (by its normalised content) and
``bins - 1`` others, and lets CP-SAT repack the jobs of those bins into them
so that the emptiest one holds as little as possible; when it ends empty, the
packing has one bin fewer.  Each repair starts from the current packing
(never worse); the neighbourhood grows when repairs stop helping.

The lower bound is the epochs family's combinatorial one (volume, conflict
clique, Martello-Toth L2 per resource); status ``optimal`` only when the
packing meets it.

References
----------
.. [shaw1998] P. Shaw. Using Constraint Programming and Local Search Methods to Solve Vehicle
   Routing Problems. Principles and Practice of Constraint Programming (CP 1998), LNCS 1520,
   pp. 417-431. https://doi.org/10.1007/3-540-49481-2_30.
"""
from __future__ import annotations

import time

import numpy as np

from epochbench.instances.checks import check_count, check_positive
from epochbench.instances.core import Result
from epochbench.instances.lazy import lazy_module
from epochbench.instances.packing import EpochsInstance
from epochbench.instances.registry import forwards, register

from ._binary import against, cpsat_solve, refuted, time_left, warm_up_backends
from .packing import conflict_clique, conflicts, epochs_lower_bound, ffd_bins, ffd_order
from .starts import START_SHARE, best_start

cp_model = lazy_module("ortools.sat.python.cp_model")   # loaded on first use

#: repairs without progress before the neighbourhood grows by one bin
PATIENCE = 6
#: units of the integer weights of the "how full is the target bin" objective
WEIGHT_SCALE = 10**4


def _repack(dem: np.ndarray, cap: np.ndarray, jobs: list[int], where: list[int], k: int, weight: np.ndarray,
            deadline: float, threads: int, seed: int) -> list[int] | None:
    """Jobs ``jobs`` (now in bins ``where``, 0..k-1) into ``k`` bins, bin 0
    holding the least total ``weight`` (CP-SAT from the current placement):
    the new bin of each job, or None without a solution in time."""
    model = cp_model.CpModel()
    x = [[model.new_bool_var(f"x{i}_{b}") for b in range(k)] for i in range(len(jobs))]
    for row in x:
        model.add_exactly_one(row)
    for b in range(k):
        for r in range(dem.shape[1]):
            coefs = [int(dem[j, r]) for j in jobs]
            if sum(coefs) > cap[r]:
                model.add(cp_model.LinearExpr.weighted_sum([row[b] for row in x], coefs) <= int(cap[r]))
    model.minimize(cp_model.LinearExpr.weighted_sum([row[0] for row in x], [int(weight[j]) for j in jobs]))
    for row, b0 in zip(x, where):
        for b, v in enumerate(row):
            model.add_hint(v, int(b == b0))
    left = time_left(deadline)
    if left <= 0:
        return None
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = left
    s.parameters.num_workers = max(1, int(threads))
    s.parameters.random_seed = int(seed)
    code = cpsat_solve(s, model)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return [next(b for b in range(k) if s.boolean_value(row[b])) for row in x]


def lns(inst: EpochsInstance, *, time_limit: float, threads: int = 1, seed: int = 0, bins: int = 3,
        max_bins: int = 8, repair_s: float = 0.2, warm: bool = True) -> Result:
    """Fewest epochs by bin-elimination LNS (beyond the seeds).

    Parameters
    ----------
    inst : EpochsInstance
    time_limit : float
        Wall time of the whole call (start and bounds included).
    threads : int
        CP-SAT workers of each repair.
    seed : int
        Random choice of the neighbourhood's other bins, CP-SAT's seed.
    bins, max_bins : int
        Bins per repair: ``bins`` at first and after every bin removed, one
        more after :data:`PATIENCE` repairs without progress, up to
        ``max_bins``.
    repair_s : float
        Time limit of one repair.
    warm : bool
        Start from the best of FFD and the fast heuristics
        (:func:`~epochbench.exact.starts.best_start`); False: FFD.

    Returns
    -------
    Result
        The packing (bins of job indices), its number of bins, ``bound``
        the combinatorial lower bound, status ``optimal`` when they meet,
        else ``feasible``; ``info``: ``start``, ``repairs``, ``removed``.

    Notes
    -----
    A repair is one CP-SAT model with ``n_b k`` booleans for the ``n_b``
    jobs of ``k`` bins; the bound costs O(n^2 K).
    """
    _check_lns(inst, bins=bins, max_bins=max_bins, repair_s=repair_s)
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit)
    order = ffd_order(inst)
    packing = ffd_bins(inst, order)
    origin = "ffd"
    if warm:
        heur = best_start(inst, budget=START_SHARE * float(time_limit))
        if heur is not None and len(heur.decision) < len(packing):
            packing, origin = [list(b) for b in heur.decision], heur.method
    lb = epochs_lower_bound(inst, conflict_clique(conflicts(inst), order))
    info = {"start": origin, "start_bins": len(packing), "lower_bound": lb}
    dem, cap = inst.demand.astype(np.int64), inst.capacity.astype(np.int64)
    weight = np.ceil(WEIGHT_SCALE * (dem / np.maximum(cap, 1)).sum(axis=1)).astype(np.int64) + 1
    rng = np.random.default_rng(seed)
    repairs = removed = stall = 0
    k = int(bins)
    while len(packing) > lb and time_left(deadline) > 0:
        fill = np.array([weight[b].sum() for b in packing])
        target = int(fill.argmin())
        others = [b for b in range(len(packing)) if b != target]
        kk = min(k, len(packing))
        pick = [target] + [int(b) for b in rng.choice(others, size=kk - 1, replace=False)]
        jobs = [j for b in pick for j in packing[b]]
        where = [pos for pos, b in enumerate(pick) for _ in packing[b]]
        new = _repack(dem, cap, jobs, where, kk, weight, min(deadline, time.perf_counter() + repair_s), threads,
                      int(rng.integers(2**31)))
        repairs += 1
        before = int(fill[target])
        if new is not None:
            regrouped = [[] for _ in range(kk)]
            for j, b in zip(jobs, new):
                regrouped[b].append(j)
            after = int(weight[regrouped[0]].sum()) if regrouped[0] else 0
            if after < before:
                for pos, b in enumerate(pick):
                    packing[b] = regrouped[pos]
                stall = 0
                if not regrouped[0]:
                    packing = [b for b in packing if b]
                    removed += 1
                    k = int(bins)
                continue
        stall += 1
        if stall >= PATIENCE:
            stall, k = 0, min(int(max_bins), k + 1)
    packing = [sorted(b) for b in packing if b]
    value = float(len(packing))
    where = against(value, float(lb), "min")
    if where == "refuted":      # the packing's lower bound beaten: it erred, nothing is proved
        refuted(info, float(lb), value, "the lower bound")
    status = "optimal" if where == "meets" else "feasible"
    info.update(repairs=repairs, removed=removed, bound_kind="combinatorial" if where != "refuted" else "none")
    return Result(inst.kind, "lns", tuple(tuple(b) for b in packing), value, status, time.perf_counter() - t0,
                  value if status == "optimal" else None if where == "refuted" else float(lb), info)


def _check_lns(inst, *, bins=3, max_bins=8, repair_s=0.2, **_) -> None:
    """The parameters of :func:`lns` checked (its ``check_params`` hook:
    before a run, nothing solved): a repair takes at least two bins, up to
    ``max_bins``, for a positive time (``max_bins=0`` failed in numpy after
    the start, ``bins`` below 2 was raised to 2 and a ``repair_s`` of 0 or
    less gave repairs no time, all without a word)."""
    check_count("lns", "bins", bins, 2)
    check_count("lns", "max_bins", max_bins, int(bins))
    check_positive("lns", "repair_s", repair_s)


@register("epochs", "lns", kind="exact")
def epochs_lns(inst, *, time_limit: float, threads: int = 1, **params) -> Result:
    """Bin elimination by large-neighbourhood search: CP-SAT repacks a few bins to empty the emptiest, with
    the combinatorial bound (beyond the seeds; see exact.epochs_lns.lns)"""
    return lns(inst, time_limit=time_limit, threads=threads, **params)


forwards(epochs_lns, lns)
epochs_lns.check_params = _check_lns   # before a run (epochbench.methods)
epochs_lns.warm_start = True         # takes warm=False (start from FFD only)
epochs_lns.warm_up = warm_up_backends("cpsat", family="epochs")   # loads before the clock starts
