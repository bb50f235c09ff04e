"""[vadhiyar-notes]'s backfilling variants ("Backfilling Variants"), generic engine
(each also runs compiled, with the same schedules, unless a hook or
recorder asks for the generic engine: :mod:`epochbench.sim.scan_fast`,
:mod:`epochbench.sim.slack_fast`, :mod:`epochbench.sim.multiqueue_fast`).

==============  =================================================================
name            rule
==============  =================================================================
easy-sjf        EASY (:class:`epochbench.sim.policies.EASY`, the head's reservation
                unchanged) whose backfill scan takes the queue by estimated
                runtime, shortest first (ties: arrival order).
easy-xfactor    the same, scanned by estimated slowdown ``(now - submit +
                estimate) / estimate``, largest first (ties: arrival order).
slack-bf        slack-based (dynamic) backfilling: every queued job holds a
                promise (its first reservation) and a slack; any job may start
                now unless some reserved job, re-planned, would start later
                than ``promise + slack`` (and later than it was planned
                before this start).
threshold-bf    the same where only jobs whose expected slowdown exceeds
                ``slowdown_threshold`` hold a reservation (slack 0).
multi-queue     multiple-queue backfilling: a queue per estimated-runtime
                class, each running EASY on its own partition of the
                processors; optionally idle partitions lend their nodes.
==============  =================================================================

[vadhiyar-notes] lists three variants: (1) the order in which the queue is scanned
for backfill jobs, "by estimated runtime or estimated slowdown"; (2) dynamic
or slack-based backfilling, "each job in the queue is associated with a
slack, maximum delay after reservation; important jobs will have little
slack; backfilling is allowed only if the backfilled job does not delay any
other job by more than that job's slack; e.g. reservations to only those jobs
whose expected slowdowns > threshold"; (3) multiple-queue backfilling, "each
job is assigned to a queue according to its expected execution time; each
queue is assigned to a disjoint partition of the parallel system on which
only jobs from this queue can be executed".  Our readings are in each class.

The slowdown of the seed, ``(wait + running time) / running time``, is
"expected" while a job waits: we use its estimate for the running time and
its wait so far, ``(now - submit + estimate) / estimate``.

Only the two EASY scan orders and ``multi-queue`` have a
packing selection step (``--selector``, ``--record-epochs``); the slack
policies decide against a whole re-planned schedule of deadlines, which is
no single-reservation packing instance, so they have none (a selector or a
recorder is refused with a one-line error).
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.arguments import named, on_command_line

from . import registry as _registry
from .engine import StartFn, wake_time
from .policies import EASY, Step, _ArrivalQueue, _Base, easy_backfill, register_policy
from .multiqueue_fast import MQ_RULE
from .scan_fast import SJF_RULE, XFACTOR_RULE
from .slack_fast import SLACK_RULE, THRESHOLD_RULE
from .profile import rebuild
from .profile import CompiledProfile


def expected_slowdown(now: float, submit, estimate):
    """[vadhiyar-notes]'s slowdown with the estimate as running time: ``(now - submit
    + estimate) / estimate`` (numpy, elementwise)."""
    est = np.asarray(estimate, dtype=np.float64)
    return (now - np.asarray(submit, dtype=np.float64) + est) / est


# ---- (1) the scan order of EASY's backfill step -----------------------------------------
class _EASYOrdered(EASY):
    """EASY whose backfill candidates are scanned in :meth:`order`; the head
    (arrival order) and its reservation are EASY's.  O(q log q + r log r) per
    pass."""

    def order(self, now: float, cands: list) -> list:
        raise NotImplementedError

    def schedule(self, now, machine, start):
        q, tb = self._q, self.table
        self.step = None
        i = 0
        while i < len(q) and machine.fits(q[i]):
            start(q[i])
            i += 1
        del q[:i]
        if not q:
            return
        shadow, extra = self.reservation(now, machine, q[0])
        if np.isnan(tb.promised[q[0]]):
            tb.promised[q[0]] = shadow
        cands = self.order(now, q[1:])
        if self.selector is not None:
            done = self._choose(now, machine, cands, start,
                                lambda mc, st: self._scan(cands, now, mc, st, shadow, extra), shadow, extra)
        else:
            self.step = Step(now, machine.free.copy(), cands, shadow, extra.copy())
            done = self._scan(cands, now, machine, start, shadow, extra)
        self._q = [j for j in q if j not in done] if done else q

    def _scan(self, cands, now, machine, start, shadow, extra) -> set:
        """EASY's backfill rule over ``cands`` in the given order."""
        return easy_backfill(self.table, machine, cands, now, shadow, extra, start)


