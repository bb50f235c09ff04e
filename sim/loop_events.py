"""Kernels that the rules of the compiled event loops share
(:func:`epochbench.sim.policies.run_fast`): the heap of job ends, starting a
job, dropping started jobs from a queue, the list of running jobs sorted
by expected end that EASY's reservations read, an unordered set of the
running jobs (for plans, whose profile does not depend on the order the
running jobs are added in), and a sort of jobs by a key, then row.  Modules of one rule
(:mod:`epochbench.sim.multiqueue_fast`) import them from here, and the loop
too, so that imports run one way.  They allocate nothing
(:data:`epochbench.sim.profile.JIT`)."""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit
from .profile import INLINE, JIT


@njit(**JIT)
def _fits(dem, j, free):
    for r in range(free.shape[0]):
        if dem[j, r] > free[r]:
            return False
    return True


@njit(**JIT)
def _push(ht, hj, hn, t, j):
    """Binary min-heap on time; returns the new size."""
    i = hn
    while i > 0:
        p = (i - 1) // 2
        if ht[p] <= t:
            break
        ht[i] = ht[p]
        hj[i] = hj[p]
        i = p
    ht[i] = t
    hj[i] = j
    return hn + 1


@njit(**JIT)
def _pop(ht, hj, hn):
    """Remove the root; returns (job, new size)."""
    top = hj[0]
    hn -= 1
    t, j = ht[hn], hj[hn]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= hn:
            break
        if c + 1 < hn and ht[c + 1] < ht[c]:
            c += 1
        if ht[c] >= t:
            break
        ht[i] = ht[c]
        hj[i] = hj[c]
        i = c
    if hn > 0:
        ht[i] = t
        hj[i] = j
    return top, hn


@njit(**JIT)
def _begin(j, now, dem, dur, free, start, inq, ht, hj, hn):
    start[j] = now
    inq[j] = False
    for r in range(free.shape[0]):
        free[r] -= dem[j, r]
    return _push(ht, hj, hn, now + dur[j], j)


@njit(**JIT)
def _compact(q, p0, qt, inq):
    """Drop the started jobs from q[p0:qt]; returns the new tail."""
    w = p0
    for p in range(p0, qt):
        if inq[q[p]]:
            q[w] = q[p]
            w += 1
    return w


# -- EASY: running jobs sorted by (start + estimate, id) --
@njit(**JIT)
def _run_pos(run, rn, e, jid, start, est, ids):
    lo, hi = 0, rn
    while lo < hi:
        mid = (lo + hi) // 2
        k = run[mid]
        ek = start[k] + est[k]
        if ek < e or (ek == e and ids[k] < jid):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**JIT)
def _run_add(run, rn, j, start, est, ids):
    p = _run_pos(run, rn, start[j] + est[j], ids[j], start, est, ids)
    for a in range(rn, p, -1):
        run[a] = run[a - 1]
    run[p] = j
    return rn + 1


@njit(**JIT)
def _run_del(run, rn, j, start, est, ids):
    p = _run_pos(run, rn, start[j] + est[j], ids[j], start, est, ids)
    while run[p] != j:
        p += 1
    for a in range(p, rn - 1):
        run[a] = run[a + 1]
    return rn - 1


@njit(**JIT)
def _shadow(now, h, run, rn, dem, free, start, est, acc):
    """Shadow time of head h; ``acc`` ends as the free capacity at it."""
    k = free.shape[0]
    for r in range(k):
        acc[r] = free[r]
    shadow = np.inf
    found = False
    for p in range(rn):
        j = run[p]
        key = max(start[j] + est[j], now)
        if found and key != shadow:
            break
        for r in range(k):
            acc[r] += dem[j, r]
        if not found and _fits(dem, h, acc):
            shadow = key
            found = True
    return shadow


@njit(**INLINE)
def _easy_head(now, q, qh, qt, inq, dem, dur, est, ids, free, start, promised, run, rn, ht, hj, hn, extra):
    """EASY's pass up to its backfill step: start jobs from the head while
    they fit, then reserve the blocked head (its shadow time; ``extra``
    ends as what is left beside it).  Returns (qh, rn, hn, shadow); the
    shadow is NaN when the queue emptied."""
    p = qh
    while p < qt and _fits(dem, q[p], free):
        j = q[p]
        hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
        rn = _run_add(run, rn, j, start, est, ids)
        p += 1
    if p == qt:
        return p, rn, hn, np.nan
    h = q[p]
    shadow = _shadow(now, h, run, rn, dem, free, start, est, extra)
    for r in range(free.shape[0]):
        extra[r] -= dem[h, r]
    if np.isnan(promised[h]):
        promised[h] = shadow
    return p, rn, hn, shadow


