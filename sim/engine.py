"""Event engine of the online simulator (issue 3; ARCHITECTURE.md "Online simulation").

Three pieces with small interfaces, so that other machine models and
policies sit on the same loop:

* :class:`JobTable`: the job stream as numpy arrays (row = job, in (submit, id) order);
* :class:`Machine`: state and start / finish bookkeeping.  :class:`PoolMachine`
  is the space-shared pool of K resources ([leinberger1999], [rajaei-dadfar], [vadhiyar-notes], [zhang-comparative]); the
  gang-scheduling matrix ([zhang-comparative] section 5) and a farm of heterogeneous
  machines ([capannini2007]) implement the same protocol;
* :class:`Policy`: the queue order plus what to start at a scheduling pass
  (:mod:`epochbench.sim.policies`).

:class:`Engine` runs the events: a heap of finish times and the arrivals in
order.  At equal times it takes all finishes, then all arrivals, then one
scheduling pass (when the queue is not empty); a policy may also ask for a
pass at a time of its own (:meth:`Policy.wakeup`: a reservation falling due).  A job that runs for 0 s ends
at its start time, which makes a new batch (and pass) at that same time.

:func:`simulate` is the entry point.  Given a policy name and no selector, hook
or machine it runs the compiled event loop of :mod:`epochbench.sim.policies` (the fast
path); otherwise this generic engine.  The two give identical schedules
(tests/test_sim_engine.py).
"""
from __future__ import annotations

import heapq
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from epochbench.instances.catalog import plugin_label
from epochbench.instances.core import MethodFailed, RunStopped
from epochbench.instances.table import Columns, as_columns, in_arrival_order

RESOURCE_PREFIX = "res_"
ENGINES = ("auto", "fast", "generic")


# ---- job table ---------------------------------------------------------------------
#: jobs of :meth:`JobTable.rehearsal`: enough for a queue, a backfill and an early end
REHEARSAL_JOBS = 8


@dataclass(frozen=True, eq=False)
class JobTable:
    """Job stream as arrays, rows in (submit, id) order.

    ``demand`` is n x K (column 0 = ``procs``, then the ``res_*`` columns in
    frame order); ``start`` is filled in by the engine (NaN = not started).
    """

    ids: np.ndarray
    submit: np.ndarray
    runtime: np.ndarray
    estimate: np.ndarray
    duration: np.ndarray
    demand: np.ndarray
    resources: tuple[str, ...]
    start: np.ndarray = field(repr=False)
    promised: np.ndarray = field(repr=False)

    @property
    def n(self) -> int:
        return self.ids.shape[0]

    @property
    def k(self) -> int:
        return self.demand.shape[1]

    @classmethod
    def from_frame(cls, jobs, capacity: np.ndarray) -> "JobTable":
        """Validate the column contract of :mod:`epochbench.instances.jobs` against
        ``capacity``.  ``jobs``: a DataFrame or :class:`~epochbench.instances.table.Columns`;
        its arrays are copied (:meth:`from_columns` shares them)."""
        return cls.from_columns(as_columns(jobs), capacity, copy=True)

    @classmethod
    def from_columns(cls, jobs: Columns, capacity: np.ndarray, *, copy: bool = False) -> "JobTable":
        """As :meth:`from_frame` from numpy columns; with ``copy=False`` the
        id, submit, runtime, estimate and duration arrays are shared with
        ``jobs`` when they already have the engine's dtypes and order (no copy
        of the whole table: what a run over millions of jobs needs)."""
        for col in ("id", "submit", "estimate", "procs", "duration"):
            if col not in jobs:
                raise ValueError(f"job stream has no column {col!r}")
        res = tuple(c for c in jobs.columns if str(c).startswith(RESOURCE_PREFIX))
        if len(res) + 1 != capacity.shape[0]:
            raise ValueError(f"capacity has K = {capacity.shape[0]} entries but the stream has "
                             f"procs + {len(res)} resource columns {list(res)}")

        submit, ids = _array(jobs["submit"], np.float64, copy), _array(jobs["id"], np.int64, copy)
        if not in_arrival_order(submit, ids):
            order = np.lexsort((ids, submit))
            jobs = jobs.take(order)
            submit, ids = submit[order], ids[order]
        demand = _demand(jobs, res, copy)
        est, dur = _array(jobs["estimate"], np.float64, copy), _array(jobs["duration"], np.float64, copy)
        rt = _array(jobs["runtime"], np.float64, copy) if "runtime" in jobs else dur
        _check(submit, est, dur, demand, capacity)
        n = len(ids)
        return cls(ids, submit, rt, est, dur, demand, res, np.full(n, np.nan), np.full(n, np.nan))

    def rehearsal(self, jobs: int = REHEARSAL_JOBS) -> "JobTable":
        """A short stream that takes a policy through its usual steps, run
        before a timed simulation so that the kernels its steps call are
        loaded (or compiled) first: the first ``jobs`` jobs of this table,
        all arriving with the first (a queue forms, later jobs backfill),
        each ending at half its estimate where it may end early (reservations
        are compressed).  Its own arrays, of this table's dtypes, layouts
        and write flags (a compiled kernel called with a read-only array is
        another signature, loaded again); this table is untouched."""
        k = max(min(self.n, int(jobs)), 0)
        dur = np.minimum(self.duration[:k], self.estimate[:k] / 2)
        cols = [(self.ids[:k], self.ids), (np.full(k, self.submit[0] if k else 0.0), self.submit),
                (dur, self.runtime), (self.estimate[:k], self.estimate), (dur, self.duration),
                (self.demand[:k], self.demand)]
        ids, submit, rt, est, dur, dem = (_flagged_like(np.array(a, dtype=b.dtype), b) for a, b in cols)
        return JobTable(ids, submit, rt, est, dur, dem, self.resources, np.full(k, np.nan), np.full(k, np.nan))

    def layout(self) -> tuple:
        """What the compiled kernels' signatures see of this table: K and
        each column's write flag (a rehearsal per layout is enough)."""
        return (self.k, *(a.flags.writeable for a in (self.ids, self.submit, self.runtime, self.estimate,
                                                       self.duration, self.demand)))


