"""Gang scheduling on an Ousterhout matrix: GS, BGS, MGS and MBGS ([zhang-comparative]
sections 5 and 6; [vadhiyar-notes] "Gang Scheduling"), with their own event loop.

Time sharing changes a running job's finish time whenever the matrix
changes, so the heap of fixed finish times of :class:`epochbench.sim.engine.Engine`
does not fit; :func:`simulate_gang` runs its own loop with the same rules:
the same :class:`~epochbench.sim.engine.JobTable` input, at equal times all finishes,
then all arrivals, then one scheduling pass, queue order (submit, id),
deterministic; and a :class:`GangResult` (a :class:`~epochbench.sim.engine.SimResult`)
whose ``jobs`` table works with :func:`epochbench.sim.metrics.summarize`, except for
its ``capacity_loss``: eq. (2) holds for space sharing only, and is NaN on a
table whose jobs hold more than the machine's nodes at once;
:func:`summarize_gang` (``GangResult.summary()``) gives eq. (3).

Machine model ([zhang-comparative] section 5)
    ``n`` processors x ``mpl`` rows; the rows run in turn, one time slice of
    ``slice`` seconds each (the slice of a row that is empty is skipped).  A
    job runs only while its row's slice runs, on its columns, and at the speed
    of a dedicated machine, so its end minus its start exceeds its duration by
    the time it spent out of its rows.  A job entering execution (its first
    slice, or a slice whose predecessor did not run it) first spends
    ``switch_overhead x slice`` seconds on the context switch; a job in two
    consecutive rows keeps running without one.  ``start`` is the time a job
    first enters execution, ``placed`` the time it entered the matrix.

Scheduling events (section 5.2)
    Every arrival and departure is a scheduling event that recomputes the
    matrix.  *Continuous* scheduling (default) recomputes it at once, and the
    new matrix takes effect immediately in the row whose slice is running:
    jobs new to that row switch in now (paying the context switch), jobs gone
    from it stop now, and if that row is now empty the next non-empty row
    starts a fresh slice.  The paper says the current slice "is cut short"
    and warns that continuous scheduling thrashes when events are frequent,
    "because context switches are more frequent"; it does not say which row
    runs after the cut.  Here the slice of the running row keeps its end: a
    fresh slice of that row at every event would let a stream of events hold
    the clock on one row, and moving on to the next row at every event would
    make the rotation follow the event rate.  So the context switches an
    event causes are those of the jobs that enter the running row, and the
    thrashing the paper warns of shows only as far as events put new jobs
    into the running row.  With ``cut_slice=True`` an arrival or departure
    (the paper's events; not a backfilling reservation falling due) cuts the
    running slice short instead, and the next row in the rotation starts a
    fresh slice at it (one at a slice boundary steps the rotation once):
    the rotation then follows the event rate, and each event switches in the
    jobs of the next row, so the thrashing the paper warns of can be
    measured (``capacity_loss_switch`` with ``switch_overhead`` > 0; the
    ``slices`` count of ``GangResult.stats`` counts the cut slices too).
    *Discrete* scheduling (``discrete=True``) recomputes it only at slice
    boundaries (a grid of ``slice`` seconds from the first arrival): a job
    that ends leaves its cells idle until the boundary, an arriving job waits
    for it.

Policies (one pass = the steps in this order; ``variant`` as in figures 11/12/23)
    ``gs``   (6.1): [CleanMatrix] [CompactMatrix] Schedule (FCFS, best-fit row,
             no backfilling) FillMatrix.  variant 1 = Schedule + FillMatrix,
             2 = CleanMatrix + Schedule + FillMatrix, 3 (default) = all four.
    ``bgs``  (6.2): the same with Schedule = conservative backfilling in every
             row with estimates x ``mpl`` (:mod:`epochbench.sim.gang_backfill`), and
             CompactMatrix keeping the reservations.
    ``mgs``  (6.4): variant 3 (default) = ClearMatrix, CollapseMatrix-1,
             Schedule-1, CollapseMatrix-2, Schedule-2, FillMatrix-1,
             FillMatrix-2 (figure 23 line 3); variant 2 = the GS steps +
             FillMatrix-2 (figure 23 line 2).
    ``mbgs`` (6.5): ``mgs`` with the Schedule and the reservation checks of ``bgs``.
    Migration costs ``migration_cost`` seconds (C: checkpoint C/2 + restart
    C/2) charged as lost execution per eqs. (4)/(5) to the jobs involved, and
    at most ``migration_limit`` tasks (Q) migrate per time slice (None: no limit).
    As in the paper, a migration the rules allow is made whatever it costs
    (C only weighs option 1 against option 2, and both scale with it): a C
    far beyond the paper's 0 to 30 s (figure 24) stretches every migrated
    job (1e4 s: mean wait 211,639 s against 463 s at 10 on a 500-job stream).
    ``migration_limit`` 0 migrates nothing, but is not GS: figure 23's steps
    still run, and CollapseMatrix-2 moves a job to another row where its own
    columns are free after Schedule-1 (no migration), which GS does not do
    then (the paper's note under figure 24 calls Q = 0 "the case without
    migration").

Capacity loss (eq. 3)
    Node-seconds lost while jobs wait (delta = 1): empty cells of the running
    row (e_ij; the cells of a job that ended inside a discrete slice count
    from its end, the H_ij term), context switches (T C n_j, the part that
    elapsed before the job was stopped) and migrations (eqs. 4/5), over
    ``N x t^f_m``.  Migrations are an addition: eq. (3) as printed comes
    before section 6 brings them in, but their node-seconds are lost to the
    machine as a switch's are, and with them utilization plus
    ``capacity_lost_any_time`` (delta = 1 everywhere) is exactly 1.  Eq. (3)
    as printed has no delta; eq. (2) and the text
    ("loss of capacity when (i) it has jobs waiting") have it, and without it
    every idle node-second of a lightly loaded machine would count, so that
    kappa = 1 - rho at every load, against figure 20.  ``GangResult.kappa``
    gives the parts, with and without delta.

Cost: O(events x (rows + jobs in a row)) for the loop and O(mpl^2 x jobs)
per pass for the steps; rows are integer bit sets (:mod:`epochbench.sim.gang_matrix`).
"""
from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from epochbench.instances.arguments import named
from epochbench.instances.core import InstanceError