@register_policy("easy-sjf", fast=SJF_RULE)
class EASYSJF(_EASYOrdered):
    """EASY backfilling scanned by estimated runtime, shortest first ([vadhiyar-notes]
    "Backfilling Variants" 1: "by estimated runtime"); ties in arrival order.
    The head keeps EASY's reservation, so it is never delayed by a backfill."""

    def order(self, now, cands):
        if not cands:
            return []
        c = np.asarray(cands)
        return c[np.lexsort((c, self.table.estimate[c]))].tolist()


@register_policy("easy-xfactor", fast=XFACTOR_RULE)
class EASYXFactor(_EASYOrdered):
    """EASY backfilling scanned by expected slowdown (:func:`expected_slowdown`,
    [vadhiyar-notes] "Backfilling Variants" 1: "by estimated slowdown"), largest first;
    ties in arrival order.  The order is recomputed at every pass (the
    slowdown grows with the wait)."""

    def order(self, now, cands):
        if not cands:
            return []
        c = np.asarray(cands)
        tb = self.table
        x = expected_slowdown(now, tb.submit[c], tb.estimate[c])
        return c[np.lexsort((c, -x))].tolist()


# ---- (2) slack-based backfilling ---------------------------------------------------------
@register_policy("slack-bf", fast=SLACK_RULE)
class SlackBackfill(_ArrivalQueue):
    """Slack-based (dynamic) backfilling ([vadhiyar-notes] "Backfilling Variants" 2).

    Every queued job j has a slack ``slack_factor * estimate`` (important
    jobs: ``important_slack_factor * estimate``; a job is important when it
    needs at least ``important_procs`` processors, none when that is None:
    wide jobs are the ones backfilling starves).  The notes define slack
    only as the "maximum delay after reservation" and say important jobs
    get little; its size in estimates, and the default factor 1, are this
    module's choice (a delay that scales with the job, as a slowdown does;
    ``slack_factor=0`` is conservative's guarantee, ``inf`` none).  Its promise is its first
    reservation: at the first pass after it arrives, its earliest fit
    (estimates) in the profile of the running jobs and of the jobs reserved
    before it, planned in that order; ``deadline = promise + slack``.  A
    new reservation never moves an older one.  At each pass:

    1. plan B: the reserved jobs in the order they were reserved (here:
       arrival order), each at its earliest fit; where that re-plan would
       push a job past both its deadline and its last plan (an earlier job
       taking its slot after an early end), the last plan compressed
       instead (:meth:`_base_plan`; not after an overrun, which voids the
       last plan); those planned now start;
    2. scan the rest of the queue in arrival order; a job c that fits now
       starts if, with c running, the new plan S puts every reserved job j
       no later than ``max(deadline_j, B_j)`` (a job already past its
       deadline, after a running job overran, may not be delayed further);
       then B = S;
    3. the reserved jobs that B now plans at now start (a start in step 2
       can bring a job forward that the scan had passed).

    Unless a running job overruns its estimate, no reserved job starts
    after its deadline.  With ``slack_factor = 0`` no job starts later than
    its first reservation, as in conservative backfilling, but a job may take a hole
    that conservative keeps for a later-queued job if that job can move to
    another slot no later than its promise.  ``slack_factor = inf``: no
    guarantees (first fit in arrival order).  ``tb.promised`` holds the
    promise.  Cost O(q^2 (m + q)) per pass for q queued jobs and m
    profile breakpoints (a plan per candidate that fits now).  Without a
    hook the compiled loop runs it (:mod:`epochbench.sim.slack_fast`, the
    same schedules).
    """

    has_selector = False

    def __init__(self, slack_factor: float = 1.0, important_procs: int | None = None,
                 important_slack_factor: float = 0.0, selector=None, selector_options=None):
        super().__init__(selector, selector_options)
        factor = "a factor of the estimate >= 0 (inf allowed)"
        self.slack_factor = _registry.number("slack_factor", slack_factor, lambda x: x >= 0, factor)
        self.important_slack_factor = _registry.number("important_slack_factor", important_slack_factor,
                                                       lambda x: x >= 0, factor)
        if important_procs is not None:
            important_procs = int(_registry.number("important_procs", important_procs,
                                                   lambda x: np.isfinite(x) and x >= 1 and x == int(x),
                                                   "an integer >= 1 (processors)"))
        elif self.important_slack_factor != 0:      # it would change nothing: no job is important
            raise _registry.OptionError(
                f"{named('important_slack_factor')}: applies to important jobs only, and none is without "
                f"{named('important_procs')} (the processors that make a job important): give it too")
        self.important_procs = important_procs

    def options(self):
        return {"slack_factor": self.slack_factor, "important_procs": self.important_procs,
                "important_slack_factor": self.important_slack_factor}

    def reset(self, table, machine):
        cap = int(np.asarray(machine.capacity)[0])
        if self.important_procs is not None and self.important_procs > cap:   # it would change nothing
            raise _registry.OptionError(f"{named('important_procs')}: {self.important_procs} processors, more "
                                        f"than the machine's {cap}: no job would be important")
        super().reset(table, machine)
        self.deadline: dict[int, float] = {}   # reserved jobs: promise + slack
        self._in_force: dict[int, float] = {}  # reserved jobs: planned start at the last pass
        self.compressions = 0                  # passes whose re-plan was replaced (see _base_plan)
        self._seen: set[int] = set()
        self._wake = np.inf
        self._res = np.full(table.n, np.nan)                 # plans of _plan's compiled call
        self._pt, self._pf = np.empty(0), np.empty((0, table.k), dtype=np.int64)

    def slack(self, j: int) -> float:
        """The slack of job ``j`` in seconds."""
        tb = self.table
        important = self.important_procs is not None and tb.demand[j, 0] >= self.important_procs
        f = self.important_slack_factor if important else self.slack_factor
        return f * float(tb.estimate[j]) if f < np.inf else np.inf

    def _to_reserve(self, now: float, queue: list) -> dict:
        """Jobs that get a reservation at this pass, with their slack: the
        new arrivals of finite slack (the others are marked, never reserved)."""
        out = {}
        for j in queue:
            if j not in self._seen:
                self._seen.add(j)
                s = self.slack(j)
                if s < np.inf:
                    out[j] = s
        return out

    def _reserve(self, new: dict, plan: dict) -> None:
        """Give the jobs of :meth:`_to_reserve` (``new``, with their slack)
        their promise and deadline: each at its place in ``plan``, where
        :meth:`_base_plan` booked them in queue order after the reserved
        jobs, so a new reservation never moves an older one."""
        tb = self.table
        for j, s in new.items():
            t = plan[j]
            if np.isnan(tb.promised[j]):
                tb.promised[j] = t
            self.deadline[j] = t + s

    def _base_plan(self, now: float, guarded: list, new: dict) -> dict:
        """Plan B of the reserved jobs ``guarded``, then of the jobs ``new``
        to reserve (:meth:`_to_reserve`, in queue order): each at its
        earliest fit in that order.  Re-planned from scratch after an
        early end, an earlier job can take a later one's slot and push it
        past both its deadline and its plan in force; then the plan in force
        is compressed instead (each job in order moved to its earliest fit,
        the others staying where they are, as conservative backfilling
        does), which moves no job later.  A running job past its estimate
        voids the plan in force (the profile assumed it ends): then B as
        re-planned.  So does a plan in force that put a job before now: the
        job could not start there (a running job overran, and may have
        ended since), and its slot, cut at now, may no longer hold it, so a
        compression could move it later than B would, behind the jobs
        reserved after it.  The new jobs come after either, so they move
        no reserved job."""
        tb = self.table
        plan = self._plan(now, guarded + list(new))
        keep = self._in_force
        if (all(plan[j] <= max(self.deadline[j], keep.get(j, np.inf)) for j in guarded)
                or any(j not in keep or keep[j] < now for j in guarded) or self._overrun(now)):
            return plan
        self.compressions += 1
        prof = self._profile(now)
        for j in guarded:
            prof.add(keep[j], keep[j] + tb.estimate[j], tb.demand[j], -1)
        for j in guarded:
            prof.add(keep[j], keep[j] + tb.estimate[j], tb.demand[j], 1)
            plan[j] = self._book(prof, j)
        for j in new:
            plan[j] = self._book(prof, j)
        return plan

    def load_step_methods(self):
        """The compiled profile's kernels, which only a compression (:meth:`_base_plan`)
        calls: a rehearsal of the first jobs may not reach one."""
        super().load_step_methods()
        CompiledProfile.rehearse_growth(1)

    def _overrun(self, now: float) -> bool:
        """Whether a running job is past its estimate."""
        tb = self.table
        return any(tb.start[r] + tb.estimate[r] < now for r in self.machine.running())

    def _profile(self, now: float) -> CompiledProfile:
        tb = self.table
        prof = CompiledProfile(self.machine.capacity, now)
        for r in self.machine.running():
            prof.add(now, max(tb.start[r] + tb.estimate[r], now), tb.demand[r], -1)
        return prof

    def _plan(self, now: float, jobs: list, starting: int | None = None) -> dict:
        """Earliest fit of ``jobs`` in order, after the running jobs (and job
        ``starting`` as if it started now): the profile :meth:`_profile`
        builds, booked by :func:`~epochbench.sim.profile.rebuild` in one
        compiled call (the same profile operations as :meth:`_book` on a
        :class:`~epochbench.sim.profile.CompiledProfile`, without a Python
        call per operation: slack-bf on KTH 21 s -> 7 s, the same
        schedules).  O((r + q) m K) for r running jobs."""
        tb = self.table
        running = list(self.machine.running())
        if starting is not None:
            running.append(starting)
        run = np.asarray(running, dtype=np.int64)
        ends = np.maximum(tb.start[run] + tb.estimate[run], now)
        if starting is not None:
            ends[-1] = now + tb.estimate[starting]
        rows = 2 * (len(running) + len(jobs)) + 8     # never full: no sweep of redundant rows needed
        if self._pt.shape[0] < rows:
            self._pt, self._pf = np.empty(2 * rows), np.empty((2 * rows, tb.k), dtype=np.int64)
        order = np.asarray(jobs, dtype=np.int64)
        rebuild(now, order, run, ends, tb.demand, tb.estimate, self.machine.capacity, self._pt, self._pf,
                self._res)
        return dict(zip(jobs, self._res[order].tolist()))

    def _book(self, prof: CompiledProfile, j: int) -> float:
        """Book job j in ``prof`` at its earliest fit for its whole estimate; returns the start."""
        tb = self.table
        t = prof.find(tb.demand[j], tb.estimate[j])
        prof.add(t, t + tb.estimate[j], tb.demand[j], -1)
        return t

    def _guarded(self, queue: list) -> list:
        """Queued jobs holding a reservation, in the order they got it (a new
        reservation is planned after the older ones, so it never moves them)."""
        waiting = set(queue)
        return [j for j in self.deadline if j in waiting]

    def schedule(self, now, machine, start: StartFn):
        self.step = None
        q, tb = self._q, self.table
        new = self._to_reserve(now, q)
        plan = self._base_plan(now, self._guarded(q), new)
        self._reserve(new, plan)
        guarded = self._guarded(q)
        done = self._start_planned(now, machine, start, guarded, plan, set())
        for c in q:
            if machine.free[0] <= 0:
                break
            if c in done or not machine.fits(c):
                continue
            rest = [j for j in guarded if j not in done and j != c]
            if rest:
                s = self._plan(now, rest, c)
                if any(s[j] > max(self.deadline[j], plan[j]) for j in rest):
                    continue
                plan = s
            start(c)
            done.add(c)
        # a start can move a reserved job that the scan has passed (skipped: it would
        # have delayed another) to now; left waiting it would start at the next event,
        # after its promise
        done = self._start_planned(now, machine, start, guarded, plan, done)
        self._q = [j for j in q if j not in done]
        for j in done:
            self.deadline.pop(j, None)
        self._in_force = {j: plan[j] for j in self._guarded(self._q)}
        self._wake = wake_time(now, (plan[j] for j in self._guarded(self._q)))

    @staticmethod
    def _start_planned(now: float, machine, start: StartFn, guarded: list, plan: dict, done: set) -> set:
        """Start the reserved jobs ``guarded`` not in ``done`` that ``plan`` puts
        at now and that fit (one planned now may not fit only when a running
        job overran); returns ``done`` with them.  Starting them keeps
        ``plan``: each takes the slot it was planned in."""
        for j in guarded:
            if j not in done and plan[j] <= now and machine.fits(j):
                start(j)
                done.add(j)
        return done

    def wakeup(self):
        """A planned start can fall where no job ends: a pass is due then."""
        return self._wake


