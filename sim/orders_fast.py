"""Backfilling under a priority order on the compiled event loop: ``fcfs-bf``,
``sjf-bf``, ``bfit-bf``, ``wfit-bf``.

These policies (:class:`epochbench.sim.backfill.OrderedBackfill`,
[zhang-comparative] section 3) plan the whole queue in priority order at
every event, each job at its earliest fit after the running jobs and the
jobs before it, and start the jobs planned now.  The generic policy makes
each plan in one compiled call (:func:`plan_queue`) but spends most of a
pass in Python around it.  :func:`orders_loop` runs the whole simulation
compiled, step for step as the generic policy does, so that the two engines
give identical schedules (tests/test_orders_fast.py):

* the order: FCFS arrival; SJF estimate; WFit size, smallest first; BFit
  the jobs that fit in what is free at the pass first, by smallest
  leftover, then the others by smallest excess; ties by row (arrival), as
  the generic policy's ``lexsort`` breaks them;
* the plan (:func:`plan_queue`); FCFS extends the last pass's plan with the
  jobs arrived since while it holds (every job ended at its estimate, none
  runs past it, every job planned by the last pass started, no slot had no
  width); under the same conditions the other orders keep the slots of the
  jobs their order shares at its head with the last one and book the rest
  again (:func:`_keep_head`), where the generic policy plans the whole
  queue: the same slots;
* promises (a job's first planned start), the jobs planned now started in
  priority order while they fit, a pass asked for at the earliest planned
  start of the jobs left.

The profile has :func:`~epochbench.sim.profile.rows_needed` rows, as the
generic policy's.  The kernels allocate nothing
(:data:`epochbench.sim.profile.JIT`).
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit
from .loop_events import _begin, _compact, _fits, _set_add, _set_del, arrive_all, end_one, next_event, sort_by_key
from .profile import JIT, _book_order, p_add, p_advance, p_init, rows_needed

#: rule codes in the compiled event loop (after fcfs 0 ... threshold-bf 11), by order
ORDERS_RULE = {"fcfs": 12, "sjf": 13, "bfit": 14, "wfit": 15}
FCFS_BF, SJF_BF, BFIT_BF, WFIT_BF = (ORDERS_RULE[x] for x in ("fcfs", "sjf", "bfit", "wfit"))


def orders_work(table) -> tuple:
    """Work arrays of :func:`orders_loop`: the queue, the order, its keys
    (float: SJF; int: BFit, WFit), the running set, the profile, the plan,
    the last pass's order of the jobs it left queued."""
    n, k = table.n, table.k
    rows = rows_needed(n)
    return (np.empty(n + 1, np.int64), np.empty(n + 1, np.int64), np.empty(n + 1), np.empty(n + 1, np.int64),
            np.empty(n + 1, np.int64), np.full(n, -1, np.int64),
            np.empty(rows), np.empty((rows, k), np.int64), np.full(n, np.nan), np.empty(n + 1, np.int64))


@njit(**JIT)
def plan_queue(now, order, planned, running, start, dem, est, capacity, pt, pf, res, m):
    """Plan ``order`` (job rows, priority order), each job at its earliest
    fit from now on.  With ``m`` > 0 and no ``running`` job past its
    estimate, only ``order[planned:]`` is booked, after what the profile of
    ``m`` rows left at an earlier pass holds (the rows before now
    forgotten); else the whole of it is, on the profile of the running
    jobs, each busy until ``max(start + estimate, now)``: :func:`~epochbench.sim.profile.rebuild`.
    (A job running past its estimate is expected to end now, as in EASY; a
    job booked now that then does not fit waits for the next event.)
    Returns (rows, whether the plan can be extended at a later pass: no
    job runs past its estimate and no slot had no width (:func:`_book_order`:
    a plan of the whole queue makes its extra rows again, and a later
    extension would not see the ones now forgotten), whether it planned the
    whole order).  O(q m K) for the q jobs booked."""
    overrun = False
    for a in range(running.shape[0]):
        if start[running[a]] + est[running[a]] < now:
            overrun = True
            break
    whole = m == 0 or overrun
    if whole:
        m = p_init(pt, pf, capacity, now)
        for a in range(running.shape[0]):
            r = running[a]
            m = p_add(pt, pf, m, now, max(start[r] + est[r], now), dem, r, -1)
        planned = 0
    else:
        m = p_advance(pt, pf, m, now, False)
    m, flat = _book_order(order, planned, dem, est, pt, pf, m, res)
    return m, not (overrun or flat), whole