from . import registry as _registry
from .engine import HookTimer, JobTable, SimResult
from .gang_backfill import RowBackfill
from .gang_matrix import (Budget, Clock, Matrix, clean_matrix, collapse_migrating, compact_matrix,
                          fill_matrix, fill_migrating, schedule_gs)

from .gang_names import DEFAULTS, GANG_POLICIES          # the policies and options, in the registry


@dataclass
class GangResult(SimResult):
    """A :class:`~epochbench.sim.engine.SimResult` of a gang-scheduled run.

    ``jobs`` has the usual columns (``start`` = first execution, ``end`` =
    completion, so ``end - start >= duration``) plus ``placed`` (entered the
    matrix), ``executed`` (seconds in execution, switches and migration
    losses included), ``switches`` (times switched into execution),
    ``migrations`` (times its tasks were checkpointed and restarted) and
    ``penalty`` (seconds of execution lost to migrations); the run's
    ``migrations`` count counts each migration once, so the per-job counts
    can sum to more (a migration of option 1 moves every blocked job).  ``kappa``: the
    capacity loss of eq. (3) and its parts; ``jobs.attrs["capacity_loss"]``
    holds the same value.  ``trace`` (with ``trace=True``): ("place", t,
    position, job) and ("run", t, position, row, jobs) records, one "run"
    per change of the running row.
    """

    kappa: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    trace: list | None = None

    def summary(self, workload=None, small_threshold: int = 32) -> dict:
        """:func:`summarize_gang`: the pool's metrics with eq. (3)'s capacity loss."""
        return summarize_gang(self, self._machine(workload), small_threshold)

    @property
    def extras(self) -> dict:
        return {"kappa": dict(self.kappa), "stats": dict(self.stats)}


