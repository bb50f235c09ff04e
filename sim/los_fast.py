"""LOS on the compiled event loop (issue 18 item 3).

``los`` (:mod:`epochbench.sim.backfill`) is EASY whose backfill step is the
packing heuristic :func:`epochbench.heuristics.packing.los`: the LOS dynamic
program of [vadhiyar-notes] "LOS" ([shmueli2005]) with the blocked head's
reservation.  :func:`los_select` makes the same choice inside the compiled
loop of :mod:`epochbench.sim.policies` (rule :data:`LOS_RULE`), so that the
two engines give identical schedules (tests/test_sim_engine.py):

* the candidates are the queue after the head, in queue order; a job is
  *eligible* when it fits alone: in what is free now on every resource and,
  if it would run past the shadow time (``now + estimate > shadow``), in
  ``extra`` on every resource;
* the DP maximises the processors (resource 0) used by the eligible jobs
  under ``sum(size) <= free[0]`` and, over the jobs flagged past the shadow
  time, ``sum(size) <= min(extra[0], free[0])``; a job is taken where it
  strictly improves the utilisation, and the set is traced back from the
  last cell (algorithms 1 and 2, the two-constraint form of
  :func:`epochbench.heuristics.packing.los_reserved`);
* the caller starts the chosen jobs in queue order while they fit on every
  resource (they always do for K = 1), then first-fits the rest of the queue
  under the same reservation: EASY's own backfill scan.  For K > 1 this is
  the generic heuristic's extension, which the compiled loop follows too.
  For K = 1 the scan is skipped: a job it could start would fit beside the
  DP's set, which would then not be the most processors.

Three shortcuts give the same set as the full two-constraint DP (hence the
same schedule) at less cost:

* every eligible job fits together: the trace takes them all;
* the reservation binds nothing (``extra[0] >= free[0]`` or the flagged
  eligible jobs fit together in ``extra[0]``): on every cell the trace visits
  the table equals the one-constraint table of algorithm 1, so that DP runs;
* otherwise the two-constraint DP over (free, extra) pairs.

The compiled kernels allocate nothing (:data:`epochbench.sim.profile.JIT`):
the work arrays come from :func:`los_work`.  A step that needs more table
than they hold stops the loop (:data:`OVERFLOW`); ``run_fast`` then runs the
simulation again with arrays of the size asked for (:func:`los_grown`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .profile import JIT

#: rule code of LOS in the compiled event loop (after fcfs 0, nonfcfs 1, easy 2, conservative 3)
LOS_RULE = 4
#: ``lw`` header: overflow flag, table cells and selection flags asked for by the step that overflowed
OVERFLOW, NEED_UTIL, NEED_SEL = 0, 1, 2
#: ``lw[OUT:OUT + m]``: the rows :func:`los_select` chose, in queue order
OUT = 3
#: initial sizes of the utilisation table (int64 cells) and of the selection flags
SCRATCH = (1 << 14, 1 << 22)


def los_work(n: int, capacity, used: bool, sizes: tuple[int, int] | None = None):
    """Work arrays of :func:`los_select` for ``n`` jobs: ``lw`` (int64: header,
    four blocks of ``n``, then the utilisation table) and ``lsel`` (bool,
    the selection flags).

    Parameters
    ----------
    n : int
        Jobs in the stream (bounds the queue).
    capacity : array_like of int
        The machine (K); resource 0 sizes the first table.
    used : bool
        False: one-cell arrays (a policy other than ``los``).
    sizes : tuple of int, optional
        (table cells, selection flags); default :data:`SCRATCH`, at least
        ``capacity[0] + 1`` cells.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lw, lsel)``.

    Notes
    -----
    Memory O(n + table + flags).
    """
    if not used:
        return np.zeros(OUT + 1, np.int64), np.zeros(1, np.bool_)
    util, sel = sizes or SCRATCH
    util = max(int(util), int(capacity[0]) + 1)
    return np.zeros(OUT + 4 * n + util, np.int64), np.zeros(max(int(sel), 1), np.bool_)


def los_grown(lw: np.ndarray, lsel: np.ndarray, n: int) -> tuple[int, int]:
    """Sizes for a run after an overflow: twice what the overflowing step
    asked for, never less than before.

    Parameters
    ----------
    lw, lsel : numpy.ndarray
        The work arrays of the run that overflowed.
    n : int
        Jobs in the stream, as given to :func:`los_work`.

    Returns
    -------
    tuple of int
        (table cells, selection flags) for :func:`los_work`.
    """
    table = lw.shape[0] - OUT - 4 * n
    return (max(2 * int(lw[NEED_UTIL]), table), max(2 * int(lw[NEED_SEL]), lsel.shape[0]))


@njit(**JIT)
def _past(now, shadow, est, j):
    """Would job j, started now, still run at the shadow time?"""
    return now + est[j] > shadow


@njit(**JIT)
def _alone(dem, j, free, extra, past):
    """Does job j fit alone: in ``free`` and, if ``past``, in ``extra``
    (negative entries read as 0, as the packing instance clips them)?"""
    for r in range(free.shape[0]):
        if dem[j, r] > free[r]:
            return False
        if past and dem[j, r] > max(extra[r], 0):
            return False
    return True


@njit(**JIT)
def _eligible(now, shadow, q, p0, qt, dem, est, free, extra, lw, rows, sizes, flags):
    """Write the eligible candidates of q[p0:qt] (rows, processor counts,
    past-shadow flags) to ``lw`` at ``rows``, ``sizes``, ``flags``; returns
    (count, their total size, the flagged jobs' total size).  O(q K)."""
    f0 = free[0]
    e0 = min(max(extra[0], 0), f0)
    qe = tot = late = 0
    for p in range(p0, qt):
        j = q[p]
        past = _past(now, shadow, est, j)
        if not _alone(dem, j, free, extra, past):
            continue
        s = dem[j, 0]
        if s <= 0 or s > f0 or (past and s > e0):
            continue  # never chosen by the DP (procs >= 1: only the bounds)
        lw[rows + qe], lw[sizes + qe], lw[flags + qe] = j, s, past
        qe += 1
        tot += s
        if past:
            late += s
    return qe, tot, late


@njit(**JIT)
def _dp_1(lw, lsel, qe, sizes, util, f0):
    """Algorithm 1 of [vadhiyar-notes] over ``f0`` free processors: row t of
    the flags (``lsel[t * (f0 + 1):]``) says where job t improves the
    utilisation.  O(qe f0)."""
    w = f0 + 1
    for c in range(w):
        lw[util + c] = 0
    for t in range(qe):
        s = lw[sizes + t]
        base = t * w
        for j in range(f0, s - 1, -1):
            c = lw[util + j - s] + s
            better = c > lw[util + j]
            if better:
                lw[util + j] = c
            lsel[base + j] = better


@njit(**JIT)
def _dp_2(lw, lsel, qe, sizes, flags, util, f0, e0):
    """The two-constraint DP of :func:`epochbench.heuristics.packing.los_reserved`
    over (free, extra) pairs, cell (j, x) at ``j * (e0 + 1) + x`` of the
    table, job t's flags at ``(t * (f0 + 1) + j) * (e0 + 1) + x``.  Each job
    reads the previous job's table (j and x run downwards).  O(qe f0 e0)."""
    w = e0 + 1
    for c in range((f0 + 1) * w):
        lw[util + c] = 0
    for t in range(qe):
        s = lw[sizes + t]
        de = s if lw[flags + t] else 0
        for j in range(f0, s - 1, -1):
            row = (t * (f0 + 1) + j) * w
            for x in range(e0, de - 1, -1):
                c = lw[util + (j - s) * w + x - de] + s
                better = c > lw[util + j * w + x]
                if better:
                    lw[util + j * w + x] = c
                lsel[row + x] = better


@njit(**JIT)
def _trace(lw, lsel, qe, rows, sizes, flags, f0, e0, two):
    """Algorithm 2 of [vadhiyar-notes]: follow the flags back from the last
    cell; writes the chosen rows at ``lw[OUT:]`` in queue order and returns
    their count.  O(qe)."""
    m, j, x = 0, f0, e0
    for t in range(qe - 1, -1, -1):
        s = lw[sizes + t]
        de = s if (two and lw[flags + t]) else 0
        if j < s or x < de:
            continue
        cell = (t * (f0 + 1) + j) * (e0 + 1) + x if two else t * (f0 + 1) + j
        if lsel[cell]:
            lw[OUT + m] = lw[rows + t]
            m += 1
            j -= s
            x -= de
    for a in range(m // 2):  # reverse: queue order
        lw[OUT + a], lw[OUT + m - 1 - a] = lw[OUT + m - 1 - a], lw[OUT + a]
    return m


@njit(**JIT)
def _overflow(lw, lsel, util, cells, flags_needed):
    """Record the sizes a step needs if the work arrays are short; True then."""
    if util + cells <= lw.shape[0] and flags_needed <= lsel.shape[0]:
        return False
    lw[OVERFLOW] = 1
    lw[NEED_UTIL] = max(lw[NEED_UTIL], cells)
    lw[NEED_SEL] = max(lw[NEED_SEL], flags_needed)
    return True


@njit(**JIT)
def los_select(now, shadow, q, p0, qt, dem, est, free, extra, lw, lsel):
    """The LOS set among the candidates q[p0:qt] (queue order) of an EASY
    backfill step: the jobs :func:`epochbench.heuristics.packing.los` chooses
    by its DP, before its K > 1 filter and first fit.

    Parameters
    ----------
    now, shadow : float
        The pass's time and the blocked head's shadow time.
    q : numpy.ndarray of int64
        The queue (job rows); candidates ``q[p0:qt]``.
    p0, qt : int
        Candidate range.
    dem : numpy.ndarray of int64
        Demand, n x K (column 0: processors, >= 1).
    est : numpy.ndarray of float64
        Estimates.
    free, extra : numpy.ndarray of int64
        Free now and free at the shadow time beyond the head's need (K); read only.
    lw, lsel : numpy.ndarray
        Work arrays of :func:`los_work`.

    Returns
    -------
    int
        m, the chosen rows being ``lw[OUT:OUT + m]`` in queue order; -1 when
        the work arrays are too small (``lw[OVERFLOW]`` set, with the sizes
        asked for).

    Notes
    -----
    Cost: O(q K) to find the qe eligible jobs, then O(qe f) for the
    one-constraint DP or O(qe f e) for the two-constraint one (f free
    processors, e = min(extra, f)), memory of the same order.

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    .. [shmueli2005] E. Shmueli, D. G. Feitelson. Backfilling with Lookahead to Optimize the
       Packing of Parallel Jobs. Journal of Parallel and Distributed Computing 65(9):1090-1107, 2005.
    """
    f0 = free[0]
    if f0 <= 0 or p0 >= qt:
        return 0
    n = dem.shape[0]
    rows, sizes, flags, util = OUT + n, OUT + 2 * n, OUT + 3 * n, OUT + 4 * n
    e0 = min(max(extra[0], 0), f0)
    qe, tot, late = _eligible(now, shadow, q, p0, qt, dem, est, free, extra, lw, rows, sizes, flags)
    if tot <= f0 and late <= e0:  # all fit: the trace takes every one
        for t in range(qe):
            lw[OUT + t] = lw[rows + t]
        return qe
    two = late > e0 and e0 < f0
    cells = (f0 + 1) * (e0 + 1) if two else f0 + 1
    if _overflow(lw, lsel, util, cells, qe * cells):
        return -1
    if two:
        _dp_2(lw, lsel, qe, sizes, flags, util, f0, e0)
    else:
        _dp_1(lw, lsel, qe, sizes, util, f0)
    return _trace(lw, lsel, qe, rows, sizes, flags, f0, e0, two)
