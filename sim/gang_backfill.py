"""Backfilling inside every row of the Ousterhout matrix: the Schedule step
of backfilling gang scheduling (BGS, [zhang-comparative] section 6.2) and of MBGS
(section 6.5).

Each row of the matrix is a virtual machine of ``n`` processors that runs at
``1/mpl`` of the machine's speed in the worst case, so a job's execution time
there is estimated as ``mpl x estimate`` (section 6.2).  Every row keeps an
availability profile (free processors over time) of the jobs whose home it is
(``[placed, placed + mpl x estimate)``) and of the reservations of waiting
jobs.  The Schedule step is conservative backfilling ([zhang-comparative] section 3,
[rajaei-dadfar] "Conservative Backfilling") on these profiles, exactly as
:class:`epochbench.sim.policies.Conservative` runs it on the whole machine:

* a waiting job is booked at the earliest time its processors are free in
  some row for its whole estimate; of the rows, the one with the earliest
  such time (ties: the best fit, i.e. fewest processors free now, then the
  row that runs soonest) takes the reservation;
* new arrivals are booked in arrival order; when capacity was released early
  (a job ended before its predicted end, or a job was moved out of a row by
  CompactMatrix / CollapseMatrix) every waiting job is booked again in queue
  order (compression), never later than before;
* every job whose reservation is now starts in its reserved row, on that
  row's lowest empty columns (if the columns are not empty, because a job
  overran its prediction, it waits and the whole queue is booked again at the
  next pass, the next event: the reservations after it hung on its start, so
  they ask for no pass, :func:`epochbench.sim.engine.wake_time`);
* ``mpl x estimate`` is the paper's worst case, and it holds for a row that
  gets every mpl-th stretch of time, but not for time slices: a job placed
  while its row waits for its turn first waits up to ``(mpl - 1)`` slices,
  so it can end, and a reservation behind it can come, up to
  ``(mpl - 1) x slice`` later than the profile says, with exact estimates
  too (capacity 4, slice 10 s, mpl 2: a 1000 s job, then an 11 s one placed
  at 1 into the other row ends at 31, not at 1 + 2 x 11 = 23, and the
  third job, promised 23, is placed at 31).  The booking follows the paper
  ([zhang-comparative] section 6.2: "using a reservation guarantees that
  the start time of a job will not exceed a certain limit" is true of the
  ``mpl x estimate`` model, not of the slices); ``promised`` records the
  first booking, so ``placed - promised`` shows each slip.  Context
  switches slip a job the same way, at any mpl: each entry into execution
  costs ``switch_overhead`` of its slice, so with exact estimates a job can
  run past ``mpl x estimate``;
* a job still running at its predicted end without having done its
  estimate's work (a slip of the model, above) keeps its processors in its
  row's profile until it ends (:meth:`RowBackfill.hold`, at the next pass,
  which books the queue again): the paper does not say what a slip does to
  the reservations, and a profile that showed those processors free booked
  jobs into a row where they could not start, to wait for the next event
  while another row had room (12 nodes, MPL 3, 10 s slices: a 4-node job
  arriving at 64 waited to 81 and ran 100-105; GS ran it 70-75, BGS now
  does too).  A job past its own estimate (an overrun of the user's
  estimate) is read as :class:`epochbench.sim.policies.Conservative` reads
  an overrun: its processors free from its predicted end, a job booked on
  them waiting for the next event;
* CompactMatrix may move a job to another row only where it does not break
  that row's reservations (:meth:`RowBackfill.allows`); FillMatrix ignores
  the reservations (replicas are temporary: CleanMatrix removes them at the
  next pass, and without it, variant 1, a reservation that has come drops
  the replicas in its way, :func:`_make_room`).

With ``mpl = 1`` this is :class:`epochbench.sim.policies.Conservative` step by step, and
BGS-1 with continuous scheduling gives the same schedule (tests/test_gang.py).
The profiles are the compiled kernels of :mod:`epochbench.sim.profile` (``p_*``), one
set of arrays per row.  A booking costs O(mpl x m) (m breakpoints of a row);
a compression O(queue x mpl x m).
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit
from .engine import wake_time
from .gang_matrix import Clock, Matrix
from .profile import JIT, p_add, p_advance, p_book, p_find, p_init, rows_needed


@njit(**JIT)
def _advance(pt, pf, m, now):
    for r in range(m.shape[0]):
        m[r] = p_advance(pt[r], pf[r], m[r], now, True)


@njit(**JIT)
def _book(pt, pf, m, dem, est, jobs, res_t, res_r, promised, order, now):
    """Book ``jobs`` in order, each at its earliest fit over the rows (ties:
    fewest processors free now, then clock order); a job booked before is
    taken out of its row first.  O(len(jobs) x mpl x m)."""
    for a in range(jobs.shape[0]):
        j = jobs[a]
        e = est[j]
        if res_r[j] >= 0:
            r = res_r[j]
            m[r] = p_add(pt[r], pf[r], m[r], res_t[j], res_t[j] + e, dem, j, 1)
        best_r, best_i, best_t, best_f = -1, -1, np.inf, 0
        for q in range(order.shape[0]):
            r = order[q]
            i = p_find(pt[r], pf[r], m[r], dem, j, e)
            if i < 0:
                continue  # no room before jobs past their predicted end leave this row (RowBackfill.hold)
            t = pt[r, i]
            f = pf[r, 0, 0] if t <= now else 0
            if best_r < 0 or t < best_t or (t == best_t and f < best_f):
                best_r, best_i, best_t, best_f = r, i, t, f
        if best_r < 0:  # no row has room before such a job leaves: booked again at its end's compression
            res_t[j] = np.inf
            res_r[j] = -1
            continue
        m[best_r] = p_book(pt[best_r], pf[best_r], m[best_r], best_i, e, dem, j)
        res_t[j] = best_t
        res_r[j] = best_r
        if np.isnan(promised[j]):
            promised[j] = best_t


def _make_room(m: Matrix, r: int, p: int) -> None:
    """Drop replicas from row ``r`` (in row order) until ``p`` cells are
    empty or none is left.  Without CleanMatrix (variant 1) FillMatrix's
    replicas stay in the rows; the profiles count home jobs only, so a
    reservation that has come may find its row held by replicas: the
    reservation wins (section 6.2: it guarantees the start time).  With
    CleanMatrix first (variants 2, 3) there is no replica here."""
    for x in [x for x in m.row[r] if m.home[x] != r]:
        if m.free(r) >= p:
            return
        m.drop(x, r)


class RowBackfill:
    """Reservations of BGS in every row (see the module docstring).

    ``table``: the :class:`~epochbench.sim.engine.JobTable` (``promised`` receives each
    job's first reservation); ``n``: processors; ``mpl``: rows; ``scale``:
    the factor on the estimates ([zhang-comparative]: the multiprogramming level);
    ``now``: time of the first event.  The profiles of all rows live in
    ``pt`` (mpl x size), ``pf`` (mpl x size x 1) and ``m`` (rows used);
    ``res_t`` / ``res_r`` hold each waiting job's reservation (time, row;
    row -1 = none).
    """

    def __init__(self, table, n: int, mpl: int, scale: float, now: float):
        self.table = table
        self.mpl = int(mpl)
        self.dem = np.ascontiguousarray(table.demand[:, :1], dtype=np.int64)
        self.est = np.asarray(table.estimate, dtype=np.float64) * float(scale)
        size = rows_needed(max(table.n, 1))
        cap = np.array([n], dtype=np.int64)
        self.pt = np.empty((self.mpl, size))
        self.pf = np.empty((self.mpl, size, 1), dtype=np.int64)
        self.m = np.array([p_init(self.pt[r], self.pf[r], cap, float(now)) for r in range(self.mpl)],
                          dtype=np.int64)
        self.res_t = np.full(table.n, np.nan)
        self.res_r = np.full(table.n, -1, dtype=np.int64)
        self.end: dict[int, float] = {}               # job in the matrix -> predicted end
        self.compress = False
        self.now = float(now)
        self.wake = np.inf

    # ---- profile upkeep ------------------------------------------------------------------
    def advance(self, now: float) -> None:
        """Forget everything before ``now`` in every row."""
        self.now = float(now)
        _advance(self.pt, self.pf, self.m, self.now)

    def _add(self, r: int, t0: float, t1: float, job: int, sign: int) -> None:
        self.m[r] = p_add(self.pt[r], self.pf[r], self.m[r], t0, t1, self.dem, job, sign)

    def free_until(self, r: int, t1: float) -> int:
        """Fewest processors free in row ``r`` on ``[now, t1)``."""
        m, pt = int(self.m[r]), self.pt[r]
        i1 = max(int(np.searchsorted(pt[:m], t1, side="left")), 1)
        return int(self.pf[r, :i1, 0].min())

    def overdue(self) -> list[int]:
        """Jobs still in the matrix at or past their predicted end (and not
        held yet: :meth:`hold`).  O(jobs in the matrix)."""
        now = self.now
        return [j for j, end in self.end.items() if end <= now]

    def hold(self, jobs, m: Matrix) -> None:
        """``jobs`` (still in the matrix past their predicted end) keep their
        processors in their home rows' profiles until they end: each booking
        becomes ``[now, inf)`` (the end is not known any more), and the
        queue is booked again.  Without it the profile showed those
        processors free from the predicted end on, so a job was booked into
        that row, could not start, and waited for the next event while
        another row had room.  O(len(jobs) x m)."""
        now = self.now
        for job in jobs:
            self._add(m.home[job], now, np.inf, job, -1)
            self.end[job] = np.inf
            self.compress = True

    def finished(self, job: int, row: int, now: float) -> None:
        """``job`` (home ``row``) ended at ``now``: release the rest of its
        predicted time; an early end makes the next pass compress."""
        end = self.end.pop(job)
        if now < end:
            self._add(row, now, end, job, +1)
            self.compress = True

    # ---- the guard of CompactMatrix / CollapseMatrix ------------------------------------
    def allows(self, job: int, dst: int) -> bool:
        """Moving ``job`` into row ``dst`` keeps that row's reservations."""
        end = self.end[job]
        return end <= self.now or self.free_until(dst, end) >= self.dem[job, 0]

    def moved(self, job: int, src: int, dst: int) -> None:
        end = self.end[job]
        if end > self.now:
            self._add(src, self.now, end, job, +1)
            self._add(dst, self.now, end, job, -1)
            self.compress = True

    # ---- Schedule -----------------------------------------------------------------------
    def schedule(self, queue: list, m: Matrix, clock: Clock) -> tuple[list, list]:
        """One Schedule step at ``self.now`` over ``queue`` (waiting jobs in
        arrival order): book (every job when compressing, else the new
        ones), then start every job whose reservation has come (under
        discrete scheduling it may lie before the boundary where the pass
        runs; the job keeps its booked interval).  Returns (jobs placed, the
        new queue)."""
        now = self.now
        res_t, res_r = self.res_t, self.res_r
        if self.compress:
            todo = queue
        else:
            todo = [j for j in queue if res_r[j] < 0]
        if todo:
            _book(self.pt, self.pf, self.m, self.dem, self.est, np.asarray(todo, dtype=np.int64),
                  res_t, res_r, self.table.promised, np.asarray(clock.order(), dtype=np.int64), now)
        self.compress = False
        placed, keep = [], []
        for job in queue:
            t = res_t[job]
            if t <= now:
                r = int(res_r[job])
                p = int(self.dem[job, 0])
                _make_room(m, r, p)
                if m.free(r) >= p:
                    m.place(job, p, r)
                    clock.placed(job, r)
                    res_r[job] = -1
                    self.end[job] = float(t + self.est[job])
                    placed.append(job)
                    continue
                self.compress = True  # a job overran its prediction: book everything again
            keep.append(job)
        self.wake = float(wake_time(now, res_t[keep]))   # none while a job booked by now waits
        return placed, keep