class GangSimulator:
    """The event loop of :func:`simulate_gang` (see the module docstring).
    ``on_pass(t, sim)`` is called after every pass."""

    def __init__(self, table: JobTable, n: int, policy: str, *, mpl: int, slice: float,
                 switch_overhead: float, migration_cost: float, migration_limit, discrete: bool,
                 variant: int, cut_slice: bool = False, trace: bool = False, check: bool = False,
                 on_pass: Callable | None = None, recorder=None, progress: Callable | None = None):
        self.tb, self.n, self.policy = table, int(n), policy
        self.progress = progress     # progress(arrived, now): a view, it changes nothing
        self.backfilling, self.migrating = GANG_POLICIES[policy]
        self.mpl, self.T, self.C = int(mpl), float(slice), float(switch_overhead)
        self.switch = self.C * self.T
        self.cost = float(migration_cost)
        self.Q = math.inf if migration_limit is None else float(migration_limit)
        self.discrete, self.variant, self.cut = bool(discrete), int(variant), bool(cut_slice)
        self.check, self.on_pass = check, on_pass
        self.recorder = recorder     # sim.record.GangRecorder: reads the state, never changes it
        self.hooks = HookTimer()     # the recorder's and on_pass's calls: their time is not the simulation's
        self.trace = [] if trace else None
        self.m = Matrix(self.n, self.mpl)
        self.clock = Clock(self.mpl)
        self.queue: deque[int] = deque()
        nj = table.n
        self.procs = [int(p) for p in table.demand[:, 0]]
        # per-job state as Python lists: scalar access to them is several times
        # faster than to numpy arrays in this loop (measured)
        self.remaining = [float(d) for d in table.duration]
        self.start = [math.nan] * nj
        self.end = [math.nan] * nj
        self.placed = [math.nan] * nj
        self.executed = [0.0] * nj
        self.switches = [0] * nj
        self.migrations = [0] * nj
        self.penalty = [0.0] * nj
        self.running: dict[int, float] = {}   # job -> time its work resumes (after the switch)
        self.entered: dict[int, float] = {}   # job -> time it entered execution
        self.in_switch: dict[int, None] = {}
        self.busy = 0
        self.next_fin = math.inf
        self.slice_end = math.inf
        self.uniform = True
        self.pending = False
        self.budget = Budget(self.Q)
        self.guard = None
        self.overran: set[int] = set()   # BGS / MBGS: jobs read as past their own estimate (_hold_slipped)
        self.passes = 0
        self.t0 = math.nan
        self.lost = dict(idle=0.0, switch=0.0, migration=0.0)      # while jobs wait (delta = 1)
        self.lost_all = dict(idle=0.0, switch=0.0, migration=0.0)  # at any time
        self.counts = dict(migrations=0, migrated_tasks=0, slices=0)

    # ---- the loop -----------------------------------------------------------------------
    def run(self) -> None:
        tb = self.tb
        nj = tb.n
        if nj == 0:
            return
        submit = tb.submit
        t = float(submit[0])
        self.t0 = t
        if self.backfilling:
            self.guard = RowBackfill(tb, self.n, self.mpl, self.mpl, t)
        if self.discrete:
            self.slice_end = t  # the grid of slices starts at the first arrival
        ai = 0
        while ai < nj or self.queue or len(self.m):
            wake = self.guard.wake if self.guard is not None else math.inf
            # a reservation falling due is an event; under discrete scheduling it waits,
            # registered, for the next boundary (until then it is not an event again)
            t_next = min(self.next_fin, float(submit[ai]) if ai < nj else math.inf,
                         wake if wake > t else math.inf)
            if self.uniform and not self.pending and self.trace is None:
                if self.slice_end < t_next:
                    self._skip(t_next)
            t_next = min(t_next, self.slice_end)
            if t_next == math.inf:
                raise RuntimeError(f"gang simulation stuck at t = {t} with {len(self.queue)} jobs waiting")
            self._account(t, t_next)
            t = t_next
            if self.guard is not None:
                self.guard.advance(t)
            done = []
            if self.next_fin <= t + 4 * math.ulp(t):
                tol = t + 4 * math.ulp(t)
                done = [j for j, rf in self.running.items() if rf + self.remaining[j] <= tol]
                for j in done:
                    self._finish(j, t)
            boundary = t >= self.slice_end
            arrived = False
            while ai < nj and submit[ai] == t:
                self.queue.append(ai)
                ai += 1
                arrived = True
            event = bool(done) or arrived or t >= wake
            if self.discrete:
                self.pending = self.pending or event
                if boundary:
                    self._boundary(t)
                    if self.pending:
                        self._pass(t)
                        self.pending = False
                    self._dispatch(t)
                elif done:
                    self._refresh()
            else:
                if boundary or (self.cut and (done or arrived)):   # cut_slice: an arrival or departure
                    self._boundary(t)                                # ends the running slice (not a reservation)
                if event:
                    self._pass(t)
                self._dispatch(t)
            if self.progress is not None and event:
                self.progress(ai, t)

    # ---- slices -------------------------------------------------------------------------
    def _boundary(self, t: float) -> None:
        self.clock.step(1)
        self.slice_end = t + self.T
        self.budget.left = self.Q
        self.counts["slices"] += 1

    def _skip(self, t_next: float) -> None:
        """Jump over the slice boundaries before ``t_next`` while every
        non-empty row runs the same jobs (nothing changes at them but the
        clock position)."""
        # a boundary within the finish tolerance of t_next is not skipped: at it the
        # finish counts as simultaneous, as it does when every boundary is visited
        # (boundaries by repeated addition, as _boundary makes them, so that both agree)
        limit = t_next - 4 * math.ulp(t_next)
        end, k = self.slice_end, 0
        while end < limit:
            end += self.T
            k += 1
        if k == 0:
            return
        rows = self.m.nonempty()
        clock = self.clock
        if not rows:
            clock.step(k)
        else:
            full, rest = divmod(k, len(rows))
            clock.pos += full * self.mpl
            for _ in range(rest):
                clock.step(next(i for i in range(1, self.mpl + 1) if self.m.used[(clock.row + i) % self.mpl]))
            for j in self.running:
                clock.ran(j)
        self.slice_end = end
        self.budget.left = self.Q
        self.counts["slices"] += k

    def _dispatch(self, t: float) -> None:
        """Run the current row's jobs from ``t`` on (continuous scheduling: the
        new matrix takes effect at once)."""
        m, clock = self.m, self.clock
        if not len(m):
            if not self.discrete:
                self.slice_end = math.inf
            self.uniform = True
            self._refresh()
            return
        if not m.used[clock.row]:
            while not m.used[clock.row]:
                clock.step(1)
            self.slice_end = t + self.T
            self.budget.left = self.Q
        elif self.slice_end == math.inf:
            self.slice_end = t + self.T
            self.budget.left = self.Q
        row = m.row[clock.row]
        running = self.running
        for j in [j for j in running if j not in row]:
            self._stop(j, t)
        for j in row:
            if j not in running:
                self._enter(j, t)
        if self.check:
            self._check_progress(row)
        dl, nxt = clock.deadline, clock.pos + self.mpl
        for j in row:
            dl[j] = nxt
        if self.trace is not None:
            self.trace.append(("run", t, clock.pos, clock.row, tuple(sorted(row))))
        keys = row.keys()
        self.uniform = all(m.row[r].keys() == keys for r in m.nonempty())
        self._refresh()

    def _check_progress(self, row) -> None:
        """The clock rule's promise: no job in the matrix is past its turn."""
        pos = self.clock.pos
        for j, dl in self.clock.deadline.items():
            if dl < pos or (dl == pos and j not in row):
                raise AssertionError(f"job {j} missed its turn: deadline {dl}, clock at {pos}")

    def _refresh(self) -> None:
        rem = self.remaining
        self.next_fin = min((rf + rem[j] for j, rf in self.running.items()), default=math.inf)

    def _enter(self, j: int, t: float) -> None:
        rf = t + self.switch
        self.running[j] = rf
        self.entered[j] = t
        self.busy += self.procs[j]
        self.switches[j] += 1
        if self.switch > 0:
            self.in_switch[j] = None
        if self.start[j] != self.start[j]:
            self.start[j] = t

    def _stop(self, j: int, t: float) -> None:
        rf = self.running.pop(j)
        self.executed[j] += t - self.entered.pop(j)
        self.busy -= self.procs[j]
        if t > rf:
            self.remaining[j] -= t - rf

    def _finish(self, j: int, t: float) -> None:
        self.running.pop(j)
        self.executed[j] += t - self.entered.pop(j)
        self.busy -= self.procs[j]
        self.remaining[j] = 0.0
        self.end[j] = t
        home = self.m.home[j]
        self.overran.discard(j)
        self.m.remove(j)
        self.clock.forget(j)
        if self.guard is not None:
            self.guard.finished(j, home, t)

    def _account(self, t: float, t1: float) -> None:
        """Capacity loss on [t, t1): empty cells of the running row and
        context switches in progress (eq. 3)."""
        dt = t1 - t
        if not dt > 0:
            return
        idle = (self.n - self.busy) * dt
        sw = 0.0
        if self.in_switch:
            keep = {}
            for j in self.in_switch:
                rf = self.running.get(j)
                if rf is None or rf <= t:
                    continue
                sw += self.procs[j] * (min(rf, t1) - t)
                if rf > t1:
                    keep[j] = None
            self.in_switch = keep
        self.lost_all["idle"] += idle
        self.lost_all["switch"] += sw
        if self.queue:
            self.lost["idle"] += idle
            self.lost["switch"] += sw

    # ---- one scheduling pass --------------------------------------------------------------
    def _pass(self, t: float) -> None:
        self.passes += 1
        m, clock, guard, v = self.m, self.clock, self.guard, self.variant
        self.budget.moved = set()
        if guard is not None:
            self._hold_slipped(t)                     # before CompactMatrix reads the profiles
        if v >= 2:
            clean_matrix(m)                           # CleanMatrix / ClearMatrix
        if v == 3 or (self.migrating and v >= 2):
            compact_matrix(m, clock, guard)           # CompactMatrix / CollapseMatrix-1
        self._schedule(t)                             # Schedule / Schedule-1
        if self.migrating and v == 3:
            self._migrated(collapse_migrating(m, clock, self.budget, self.cost, guard))  # CollapseMatrix-2
            self._schedule(t)                         # Schedule-2
        before = self.hooks(self.recorder.before_fill, self) if self.recorder is not None else None
        fill_matrix(m, clock)                         # FillMatrix / FillMatrix-1
        if before is not None:
            self.hooks(self.recorder.fill, t, self, before)
        if self.migrating:
            self._migrated(fill_migrating(m, clock, self.budget, self.cost))  # FillMatrix-2
        if self.check:
            m.grid()
        if self.on_pass is not None:
            self.hooks(self.on_pass, t, self)

    def _hold_slipped(self, t: float) -> None:
        """BGS / MBGS: a job still running at its predicted end (``mpl x
        estimate`` after its placement) that has not yet done its estimate's
        work got less than its row's share of the time (a slice's wait, its
        context switches, a migration: the prediction, not the user's
        estimate, was wrong); it keeps its processors in its row's profile
        until it ends (:meth:`~epochbench.sim.gang_backfill.RowBackfill.hold`).
        A job past its own estimate overran it, and is read as conservative
        backfilling reads an overrun on the whole machine (its processors
        free from its predicted end; a job booked on them waits for the next
        event), so that MPL 1 stays conservative step by step; once read so,
        it is never held (a migration's penalty, added to what remains, made
        such a job read as short of its estimate again).  Work done: the
        duration less what remains, and the running stretch since the switch
        (within the finish tolerance of 4 ulp)."""
        late = [j for j in self.guard.overdue() if j not in self.overran]
        if not late:
            return
        est, dur, rem, run = self.tb.estimate, self.tb.duration, self.remaining, self.running
        tol = 4 * math.ulp(t)
        slipped = []
        for j in late:
            if dur[j] - rem[j] + max(0.0, t - run.get(j, t)) + tol < est[j]:
                slipped.append(j)
            else:
                self.overran.add(j)   # for good: a migration's penalty, added to what remains, is no work undone
        self.guard.hold(slipped, self.m)

    def _schedule(self, t: float) -> None:
        before = self.hooks(self.recorder.before_schedule, self) if self.recorder is not None else None
        if self.guard is None:
            placed = schedule_gs(self.m, self.clock, self.queue, self.procs)
        else:
            placed, keep = self.guard.schedule(list(self.queue), self.m, self.clock)
            self.queue = deque(keep)
        if before is not None:
            self.hooks(self.recorder.schedule, t, self, before, placed)
        for j in placed:
            self.placed[j] = t
            if self.trace is not None:
                self.trace.append(("place", t, self.clock.pos, j))

    def _migrated(self, migs) -> None:
        for mig in migs:
            for j, sec in mig.penalty.items():
                self.remaining[j] += sec
                self.penalty[j] += sec
            for j in (mig.blocked if mig.option == 1 else (mig.job,)):
                self.migrations[j] += 1
            self.counts["migrations"] += 1
            self.counts["migrated_tasks"] += mig.tasks
            self.lost_all["migration"] += mig.overhead
            if self.queue:
                self.lost["migration"] += mig.overhead

    # ---- result ---------------------------------------------------------------------------
    def result(self, seconds: float, capacity) -> GangResult:
        tb = self.tb
        tb.start[:] = self.start
        d = {"id": tb.ids, "submit": tb.submit, "start": tb.start, "end": np.array(self.end),
             "procs": tb.demand[:, 0], "estimate": tb.estimate, "runtime": tb.runtime,
             "duration": tb.duration, "promised": tb.promised, "placed": np.array(self.placed),
             "executed": np.array(self.executed), "switches": np.array(self.switches, dtype=np.int64),
             "migrations": np.array(self.migrations, dtype=np.int64), "penalty": np.array(self.penalty)}
        import pandas as pd  # here, not at import: the pool's runs never need it
        jobs = pd.DataFrame(d)
        span = float(np.nanmax(d["end"])) - self.t0 if tb.n else float("nan")
        denom = float(self.n * span) if tb.n and span > 0 else float("nan")
        kappa = {"capacity_loss": float(sum(self.lost.values())) / denom}
        for k, v in self.lost.items():
            kappa[f"capacity_loss_{k}"] = float(v) / denom
        kappa["capacity_lost_any_time"] = float(sum(self.lost_all.values())) / denom
        for k, v in self.lost_all.items():
            kappa[f"capacity_lost_any_time_{k}"] = float(v) / denom
        jobs.attrs["capacity_loss"] = kappa["capacity_loss"]
        options = {"mpl": self.mpl, "slice": self.T, "switch_overhead": self.C, "discrete": self.discrete,
                   "variant": self.variant}
        if self.cut:
            options["cut_slice"] = True
        if self.migrating:
            options.update(migration_cost=self.cost,
                           migration_limit=None if self.Q == math.inf else int(self.Q))
        return GangResult(jobs, self.policy, options, self.passes, seconds, "gang",
                          np.asarray(capacity, dtype=np.int64), "gang", kappa=kappa, stats=dict(self.counts),
                          trace=self.trace)