@register_policy("threshold-bf", fast=THRESHOLD_RULE)
class ThresholdBackfill(SlackBackfill):
    """Reservations only for jobs whose expected slowdown exceeds a threshold
    ([vadhiyar-notes] "Backfilling Variants" 2, "e.g. reservations to only those jobs
    whose expected slowdowns > threshold").

    At each pass a waiting job whose :func:`expected_slowdown` exceeds
    ``slowdown_threshold`` (default 2) and holds no reservation gets one:
    its planned start (after the reserved jobs before it) is its promise,
    with slack 0; the rule of :class:`SlackBackfill` then keeps every
    reservation.  Jobs below the threshold have no guarantee and start in
    arrival order whenever they fit without delaying a reserved job.  The
    slowdown grows while a job waits, so every job is eventually reserved
    (after about (threshold - 1) x its estimate of waiting: a huge threshold
    leaves jobs without a guarantee for as long) and none starves.  The threshold is checked at passes only.  Cost as
    :class:`SlackBackfill`.
    """

    def __init__(self, slowdown_threshold: float = 2.0, selector=None, selector_options=None):
        threshold = _registry.number("slowdown_threshold", slowdown_threshold, lambda x: np.isfinite(x) and x >= 1,
                                     "a finite expected slowdown >= 1 (inf reserved no job: slack-bf's rule)")
        super().__init__(0.0, None, 0.0, selector, selector_options)
        self.slowdown_threshold = threshold

    def options(self):
        return {"slowdown_threshold": self.slowdown_threshold}

    def _to_reserve(self, now, queue):
        """Unreserved jobs whose expected slowdown exceeds the threshold now
        (slack 0)."""
        free = [j for j in queue if j not in self.deadline]
        if not free:
            return {}
        tb, c = self.table, np.asarray(free)
        over = expected_slowdown(now, tb.submit[c], tb.estimate[c]) > self.slowdown_threshold
        return {j: 0.0 for j, o in zip(free, over) if o}


