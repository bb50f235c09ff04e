"""Multiple-queue backfilling on the compiled event loop.

``multi-queue`` (:class:`epochbench.sim.variants.MultiQueue`, [vadhiyar-notes]
"Backfilling Variants" 3) keeps a queue per estimate class, each running EASY
on its own partition of the processors, optionally borrowing the idle
processors of partitions whose queue is empty (``lend``).  Its own compiled
loop (:func:`mq_loop`, rule :data:`MQ_RULE` of
:func:`epochbench.sim.policies.run_fast`) follows the generic policy's
rules step for step, so that the two engines give identical schedules
(tests/test_multiqueue_fast.py):

* each job's queue is fixed at arrival (:meth:`MultiQueue.queue_of`), so it
  is computed for all jobs before the run (:func:`mq_work`), and each queue
  gets its own region of one array, in arrival order;
* a pass serves the queues in order, shortest class first: head-first
  starts while the head fits in what the queue may use now, then the head's
  reservation, then the rest in arrival order under EASY's rule;
* what a job of queue i may use now is its partition's free processors and,
  with ``lend``, those of every other partition whose queue is empty, and
  of every other partition for a job wider than partition i
  (:func:`_usable`); a start takes its own partition's processors first,
  then the lenders' in partition order (:func:`_take`), and the job keeps a
  row of what it took from each partition (a pool of rows, one per running
  job), which goes back when it ends (:func:`mq_finish`);
* the head's reservation is EASY's on its partition: the running jobs that
  hold processors of it, by expected end, release them until the head fits
  (the shadow time); ``extra`` is what is then left beside it.  A head wider
  than its partition (``lend`` only) is reserved on the whole machine, with
  all that each running job holds.

The generic policy costs O(q + r log r) Python operations per queue and
pass; here the same work is compiled.  The kernels allocate nothing
(:data:`epochbench.sim.profile.JIT`): the work arrays come from
:func:`mq_work`.
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit
from .loop_events import _begin, _compact, _run_add, _run_del, end_one, next_event
from .profile import JIT

#: rule code in the compiled event loop (after fcfs 0 ... easy-xfactor 8)
MQ_RULE = 9
#: rows of ``mqs`` (int64, shape (4, queues)): partition sizes, free
#: processors per partition, each queue's head and tail in ``mqq``
SIZE, FREE, HEAD, TAIL = 0, 1, 2, 3
#: entries of ``mqc``: the lend flag, the top of the stack of free pool rows,
#: the jobs queued
LEND, TOP, QUEUED = 0, 1, 2


def mq_work(policy, table) -> tuple:
    """Work arrays of the multi-queue kernels for ``policy``, already reset
    on ``table`` (its partitions set, the stream checked): ``mqs`` and
    ``mqc`` (the state above), ``mqj`` (row 0: each job's queue; row 1:
    its row of the pool while it runs), ``mqq`` (the queues, one region
    each), ``mqh`` (the pool: what each running job holds of each
    partition) and ``mqf`` (the stack of free pool rows).  Also sets ``policy.moved``, the jobs queued in another
    queue than their estimate's, as the generic policy counts them."""
    n, nq = table.n, policy.sizes.shape[0]
    home = np.searchsorted(policy.bounds, table.estimate, side="left").astype(np.int64)
    queue = home.copy()
    if not policy.lend and n:                   # a job wider than its partition: MultiQueue.queue_of
        need = table.demand[:, 0]
        wide = np.nonzero(need > policy.sizes[home])[0]
        if wide.size:
            pairs, first, back = np.unique(np.stack([home[wide], need[wide]], axis=1), axis=0,
                                           return_index=True, return_inverse=True)
            goes = np.array([policy.queue_of(int(wide[f])) for f in first], np.int64)
            queue[wide] = goes[back.reshape(-1)]
    policy.moved = int((queue != home).sum())
    counts = np.bincount(queue, minlength=nq)
    mqs = np.zeros((4, nq), np.int64)
    mqs[SIZE] = mqs[FREE] = policy.sizes
    mqs[HEAD] = mqs[TAIL] = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rows = min(n, int(policy.sizes.sum())) + 1                 # a running job holds >= 1 processor
    mqc = np.array([int(policy.lend), rows, 0], np.int64)
    mqj = np.stack([queue, np.full(n, -1, np.int64)])
    return mqs, mqc, mqj, np.empty(max(n, 1), np.int64), np.zeros((rows, nq), np.int64), np.arange(rows,
                                                                                                      dtype=np.int64)