#: the highest multiprogramming level (rows of the matrix) a run takes
MAX_MPL = 128
#: the most time slices a run may cut its stream into (7 to 11 us each, measured
#: on lublin03 streams of 200 to 5,000 jobs on 128 to 4,096 processors at 0.2 M
#: to 1 M slices: 1e8 slices are some 12 to 20 minutes; the 4 us once written
#: here did not hold)
MAX_SLICES = 1e8
#: the longest time slice, in seconds (31 years): a slice of 1e300 s made the
#: clock overflow into infinite metrics
MAX_SLICE = 1e9
#: the most one migration may cost: 1000 slices (``migration_cost / slice``),
#: or 10,000 s where that is more (a short slice keeps the default cost of 10
#: s): each migration adds its cost as lost execution to the jobs it moves, and
#: the run's time grows with it (measured on 276 KTH jobs under mgs: 13 s at
#: 5,000 slices; a cost of 1e300 s never ended).  [zhang-comparative] figure 25
#: takes 10 s against a slice of 200 s
MAX_MIGRATION_SLICES, MAX_MIGRATION_S = 1000, 1e4


def _slices(table: JobTable, slice: float, switch_overhead: float = 0.0, processors: int = 0) -> None:
    """InstanceError when ``slice`` would cut the stream's span into more
    than :data:`MAX_SLICES` slices (a slice of 1e-9 s hung a 300-job run).
    The span is at least the first to the last arrival plus the longest
    job, and at least the work over the ``processors`` (a queue: 20 jobs
    of 100 s on one processor run 2,000 s, where the first bound said 100
    and let a slice of 1e-5 s run for about an hour: a review of the gang
    machine).  A job runs for the part of a slice that the switch overhead
    leaves, so the slices are counted at that length: a 6-job run under an
    overhead of 0.999999 (within [0, 1)) ran for more than 10 minutes (a
    review of the library)."""
    if len(table.submit) == 0:
        return
    span = float(table.submit.max() - table.submit.min() + table.duration.max())
    if processors > 0:
        span = max(span, float(np.dot(table.demand[:, 0].astype(np.float64), table.duration)) / processors)
    work = slice * (1.0 - switch_overhead)
    if not span / work <= MAX_SLICES:
        at = "" if switch_overhead == 0 else f" ({work:.3g} s of work after a switch overhead of {switch_overhead!r})"
        raise InstanceError(f"{named('slice')}: {slice:g} s{at} cuts this stream's {span:.3g} s into about "
                            f"{span / work:.2g} slices, more than {MAX_SLICES:.0e} (hours of simulation); take a "
                            "longer slice" + ("" if switch_overhead == 0 else " or a smaller overhead"))


