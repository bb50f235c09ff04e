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

Two shortcuts give the same set as the full two-constraint DP (hence the
same schedule) at less cost:

* every eligible job fits together: the trace takes them all;
* the reservation binds nothing (``extra[0] >= free[0]`` or the flagged
  eligible jobs fit together in ``extra[0]``): on every cell the trace visits
  the table equals the one-constraint table of algorithm 1, so that DP runs;

otherwise the two-constraint DP runs over (free, extra) pairs.

The DP's table is not stored cell by cell.  Its value is a subset sum:
``util[j, x]`` is the largest total size <= j of a set of the jobs so far
whose flagged total is <= x.  So the kernel keeps, before each job t and for
each x, the bitset of the totals such sets reach (bit a: total a), and a
job of size s adds a row shifted by s bits (flagged: the row x - s);
``util[j, x]`` is the highest bit <= j of row x.  The trace reads the two
cells of each step (take job t where ``util[j - s, x - de] + s >
util[j, x]``, strictly, as the DP's flag says), so it makes the DP's choice
exactly, 64 cells per machine word (measured, lublin03, 5000 jobs on 1024
nodes: 31 ms with a table of cells, 3.2 ms with the bitsets; EASY 1.6 ms).

The compiled kernels allocate nothing (:data:`epochbench.sim.profile.JIT`):
the work arrays come from :func:`los_work`.  A step that needs more bitset
words than they hold stops the loop (:data:`OVERFLOW`); ``run_fast`` then
runs the simulation again with arrays of the size asked for
(:func:`los_grown`).
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit
from .profile import JIT

#: largest LOS table (bytes) a run grows to (the generic engine's limit,
#: epochbench.heuristics.packing.LOS_TABLE_BYTES)
LOS_TABLE_BYTES = 2**31

#: rule code of LOS in the compiled event loop (after fcfs 0, nonfcfs 1, easy 2, conservative 3)
LOS_RULE = 4
#: ``lw`` header: overflow flag, bitset words asked for by the step that
#: overflowed, selection steps (backfill steps with candidates)
OVERFLOW, NEED, STEPS = 0, 1, 2
#: ``lw[OUT:OUT + m]``: the rows :func:`los_select` chose, in queue order
OUT = 3
#: initial number of bitset words
SCRATCH = 1 << 18
_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


def los_work(n: int, used: bool, words: int | None = None):
    """Work arrays of :func:`los_select` for ``n`` jobs: ``lw`` (int64: header,
    then four blocks of ``n``: chosen rows, eligible rows, sizes, flags) and
    ``bits`` (uint64, the DP's bitsets).

    Parameters
    ----------
    n : int
        Jobs in the stream (bounds the queue).
    used : bool
        False: one-word arrays (a policy other than ``los``).
    words : int, optional
        Bitset words; default :data:`SCRATCH`.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lw, bits)``.

    Notes
    -----
    Memory O(n + words).
    """
    if not used:
        return np.zeros(OUT + 1, np.int64), np.zeros(1, np.uint64)
    return np.zeros(OUT + 4 * n, np.int64), np.zeros(max(int(words or SCRATCH), 1), np.uint64)


def los_stats(lw: np.ndarray) -> dict:
    """The ``selector_stats`` of a run (as the generic policy counts them:
    steps with candidates; a heuristic is never unproven nor falls back).

    Parameters
    ----------
    lw : numpy.ndarray
        The run's work array.

    Returns
    -------
    dict
        ``steps``, ``unproven``, ``fallback``, ``rule_better``.
    """
    return {"steps": int(lw[STEPS]), "unproven": 0, "fallback": 0, "rule_better": 0}


def los_grown(lw: np.ndarray, bits: np.ndarray) -> int:
    """Bitset words for a run after an overflow: twice what the overflowing
    step asked for, never fewer than before.

    Parameters
    ----------
    lw, bits : numpy.ndarray
        The work arrays of the run that overflowed.

    Returns
    -------
    int
        Words for :func:`los_work`.

    Raises
    ------
    ValueError
        When that is over :data:`LOS_TABLE_BYTES` (or the request overflowed
        int64): LOS is pseudo-polynomial in the free capacity, as the
        generic engine's table limit says.
    """
    need = int(lw[NEED])
    words = max(2 * need, bits.shape[0])
    if need < 0 or 8 * words > LOS_TABLE_BYTES:
        size = "beyond int64" if need < 0 else f"{8 * words / 2**30:.3g} GiB"
        raise ValueError(f"los: its dynamic-programming bitsets ({size}) are over the "
                         f"{LOS_TABLE_BYTES / 2**30:.3g} GiB limit; LOS is pseudo-polynomial in the free capacity, "
                         "so express the resource in coarser units")
    return words


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
def _msb(v):
    """Index of the highest set bit of a non-zero uint64.  O(1)."""
    r = 0
    for b in (32, 16, 8, 4, 2, 1):
        if v >> np.uint64(b):
            v >>= np.uint64(b)
            r += b
    return r


@njit(**JIT)
def _highest(bits, row, j):
    """Highest set bit <= j of the bitset at ``bits[row:]`` (bit 0, the
    empty set, is always set): ``util`` of the cell.  O(j / 64)."""
    w = j >> 6
    b = j & 63
    v = bits[row + w] & (_ALL if b == 63 else (_ONE << np.uint64(b + 1)) - _ONE)
    while v == 0:
        w -= 1
        v = bits[row + w]
    return (w << 6) + _msb(v)


@njit(**JIT)
def _shifted(bits, row, w, ws, bs):
    """Word w of the bitset at ``bits[row:]`` shifted up by ``64 ws + bs`` bits."""
    i = w - ws
    if i < 0:
        return np.uint64(0)
    v = bits[row + i] << np.uint64(bs)
    if bs > 0 and i > 0:
        v |= bits[row + i - 1] >> np.uint64(64 - bs)
    return v


@njit(**JIT)
def _reach(lw, bits, qe, sizes, flags, ne, nw, two):
    """Slab t of ``bits`` (``ne`` rows of ``nw`` words, row x at ``(t * ne +
    x) * nw``): the totals reached by sets of jobs 0..t-1 whose flagged
    total is <= x.  Slab 0 is the empty set; job t adds its size to every
    total of row x - de (de = its size if flagged in a two-constraint DP,
    else 0).  O(qe ne nw)."""
    for c in range(ne * nw):
        bits[c] = np.uint64(0)
    for x in range(ne):
        bits[x * nw] = _ONE
    for t in range(qe - 1):
        s = lw[sizes + t]
        de = s if (two and lw[flags + t]) else 0
        ws, bs = s >> 6, s & 63
        src, dst = t * ne * nw, (t + 1) * ne * nw
        for x in range(ne):
            for w in range(nw):
                v = bits[src + x * nw + w]
                if x >= de:
                    v |= _shifted(bits, src + (x - de) * nw, w, ws, bs)
                bits[dst + x * nw + w] = v


@njit(**JIT)
def _trace(lw, bits, qe, rows, sizes, flags, f0, e0, ne, nw, two):
    """Algorithm 2 of [vadhiyar-notes]: from the last cell back, take job t
    where it strictly raises the utilisation (the DP's flag); writes the
    chosen rows at ``lw[OUT:]`` in queue order and returns their count.
    O(qe f0 / 64)."""
    m, j, x = 0, f0, (e0 if two else 0)
    for t in range(qe - 1, -1, -1):
        s = lw[sizes + t]
        de = s if (two and lw[flags + t]) else 0
        if j < s or x < de:
            continue
        slab = t * ne * nw
        if _highest(bits, slab + (x - de) * nw, j - s) + s > _highest(bits, slab + x * nw, j):
            lw[OUT + m] = lw[rows + t]
            m += 1
            j -= s
            x -= de
    for a in range(m // 2):  # reverse: queue order
        lw[OUT + a], lw[OUT + m - 1 - a] = lw[OUT + m - 1 - a], lw[OUT + a]
    return m


@njit(**JIT)
def los_select(now, shadow, q, p0, qt, dem, est, free, extra, lw, bits):
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
    lw, bits : numpy.ndarray
        Work arrays of :func:`los_work`.

    Returns
    -------
    int
        m, the chosen rows being ``lw[OUT:OUT + m]`` in queue order; -1 when
        ``bits`` is too small (``lw[OVERFLOW]`` set, ``lw[NEED]`` the words
        asked for).

    Notes
    -----
    Cost: O(q K) to find the qe eligible jobs, then O(qe f / 64) for the
    one-constraint DP or O(qe e f / 64) for the two-constraint one (f free
    processors, e = min(extra, f)), memory of the same order in words.

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    .. [shmueli2005] E. Shmueli, D. G. Feitelson. Backfilling with Lookahead to Optimize the
       Packing of Parallel Jobs. Journal of Parallel and Distributed Computing 65(9):1090-1107, 2005.
    """
    if p0 >= qt:
        return 0
    lw[STEPS] += 1
    f0 = free[0]
    if f0 <= 0:
        return 0
    n = dem.shape[0]
    rows, sizes, flags = OUT + n, OUT + 2 * n, OUT + 3 * n
    e0 = min(max(extra[0], 0), f0)
    qe, tot, late = _eligible(now, shadow, q, p0, qt, dem, est, free, extra, lw, rows, sizes, flags)
    if tot <= f0 and late <= e0:  # all fit: the trace takes every one
        for t in range(qe):
            lw[OUT + t] = lw[rows + t]
        return qe
    two = late > e0 and e0 < f0
    ne, nw = (e0 + 1 if two else 1), f0 // 64 + 1
    if qe * ne * nw > bits.shape[0]:
        lw[OVERFLOW] = 1
        lw[NEED] = max(lw[NEED], qe * ne * nw)
        return -1
    _reach(lw, bits, qe, sizes, flags, ne, nw, two)
    return _trace(lw, bits, qe, rows, sizes, flags, f0, e0, ne, nw, two)