@njit(**JIT)
def mq_arrive(j, mqs, mqc, mqj, mqq):
    """Job j joins the tail of its queue."""
    i = mqj[0, j]
    mqq[mqs[TAIL, i]] = j
    mqs[TAIL, i] += 1
    mqc[QUEUED] += 1


@njit(**JIT)
def mq_finish(j, mqs, mqc, mqj, mqh, mqf):
    """Job j ended: what it held goes back to each partition, its row to the pool."""
    r = mqj[1, j]
    for p in range(mqs.shape[1]):
        mqs[FREE, p] += mqh[r, p]
    mqf[mqc[TOP]] = r
    mqc[TOP] += 1


@njit(**JIT)
def _usable(mqs, mqc, i, wide):
    """Processors a job of queue i could take now: its partition's and, with
    lending, those of every other partition whose queue is empty, or of
    every other one for a job wider than partition i (``wide``;
    :meth:`MultiQueue._usable_for`)."""
    s = mqs[FREE, i]
    if mqc[LEND] == 0:
        return s
    for p in range(mqs.shape[1]):
        if p != i and (wide or mqs[HEAD, p] == mqs[TAIL, p]):
            s += mqs[FREE, p]
    return s


@njit(**JIT)
def _take(now, i, j, mqs, mqc, mqj, mqh, mqf, dem, dur, free, start, inq, ht, hj, hn, run, rn, est, ids):
    """Start job j of queue i: its partition's processors first, then the
    idle lenders', then (a job wider than partition i) the other
    partitions', each in partition order (:meth:`MultiQueue._take`).
    Returns (hn, rn)."""
    need = dem[j, 0]
    mqc[TOP] -= 1
    r = mqf[mqc[TOP]]
    nq = mqs.shape[1]
    for p in range(nq):
        mqh[r, p] = 0
    got = min(need, mqs[FREE, i])
    mqh[r, i] = got
    if mqc[LEND] != 0:
        for p in range(nq):                      # idle partitions first
            if p != i and mqs[HEAD, p] == mqs[TAIL, p]:
                g = min(need - got, mqs[FREE, p])
                mqh[r, p] = g
                got += g
        if need > mqs[SIZE, i]:
            for p in range(nq):                  # then the busy ones
                if p != i and mqs[HEAD, p] != mqs[TAIL, p]:
                    g = min(need - got, mqs[FREE, p])
                    mqh[r, p] = g
                    got += g
    for p in range(nq):
        mqs[FREE, p] -= mqh[r, p]
    mqj[1, j] = r
    mqc[QUEUED] -= 1
    hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
    return hn, _run_add(run, rn, j, start, est, ids)


@njit(**JIT)
def _reservation(now, i, h, mqs, mqj, mqh, dem, start, est, run, rn):
    """(shadow, extra) of queue i's blocked head h: EASY's on its partition,
    or on the whole machine for a head wider than it
    (:meth:`MultiQueue._reservation`).  ``run`` is sorted by expected end;
    the jobs whose expected end has passed all read ``now``, and are all
    released before any later one, in any order: the same result."""
    need = dem[h, 0]
    nq = mqs.shape[1]
    own = need <= mqs[SIZE, i]
    fr = mqs[FREE, i]
    if not own:
        fr = 0
        for p in range(nq):
            fr += mqs[FREE, p]
    shadow = np.inf
    found = False
    for a in range(rn):
        j = run[a]
        r = mqj[1, j]
        hold = mqh[r, i]
        if not own:
            hold = 0
            for p in range(nq):
                hold += mqh[r, p]
        if hold <= 0:
            continue
        key = max(start[j] + est[j], now)
        if found and key != shadow:
            break
        fr += hold
        if not found and need <= fr:
            shadow = key
            found = True
    return shadow, fr - need


