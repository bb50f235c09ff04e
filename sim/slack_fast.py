"""Slack-based and threshold backfilling on the compiled event loop.

``slack-bf`` and ``threshold-bf`` (:class:`epochbench.sim.variants.SlackBackfill`,
:class:`~epochbench.sim.variants.ThresholdBackfill`, [vadhiyar-notes]
"Backfilling Variants" 2) re-plan the reserved jobs at every pass and once
more for every job that fits now, to see whether starting it would push a
reserved job past its deadline.  The generic policy makes each plan in one
compiled call but spends the rest of the pass in Python (about 95 % of its
time on KTH).  :func:`slack_loop` runs the whole simulation compiled, step for
step as the generic policy does, so that the two engines give identical
schedules (tests/test_slack_fast.py):

* jobs get a reservation in queue order (slack-bf: at the first pass after
  they arrive, when their slack is finite; threshold-bf: at the first pass
  where their expected slowdown exceeds the threshold, slack 0), kept in
  that order; a reservation is a promise (the first plan) and a deadline
  (promise + slack);
* plan B books the reserved jobs, then the new ones, each at its earliest
  fit after the running jobs (:func:`~epochbench.sim.profile.rebuild`);
  where that would push a reserved job past both its deadline and its
  plan in force, the plan in force is compressed instead
  (:func:`_compressed`);
* the reserved jobs that B plans now start; then each job of the queue in
  arrival order that fits starts if, with it running, no reserved job is
  planned past ``max(deadline, B)``; then the reserved jobs planned now
  start again; a pass is asked for at the earliest planned start.

Every plan is on a profile of at most ``2 (r + 3 q) + 8`` rows for r running
and q queued jobs, so no booking sweeps the rows (as in the generic policy,
whose arrays are never full either).  The rows are preallocated; a pass that
would need more stops the loop (:data:`OVERFLOW`), and the run starts again
with twice as many (:func:`slack_grown`).  The kernels allocate nothing
(:data:`epochbench.sim.profile.JIT`).
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit
from .loop_events import _begin, _compact, _fits, _set_add, _set_del, arrive_all, end_one, next_event
from .profile import JIT, p_add, p_book, p_find, p_init, rebuild

#: rule codes in the compiled event loop (after fcfs 0 ... multi-queue 9)
SLACK_RULE, THRESHOLD_RULE = 10, 11
SLACK_RULES = (SLACK_RULE, THRESHOLD_RULE)
#: entries of ``sc`` (int64): overflow flag, rows a pass asked for, compressions
OVERFLOW, NEED, COMPRESSIONS = 0, 1, 2
#: first profile rows: enough for 4,096 queued jobs beside the running ones
FIRST_ROWS = 2 * 4 * 4096 + 16


def slack_work(policy, table, capacity, rows: int | None = None) -> tuple:
    """Work arrays of :func:`slack_loop` for ``policy`` on ``table``: each
    job's slack (seconds, inf: never reserved; threshold-bf: 0), the
    threshold (inf for slack-bf), a profile of ``rows`` rows (default:
    :data:`FIRST_ROWS`, more for a wide machine), and the job arrays of the
    plans and the queues."""
    n, k = table.n, table.k
    threshold = getattr(policy, "slowdown_threshold", None)
    if threshold is None:                      # SlackBackfill.slack, for every job at once
        important = (np.zeros(n, bool) if policy.important_procs is None
                     else table.demand[:, 0] >= policy.important_procs)
        factor = np.where(important, policy.important_slack_factor, policy.slack_factor)
        slack = np.where(factor < np.inf, factor * table.estimate, np.inf)
        threshold = np.inf
    else:
        slack = np.zeros(n)
    if rows is None:
        rows = FIRST_ROWS + 2 * min(n, int(np.asarray(capacity)[0]))
    return (slack, float(threshold), np.empty(rows), np.empty((rows, k), np.int64),
            np.empty(n + 1, np.int64), np.empty(n + 1, np.int64), np.empty(n + 1, np.int64),  # queue, reserved, order
            np.empty(n + 2, np.int64), np.empty(n + 2), np.full(n, -1, np.int64),  # running, ends, its row
            np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan),  # plan, trial, deadline, kept
            np.zeros(n, np.uint8),                                                  # seen / reserved flags
            np.zeros(3, np.int64))


def slack_grown(sc, rows: int) -> int:
    """Rows for the rerun after an overflow: at least twice as many, and what the pass asked for."""
    return max(2 * rows, int(sc[NEED]))


#: flags of ``mark``
SEEN, RESERVED = 1, 2


@njit(**JIT)
def _ends(now, runj, rend, rn, start, est):
    """Each running job busy until max(start + estimate, now) (the plan's view)."""
    for a in range(rn):
        rend[a] = max(start[runj[a]] + est[runj[a]], now)


@njit(**JIT)
def _overrun(now, runj, rn, start, est):
    for a in range(rn):
        if start[runj[a]] + est[runj[a]] < now:
            return True
    return False


@njit(**JIT)
def _book(pt, pf, m, dem, est, j):
    """Book job j at its earliest fit (as CompiledProfile find and add do); returns (m, start)."""
    t = pt[p_find(pt, pf, m, dem, j, est[j])]
    return p_add(pt, pf, m, t, t + est[j], dem, j, -1), t


@njit(**JIT)
def _compressed(now, order, g, nn, runj, rend, rn, dem, est, capacity, kept, plan, pt, pf):
    """The plan in force compressed (each reserved job in order taken out
    and booked again at its earliest fit, the others where they were), then
    the new jobs order[g:g + nn] booked after them
    (:meth:`SlackBackfill._base_plan`)."""
    m = p_init(pt, pf, capacity, now)
    for a in range(rn):
        m = p_add(pt, pf, m, now, rend[a], dem, runj[a], -1)
    for b in range(g):
        j = order[b]
        m = p_add(pt, pf, m, kept[j], kept[j] + est[j], dem, j, -1)
    for b in range(g):
        j = order[b]
        m = p_add(pt, pf, m, kept[j], kept[j] + est[j], dem, j, 1)
        m, plan[j] = _book(pt, pf, m, dem, est, j)
    for b in range(g, g + nn):
        m, plan[order[b]] = _book(pt, pf, m, dem, est, order[b])


@njit(**JIT)
def _base_plan(now, order, g, nn, runj, rend, rn, dem, est, start, capacity, kept, deadline, plan, pt, pf, sc):
    """Plan B of the reserved jobs order[:g] and the new ones order[g:g + nn]
    in ``plan`` (:meth:`SlackBackfill._base_plan`)."""
    rebuild(now, order[:g + nn], runj[:rn], rend[:rn], dem, est, capacity, pt, pf, plan)
    late = False                            # a reserved job past its deadline and its plan in force
    for b in range(g):
        j = order[b]
        if plan[j] > max(deadline[j], np.inf if np.isnan(kept[j]) else kept[j]):
            late = True
            break
    if not late:
        return
    for b in range(g):                      # no plan in force, or one before now: keep B
        j = order[b]
        if np.isnan(kept[j]) or kept[j] < now:
            return
    if _overrun(now, runj, rn, start, est):
        return
    sc[COMPRESSIONS] += 1
    _compressed(now, order, g, nn, runj, rend, rn, dem, est, capacity, kept, plan, pt, pf)


@njit(**JIT)
def _trial(now, order, r, runj, rend, rn, dem, est, capacity, pt, pf, trial, deadline, plan):
    """The plan S of the reserved jobs order[:r] with a candidate running
    (the last of the ``rn`` running jobs), as :func:`~epochbench.sim.profile.rebuild`
    makes it, in ``trial``; False as soon as a job is planned past
    ``max(deadline, plan)`` (the candidate may not start: the rest of S is
    not needed).  On a saturated stream most candidates stop early
    (:mod:`module notes <epochbench.sim.slack_fast>`)."""
    m = p_init(pt, pf, capacity, now)
    for a in range(rn):
        m = p_add(pt, pf, m, now, rend[a], dem, runj[a], -1)
    for b in range(r):
        j = order[b]
        i = p_find(pt, pf, m, dem, j, est[j])
        trial[j] = pt[i]
        if trial[j] > max(deadline[j], plan[j]):
            return False
        m = p_book(pt, pf, m, i, est[j], dem, j)
    return True


@njit(**JIT)
def _start(j, now, dem, dur, free, start, inq, ht, hj, hn, runj, rend, rpos, rn, est):
    hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
    return hn, _set_add(runj, rpos, rn, j)


@njit(**JIT)
def _slack_pass(now, q, qt, resv, rv, order, runj, rend, rpos, rn, dem, dur, est, submit, start, promised, free,
                inq, ht, hj, hn, capacity, slack, threshold, mark, plan, trial, deadline, kept, pt, pf, sc):
    """One pass of :meth:`SlackBackfill.schedule`.  Returns (qt, rv, rn, hn, wake),
    or rn = -1 when the profile rows would not do (:data:`OVERFLOW`)."""
    nn = 0                                  # the jobs to reserve, after the reserved ones in ``order``
    for p in range(qt):
        j = q[p]
        if threshold < np.inf:
            if mark[j] & RESERVED == 0 and (now - submit[j] + est[j]) / est[j] > threshold:
                order[rv + nn] = j
                nn += 1
        elif mark[j] & SEEN == 0:
            mark[j] |= SEEN
            if slack[j] < np.inf:
                order[rv + nn] = j
                nn += 1
    if 2 * (rn + 1 + 3 * (rv + nn)) + 8 > pt.shape[0]:
        sc[OVERFLOW], sc[NEED] = 1, 2 * (2 * (rn + 1 + 3 * (rv + nn)) + 8)
        return qt, rv, -1, hn, np.inf
    for b in range(rv):
        order[b] = resv[b]
    _ends(now, runj, rend, rn, start, est)
    _base_plan(now, order, rv, nn, runj, rend, rn, dem, est, start, capacity, kept, deadline, plan, pt, pf, sc)
    for b in range(rv, rv + nn):            # reserve the new ones: promise, deadline
        j = order[b]
        if np.isnan(promised[j]):
            promised[j] = plan[j]
        deadline[j] = plan[j] + slack[j]
        mark[j] |= RESERVED
        resv[b] = j
    rv += nn
    for b in range(rv):                     # the reserved jobs planned now
        j = resv[b]
        if inq[j] and plan[j] <= now and _fits(dem, j, free):
            hn, rn = _start(j, now, dem, dur, free, start, inq, ht, hj, hn, runj, rend, rpos, rn, est)
    for p in range(qt):
        if free[0] <= 0:
            break
        c = q[p]
        if not inq[c] or not _fits(dem, c, free):
            continue
        r = 0                               # the reserved jobs left, but c
        for b in range(rv):
            j = resv[b]
            if inq[j] and j != c:
                order[r] = j
                r += 1
        if r > 0:
            _ends(now, runj, rend, rn, start, est)
            runj[rn], rend[rn] = c, now + est[c]
            if not _trial(now, order, r, runj, rend, rn + 1, dem, est, capacity, pt, pf, trial, deadline, plan):
                continue
            for b in range(r):
                plan[order[b]] = trial[order[b]]
        hn, rn = _start(c, now, dem, dur, free, start, inq, ht, hj, hn, runj, rend, rpos, rn, est)
    for b in range(rv):                     # a start can bring a reserved job forward to now
        j = resv[b]
        if inq[j] and plan[j] <= now and _fits(dem, j, free):
            hn, rn = _start(j, now, dem, dur, free, start, inq, ht, hj, hn, runj, rend, rpos, rn, est)
    qt = _compact(q, 0, qt, inq)
    w = 0
    wake = np.inf
    for b in range(rv):
        j = resv[b]
        if inq[j]:
            resv[w] = j
            w += 1
            kept[j] = plan[j]
            wake = min(wake, plan[j])
    return qt, w, rn, hn, (wake if wake > now else np.inf)


@njit(nogil=True, **JIT)
def slack_loop(submit, dur, est, ids, dem, capacity, start, promised, free, ht, hj, inq,
               slack, threshold, pt, pf, q, resv, order, runj, rend, rpos, plan, trial, deadline, kept,
               mark, sc, prog):
    """The whole simulation, as :func:`epochbench.sim.policies._loop` runs
    the other rules: at each event time (a job end, an arrival, or a start
    a plan asked for) the jobs that end, then the arrivals, then one pass
    if a job waits.  Returns the passes (-1: the rows overflowed)."""
    n = dem.shape[0]
    hn = qt = rv = rn = ai = passes = 0
    wake = np.inf
    while ai < n or hn > 0 or wake < np.inf:
        now = next_event(ht, hn, submit, ai, wake, prog)
        while hn > 0 and ht[0] == now:
            j, hn = end_one(now, ht, hj, hn, dem, free)
            rn = _set_del(runj, rpos, rn, j)
        ai, qt = arrive_all(now, submit, ai, inq, q, qt)
        if qt == 0:
            continue  # empty queue: no pass (the plan's wake-up is kept)
        passes += 1
        qt, rv, rn, hn, wake = _slack_pass(now, q, qt, resv, rv, order, runj, rend, rpos, rn, dem, dur, est, submit,
                                           start, promised, free, inq, ht, hj, hn, capacity, slack, threshold,
                                           mark, plan, trial, deadline, kept, pt, pf, sc)
        if rn < 0:
            return -1
    return passes
