"""EASY scanned in another order on the compiled event loop: ``easy-sjf`` and
``easy-xfactor``.

``easy-sjf`` and ``easy-xfactor`` (:mod:`epochbench.sim.variants`,
[vadhiyar-notes] "Backfilling Variants" 1) are EASY whose backfill scan takes
the queue behind the head by estimated runtime, shortest first, or by
expected slowdown ``(now - submit + estimate) / estimate``, largest first;
ties in arrival order.  The head and its reservation are EASY's.  The
compiled loop runs them as EASY's pass (rules :data:`SJF_RULE`,
:data:`XFACTOR_RULE`) whose scan reads the jobs that :func:`scan_order`
lists, so that the two engines give identical
schedules (tests/test_scan_fast.py), in a loop of their own (:func:`scan_loop`:
their pass inside the shared loop made EASY's and conservative's a few per
cent slower):

* only a job that fits in what is free now and ends by the shadow time or
  fits in ``extra`` can start in the pass (both only fall as jobs start),
  as the generic engine's :func:`~epochbench.sim.policies.backfill_candidates`
  finds them; on a busy machine they are a few of the queue;
* those are sorted by ``(key, row)``: the key is the estimate (sjf) or
  minus the expected slowdown (xfactor), computed as
  :func:`~epochbench.sim.variants.expected_slowdown` does, the same
  floating-point operations in the same order; rows are in arrival order,
  which is numpy's ``lexsort((rows, key))`` of the generic policy.

The generic engine sorted the whole queue at every pass in numpy (O(q log
q) plus Python per pass); here a pass reads the queue once and sorts the
few jobs that may start.  The kernels allocate nothing
(:data:`epochbench.sim.profile.JIT`): the work arrays come from
:func:`scan_work`.
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit
from .loop_events import (_begin, _compact, _easy_head, _fits, _run_add, _run_del, arrive_all, easy_admits, end_one,
                          next_event, sort_by_key)
from .profile import JIT

#: rule codes in the compiled event loop (after fcfs 0, nonfcfs 1, easy 2,
#: conservative 3, los 4, bl-easy 5, bb-easy 6)
SJF_RULE, XFACTOR_RULE = 7, 8
#: the rules whose backfill scan is ordered by :func:`scan_order`
SCAN_RULES = (SJF_RULE, XFACTOR_RULE)


def scan_work(n: int) -> tuple:
    """Work arrays of :func:`scan_order` for ``n`` jobs: the rows listed
    (int64) and their keys (float64)."""
    return np.empty(max(n, 1), np.int64), np.empty(max(n, 1))


@njit(**JIT)
def _key(code, now, j, submit, est):
    """Sort key of job j: its estimate (sjf), or minus its expected slowdown
    (xfactor), as numpy computes ``-((now - submit + est) / est)``."""
    if code == SJF_RULE:
        return est[j]
    return -((now - submit[j] + est[j]) / est[j])


@njit(**JIT)
def scan_order(now, shadow, q, lo, hi, dem, est, submit, free, extra, code, order, keys):
    """List in ``order[0:c]`` the jobs of ``q[lo:hi]`` (the queue behind the
    head) that may start in this pass, sorted for rule ``code``; returns c.
    A job may start when it fits in ``free`` and ends by ``shadow`` or fits
    in ``extra``.  O(q K + c log c)."""
    c = 0
    for p in range(lo, hi):
        j = q[p]
        if not _fits(dem, j, free):
            continue
        if not now + est[j] <= shadow and not _fits(dem, j, extra):
            continue
        order[c] = j
        keys[c] = _key(code, now, j, submit, est)
        c += 1
    sort_by_key(keys, order, c)
    return c


@njit(**JIT)
def _ordered_starts(now, shadow, q, qh, qt, inq, dem, dur, est, ids, free, start,
                    run, rn, ht, hj, hn, extra, code, submit, so, sk):
    """EASY's backfill rule over the jobs behind the head q[qh] in the
    order of rule ``code`` (:func:`epochbench.sim.scan_fast.scan_order`
    lists those that may start, sorted); drop the started ones from the
    queue.  Returns (qt, rn, hn)."""
    if free[0] <= 0:
        return qt, rn, hn  # procs >= 1: nothing fits, no need to list the queue
    c = scan_order(now, shadow, q, qh + 1, qt, dem, est, submit, free, extra, code, so, sk)
    started = False
    for b in range(c):
        if free[0] <= 0:
            break  # procs >= 1: nothing more fits
        j = so[b]
        if not easy_admits(j, now, shadow, dem, est, free, extra):
            continue
        hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
        rn = _run_add(run, rn, j, start, est, ids)
        started = True
    if started:
        qt = _compact(q, qh + 1, qt, inq)
    return qt, rn, hn


@njit(**JIT)
def _ordered_pass(now, q, qh, qt, inq, dem, dur, est, ids, free, start, promised,
                  run, rn, ht, hj, hn, extra, code, submit, so, sk):
    """One pass of easy-sjf or easy-xfactor (rule ``code``): EASY's head
    (:func:`_easy_head`), then the scan in the rule's order
    (:func:`_ordered_starts`)."""
    qh, rn, hn, shadow = _easy_head(now, q, qh, qt, inq, dem, dur, est, ids, free, start, promised,
                                    run, rn, ht, hj, hn, extra)
    if qh < qt:
        qt, rn, hn = _ordered_starts(now, shadow, q, qh, qt, inq, dem, dur, est, ids, free, start,
                                     run, rn, ht, hj, hn, extra, code, submit, so, sk)
    return qh, qt, rn, hn


@njit(nogil=True, **JIT)
def scan_loop(code, submit, dur, est, ids, dem, start, promised, free, ht, hj, q, inq, run, extra, so, sk, prog):
    """The whole simulation, as :func:`epochbench.sim.policies._loop` runs
    EASY: at each event time the jobs that end, then the arrivals, then one
    pass if a job waits (:func:`_ordered_pass`).  Returns the passes."""
    n = dem.shape[0]
    hn = qh = qt = rn = ai = passes = 0
    while ai < n or hn > 0:
        now = next_event(ht, hn, submit, ai, np.inf, prog)
        while hn > 0 and ht[0] == now:
            j, hn = end_one(now, ht, hj, hn, dem, free)
            rn = _run_del(run, rn, j, start, est, ids)
        ai, qt = arrive_all(now, submit, ai, inq, q, qt)
        if qt == qh:
            continue  # empty queue: no pass
        passes += 1
        qh, qt, rn, hn = _ordered_pass(now, q, qh, qt, inq, dem, dur, est, ids, free, start, promised,
                                       run, rn, ht, hj, hn, extra, code, submit, so, sk)
    return passes