@njit(**JIT)
def _serve(now, i, mqs, mqc, mqj, mqq, mqh, mqf, dem, dur, est, ids, free, start, promised, inq,
           ht, hj, hn, run, rn):
    """One queue's EASY pass (:meth:`MultiQueue._serve`).  Returns (hn, rn)."""
    size = mqs[SIZE, i]
    p, t = mqs[HEAD, i], mqs[TAIL, i]
    while p < t:
        j = mqq[p]
        if dem[j, 0] > _usable(mqs, mqc, i, dem[j, 0] > size):
            break
        hn, rn = _take(now, i, j, mqs, mqc, mqj, mqh, mqf, dem, dur, free, start, inq, ht, hj, hn, run, rn, est, ids)
        p += 1
        mqs[HEAD, i] = p                         # an emptied queue lends from here on
    if p == t:
        return hn, rn
    h = mqq[p]
    shadow, extra = _reservation(now, i, h, mqs, mqj, mqh, dem, start, est, run, rn)
    if np.isnan(promised[h]):
        promised[h] = shadow
    first = -1
    narrow, wide = _usable(mqs, mqc, i, False), _usable(mqs, mqc, i, True)   # wide >= narrow
    for a in range(p + 1, t):
        if wide <= 0:
            break  # procs >= 1: nothing more fits
        j = mqq[a]
        need = dem[j, 0]
        if need > (wide if need > size else narrow):
            continue
        if now + est[j] <= shadow:
            pass
        elif need <= extra:
            extra -= need
        else:
            continue
        hn, rn = _take(now, i, j, mqs, mqc, mqj, mqh, mqf, dem, dur, free, start, inq, ht, hj, hn, run, rn, est, ids)
        narrow, wide = _usable(mqs, mqc, i, False), _usable(mqs, mqc, i, True)
        if first < 0:
            first = a
    if first >= 0:
        mqs[TAIL, i] = _compact(mqq, first, t, inq)
    return hn, rn


@njit(**JIT)
def mq_pass(now, mqs, mqc, mqj, mqq, mqh, mqf, dem, dur, est, ids, free, start, promised, inq,
            ht, hj, hn, run, rn):
    """One pass: every non-empty queue served in order (shortest class
    first).  Returns (hn, rn)."""
    for i in range(mqs.shape[1]):
        if mqs[HEAD, i] < mqs[TAIL, i]:
            hn, rn = _serve(now, i, mqs, mqc, mqj, mqq, mqh, mqf, dem, dur, est, ids, free, start, promised, inq,
                            ht, hj, hn, run, rn)
    return hn, rn


@njit(nogil=True, **JIT)
def mq_loop(submit, dur, est, ids, dem, start, promised, free, ht, hj, inq, run,
            mqs, mqc, mqj, mqq, mqh, mqf, prog):
    """The whole simulation, as :func:`epochbench.sim.policies._loop` runs
    the other rules: at each event time the jobs that end, then the
    arrivals, then one pass if a job waits.  Returns the passes."""
    n = dem.shape[0]
    hn = rn = ai = passes = 0
    while ai < n or hn > 0:
        now = next_event(ht, hn, submit, ai, np.inf, prog)
        while hn > 0 and ht[0] == now:
            j, hn = end_one(now, ht, hj, hn, dem, free)
            rn = _run_del(run, rn, j, start, est, ids)
            mq_finish(j, mqs, mqc, mqj, mqh, mqf)
        while ai < n and submit[ai] == now:
            inq[ai] = True
            mq_arrive(ai, mqs, mqc, mqj, mqq)
            ai += 1
        if mqc[QUEUED] == 0:
            continue  # empty queues: no pass
        passes += 1
        hn, rn = mq_pass(now, mqs, mqc, mqj, mqq, mqh, mqf, dem, dur, est, ids, free, start, promised, inq,
                         ht, hj, hn, run, rn)
    return passes