@njit(**INLINE)
def easy_admits(j, now, shadow, dem, est, free, extra):
    """EASY's backfill rule for job j: it fits now and ends by the
    ``shadow`` time, or fits in ``extra`` too, which it then uses up."""
    if not _fits(dem, j, free):
        return False
    if now + est[j] <= shadow:
        return True
    if not _fits(dem, j, extra):
        return False
    for r in range(free.shape[0]):
        extra[r] -= dem[j, r]
    return True


# -- the steps of an event loop that its rules share (the loops of the rule modules) --
@njit(**INLINE)
def next_event(ht, hn, submit, ai, wake, prog):
    """The next event time: the earliest job end, arrival or planned start
    (``wake``; inf: none); reported in ``prog`` for run_fast's progress thread."""
    now = ht[0] if hn > 0 else np.inf
    if ai < submit.shape[0] and submit[ai] < now:
        now = submit[ai]
    if wake < now:
        now = wake
    prog[0], prog[1] = ai, now
    return now


@njit(**INLINE)
def end_one(now, ht, hj, hn, dem, free):
    """Pop a job that ends at ``now`` (the caller checks ``ht[0] == now``)
    and give its resources back.  Returns (job, hn)."""
    j, hn = _pop(ht, hj, hn)
    for r in range(free.shape[0]):
        free[r] += dem[j, r]
    return j, hn


@njit(**INLINE)
def arrive_all(now, submit, ai, inq, q, qt):
    """Append the jobs that arrive at ``now`` to the queue ``q[:qt]`` in
    arrival order.  Returns (ai, qt)."""
    while ai < submit.shape[0] and submit[ai] == now:
        inq[ai] = True
        q[qt] = ai
        qt += 1
        ai += 1
    return ai, qt


# -- the running jobs as an unordered set: ``runj[:rn]``, ``rpos[j]`` = j's place --
@njit(**JIT)
def _set_add(runj, rpos, rn, j):
    runj[rn], rpos[j] = j, rn
    return rn + 1


@njit(**JIT)
def _set_del(runj, rpos, rn, j):
    """Drop job j (the last entry takes its place)."""
    a, rn = rpos[j], rn - 1
    runj[a] = runj[rn]
    rpos[runj[a]] = a
    rpos[j] = -1
    return rn


# -- jobs sorted by (key, row) --
@njit(**JIT)
def _ahead(keys, order, a, b):
    """Entry a sorts before entry b: smaller key, then smaller row; a NaN key
    last (as numpy's sorts place it; an estimate is finite and > 0, so no
    key is NaN today)."""
    ka, kb = keys[a], keys[b]
    if ka != ka:
        return kb != kb and order[a] < order[b]
    if kb != kb or ka < kb:
        return True
    return ka == kb and order[a] < order[b]


@njit(**JIT)
def _swap(keys, order, a, b):
    keys[a], keys[b] = keys[b], keys[a]
    order[a], order[b] = order[b], order[a]


@njit(**JIT)
def _sift(keys, order, i, n):
    """Sift entry i down the max-heap of entries [0, n)."""
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and _ahead(keys, order, c, c + 1):
            c += 1
        if not _ahead(keys, order, i, c):
            return
        _swap(keys, order, i, c)
        i = c


@njit(**JIT)
def sort_by_key(keys, order, n):
    """Sort entries [0, n) by (key, row) in place: insertion for a few,
    heapsort above (O(n log n), no allocation).  The order is total (rows
    differ), so both give the one answer."""
    if n <= 16:
        for i in range(1, n):
            k = i
            while k > 0 and _ahead(keys, order, k, k - 1):
                _swap(keys, order, k, k - 1)
                k -= 1
        return
    for i in range(n // 2 - 1, -1, -1):
        _sift(keys, order, i, n)
    for end in range(n - 1, 0, -1):
        _swap(keys, order, 0, end)
        _sift(keys, order, 0, end)