def _real(name: str, value, what: str, *, integer: bool = False, inf: bool = False) -> None:
    """InstanceError ``"name: what, got value"`` unless ``value`` is a real
    number (:func:`epochbench.sim.registry.number`: not a bool, not a
    string), finite (``inf``: or +inf), and with ``integer`` a whole one:
    an option given from Python is refused as the command line refuses its
    text, not converted (``int(2.5)``) or compared as it is (NaN, an int
    beyond every float)."""
    def ok(x: float) -> bool:
        return (math.isfinite(x) or (inf and x == math.inf)) and (not integer or x == math.inf or x.is_integer())

    _registry.number(name, value, ok, what, error=InstanceError)


def _options(policy, mpl, slice, switch_overhead, migration_cost, migration_limit, variant, discrete,
             cut_slice=False) -> None:
    if policy not in GANG_POLICIES:
        raise InstanceError(f"{named('policy')}: no gang policy {policy!r}; known: {', '.join(GANG_POLICIES)}")
    _real("mpl", mpl, "the multiprogramming level must be an integer >= 1", integer=True)
    _real("slice", slice, "the time slice must be > 0 seconds")
    _real("switch_overhead", switch_overhead, "a fraction of the slice in [0, 1)")
    _real("migration_cost", migration_cost, "seconds >= 0")
    _real("migration_limit", 0 if migration_limit is None else migration_limit, "tasks per slice >= 0 or None",
          integer=True, inf=True)
    _real("variant", variant, "1, 2 or 3 ([zhang-comparative] figures 11/12/23)", integer=True)
    if not isinstance(discrete, (bool, np.bool_)):
        raise InstanceError(f"{named('discrete')}: True or False, got {discrete!r}")
    if not isinstance(cut_slice, (bool, np.bool_)):
        raise InstanceError(f"{named('cut_slice')}: True or False, got {cut_slice!r}")
    if cut_slice and discrete:
        raise InstanceError(f"{named('cut_slice')}: applies to continuous scheduling; discrete scheduling lets "
                            "every slice run to its end")
    if int(mpl) != mpl or not 1 <= mpl:
        raise InstanceError(f"{named('mpl')}: the multiprogramming level must be an integer >= 1, got {mpl!r}")
    if mpl > MAX_MPL:
        raise InstanceError(f"{named('mpl')}: at most {MAX_MPL} rows ([zhang-comparative] section 5.1 keeps the level "
                            f"'at modest levels'; the cost grows with it, empty rows included), got {mpl!r}")
    if not (np.isfinite(slice) and slice > 0):
        raise InstanceError(f"{named('slice')}: the time slice must be > 0 seconds, got {slice!r}")
    if slice > MAX_SLICE:
        raise InstanceError(f"{named('slice')}: at most {MAX_SLICE:g} seconds, got {slice!r}")
    if not 0 <= switch_overhead < 1:
        raise InstanceError(f"{named('switch_overhead')}: a fraction of the slice in [0, 1), got {switch_overhead!r}")
    if not (np.isfinite(migration_cost) and migration_cost >= 0):
        raise InstanceError(f"{named('migration_cost')}: seconds >= 0, got {migration_cost!r}")
    most = max(MAX_MIGRATION_SLICES * slice, MAX_MIGRATION_S)
    if GANG_POLICIES[policy][1] and migration_cost > most:
        raise InstanceError(f"{named('migration_cost')}: at most {most:g} s ({MAX_MIGRATION_SLICES} slices of {slice:g} s, or "
                            f"{MAX_MIGRATION_S:g} s; each migration adds it to the jobs moved), got {migration_cost!r}")
    if migration_limit is not None and not migration_limit >= 0:
        raise InstanceError(f"{named('migration_limit')}: tasks per slice >= 0 or None, got {migration_limit!r}")
    if variant not in (1, 2, 3):
        raise InstanceError(f"{named('variant')}: 1, 2 or 3 ([zhang-comparative] figures 11/12/23), got {variant!r}")
    if GANG_POLICIES[policy][1] and variant == 1:
        raise InstanceError(f"{named('variant')}: migration policies take variant 2 (GS + FillMatrix-2) or 3 (all steps)")


