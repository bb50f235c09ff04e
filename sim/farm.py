"""Online simulation of a computing farm with licenses and deadlines ([capannini2007], issue 8).

[capannini2007] (Capannini et al., SC07) sections 3 and 6: heterogeneous machines,
each running one job at a time; a job runs on machine m at speed
``BM_m / BM_m-bar`` (its estimate is measured on a machine of benchmark
``BM_m-bar``); floating licenses, each with a number of copies usable at
once; jobs with CPUs, licenses, input, an optional deadline, and preemption
where the policy allows it ("a job's execution may be interrupted whenever a
schedule event happens", section 3).

* :class:`FarmStream` -- machines, license copies, bandwidth and the job
  stream; :func:`generate_stream` draws one with the ranges of [capannini2007]
  section 6 through :func:`epochbench.instances.farm.generate_farm` (150 machines, 20
  licenses, 1500 jobs, exponential inter-arrival times, 30% without
  deadline);
* :class:`FarmView` -- what a policy sees at a scheduling pass (the jobs in
  the system as an :class:`epochbench.instances.farm.FarmState`, free machines, free
  license copies, estimated remaining times);
* :func:`simulate_farm` -- the event loop.  Preemption changes finish
  times, so instead of the engine's fixed finish heap the next finish is the
  minimum over the running jobs (O(M) per event).  Same ordering rules as
  :mod:`epochbench.sim.engine`: at equal times all finishes, then all arrivals, then
  one scheduling pass; deterministic.  Every plan a policy returns is
  checked (one job per machine, eligible machine, license copies, no
  interruption under a non-preemptive policy) before it is applied;
* :class:`FarmResult` with the per-job table and :func:`farm_metrics`:
  share of (deadline) jobs finishing late, slowdown ``(Tw + Te) / Te`` of the
  jobs without deadline (section 6, fig. 5), machine usage ``active /
  min(machines, jobs in system)`` averaged over time (fig. 6), license usage
  (copies in use over ``sum_l min(copies_l, jobs in system asking for l)``,
  averaged over time; our analogue of the machine usage, the seed gives no
  formula), scheduling time per pass (fig. 7), workload series (fig. 3).

Modelling choices the seed leaves open: the actual work of a job equals its
estimate (``runtime`` can differ; no job is killed); a preempted or migrated
job resumes with its progress and no overhead; its partial results then sit
on the machine it left (the Input heuristic's ``input_location``).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from epochbench.instances import farm as _farm
from epochbench.instances.arguments import arg
from epochbench.instances.checks import short
from epochbench.instances.core import InstanceError, RunStopped

from .engine import SimResult

QUEUED, RUNNING, DONE, FUTURE = 1, 2, 3, 0
EPS = 1e-9


# ---- the stream ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class FarmStream(_farm._FarmShape):
    """Farm (machines, license ``copies``, ``bandwidth``) and a job stream as
    :class:`epochbench.instances.farm.Jobs` (``submit`` ascending; ``running_on`` /
    ``progress`` unused) plus ``runtime`` (actual work in seconds on the
    estimate's reference machine; default the estimate)."""

    machines: _farm.Machines
    copies: np.ndarray
    bandwidth: np.ndarray
    jobs: _farm.Jobs
    runtime: np.ndarray
    meta: dict = field(default_factory=dict)

    @classmethod
    def build(cls, machines, copies, bandwidth, jobs, runtime=None, meta=None,
              source: str = "farm stream") -> "FarmStream":
        """Validate: shapes (through :class:`FarmState`), submit times sorted
        and finite, positive estimates, benchmarks and runtimes, and every job
        eligible on some machine (else it could never run).  Raises
        :class:`InstanceError` naming ``source`` and the field."""
        copies = np.asarray(copies, dtype=np.int64)
        try:
            _farm.FarmState(machines, copies, jobs, np.asarray(bandwidth, dtype=float))
        except InstanceError as exc:
            raise InstanceError(f"{source}: {exc}") from None
        j = jobs
        if not np.all(np.isfinite(j.submit)) or np.any(np.diff(j.submit) < 0):
            raise InstanceError(f"{source}: field 'submit' must be finite and ascending")
        for name in ("estimate", "bench"):
            a = getattr(j, name)
            if a.size and not (np.all(np.isfinite(a)) and a.min() > 0):
                raise InstanceError(f"{source}: field '{name}' must be finite and > 0")
        if machines.bench.size and machines.bench.min() <= 0:
            raise InstanceError(f"{source}: field 'machines.bench' must be > 0")
        rt = np.array(j.estimate if runtime is None else runtime, dtype=float)
        if rt.shape != (j.n,) or (rt.size and not (np.all(np.isfinite(rt)) and rt.min() > 0)):
            raise InstanceError(f"{source}: field 'runtime' must hold {j.n} finite values > 0")
        dl = j.deadline[~np.isnan(j.deadline)]
        if dl.size and not np.all(np.isfinite(dl)):
            raise InstanceError(f"{source}: field 'deadline' must be finite or NaN")
        ok = eligible_matrix(machines, jobs)
        bad = np.nonzero(~ok.any(axis=1))[0]
        if bad.size:
            raise InstanceError(f"{source}: job {int(j.ids[bad[0]])} (and {bad.size - 1} more) fits no machine "
                                "(CPUs or license types); it could never run")
        rt.setflags(write=False)
        return cls(machines, copies, np.asarray(bandwidth, dtype=float), jobs, rt, dict(meta or {}))


def eligible_matrix(machines: _farm.Machines, jobs: _farm.Jobs) -> np.ndarray:
    """Minimal requirements ([capannini2007] 4.1): job i may run on machine m iff m
    has its CPUs and can run all its license types.  O(N M L)."""
    cpu_ok = machines.cpus[None, :] >= jobs.cpus[:, None]
    bad = jobs.licenses.astype(np.int32) @ (~machines.license_ok).T.astype(np.int32) > 0
    return cpu_ok & ~bad


def generate_stream(*, jobs: int = 1500, machines: int = 150, licenses: int = 20, interarrival: float = 10.0,
                    seed: int | np.random.Generator = 0, **farm_kw) -> FarmStream:
    """A [capannini2007] section 6 stream: the farm and jobs of
    :func:`epochbench.instances.farm.generate_farm` (its ranges and readings; no previous
    plan), submit times shifted so the first job arrives at 0 (the gaps are
    i.i.d. exponential with mean ``interarrival``), deadlines shifted with
    them.  A job no machine can run is redrawn (none at the default sizes).
    O(N M L)."""
    from epochbench.instances.generators import PARAM_BOUNDS     # 8 ms of imports a farm run needs only here
    top = PARAM_BOUNDS["seed"][1]
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed > top:
        raise ValueError(f"seed must lie in [0, {top}], got {seed}")     # as every generator's seed
    try:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    except (ValueError, TypeError) as exc:            # numpy: "expected non-negative integer", no name
        raise ValueError(f"seed: a non-negative integer or a numpy Generator, got {seed!r} ({exc})") from None
    if interarrival <= 0:
        raise ValueError(f"interarrival must be > 0, got {interarrival}")
    state = _farm.generate_farm(rng, jobs=jobs, machines=machines, licenses=licenses,
                                interarrival=interarrival, busy=0.0, **farm_kw)
    j = state.jobs
    for _ in range(100):  # redraw the (rare) jobs that fit no machine
        bad = np.nonzero(~eligible_matrix(state.machines, j).any(axis=1))[0]
        if bad.size == 0:
            break
        fresh = _farm.generate_farm(rng, jobs=bad.size, machines=machines, licenses=licenses, busy=0.0,
                                    **farm_kw).jobs
        fields = {f: np.array(getattr(j, f)) for f in ("estimate", "bench", "cpus", "licenses", "input_size")}
        for f in fields:
            fields[f][bad] = getattr(fresh, f)
        j = replace(j, **{f: _farm._frozen(v, v.dtype) for f, v in fields.items()})
    bad = np.nonzero(~eligible_matrix(state.machines, j).any(axis=1))[0]
    if bad.size:                    # no user wrote these jobs: say which options the draws failed under
        raise InstanceError(f"farm stream: after 100 draws, {bad.size} of {jobs} jobs still fit no machine "
                            f"(CPUs or license types) of {machines} machines with {licenses} license types; "
                            f"give fewer {arg('licenses')} or more {arg('machines')}")
    shift = -float(j.submit[0]) if j.n else 0.0
    j = replace(j, submit=_farm._frozen(j.submit + shift, float), deadline=_farm._frozen(j.deadline + shift, float))
    meta = {**state.meta, "jobs": jobs, "machines": machines, "licenses": licenses, "interarrival": interarrival,
            "seed": int(seed) if isinstance(seed, (int, np.integer)) else None}   # the report names its stream
    return FarmStream.build(state.machines, state.copies, state.bandwidth, j, meta=meta)


# ---- what a policy sees ------------------------------------------------------------------------
def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (read-only itself): numpy refuses to make
    such a view writable again, as it would an array that owns its data."""
    view = a.view()
    view.flags.writeable = False
    return view


class FarmView:
    """The farm at a scheduling pass (read-only for policies).

    ``jobs``: stream indices of the jobs in the system (arrived, not done),
    ascending; ``running_on[k]`` the machine of ``jobs[k]`` (-1 queued);
    ``machine_job[m]`` the stream index on machine m (-1 free);
    ``license_free`` copies not in use; ``eligible`` the stream's (N, M)
    eligibility; :meth:`state` the :class:`epochbench.instances.farm.FarmState` of the
    jobs in the system (rows in ``jobs`` order, ``ids`` = stream indices)."""

    def __init__(self, sim: "_Sim"):
        self._sim = sim
        self.stream = sim.stream
        self.now = sim.now
        self.jobs = np.nonzero((sim.status == QUEUED) | (sim.status == RUNNING))[0]
        self.running_on = sim.machine_of[self.jobs]
        self.machine_job = sim.machine_job.copy()
        self.license_free = sim.stream.copies - sim.lic_used
        self.eligible = _read_only(sim.eligible)   # one that set it all True (a plug-in) had its jobs placed
        # on machines without their CPUs or licence types; a view of a read-only array cannot be made writable
        self.passes = sim.passes
        self._state = None

    @property
    def queued(self) -> np.ndarray:
        return self.jobs[self.running_on < 0]

    @property
    def running(self) -> np.ndarray:
        return self.jobs[self.running_on >= 0]

    def progress(self, idx) -> np.ndarray:
        """Fraction of the estimate done (capped at 1)."""
        s = self._sim
        done = s.stream.runtime[idx] - s.work_left[idx]
        return np.minimum(done / s.stream.jobs.estimate[idx], 1.0)

    def remaining(self, idx, machines) -> np.ndarray:
        """Estimated remaining seconds of jobs ``idx`` on ``machines``
        (broadcast): ``Estimated (1 - Progress) BM_m-bar / BM_m`` ([capannini2007]
        4.1, Nxtime)."""
        j = self.stream.jobs
        idx = np.asarray(idx)
        left = j.estimate[idx] * (1.0 - self.progress(idx))
        return left * j.bench[idx] / self.stream.machines.bench[np.asarray(machines)]

    def state(self) -> _farm.FarmState:
        """The jobs in the system as a [capannini2007] farm state at ``now``. O(N L)."""
        if self._state is None:
            s, idx = self._sim, self.jobs
            j = s.stream.jobs
            jobs = _farm.Jobs(estimate=j.estimate[idx], bench=j.bench[idx], cpus=j.cpus[idx],
                              licenses=j.licenses[idx], input_size=j.input_size[idx],
                              input_location=s.input_location[idx], deadline=j.deadline[idx],
                              submit=j.submit[idx], progress=self.progress(idx), running_on=self.running_on,
                              ids=idx)
            self._state = _farm.FarmState(s.stream.machines, s.stream.copies, jobs, s.stream.bandwidth,
                                          now=self.now)
        return self._state


class FarmPolicy:
    """A farm scheduling policy: ``plan(view)`` returns the full set of
    running jobs after the pass as ``{stream index: machine}``; jobs running
    now and missing from it are suspended (only if ``preemptive``), jobs on a
    new machine migrate.  ``stats`` collects per-policy figures."""

    name = "farm-policy"
    preemptive = False
    #: a pass may move running jobs to other machines (CS's preemptive
    #: versions): the simulator then also runs one when a job ends with
    #: nothing queued, since the freed machine may suit a running job better
    moves_running = False
    #: seconds of the last ``plan`` spent on measurement rather than scheduling
    #: (per-epoch oracles); :func:`simulate_farm` leaves them out of the pass time
    untimed = 0.0

    def load_step_methods(self) -> None:
        """Load what the policy's passes call (kernels, solvers) before the
        run's clock starts; nothing by default."""

    def reset(self, stream: FarmStream) -> None:
        self.stats: dict = {}

    def plan(self, view: FarmView) -> dict[int, int]:
        raise NotImplementedError

    def options(self) -> dict:
        return {}


class PlanError(RunStopped):
    """A policy returned a plan the farm cannot run: one line naming the
    policy, exit status 1 on the command line (a plug-in's bad plan ended
    in a traceback), a ``RuntimeError`` as before."""


def _index(value, what: str, policy) -> int:
    """``value`` of a plan as a job or machine index: a whole number (a
    float such as 3.7 was cut to 3 without a word), else :class:`PlanError`."""
    whole = isinstance(value, (int, np.integer)) or (isinstance(value, (float, np.floating))
                                                      and float(value).is_integer())
    if isinstance(value, (bool, np.bool_)) or not whole:
        raise PlanError(f"{policy.name}: {what} {value!r} in its plan is not an index (a whole number)")
    return int(value)


# ---- the simulator ---------------------------------------------------------------------------
class _Sim:
    def __init__(self, stream: FarmStream):
        n, m = stream.n, stream.m
        self.stream = stream
        self.now = 0.0
        self.status = np.full(n, FUTURE, dtype=np.int8)
        self.work_left = np.array(stream.runtime, dtype=float)
        self.machine_of = np.full(n, -1, dtype=np.int64)
        self.machine_job = np.full(m, -1, dtype=np.int64)
        self.lic_used = np.zeros(stream.copies.shape[0], dtype=np.int64)
        self.input_location = np.array(stream.jobs.input_location, dtype=np.int64)
        self.eligible = eligible_matrix(stream.machines, stream.jobs)
        self.eligible.flags.writeable = False    # what check() reads; a policy gets a view of it
        self.speed = np.zeros(n)                      # work seconds per second on its machine
        self.finish_at = np.full(n, np.inf)
        self.first_start = np.full(n, np.nan)
        self.end = np.full(n, np.nan)
        self.exec_time = np.zeros(n)
        self.preemptions = np.zeros(n, dtype=np.int64)
        self.migrations = np.zeros(n, dtype=np.int64)
        self.passes = 0

    def check(self, plan: dict, policy: FarmPolicy) -> dict[int, int]:
        """Reject a plan the farm cannot run (see :class:`PlanError`): a plan
        that is no mapping too (a list or None ended in an AttributeError)."""
        if not isinstance(plan, Mapping):
            raise PlanError(f"{policy.name}: its plan is {type(plan).__name__} {short(plan, 40)}, not a mapping "
                            "{job: machine}")
        st = self.stream
        out: dict[int, int] = {}
        used_m: dict[int, int] = {}
        for i, m in plan.items():
            i, m = _index(i, "job", policy), _index(m, "machine", policy)
            if not 0 <= i < st.n or self.status[i] not in (QUEUED, RUNNING):
                raise PlanError(f"{policy.name}: job {i} is not in the system at t={self.now}")
            if not 0 <= m < st.m:
                raise PlanError(f"{policy.name}: machine {m} outside 0..{st.m - 1}")
            if m in used_m:
                raise PlanError(f"{policy.name}: jobs {used_m[m]} and {i} both on machine {m} at t={self.now}")
            if not self.eligible[i, m]:
                raise PlanError(f"{policy.name}: job {i} cannot run on machine {m} (CPUs or license types)")
            used_m[m] = i
            out[i] = m
        idx = np.fromiter(out, dtype=np.int64, count=len(out))
        lic = st.jobs.licenses[idx].sum(axis=0) if idx.size else np.zeros_like(st.copies)
        over = np.nonzero(lic > st.copies)[0]
        if over.size:
            raise PlanError(f"{policy.name}: license {int(over[0])} used {int(lic[over[0]])} times, "
                            f"{int(st.copies[over[0]])} copies, at t={self.now}")
        if not policy.preemptive:
            for i in np.nonzero(self.status == RUNNING)[0]:
                if out.get(int(i)) != self.machine_of[i]:
                    raise PlanError(f"{policy.name} is not preemptive but moves or stops running job {int(i)} "
                                    f"at t={self.now}")
        return out

    def apply(self, plan: dict[int, int]) -> None:
        st = self.stream
        for i in np.nonzero(self.status == RUNNING)[0]:
            m = int(self.machine_of[i])
            new = plan.get(int(i), -1)
            if new == m:
                continue
            self.machine_job[m] = -1
            self.lic_used -= st.jobs.licenses[i]
            self.input_location[i] = m          # partial results stay where the job ran
            if new < 0:
                self.preemptions[i] += 1
                self.status[i] = QUEUED
                self.machine_of[i] = -1
                self.finish_at[i] = np.inf
            else:
                self.migrations[i] += 1
                self.machine_of[i] = -1
        for i, m in plan.items():
            if self.machine_of[i] == m:
                continue
            if np.isnan(self.first_start[i]):
                self.first_start[i] = self.now
            self.status[i] = RUNNING
            self.machine_of[i] = m
            self.machine_job[m] = i
            self.lic_used += st.jobs.licenses[i]
            self.speed[i] = st.machines.bench[m] / st.jobs.bench[i]
            self.finish_at[i] = self.now + self.work_left[i] / self.speed[i]

    def advance(self, t: float) -> None:
        dt = t - self.now
        run = np.nonzero(self.status == RUNNING)[0]
        if dt > 0 and run.size:
            self.work_left[run] = np.maximum(self.work_left[run] - dt * self.speed[run], 0.0)
            self.exec_time[run] += dt
        self.now = t


@dataclass
class FarmResult(SimResult):
    """One farm run (a :class:`~epochbench.sim.engine.SimResult`): ``jobs``
    (one row per stream job: ``id, submit, deadline, start, end, exec_time,
    wait, slowdown, late, preemptions, migrations``; ``wait`` = end - submit
    - exec_time, the time spent waiting to start or to restart, and
    ``slowdown`` = (end - submit) / exec_time, [capannini2007] section 6), ``metrics``
    (:func:`farm_metrics`), ``series`` (time, queued, running after every
    pass: fig. 3), ``sched_seconds`` per pass, the policy's ``stats``,
    ``stream`` (the generator's parameters).  ``capacity`` holds the
    machines' count; ``engine`` is ``"farm"``."""

    metrics: dict = field(default_factory=dict)
    series: pd.DataFrame | None = None
    sched_seconds: np.ndarray | None = None
    stats: dict = field(default_factory=dict)
    stream: dict = field(default_factory=dict)

    def summary(self, workload=None, small_threshold: int = 32) -> dict:
        """The farm's metrics (:func:`farm_metrics`, [capannini2007] section 6)."""
        return dict(self.metrics)

    def job_table(self, workload=None) -> pd.DataFrame:
        return self.jobs

    def job_columns(self, workload=None):
        """:meth:`job_table` as numpy columns (what ``jobs.csv`` is written from)."""
        from epochbench.instances.table import Columns
        return Columns.from_frame(self.jobs)

    @property
    def extras(self) -> dict:
        return {"stream": self.stream, "stats": _plain(self.stats)}


def running_now(sim) -> bool:
    """Some job of ``sim`` is running."""
    return bool((sim.status == RUNNING).any())


def simulate_farm(stream: FarmStream, policy: FarmPolicy, *, on_pass: Callable | None = None,
                  max_events: int | None = None, progress: Callable | None = None) -> FarmResult:
    """Run ``policy`` on ``stream`` ([capannini2007] section 6: events are job
    arrivals and terminations, a new plan at each).  At equal times: all
    finishes, then all arrivals, then one pass; an event with nothing
    queued gets no pass (no plan could change), unless a job ended and the
    policy moves running jobs (``moves_running``: a freed machine may suit
    one better; the pass time of such passes counts as any other's).  ``on_pass(view, plan)`` is
    called after each checked plan; ``progress(done, now, total)`` after
    every event (it throttles itself).  ``seconds`` of the result times
    the event loop alone: the policy's methods are loaded before, the result
    tables built after (pandas' import and the tables were 0.4 to 1.6 s of
    a first run's 'simulation').  O(E (M + policy)) for E events."""
    getattr(policy, "load_step_methods", lambda: None)()   # one-time loading: not the run's time, nor a pass's
    t0 = time.perf_counter()
    sim = _Sim(stream)
    policy.reset(stream)
    n, M, copies = stream.n, stream.m, stream.copies
    submit = stream.jobs.submit
    lic = stream.jobs.licenses
    nxt = 0
    done = 0
    sched = []
    ser_t, ser_q, ser_r = [], [], []
    # time integrals for the usages
    mu_num = mu_den = lu_num = lu_den = 0.0
    events = 0
    while done < n:
        running = np.nonzero(sim.status == RUNNING)[0]
        tf = sim.finish_at[running].min() if running.size else np.inf
        ta = submit[nxt] if nxt < n else np.inf
        t = min(tf, ta)
        if not np.isfinite(t):
            stuck = np.nonzero(sim.status == QUEUED)[0]
            why = getattr(policy, "why_stuck", lambda: None)()          # a policy may know (CS: a user's matcher)
            raise PlanError(f"{policy.name}: nothing runs and nothing arrives at t={sim.now}, "
                            f"{stuck.size} job(s) queued (first {stuck[:5].tolist()})" + (f"; {why}" if why else ""))
        dt = t - sim.now
        if dt > 0:
            insys = np.nonzero((sim.status == QUEUED) | (sim.status == RUNNING))[0]
            if insys.size:
                mu_num += dt * running.size / min(M, insys.size)
                mu_den += dt
                want = np.minimum(lic[insys].sum(axis=0), copies).sum()
                if want > 0:
                    lu_num += dt * sim.lic_used.sum() / want
                    lu_den += dt
        sim.advance(t)
        # finishes
        finished = False
        if running.size:
            fin = running[sim.finish_at[running] <= t + EPS * max(1.0, abs(t))]
            for i in fin:
                m = sim.machine_of[i]
                sim.machine_job[m] = -1
                sim.lic_used -= lic[i]
                sim.machine_of[i] = -1
                sim.status[i] = DONE
                sim.work_left[i] = 0.0
                sim.finish_at[i] = np.inf
                sim.end[i] = t
            done += fin.size
            finished = fin.size > 0
        # arrivals
        while nxt < n and submit[nxt] <= t:
            sim.status[nxt] = QUEUED
            nxt += 1
        events += 1
        if progress is not None:
            progress(done, float(t), n)
        if max_events is not None and events > max_events:
            raise RuntimeError(f"more than {max_events} events")
        if not ((sim.status == QUEUED).any() or (policy.moves_running and finished and running_now(sim))):
            continue                      # nothing a plan could change
        view = FarmView(sim)
        c0 = time.perf_counter()
        policy.untimed = 0.0
        plan = policy.plan(view)
        sched.append(time.perf_counter() - c0 - policy.untimed)
        plan = sim.check(plan, policy)
        sim.apply(plan)
        sim.passes += 1
        if on_pass is not None:
            on_pass(view, plan)
        ser_t.append(t)
        ser_q.append(int((sim.status == QUEUED).sum()))
        ser_r.append(int((sim.status == RUNNING).sum()))
    seconds = time.perf_counter() - t0                    # the simulation alone, not the tables below
    j = stream.jobs
    wait = sim.end - j.submit - sim.exec_time
    import pandas as pd  # here, not at import: the pool's runs never need it
    jobs = pd.DataFrame({"id": j.ids, "submit": j.submit, "deadline": j.deadline, "start": sim.first_start,
                         "end": sim.end, "exec_time": sim.exec_time, "wait": np.maximum(wait, 0.0),
                         "slowdown": (sim.end - j.submit) / sim.exec_time,
                         "late": ~np.isnan(j.deadline) & (sim.end > j.deadline + EPS),
                         "preemptions": sim.preemptions, "migrations": sim.migrations})
    series = pd.DataFrame({"time": ser_t, "queued": ser_q, "running": ser_r})
    sched = np.asarray(sched)
    usage = {"machine_usage": float(mu_num / mu_den) if mu_den > 0 else float("nan"),
             "license_usage": float(lu_num / lu_den) if lu_den > 0 else float("nan")}
    metrics = farm_metrics(jobs, sched, series, usage)
    return FarmResult(jobs, policy.name, policy.options(), sim.passes, seconds, "farm",
                      np.asarray([len(stream.machines.bench)], dtype=np.int64),
                      "farm", metrics=metrics, series=series, sched_seconds=sched,
                      stats=dict(getattr(policy, "stats", {})), stream=dict(stream.meta))


def farm_metrics(jobs: pd.DataFrame, sched: np.ndarray, series: pd.DataFrame, usage: dict) -> dict:
    """[capannini2007] section 6 figures of one run: ``late_share`` (jobs with a
    deadline that end after it, over the jobs with a deadline; fig. 4),
    ``slowdown_mean`` of the jobs without deadline (fig. 5), the time-averaged
    ``machine_usage`` (fig. 6) and ``license_usage``, scheduling time per
    pass (fig. 7), the mean / max workload (jobs in the system after a pass,
    fig. 3), preemptions and migrations; ``makespan`` from the first
    arrival to the last end, as the pool's and the gang's."""
    has = ~np.isnan(jobs["deadline"].to_numpy())
    nod = ~has
    load = series["queued"] + series["running"]
    return {"jobs": int(len(jobs)), "deadline_jobs": int(has.sum()), "late": int(jobs["late"].sum()),
            "late_share": float(jobs["late"][has].mean()) if has.any() else float("nan"),
            "slowdown_mean": float(jobs["slowdown"][nod].mean()) if nod.any() else float("nan"),
            **usage,
            "sched_ms_mean": float(1000 * sched.mean()) if sched.size else 0.0,
            "sched_ms_max": float(1000 * sched.max()) if sched.size else 0.0,
            "passes": int(sched.size), "workload_mean": float(load.mean()) if len(load) else 0.0,
            "workload_max": int(load.max()) if len(load) else 0,
            "preemptions": int(jobs["preemptions"].sum()), "migrations": int(jobs["migrations"].sum()),
            "makespan": float(jobs["end"].max() - jobs["submit"].min()) if len(jobs) else 0.0}


def _plain(stats: dict) -> dict:
    """Summaries of list-valued stats (per-epoch gaps) for a JSON report."""
    out = {}
    for k, v in stats.items():
        if isinstance(v, list):
            a = np.asarray(v, dtype=float)
            out[k] = {"count": int(a.size), "mean": float(a.mean()) if a.size else None,
                      "max": float(a.max()) if a.size else None}
        else:
            out[k] = v
    return out


__all__ = ["FarmStream", "eligible_matrix", "generate_stream", "FarmView", "FarmPolicy", "PlanError",
           "FarmResult", "simulate_farm", "farm_metrics", "snapshot", "next_event_state"]


def snapshot(state: _farm.FarmState) -> FarmView:
    """A :class:`FarmView` of a [capannini2007] farm state (e.g. one of
    :func:`epochbench.instances.farm.generate_farm`): its jobs in the system, running
    ones (``running_on``) with their progress, at ``state.now``; for timing
    one scheduling pass (fig. 8).  Jobs are re-ordered by submit time."""
    j = state.jobs
    order = np.argsort(j.submit, kind="stable")
    jobs = j.take(order)
    s = FarmStream.build(state.machines, state.copies, state.bandwidth, jobs, source="snapshot")
    sim = _Sim(s)
    sim.now = float(state.now)
    run = jobs.running_on >= 0
    sim.status[:] = np.where(run, RUNNING, QUEUED)
    sim.work_left = s.runtime * (1.0 - jobs.progress)
    for i in np.nonzero(run)[0]:
        m = int(jobs.running_on[i])
        sim.machine_of[i], sim.machine_job[m] = m, i
        sim.lic_used += jobs.licenses[i]
        sim.speed[i] = s.machines.bench[m] / jobs.bench[i]
        sim.finish_at[i] = sim.now + sim.work_left[i] / sim.speed[i]
    return FarmView(sim)


def next_event_state(state: _farm.FarmState, policy: FarmPolicy, dt: float = 1.0) -> _farm.FarmState:
    """The farm one event after a pass of ``policy`` on ``state``: that
    pass's plan is running (progressed by ``dt``) and one job arrives (a copy
    of the latest one, not started).  This is what a pass sees inside a simulation,
    where an incremental CS version inherits its own previous plan; timing a
    pass on a state with a random previous plan (:func:`epochbench.instances.farm.generate_farm`)
    measures a cold start instead.  Jobs come back in submit order."""
    view = snapshot(state)
    policy.reset(view.stream)
    plan = policy.plan(view)             # keys: positions in submit order, as snapshot orders them
    jobs = state.jobs.take(np.argsort(state.jobs.submit, kind="stable"))
    now = state.now + float(dt)
    state = state.with_jobs(jobs).advance(state.now, plan).advance(now)  # the plan runs from state.now
    if not state.n:
        raise ValueError("next_event_state: no job to copy as the arrival")
    new = replace(state.jobs.take([state.n - 1]), submit=np.array([now]), progress=np.zeros(1),
                  running_on=np.array([-1]), ids=np.array([state.n]))
    return state.with_jobs(state.jobs.concat(new))