# ---- (3) multiple-queue backfilling -------------------------------------------------------
def parse_partitions(partitions, procs: int, queues: int) -> np.ndarray:
    """Partition sizes (processors) from ``partitions``: counts summing to
    ``procs``, or shares summing to 1 (rounded down, the rest to the last
    queue); None: equal shares.  Raises ``ValueError`` naming the option."""
    if partitions is None:
        if queues > procs:                    # equal shares of no processor: the bounds made too many queues
            raise ValueError(f"{named('queue_bounds')}: {queues} queues on {procs} processors leave some "
                             f"queues no processor; give at most {procs - 1} bounds, or {named('partitions')}")
        sizes = np.full(queues, procs // queues, dtype=np.int64)
        sizes[-1] += procs - sizes.sum()
    else:
        p = np.asarray(partitions, dtype=np.float64).reshape(-1)
        if p.shape[0] != queues:
            raise ValueError(f"{named('partitions')}: {queues} queue(s) need {queues} partition sizes, got {p.shape[0]}")
        if not (np.isfinite(p).all() and (p > 0).all()):
            raise ValueError(f"{named('partitions')}: sizes must be > 0, got {p.tolist()}")
        if np.isclose(p.sum(), 1.0) and (p < 1).all():
            sizes = np.floor(p * procs).astype(np.int64)
            sizes[-1] += procs - sizes.sum()
        elif (p == np.round(p)).all() and p.sum() == procs:
            sizes = p.astype(np.int64)
        else:
            raise ValueError(f"{named('partitions')}: processor counts summing to {procs} or shares summing to 1, "
                             f"got {p.tolist()}")
    if (sizes < 1).any():
        raise ValueError(f"{named('partitions')}: every partition needs >= 1 processor, got {sizes.tolist()}")
    return sizes


@register_policy("multi-queue", fast=MQ_RULE)
class MultiQueue(_Base):
    """Multiple-queue backfilling ([vadhiyar-notes] "Backfilling Variants" 3).

    A job goes to queue i when its estimate is in ``(bounds[i-1],
    bounds[i]]`` (``queue_bounds``, seconds, increasing; default one hour:
    two queues).  Queue i owns a disjoint partition of ``partitions[i]``
    processors (:func:`parse_partitions`; default equal shares) and runs
    EASY on it: head-first starts, the head's reservation computed from the
    partition's running jobs (released by expected end), the rest scanned in
    arrival order.  Queues are served shortest first at every pass.  Only
    processors are partitioned: the stream must have K = 1.

    Without lending (default) a job wider than its queue's partition goes
    to the nearest queue of longer jobs whose partition holds it, else the
    nearest of shorter jobs (counted: :meth:`facts`); a job wider than every
    partition is an error.
    With ``lend=True`` a queue may also use the idle processors of every
    partition whose own queue is empty at that moment (own processors are
    taken first, then the lenders' in queue order); borrowed processors
    return to their partition when the job ends, so the lender's next jobs
    may wait for them (its head's reservation counts them at their expected
    end).  A job wider than its partition then stays in its queue, and its
    reservation is computed on the whole machine: it holds against its own
    queue only, the other queues do not see it (a soft guarantee).  Such a
    job also borrows the idle processors of partitions whose queues are not
    empty (:meth:`MultiQueue._lenders`; with the empty ones alone it could
    wait for ever behind busy queues), so those queues' heads can start
    after their reservations: the guarantee of a head holds only while no
    job wider than its partition runs on its processors (measured on 150
    random streams, 8 processors in two partitions of 4: 130 of 2,101 jobs
    started after their ``promised`` time, narrow ones among them, and none
    on the same streams without jobs wider than 4).

    A backfilled job counts whole against the head's ``extra``, borrowed
    processors included (EASY's rule on the partition, conservative with
    lending).

    Selection step (``--record-epochs``): the queue steps of a pass are in
    ``steps``; ``step`` (what the recorder takes) is the one with the most
    candidates: the processors its jobs may take (own and lent), its head's
    reservation, the candidates no wider than the partition (with lending a
    wider job may take more; it is left out of the instance).  No selector.
    Cost O(q + r log r) per queue and pass.  Without a hook the compiled
    loop runs it (:mod:`epochbench.sim.multiqueue_fast`, the same schedules).
    """

    def __init__(self, queue_bounds=(3600.0,), partitions=None, lend: bool = False, selector=None,
                 selector_options=None):
        if selector is not None:
            raise ValueError("policy 'multi-queue' takes no selector: its steps are per partition")
        super().__init__(None, selector_options)
        what = "increasing estimates in seconds > 0"
        b = np.asarray(_registry.numbers_of("queue_bounds", queue_bounds, lambda x: 0 < x < np.inf, what))
        if b.size == 0 or not (np.diff(b) > 0).all():
            raise ValueError(f"queue_bounds: {what}, got {b.tolist()}")
        self.bounds = b
        self.partitions = None if partitions is None else _registry.numbers_of(
            "partitions", partitions, lambda x: x > 0, "sizes > 0 (processors or shares)")
        if self.partitions is not None and (len(self.partitions) != b.size + 1
                                            or not all(0 < x < np.inf for x in self.partitions)):
            raise ValueError(f"{named('partitions')}: {b.size + 1} sizes > 0 for {b.size + 1} queues, got {self.partitions}")
        self.lend = _registry.switch("lend", lend)

    def options(self):
        return {"queue_bounds": self.bounds.tolist(), "partitions": self.partitions, "lend": self.lend}

    def reset(self, table, machine):
        super().reset(table, machine)
        if table.k != 1:
            raise ValueError(f"multi-queue: partitions split processors only; the stream has {table.k} resources "
                             f"(procs and the columns {', '.join(table.resources)})")
        n = self.bounds.size + 1
        self.sizes = parse_partitions(self.partitions, int(machine.capacity[0]), n)
        self.free = self.sizes.copy()
        self.held: dict[int, np.ndarray] = {}
        self.queues: list[list[int]] = [[] for _ in range(n)]
        self.moved = 0
        self.steps: list[Step] = []
        if not self.lend and table.n and table.demand[:, 0].max() > self.sizes.max():
            j = int(np.argmax(table.demand[:, 0]))
            flags = on_command_line()                      # one style in one message (arguments.named)
            raise ValueError(f"{named('partitions')}: job id {int(table.ids[j])} needs {int(table.demand[j, 0])} "
                             f"processors > the largest partition {int(self.sizes.max())} (no lending): "
                             f"lend idle partitions ({'--lend' if flags else 'lend=True'}) or "
                             f"give one partition at least {int(table.demand[j, 0])} "
                             f"({'--partitions' if flags else 'partitions='})")

    def estimate_queue(self, j: int) -> int:
        """The queue of job row ``j``'s estimate class (``queue_bounds``)."""
        return int(np.searchsorted(self.bounds, self.table.estimate[j], side="left"))

    def queue_of(self, j: int) -> int:
        """The queue of job row ``j`` (class docstring)."""
        i = self.estimate_queue(j)
        need = self.table.demand[j, 0]
        if self.lend or need <= self.sizes[i]:
            return i
        ok = np.nonzero(self.sizes >= need)[0]
        up = ok[ok > i]
        return int(up[0]) if up.size else int(ok[ok < i][-1])

    def arrive(self, job, now):
        q = self.queue_of(job)
        self.moved += q != self.estimate_queue(job)
        self.queues[q].append(job)

    def facts(self) -> dict:
        """What the run's report says beside the options: the partitions in
        processors (``partition_sizes``: shares resolved, floored, the rest
        to the last) and the jobs queued in another queue than their
        estimate's because they are wider than its partition
        (``queued_elsewhere``; 0 with lending)."""
        return {"partition_sizes": [int(x) for x in self.sizes], "queued_elsewhere": int(self.moved)}

    def finished(self, job, now):
        self.free += self.held.pop(job)

    def queue(self):
        return [j for q in self.queues for j in q]

    def __len__(self):
        return sum(len(q) for q in self.queues)

    def _lenders(self, i: int, need: int) -> list[int]:
        """Partitions queue ``i`` may borrow from for a job of ``need``
        processors: those whose queue is empty; every other partition too
        for a job wider than partition ``i``.  None without lending."""
        if not self.lend:
            return []
        others = [p for p in range(len(self.queues)) if p != i]
        idle = [p for p in others if not self.queues[p]]
        return idle + ([p for p in others if self.queues[p]] if need > self.sizes[i] else [])

    def _take(self, i: int, j: int, start: StartFn) -> None:
        need = int(self.table.demand[j, 0])
        got = np.zeros_like(self.free)
        for p in [i, *self._lenders(i, need)]:
            got[p] = min(need - got.sum(), int(self.free[p]))
        self.free -= got
        self.held[j] = got
        start(j)

    def _reservation(self, now: float, i: int, head: int) -> tuple[float, int, bool]:
        """(shadow, extra, own): EASY's reservation of queue ``i``'s head on
        its partition (``own``), or on the whole machine if it is wider."""
        tb = self.table
        need = int(tb.demand[head, 0])
        own = need <= self.sizes[i]
        hold = {j: (int(h[i]) if own else int(h.sum())) for j, h in self.held.items()}
        free = int(self.free[i]) if own else int(self.free.sum())
        key = {j: max(tb.start[j] + tb.estimate[j], now) for j, h in hold.items() if h > 0}
        shadow = None
        for j in sorted(key, key=lambda j: (key[j], tb.ids[j])):
            if shadow is not None and key[j] != shadow:
                break
            free += hold[j]
            if shadow is None and need <= free:
                shadow = key[j]
        return float(shadow), free - need, own

    def schedule(self, now, machine, start: StartFn):
        self.steps = []
        for i in range(len(self.queues)):
            if self.queues[i]:
                self._serve(now, i, start)
        self.step = max(self.steps, key=lambda s: len(s.candidates), default=None)

    def _usable_now(self, i: int) -> tuple[int, int]:
        """The processors a job of queue ``i`` could take now
        (:meth:`_usable_for`), for one no wider than its
        partition and one wider: the lenders depend only on that and on the
        other queues, which a pass of queue ``i`` leaves as they are, so the
        two values hold until a job starts (measured: the per-job lender lists
        were 60 % of multi-queue --lend's time on KTH)."""
        size = int(self.sizes[i])
        return self._usable_for(i, size), self._usable_for(i, size + 1)

    def _usable_for(self, i: int, need: int) -> int:
        """Processors a job of ``need`` in queue ``i`` could take now: its
        partition's and its lenders' (:meth:`_lenders`)."""
        return int(self.free[i]) + sum(int(self.free[p]) for p in self._lenders(i, need))

    def _serve(self, now: float, i: int, start: StartFn) -> None:
        q, tb = self.queues[i], self.table
        size = int(self.sizes[i])
        usable = self._usable_now(i)
        k = 0
        while k < len(q) and int(tb.demand[q[k], 0]) <= usable[int(tb.demand[q[k], 0]) > size]:
            self._take(i, q[k], start)
            usable = self._usable_now(i)
            k += 1
        del q[:k]
        if not q:
            return
        shadow, extra, _ = self._reservation(now, i, q[0])
        if np.isnan(tb.promised[q[0]]):
            tb.promised[q[0]] = shadow
        rest = np.asarray(q[1:], dtype=np.int64)
        needs = tb.demand[rest, 0]
        self.steps.append(Step(now, np.array([self._usable_for(i, 1)]), rest[needs <= size].tolist(), shadow,
                               np.array([extra])))
        # a job that cannot start now cannot later in this pass (what is usable and extra only fall
        # as jobs start): one numpy test leaves the others, taken in order under the rule below
        able = (needs <= np.where(needs > size, usable[1], usable[0])) & (
            (now + tb.estimate[rest] <= shadow) | (needs <= extra))
        done = set()
        for j in rest[able].tolist():
            need = int(tb.demand[j, 0])
            if need > usable[need > size]:
                continue
            if now + tb.estimate[j] <= shadow:
                pass
            elif need <= extra:
                extra -= need
            else:
                continue
            self._take(i, j, start)
            usable = self._usable_now(i)
            done.add(j)
        self.queues[i] = [j for j in q if j not in done]


# ---- options of these policies (declared once; epochbench simulate reads them) -------------
def _float_at_least(low: float, what: str):
    def parse(text: str) -> float:
        import argparse
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
        if not x >= low:                        # NaN fails too
            raise argparse.ArgumentTypeError(f"{what}, got {text}")
        return x
    return parse


def _int_at_least_one(text: str) -> int:
    import argparse
    try:
        x = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if x < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return x


def _number_list(what: str, increasing: bool):
    def parse(text: str) -> list[float]:
        import argparse
        try:
            xs = [float(x) for x in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
        ok = all(0 < x < np.inf for x in xs) and (not increasing or all(b > a for a, b in zip(xs, xs[1:])))
        if not ok:
            raise argparse.ArgumentTypeError(f"{what}, got {text}")
        return xs
    return parse


_O = _registry.Option
_registry.declare_options(
    "pool",
    _O("slack_factor", _float_at_least(0, "must be a number >= 0 (inf allowed)"), None,
       "slack-bf: slack = factor x estimate (default 1; inf: no guarantee)", applies=("slack-bf",)),
    _O("important_procs", _int_at_least_one, None,
       "slack-bf: jobs with at least this many processors are important (default: none)", applies=("slack-bf",)),
    _O("important_slack_factor", _float_at_least(0, "must be a number >= 0"), None,
       "slack-bf: slack factor of important jobs (default 0)", applies=("slack-bf",)),
    _O("slowdown_threshold", _float_at_least(1, "must be an expected slowdown >= 1"), None,
       "threshold-bf: reserve for jobs whose expected slowdown exceeds this (default 2)", applies=("threshold-bf",)),
    _O("queue_bounds", _number_list("must be increasing seconds > 0, comma-separated", True), None,
       "multi-queue: estimate bounds between the queues, e.g. 3600,36000 (default 3600)", applies=("multi-queue",)),
    _O("partitions", _number_list("must be sizes > 0, comma-separated", False), None,
       "multi-queue: processors per queue summing to the machine, or shares summing to 1 (default: equal)",
       applies=("multi-queue",)),
    _O("lend", bool, None, "multi-queue: queues with nothing waiting lend their idle processors; a job wider "
       "than its partition borrows from every partition", flag=True, applies=("multi-queue",)),
)