#: what a ``recorder`` of :func:`simulate_gang` is called with (:class:`epochbench.sim.record.GangRecorder`)
RECORDER_METHODS = ("before_fill", "fill", "before_schedule", "schedule")


def _hooks(trace, check, recorder) -> None:
    """InstanceError for a ``trace`` or ``check`` that is not a bool, or a
    ``recorder`` without :data:`RECORDER_METHODS` (``trace="no"`` was
    taken as true, ``recorder=3`` raised AttributeError in the run)."""
    for name, value in (("trace", trace), ("check", check)):
        if not isinstance(value, (bool, np.bool_)):
            raise InstanceError(f"{named(name)}: True or False, got {value!r}")
    lacks = [m for m in RECORDER_METHODS if not callable(getattr(recorder, m, None))]
    if recorder is not None and lacks:
        raise InstanceError(f"recorder: a GangRecorder (epochbench.sim.record) or None, got {recorder!r}, "
                            f"which has no {', '.join(lacks)}")


def simulate_gang(jobs: pd.DataFrame, capacity, policy: str = "gs", *, mpl: int = 5, slice: float = 200.0,
                  switch_overhead: float = 0.0, migration_cost: float = 10.0,
                  migration_limit: int | None = 64, discrete: bool = False, variant: int = 3,
                  cut_slice: bool = False, trace: bool = False, check: bool = False, on_pass: Callable | None = None,
                  recorder=None, progress: Callable | None = None) -> GangResult:
    """Replay ``jobs`` (the column contract of :mod:`epochbench.instances.jobs`) under gang
    scheduling policy ``gs``, ``bgs``, ``mgs`` or ``mbgs`` on ``capacity``
    processors (one entry; gang scheduling has no other resources).

    ``mpl``: rows of the matrix; ``slice``: T in seconds ([zhang-comparative]: 200);
    ``switch_overhead``: C as a fraction of T ([zhang-comparative]: 0 to 0.05);
    ``migration_cost``: C of eqs. (4)/(5) in seconds ([zhang-comparative] figure 25: 10);
    ``migration_limit``: Q, tasks migrated per slice ([zhang-comparative]: 64; None = no
    limit); ``discrete``: schedule only at slice boundaries; ``variant``:
    which steps run; ``cut_slice``: under continuous scheduling, every
    arrival or departure cuts the running slice short and the next row
    starts a fresh one (module docstring).  ``trace``: keep the trace of
    placements and running rows (and visit every slice boundary);
    ``check``: assert the matrix invariants after every pass and the clock
    rule at every dispatch (slow; for tests).  ``on_pass(t, sim)``: hook
    after every pass.  ``recorder``: a :class:`epochbench.sim.record.GangRecorder` that
    saves every Schedule and FillMatrix step as ``packing`` instances (the
    schedule is the same with and without it).  ``progress(arrived, now)``:
    called after every event (it throttles itself; the command line's
    progress line).  See the module docstring for the model; cost
    O(events x (mpl^2 x jobs in the matrix)).
    """
    _options(policy, mpl, slice, switch_overhead, migration_cost, migration_limit, variant, discrete, cut_slice)
    _hooks(trace, check, recorder)
    cap = np.asarray(capacity, dtype=np.int64).reshape(-1)
    if cap.shape[0] != 1:
        raise InstanceError(f"capacity: gang scheduling takes processors only (one entry), got {cap.tolist()}")
    table = JobTable.from_frame(jobs, cap)
    _slices(table, float(slice), float(switch_overhead), int(cap[0]))
    options = dict(mpl=int(mpl), slice=float(slice), switch_overhead=float(switch_overhead) + 0.0,
                   migration_cost=float(migration_cost) + 0.0, migration_limit=migration_limit, discrete=discrete,
                   variant=int(variant), cut_slice=bool(cut_slice))
    _rehearse(table, int(cap[0]), policy, options)
    sim = GangSimulator(table, int(cap[0]), policy, trace=trace, check=check, on_pass=on_pass, recorder=recorder,
                        progress=progress, **options)
    t0 = time.perf_counter()
    sim.run()
    return sim.result(time.perf_counter() - t0 - sim.hooks.seconds, cap)   # the hooks' time is not the run's