def _flagged_like(a: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``a`` (a new array), read-only where ``like`` is."""
    a.flags.writeable = bool(like.flags.writeable)
    return a


def _demand(jobs: Columns, res: tuple, copy: bool) -> np.ndarray:
    """The n x K demand matrix (``procs``, then the ``res`` columns); with one
    resource and ``copy=False`` the ``procs`` column itself seen as n x 1
    (no copy when it already is int64)."""
    if not res:
        return _array(jobs["procs"], np.int64, copy).reshape(-1, 1)
    demand = np.empty((len(jobs), 1 + len(res)), dtype=np.int64)
    for k, name in enumerate(("procs", *res)):
        demand[:, k] = jobs[name]
    return demand


def _array(values, dtype, copy: bool) -> np.ndarray:
    """``values`` as an array of ``dtype``: itself when it already is one and ``copy`` is false."""
    return np.array(values, dtype=dtype, copy=copy or None)


def _check(submit, est, dur, demand, capacity) -> None:
    if not (np.isfinite(submit).all() and np.isfinite(dur).all() and (dur >= 0).all()):
        raise ValueError("submit and duration must be finite, duration >= 0")
    if not (np.isfinite(est).all() and (est > 0).all()):
        raise ValueError("estimate must be finite and > 0")
    if demand.size and (demand.min() < 0 or (demand[:, 0] < 1).any()):
        raise ValueError("procs must be >= 1 and resources >= 0")
    big = np.nonzero((demand > capacity).any(axis=1))[0]
    if big.size:
        raise ValueError(f"job row {int(big[0])} needs {demand[big[0]].tolist()} > capacity "
                         f"{capacity.tolist()}; it could never run")


# ---- machine model -----------------------------------------------------------------
@runtime_checkable
class Machine(Protocol):
    """What the engine and the policies need from a machine model."""

    capacity: np.ndarray

    def fits(self, job: int) -> bool:
        """Could ``job`` start now?"""

    def start(self, job: int, now: float) -> float:
        """Start ``job`` now; return its finish time."""

    def finish(self, job: int, now: float) -> None:
        """``job`` ends now."""

    def running(self) -> Sequence[int]:
        """Jobs running now."""


class PoolMachine:
    """Space-shared pool of K resources: a job holds ``demand[job]`` for its
    whole ``duration`` ([zhang-comparative] section 2; [leinberger1999] section 1)."""

    def __init__(self, table: JobTable, capacity):
        self.table = table
        self.capacity = np.asarray(capacity, dtype=np.int64)
        self.free = self.capacity.copy()
        self._running: dict[int, None] = {}

    @property
    def used(self) -> np.ndarray:
        return self.capacity - self.free

    def fits(self, job: int) -> bool:
        return bool((self.table.demand[job] <= self.free).all())

    def fitting(self, jobs: Sequence[int]) -> list[int]:
        """The rows of ``jobs``, in their order, that could start now: one
        numpy test for all, O(len(jobs) K), where a :meth:`fits` per job
        costs a microsecond or two each.  A backfill scan needs no others:
        within a pass the free resources only fall, so a job that does not
        fit at its start fits at no later point of it (:func:`fitting`)."""
        if not len(jobs):
            return []
        rows = np.asarray(jobs, dtype=np.int64)
        return rows[(self.table.demand[rows] <= self.free).all(axis=1)].tolist()

    def start(self, job: int, now: float) -> float:
        if not self.fits(job):
            raise RuntimeError(f"job row {job} does not fit: needs {self.table.demand[job].tolist()}, "
                               f"free {self.free.tolist()}")
        self.free -= self.table.demand[job]
        self._running[job] = None
        return now + float(self.table.duration[job])

    def finish(self, job: int, now: float) -> None:
        del self._running[job]
        self.free += self.table.demand[job]

    def running(self) -> list[int]:
        return list(self._running)


# ---- policy ------------------------------------------------------------------------
StartFn = Callable[[int], None]


def fitting(machine: Machine, jobs: Sequence[int]) -> Sequence[int]:
    """The jobs of ``jobs`` that ``machine`` could start now, in order,
    through its ``fitting`` where it has one (:meth:`PoolMachine.fitting`),
    else all of them (the caller asks :meth:`Machine.fits` of each).  A
    scan that starts jobs in one pass may skip the others: no job ends
    within a pass, so none of them fits later in it."""
    many = getattr(machine, "fitting", None)
    return many(jobs) if many is not None else jobs


class Policy(ABC):
    """A queue order, a selection step and a reservation rule.

    The engine calls :meth:`reset` once, :meth:`finished` and :meth:`arrive`
    as events happen, and :meth:`schedule` once per pass; ``schedule`` calls
    ``start(job)`` for every job it starts (the engine updates the machine at
    once, so later checks in the same pass see it) and drops them from its
    queue.
    """

    name: str = "policy"

    def load_step_methods(self) -> None:
        """Load what the policy's steps call (compiled kernels, solvers)
        before the run's clock starts; nothing by default."""

    def reset(self, table: JobTable, machine: Machine) -> None:
        self.table = table
        self.machine = machine

    @abstractmethod
    def arrive(self, job: int, now: float) -> None: ...

    def finished(self, job: int, now: float) -> None:
        return None

    @abstractmethod
    def queue(self) -> list[int]:
        """Waiting jobs in policy order."""

    @abstractmethod
    def __len__(self) -> int:
        """Number of waiting jobs."""

    @abstractmethod
    def schedule(self, now: float, machine: Machine, start: StartFn) -> None: ...

    def wakeup(self) -> float:
        """Time of the next pass this policy needs without any event (a
        reservation falling due); ``inf`` for none."""
        return np.inf

    def options(self) -> dict:
        return {}

    def settings(self) -> dict:
        """:meth:`options` without the counts a run keeps there (a selector's
        ``selector_stats``): what the policy was asked to do."""
        return {k: v for k, v in self.options().items() if k != "selector_stats"}


def positions(candidates, started) -> list[int]:
    """The positions in ``candidates`` of the jobs ``started`` (in start
    order; a job not among them is left out).  O(q) numpy work for q
    candidates, a dict of the started ones only."""
    if not len(started):
        return []
    cand = np.asarray(candidates, dtype=np.int64)
    pos = np.flatnonzero(np.isin(cand, np.fromiter(started, dtype=np.int64, count=len(started))))
    where = dict(zip(cand[pos].tolist(), pos.tolist()))
    return [where[j] for j in started if j in where]


def wake_time(now: float, planned) -> float:
    """The pass a plan asks for after a pass at ``now`` (:meth:`Policy.wakeup`):
    the earliest of the ``planned`` starts of the jobs left waiting, when it
    is after now; none (``inf``) when a job planned at or before now is still
    waiting.  Such a job did not fit, which happens only while a running job
    is past its estimate: the plan counted that job's resources free from
    now, so every later start in it hangs on an end that no event marks, and
    the passes it asked for started nothing while they re-planned the same
    overrun a job's estimate later each time (about 1e8 passes for an overrun
    of 5e8 s).  The next job end or arrival re-plans.  When no job overruns,
    every job planned by now has started and this is the earliest planned
    start, as before."""
    first = min(planned, default=np.inf)
    return first if first > now else np.inf


PassHook = Callable[[float, Machine, list, list], None]


# ---- the event loop ----------------------------------------------------------------
class RunStalled(RunStopped):
    """The event loop ran out of events (nothing running, arriving or due)
    with jobs still queued: the policy started none of them and nothing
    would ever call it again.  A policy whose step a user's selector takes
    can get there (a selector that starts nothing on an idle machine);
    :func:`epochbench.sim.pool.simulate_pool` then names the selector.  A
    :class:`~epochbench.instances.core.RunStopped` (a ``RuntimeError``):
    the command line prints it in one line, exit status 1."""

    def __init__(self, queued: int, now: float):
        super().__init__(f"{queued} job(s) never started: at time {now:g} nothing ran, arrived or was due "
                         "and the policy started none of the queued jobs")
        self.queued, self.now = queued, now


class HookTimer:
    """Calls a run makes to its hooks (``on_pass``, a recorder), their wall
    time summed in ``seconds``, which the run's own ``seconds`` leaves out (a
    per-epoch measurement doubled a run's ``seconds``)."""

    def __init__(self):
        self.seconds = 0.0

    def __call__(self, f, *args):
        t0 = time.perf_counter()
        try:
            return f(*args)
        finally:
            self.seconds += time.perf_counter() - t0


class Engine:
    """Generic event loop (Python heap).  ``on_pass(time, machine, queue,
    started)`` is called after every pass with the queue as it was before the
    pass (policy order) and the jobs started, in order.  A run that ends
    with jobs queued raises :class:`RunStalled`.  ``hooks.seconds``: the
    wall time spent in ``on_pass`` (and in reading the queue for it), which
    a caller timing the simulation alone takes out (:class:`HookTimer`)."""

    def __init__(self, table: JobTable, machine: Machine, policy: Policy,
                 on_pass: PassHook | None = None, progress=None, every: float = 0.5):
        self.table, self.machine, self.policy, self.on_pass = table, machine, policy, on_pass
        self.progress, self.every = progress, every
        self.passes = 0
        self.hooks = HookTimer()

    def run(self) -> None:
        tb, m, pol = self.table, self.machine, self.policy
        pol.reset(tb, m)
        heap: list[tuple[float, int]] = []
        n, ai = tb.n, 0
        clock = time.perf_counter
        due = clock() + self.every
        wake = _wakeup(pol, -np.inf)
        while ai < n or heap or wake < np.inf:
            now = min(heap[0][0] if heap else np.inf, tb.submit[ai] if ai < n else np.inf, wake)
            while heap and heap[0][0] == now:
                j = heapq.heappop(heap)[1]
                m.finish(j, now)
                pol.finished(j, now)
            while ai < n and tb.submit[ai] == now:
                pol.arrive(ai, now)
                ai += 1
            self._pass(now, heap)
            if self.progress is not None and clock() > due:
                self.progress(ai, now)
                due = clock() + self.every
            wake = _wakeup(pol, now)
        if self.progress is not None:
            self.progress(ai, now if n else 0.0)  # the final state, always reported
        if len(pol):
            raise RunStalled(len(pol), now)

    def _pass(self, now: float, heap: list) -> None:
        if not len(self.policy):
            return
        self.passes += 1
        queue = self.hooks(self.policy.queue) if self.on_pass is not None else None
        started: list[int] = []

        def start(j: int) -> None:
            _check_start(self.policy, self.table, self.machine, j, now)
            heapq.heappush(heap, (self.machine.start(j, now), j))
            self.table.start[j] = now
            started.append(j)

        self.policy.schedule(now, self.machine, start)
        if self.on_pass is not None:
            self.hooks(self.on_pass, now, self.machine, queue, started)


def _wakeup(policy, now: float) -> float:
    """``policy.wakeup()`` after the loop's step at ``now`` (-inf: before
    the first); :class:`~epochbench.instances.core.MethodFailed` naming the
    policy unless it is later than now (``inf``: none).  A policy of the
    user's whose ``wakeup`` returned a time in the past turned the clock
    back, past every event, and the run never ended; a string ended in a
    numpy traceback."""
    wake = policy.wakeup()
    try:
        later = bool(wake > now)
    except TypeError:
        later = False
    if not later:
        raise MethodFailed(f"{_who(policy)} at time {now:g}: wakeup() returned {wake!r}, not a time after now (a "
                           "number; inf: no pass needed)")
    return wake


def _who(policy) -> str:
    """The policy as an engine's message names it: the plug-in that made it
    (:func:`~epochbench.instances.catalog.plugin_label`), else its name."""
    return plugin_label(policy) or f"policy {getattr(policy, 'name', type(policy).__name__)!r}"


def _check_start(policy, table: JobTable, machine: Machine, j, now: float) -> None:
    """A policy's ``start(j)`` checked before the machine takes it: ``j`` a
    job row of the table, arrived, not started before, fitting; else
    :class:`~epochbench.instances.core.MethodFailed`, one line naming the
    policy (a plug-in policy that started a job before its submit time ran
    to exit 0 with a negative wait in the metrics, and one started twice
    stopped on a KeyError at its second end)."""
    who = f"{_who(policy)} at time {now:g}"
    if isinstance(j, (bool, np.bool_)) or not isinstance(j, (int, np.integer)) or not 0 <= j < table.n:
        raise MethodFailed(f"{who}: started {j!r}, not a job row (0 to {table.n - 1})")
    job = f"job row {int(j)} (id {int(table.ids[j])})"
    if not np.isnan(table.start[j]):
        raise MethodFailed(f"{who}: started {job} a second time (it started at {table.start[j]:g})")
    if table.submit[j] > now:
        raise MethodFailed(f"{who}: started {job} before it arrived (submit {table.submit[j]:g})")
    if not machine.fits(j):
        raise MethodFailed(f"{who}: started {job}, which does not fit: it needs "
                           f"{table.demand[j].tolist()}, {getattr(machine, 'free', np.array([])).tolist()} free")


# ---- result ------------------------------------------------------------------------
@dataclass
class SimResult:
    """One simulated run, on any machine (the base of the gang and farm results).

    ``jobs``: one row per job in (submit, id) order with ``id, submit, start,
    end, procs, estimate, runtime, duration``, the ``res_*`` columns and
    ``promised`` (EASY and its variants: the first shadow time computed
    while the job was the blocked queue head; conservative: its first
    reservation; the ``*-bf`` policies: its place in their first plan,
    which a later plan may move later; multi-queue: the shadow time of its
    partition's EASY while it was that queue's blocked head, and with
    ``lend`` the reservation of a job wider than its partition; NaN
    otherwise).
    ``passes``: scheduling passes run (one per batch of events with a
    non-empty queue).  ``seconds``: wall time of the simulation proper.
    ``engine``: ``"fast"`` (the compiled loop), ``"python"`` (its
    pure-Python twin, which runs EASY on a short one-resource stream while
    the compiled kernels are not loaded in the process: the same schedule,
    so which one ran depends on what ran before), ``"generic"``, or the
    machine's own (``"gang"``, ``"farm"``).  ``dropped``:
    the jobs the workload rules left out, by reason
    (:func:`epochbench.sim.runner.simulate` given a path, a ``(jobs,
    capacity)`` pair or a workload; empty when nothing was dropped or the
    table was the simulator's already), so that the metrics' subset is said.
    ``facts``: what the policy says of the run beyond its options (a
    policy's ``facts()``; empty for most), in the report's ``extras``.

    The per-job results are kept as numpy columns (:attr:`table`, a
    :class:`~epochbench.instances.table.Columns` or a DataFrame); :attr:`jobs`
    is the same table as a DataFrame, built on first use.
    """

    table: object
    policy: str
    options: dict
    passes: int
    seconds: float
    engine: str
    capacity: np.ndarray
    machine: str = "pool"
    dropped: dict = field(default_factory=dict)
    facts: dict = field(default_factory=dict)
    _jobs: object = field(default=None, init=False, repr=False, compare=False)   # the DataFrame, once built

    def summary(self, workload=None, small_threshold: int = 32) -> dict:
        """The run's metrics (:func:`epochbench.sim.metrics.summarize`: wait,
        bounded slowdown, utilization, capacity loss, ...; NaN where a figure
        is undefined, such as ``small_*`` when no job has at most
        ``small_threshold`` processors); machines with other metrics
        override it."""
        from .metrics import summarize
        return summarize(self.table, self._machine(workload), small_threshold=small_threshold)

    @property
    def jobs(self):
        """The per-job results as a :class:`pandas.DataFrame` (built once, on
        first use), of copies: editing it changes neither the run (its
        :meth:`summary`) nor the arrays the run was given."""
        if self._jobs is None:
            self._jobs = self.table.to_frame(copy=True) if isinstance(self.table, Columns) else self.table.copy()
        return self._jobs

    def job_table(self, workload=None):
        """The ``jobs.csv`` table: :attr:`jobs` with the per-job metrics
        (:func:`epochbench.sim.metrics.per_job`) that it lacks."""
        return self.job_columns(workload).to_frame()

    def job_columns(self, workload=None) -> Columns:
        """:meth:`job_table` as numpy :class:`~epochbench.instances.table.Columns`
        (what ``jobs.csv`` is written from, without pandas)."""
        from .metrics import per_job
        base = as_columns(self.table)
        extra = per_job(base, self._machine(workload))
        return base.assign(**{c: extra[c] for c in extra.columns if c not in base})

    @property
    def extras(self) -> dict:
        """Machine-specific results for the report; on the pool, what the
        policy says of the run (``facts``: multi-queue's partition sizes and
        the jobs it queued elsewhere, :meth:`~epochbench.sim.variants.MultiQueue.facts`)."""
        return dict(self.facts)

    def _machine(self, workload):
        """``workload``, or this run's capacity and resource names (from the
        ``res_*`` columns) when none is given.  A workload whose capacity is
        not this run's is a ValueError (another stream's gave a utilization
        of 13.6)."""
        from types import SimpleNamespace
        names = ("procs", *(c[len(RESOURCE_PREFIX):] for c in self.table.columns if c.startswith(RESOURCE_PREFIX)))
        own = SimpleNamespace(capacity=np.asarray(self.capacity), resources=names)
        if workload is None:
            return own
        cap = getattr(workload, "capacity", None)
        if cap is None:                     # a bare capacity (metrics' own functions take one)
            try:
                cap = np.asarray(workload, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"workload: expected the run's Workload (capacity, resources) or its capacity, "
                                 f"got {type(workload).__name__}") from None
            workload = SimpleNamespace(capacity=cap, resources=names)
        if np.atleast_1d(cap).tolist() != np.asarray(self.capacity).tolist() \
                or tuple(getattr(workload, "resources", names)) != names:
            raise ValueError(f"workload: its capacity {np.atleast_1d(cap).tolist()} and resources "
                             f"{tuple(getattr(workload, 'resources', names))} are not this run's "
                             f"{np.asarray(self.capacity).tolist()} and {names}; give the run's own workload, or none")
        return workload

    @property
    def n(self) -> int:
        return len(self.table)

    @property
    def jobs_per_second(self) -> float:
        return self.n / self.seconds if self.seconds > 0 else float("inf")


def result_columns(table: JobTable) -> Columns:
    """The per-job results of a run on ``table`` (:attr:`SimResult.table`); the
    arrays are the table's own, ``end`` is computed."""
    d = {"id": table.ids, "submit": table.submit, "start": table.start,
         "end": table.start + table.duration, "procs": table.demand[:, 0],
         "estimate": table.estimate, "runtime": table.runtime, "duration": table.duration}
    for k, name in enumerate(table.resources, start=1):
        d[name] = table.demand[:, k]
    d["promised"] = table.promised
    return Columns(d)


def packing_instance(table: JobTable, capacity, free, candidates, *, now: float = 0.0,
                     shadow: float | None = None, extra=None, meta: dict | None = None):
    """The packing instance of one selection step (instances.packing): the
    machine with ``free`` left, the ``candidates`` (job rows, in queue order)
    and, for EASY, the reservation of the blocked head (jobs with ``now +
    estimate > shadow`` are flagged as running past the shadow time)."""
    from epochbench.instances.packing import PackingInstance

    cand = np.asarray(candidates, dtype=np.int64)
    cap = np.asarray(capacity, dtype=np.int64)
    est = table.estimate[cand]
    kw = {}
    if shadow is not None:
        kw = dict(shadow=shadow, extra=np.maximum(np.asarray(extra, dtype=np.int64), 0),
                  runtime_past_shadow=now + est > shadow)
    return PackingInstance.build(cap, table.demand[cand].reshape(-1, cap.shape[0]), cap - free,
                                 estimate=est, meta=dict(meta or {}), now=now, **kw)