@njit(**JIT)
def _keep_head(now, order, qt, prev, kept, dem, est, pt, pf, res, rows):
    """How many jobs at the head of ``order[:qt]`` keep the slots the last
    plan gave them, and the rows of that plan's profile with the others'
    slots given back (0 and 0: plan the whole queue).  ``rows`` > 0 says
    that every job ended at its estimate since that plan and every job it
    planned now started (:meth:`epochbench.sim.backfill.OrderedBackfill._plan`'s
    conditions); then the jobs that ``order`` shares at its head with
    ``prev`` (the last order less the jobs it started) keep their slots,
    as a plan of the whole queue would give them: for such a job, every
    earlier start from now on was full already in that plan, which held
    the running jobs, the jobs started since (running where it booked
    them) and the jobs before it, all of them in the new plan too; and its
    slot still fits, since the last plan held all of these and it with no
    capacity below zero.  The jobs after the shared head leave the profile
    and are booked again (:func:`plan_queue` from ``planned``); equal
    neighbouring rows are merged.  The generic policy plans the whole
    queue at every pass (tests/test_orders_fast.py compares the two).
    O(q + r m K) for the r jobs taken out."""
    if rows == 0:
        return 0, 0
    shared, top = 0, min(qt, kept)
    while shared < top and order[shared] == prev[shared]:
        shared += 1
    for p in range(shared, kept):
        j = prev[p]
        rows = p_add(pt, pf, rows, res[j], res[j] + est[j], dem, j, 1)
    if shared < kept:
        rows = p_advance(pt, pf, rows, now, True)
    return shared, rows


@njit(**JIT)
def _order(code, q, qt, order, keys, ikeys, dem, est, free):
    """``order[:qt]``: the queue ``q[:qt]`` (arrival order) in priority
    order ``code``, ties by row."""
    if code == BFIT_BF:                     # those that fit first, each part by |leftover|
        f = 0
        for p in range(qt):
            if dem[q[p], 0] <= free[0]:
                order[f], ikeys[f] = q[p], free[0] - dem[q[p], 0]
                f += 1
        g = f
        for p in range(qt):
            if dem[q[p], 0] > free[0]:
                order[g], ikeys[g] = q[p], dem[q[p], 0] - free[0]
                g += 1
        sort_by_key(ikeys, order, f)
        sort_by_key(ikeys[f:], order[f:], qt - f)
        return
    for p in range(qt):
        order[p] = q[p]
        if code == SJF_BF:
            keys[p] = est[q[p]]
        elif code == WFIT_BF:
            ikeys[p] = dem[q[p], 0]
    if code == SJF_BF:
        sort_by_key(keys, order, qt)
    elif code == WFIT_BF:
        sort_by_key(ikeys, order, qt)


@njit(nogil=True, **JIT)
def orders_loop(code, submit, dur, est, ids, dem, capacity, start, promised, free, ht, hj, inq,
                q, order, keys, ikeys, runj, rpos, pt, pf, res, prev, prog):
    """The whole simulation, as :func:`epochbench.sim.policies._loop` runs
    the other rules: at each event time (a job end, an arrival, or a start
    a plan asked for) the jobs that end, then the arrivals, then one pass
    if a job waits (:meth:`OrderedBackfill.schedule`).  Returns the passes."""
    n = dem.shape[0]
    extends = code == FCFS_BF
    hn = qt = rn = ai = passes = rows = planned = kept = 0  # kept: the jobs in prev
    wake = np.inf
    while ai < n or hn > 0 or wake < np.inf:
        now = next_event(ht, hn, submit, ai, wake, prog)
        while hn > 0 and ht[0] == now:
            j, hn = end_one(now, ht, hj, hn, dem, free)
            rn = _set_del(runj, rpos, rn, j)
            if now != start[j] + est[j]:
                rows = 0  # its resources free at another time than planned
        ai, qt = arrive_all(now, submit, ai, inq, q, qt)
        if qt == 0:
            continue  # empty queue: no pass
        passes += 1
        _order(code, q, qt, order, keys, ikeys, dem, est, free)
        if not extends:
            planned, rows = _keep_head(now, order, qt, prev, kept, dem, est, pt, pf, res, rows)
        m, holds, whole = plan_queue(now, order[:qt], planned, runj[:rn], start, dem, est, capacity, pt, pf, res,
                                     rows)
        rows = m if holds else 0
        due = started = 0
        for p in range(qt):
            j = order[p]
            if np.isnan(promised[j]):
                promised[j] = res[j]
        for p in range(qt):
            j = order[p]
            if res[j] <= now:
                due += 1
                if _fits(dem, j, free):
                    hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
                    rn = _set_add(runj, rpos, rn, j)
                    started += 1
        if started < due:
            rows = 0  # a slot of the plan that was not there
        kept = 0
        for p in range(qt if not extends else 0):   # FCFS extends its plan instead (plan_queue)
            if inq[order[p]]:
                prev[kept] = order[p]
                kept += 1
        qt = planned = _compact(q, 0, qt, inq)
        wake = np.inf
        for p in range(qt):
            wake = min(wake, res[q[p]])
        if not wake > now:
            wake = np.inf
    return passes