def _rehearse(table: JobTable, procs: int, policy: str, options: dict) -> None:
    """Run ``policy`` on the table's :meth:`~epochbench.sim.engine.JobTable.rehearsal`
    stream first, so that the kernels its passes call (the rows' compiled
    profiles of bgs and mbgs: 0.6 to 4 s on first use) are loaded before
    the timed run.  A rehearsal that fails is left to the timed run, which
    reports what went wrong with the whole stream.  Once per process for
    each policy, options and table layout (:meth:`~epochbench.sim.engine.JobTable.layout`)."""
    key = (policy, tuple(sorted(options.items())), table.layout())
    if not table.n or key in _REHEARSED:
        return
    try:
        GangSimulator(table.rehearsal(), procs, policy, **options).run()
    except Exception:          # the timed run raises it again, named for the whole stream
        return
    _REHEARSED.add(key)


#: what :func:`_rehearse` has rehearsed in this process
_REHEARSED: set = set()


def summarize_gang(result: GangResult, workload, small_threshold: int = 32) -> dict:
    """:func:`epochbench.sim.metrics.summarize` of a gang-scheduled run with its
    ``capacity_loss`` replaced by eq. (3) (the eq. (2) of summarize assumes
    that a job holds its processors from start to end, which time sharing
    breaks), plus the parts of eq. (3) and the run's migration counts."""
    from .metrics import summarize

    out = summarize(result.jobs, workload, small_threshold)
    out.update(result.kappa)
    out.update({k: v for k, v in result.stats.items()})
    return out


__all__ = ["GANG_POLICIES", "GangResult", "GangSimulator", "simulate_gang", "summarize_gang"]
