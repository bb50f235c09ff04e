"""Space-sharing policies of the online simulator (issue 3 item 3).

=============  ===================================================================
name           rule
=============  ===================================================================
fcfs           [vadhiyar-notes] "Scheduling policies": start queue-head jobs while they
               fit; stop at the first that does not.
nonfcfs        [rajaei-dadfar] "Non-FCFS": queue by (procs, estimate, submit, id); any job
               that fits starts, scanning in that order.  Once the oldest waiting
               job has waited more than ``starvation_limit`` (default 24 h) the
               queue is FCFS (arrival order, the head blocks) until it starts.
easy           [rajaei-dadfar] "Aggressive Backfilling", [vadhiyar-notes]: the exact rule below
               ([zhang-comparative] section 3 backfills conservatively: no job may delay any
               job before it; it cites EASY, [21], only as a scheduler's name).
conservative   [rajaei-dadfar] "Conservative Backfilling", [vadhiyar-notes], [zhang-comparative] section 3:
               every queued job holds a reservation in an availability profile
               (:mod:`epochbench.sim.profile`); compressed on early terminations.
=============  ===================================================================

EASY, exactly (so results compare across simulators): start queue-head jobs
while they fit.  For the first that does not (the head) release the running
jobs in order of expected end ``max(start + estimate, now)`` (ties by id) until
the head fits: the shadow time is that expected end, and ``extra`` is what is
free at the shadow time (every job expected to end by then released) minus the
head's need, per resource.  Then scan the rest of the queue in order and start
a job if it fits now and either ``now + estimate <= shadow`` or it fits in
``extra`` on every resource (then ``extra`` shrinks by its demand).  A job
running past its estimate (only when jobs are not killed at their estimate) is
expected to end now: ``max(start + estimate, now)``.

Conservative: at each pass, after an early termination (a job ended before
``start + estimate``) the schedule is compressed: in queue (arrival) order
each job's reservation is taken out of the profile and booked again at the
earliest time it fits for its whole estimate, which is never later than
before.  New arrivals are then booked in arrival order the same way; every job
whose reservation is now starts.  The one pass in queue order can leave a
reservation at a time where no job ends any more (the job whose end it
followed moved away later in the same pass): the policy then asks the engine
for a pass at that time (``Policy.wakeup``).  A running job that overruns its
estimate is gone from the profile; a job booked now that then does not fit
waits and the whole queue is re-booked at the next pass, the next job end or
arrival (reservations may then move later: only overruns break the
guarantee); the later reservations of that pass hung on its start, so they
ask for no pass (:func:`epochbench.sim.engine.wake_time`).

Each policy runs two ways: the generic classes below on the Python engine of
:mod:`epochbench.sim.engine` (selector, hook, other machine models), and the compiled
event loop :func:`run_fast` (numba, the default; EASY on one resource runs
in its pure-Python twin :mod:`epochbench.sim.easy_python` on short streams
while the compiled kernels are not loaded yet).  They give identical
schedules.  With ``selector=NAME`` the selection step (fcfs: the whole queue;
nonfcfs: the queue in priority order; easy: the backfill candidates with the
head's reservation) is a packing instance solved by ``epochbench.instances.registry``
method NAME, e.g. ``cpsat``.  An exact selector that times out without a
solution does not start nothing: that step falls back to the policy's own
rule, as does a step whose unproven answer is worse than that rule's choice;
``options()["selector_stats"]`` counts the steps, the unproven ones and the
fallbacks.
"""
from __future__ import annotations

import bisect
import copy
import os
import sys
from collections import deque
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from epochbench.instances import registry
from epochbench.instances.catalog import first_sentence, in_package, origin_of
from epochbench.instances.lazy import intrinsic, kernels_loaded, njit, readonly

from . import easy_python as _easy_python
from . import registry as _registry
from .engine import JobTable, PoolMachine, Policy, StartFn, fitting, packing_instance, positions, wake_time
from .greedy_fast import (BB_RULE, BL_RULE, OPTIONS as GREEDY_OPTIONS, OUT as GREEDY_OUT, fast_options, greedy_select,
                          greedy_stats, greedy_work)
from .los_fast import LOS_RULE, OUT as LOS_OUT, OVERFLOW as LOS_OVERFLOW, los_grown, los_select, los_stats, los_work
from .loop_events import _begin, _compact, _easy_head, _fits, _pop, _run_add, _run_del, easy_admits
from .multiqueue_fast import MQ_RULE, mq_loop, mq_work
from .orders_fast import ORDERS_RULE, orders_loop, orders_work
from .profile import (INLINE, JIT, Profile, _below_back, _below_from, _covers, _high_bit, _locate, _room_from, p_add,
                      p_advance, p_book, p_find, p_find_before, p_find_between, p_init, p_move_at, p_release,
                      rows_needed)
from .scan_fast import SCAN_RULES, scan_loop, scan_work
from .slack_fast import OVERFLOW as SLACK_OVERFLOW, SLACK_RULES, slack_grown, slack_loop, slack_work

POLICIES: dict[str, type] = {}
DAY = 86400.0
#: the rules of the compiled event loop (:func:`run_fast`)
FCFS_RULE, NONFCFS_RULE, EASY_RULE, CONS_RULE = 0, 1, 2, 3
_FCFS, _NONFCFS, _EASY, _CONS = FCFS_RULE, NONFCFS_RULE, EASY_RULE, CONS_RULE
_LOS = LOS_RULE  # EASY backfilled by the LOS DP (epochbench.sim.los_fast)
_BL, _BB = BL_RULE, BB_RULE  # EASY backfilled by BL / BB (epochbench.sim.greedy_fast)
_MQ = MQ_RULE  # a queue per estimate class, EASY on each partition (epochbench.sim.multiqueue_fast)
#: the rules that run EASY's pass, with their own backfill step
EASY_LIKE = (_EASY, _LOS, _BL, _BB)
#: policy name -> its rule in the compiled loop, for the policies that have
#: one (declared by ``register_policy(name, fast=RULE)`` where the policy is defined)
FAST_CODES: dict[str, int] = {}


def register_policy(name: str, *, fast: int | None = None):
    """Class decorator: make a pool policy available by ``name`` (in the
    policy registry :mod:`epochbench.sim.registry`, machine ``pool``);
    ``fast``: its rule in the compiled loop (:data:`FAST_CODES`), when its
    default selection is that rule exactly.  Used from outside epochbench,
    it loads the built-in policies first, so that a built-in's name is
    refused at once (as :func:`epochbench.sim.registry.register_policy`),
    and it touches this module's tables only once the registry took the
    class."""
    frame = sys._getframe(1)
    ours = in_package(frame)

    def deco(cls):
        if not ours:
            _registry.load_builtins()
        _registry.register_policy("pool", name, cls, rule=first_sentence(cls.__doc__), origin=origin_of(cls, frame))
        cls.name = name
        POLICIES[name] = cls
        if fast is not None:
            FAST_CODES[name] = fast
        return cls
    return deco


def make(name: str, **options) -> Policy:
    """A fresh pool policy object by name (the registry imports the module
    that defines it); an option the policy does not take raises
    :class:`~epochbench.sim.registry.OptionError` (a ``ValueError`` and a
    ``TypeError``) naming it."""
    spec = _registry.get_policy("pool", name)
    _registry.check_applies("pool", name, options)
    try:
        return _registry.made("pool", name, options, lambda p: isinstance(p, Policy),
                              "a pool Policy (epochbench.sim.engine.Policy)")
    except TypeError as exc:
        hint = ("; an option of its selection step's packing method goes in selector_options (e.g. "
                "selector_options={'window': 2}; --param window=2 on the command line)"
                if getattr(spec.make, "has_selector", False) else "")
        err = _registry.unknown_option(exc.__cause__ or exc, "pool", name, ("selector", "selector_options"), hint)
        if err is None:
            raise
        raise err from None


_registry.declare_options("pool", _registry.Option(
    "starvation_limit", float, None, "nonfcfs: seconds (default 24 h)", applies=("nonfcfs",)))


# ---- selection step through the packing registry -----------------------------------
@dataclass
class Step:
    """The last selection step of a generic policy: jobs ``candidates`` (rows,
    queue order) with ``free`` left; EASY adds the head's ``shadow`` and
    ``extra``.  :func:`epochbench.sim.engine.packing_instance` turns it into an instance;
    ``instance`` is that instance when the policy's selector solved it (None otherwise), so
    that a hook reads the step without building it again; ``outcome`` what
    an exact selector made of it (its status, ``optimal`` or ``feasible``,
    or ``fallback`` / ``rule_better`` when the policy's own rule decided;
    None otherwise)."""

    now: float
    free: np.ndarray
    candidates: list
    shadow: float | None = None
    extra: np.ndarray | None = None
    instance: object = None
    outcome: str | None = None


def _method(name: str):
    """The packing method ``name`` (the registry imports it on first use);
    an unknown one names the ``selector`` argument."""
    return registry.get_named("packing", name, "selector")


class _Base(Policy):
    has_selector = True

    def __init__(self, selector: str | None = None, selector_options: dict | None = None):
        if selector is not None:
            if not self.has_selector:
                raise ValueError(f"policy {self.name!r} has no packing selection step for a selector")
            if _method(selector).kind == "replay":   # it reads a recorded choice, which a live step has not
                raise ValueError(f"selector {selector!r} replays the choice recorded at an epoch "
                                 "(simulate --record-epochs); it cannot choose in a simulation")
        self.selector = selector
        self.selector_options = dict(selector_options or {})
        self.step: Step | None = None

    def load_step_methods(self):
        """The selector's kernels or solver (:func:`~epochbench.instances.registry.load`)."""
        if self.selector is not None:
            registry.load("packing", self.selector)

    def reset(self, table, machine):
        super().reset(table, machine)
        self.selector_stats = {"steps": 0, "unproven": 0, "fallback": 0, "rule_better": 0}

    def options(self) -> dict:
        out = {"selector": self.selector}
        if self.selector_options:
            out["selector_options"] = dict(self.selector_options)
        if self.selector is not None and hasattr(self, "selector_stats"):
            out["selector_stats"] = dict(self.selector_stats)
        return out

    def _choose(self, now, machine, cands, start: StartFn, fallback, shadow=None, extra=None) -> set:
        """Start what the selector picks from ``cands``; returns the set started.

        ``fallback(machine, start)``: the policy's own rule for this step
        (starts its jobs through ``start``, returns the set started).  An
        exact selector that returns no solution (timed out, status
        ``timeout``) does not mean "start nothing": the step falls back to
        the policy's rule.  Nor is an unproven answer worse than that rule
        taken: the rule is tried on a copy of the free resources
        (:class:`_DryPool`) and started instead when its value on the step
        is higher (an oracle with a short time limit started answers below
        EASY's own, 21 of 64 unproven steps in a review's run).  Counted in
        ``selector_stats``: ``steps`` solved by the selector, ``unproven``
        (an exact selector's answer without a proven optimum, fallbacks
        included), ``fallback`` (steps the policy's rule decided) and of
        those ``rule_better`` (the selector had an answer, a worse one);
        reported in :meth:`options`."""
        self.step = Step(now, machine.free.copy(), list(cands), shadow,
                         None if extra is None else extra.copy())
        if not cands:
            return set()
        from epochbench.instances import registry
        inst = packing_instance(self.table, machine.capacity, machine.free, cands, now=now,
                                shadow=shadow, extra=extra, meta={"name": f"{self.name}@{now:g}"})
        self.step.instance = inst
        stats = self.selector_stats
        method = registry.get("packing", self.selector)
        # a user's selector that fails (its bug, a refused decision) stops the run, named with its step;
        # a built-in's failure is raised as it is (a ValueError refuses the input: LOS's table over its limit)
        res = registry.solve_step(inst, self.selector, lambda: _failed_step(self, now, cands, stats["steps"] + 1),
                                  **registry.cold(method, self.selector_options))
        stats["steps"] += 1
        if method.exact:
            self.step.outcome = res.status
        if method.exact and res.status != "optimal":
            stats["unproven"] += 1
            if not res.decision and res.status in ("timeout", "infeasible"):
                stats["fallback"] += 1
                self.step.outcome = "fallback"
                return fallback(machine, start)
            if _rule_is_better(self.table, inst, res.decision, cands, machine, fallback):
                stats["fallback"] += 1
                stats["rule_better"] += 1
                self.step.outcome = "rule_better"
                return fallback(machine, start)
        picked = [cands[i] for i in res.decision]
        for j in picked:
            start(j)
        return set(picked)


class _DryPool:
    """What a policy's own rule reads of a pool machine (``fits``,
    ``fitting``), over a copy of its free resources: the rule's choice
    without starting anything."""

    def __init__(self, table, machine):
        self.table, self.capacity, self.free = table, machine.capacity, machine.free.copy()

    fits = PoolMachine.fits
    fitting = PoolMachine.fitting


def _rule_is_better(table, inst, decision, cands, machine, fallback) -> bool:
    """Whether the policy's own rule (``fallback``, run dry on
    :class:`_DryPool`) reaches a higher value on the step ``inst`` than the
    selector's ``decision`` (positions in ``cands``), by more than rounding
    (ties keep the selector's answer).  Only on a :class:`PoolMachine`: a
    machine model of the caller's may decide ``fits`` otherwise, which a
    dry run could not follow (False there: the selector's answer is kept,
    as it always was).  O(the rule's own pass)."""
    if getattr(type(machine), "fits", None) is not PoolMachine.fits or not hasattr(machine, "free"):
        return False
    dry, started = _DryPool(table, machine), []

    def start(j: int) -> None:
        dry.free -= table.demand[j]
        started.append(j)

    fallback(dry, start)
    own, got = inst.value(positions(cands, started)), inst.value(list(decision))
    return own > got + 1e-9 * max(1.0, abs(got))


def _failed_step(policy, now, cands, step) -> str:
    """Where a selector failed, for :func:`~epochbench.instances.registry.solve_step`'s
    line (it adds why): which, at which step and time, and its candidates
    (the decision's indices are positions in that list)."""
    from epochbench.instances.checks import short
    ids = [int(policy.table.ids[c]) for c in cands]
    return (f"selector {policy.selector!r} failed at step {step} of policy {policy.name!r}, time {now:g}, "
            f"on {len(ids)} candidate job(s) {short(ids, 80)} (a decision's index i is the i-th of them)")


class _ArrivalQueue(_Base):
    """A queue kept in arrival order (``self._q``, a ``queue_type``)."""

    queue_type = list

    def reset(self, table, machine):
        super().reset(table, machine)
        self._q = self.queue_type()

    def arrive(self, job, now):
        self._q.append(job)

    def queue(self):
        return list(self._q)

    def __len__(self):
        return len(self._q)


# ---- generic policies ----------------------------------------------------------------
@register_policy("fcfs", fast=FCFS_RULE)
class FCFS(_ArrivalQueue):
    """FCFS ([vadhiyar-notes]): the head blocks the queue.  O(started) per pass."""

    queue_type = deque

    def schedule(self, now, machine, start):
        if self.selector is not None:
            done = self._choose(now, machine, list(self._q), start, self._head_first)
            self._q = deque(j for j in self._q if j not in done)
            return
        self.step = Step(now, machine.free.copy(), list(self._q))
        while self._q and machine.fits(self._q[0]):
            start(self._q.popleft())

    def _head_first(self, machine, start) -> set:
        """FCFS's own rule without touching the queue: start jobs in queue
        order until one does not fit."""
        done = set()
        for j in self._q:
            if not machine.fits(j):
                break
            start(j)
            done.add(j)
        return done


@register_policy("nonfcfs", fast=NONFCFS_RULE)
class NonFCFS(_Base):
    """Non-FCFS with a starvation limit ([rajaei-dadfar] "Non-FCFS", tables 1-2).
    O(q) per pass."""

    def __init__(self, starvation_limit: float = DAY, selector=None, selector_options=None):
        super().__init__(selector, selector_options)
        self.starvation_limit = _registry.number("starvation_limit", starvation_limit, lambda x: 0 <= x < np.inf,
                                                 "must be a finite number >= 0")

    def options(self):
        return {"starvation_limit": self.starvation_limit, **super().options()}

    def reset(self, table, machine):
        super().reset(table, machine)
        self._pq: list[tuple] = []  # (procs, estimate, row), row = (submit, id) order
        self._fifo: deque[int] = deque()
        self._waiting: set[int] = set()

    def arrive(self, job, now):
        tb = self.table
        bisect.insort(self._pq, (int(tb.demand[job, 0]), float(tb.estimate[job]), job))
        self._fifo.append(job)
        self._waiting.add(job)

    def queue(self):
        return [j for *_, j in self._pq]

    def __len__(self):
        return len(self._waiting)

    def _oldest(self):
        while self._fifo and self._fifo[0] not in self._waiting:
            self._fifo.popleft()
        return self._fifo[0] if self._fifo else None

    def schedule(self, now, machine, start):
        self.step = None
        started = self._starved(now, machine, start)
        if started is not None:
            cands = [j for *_, j in self._pq if j not in started]
            if self.selector is not None:
                started |= self._choose(now, machine, cands, start, lambda mc, st: self._first_fit(cands, mc, st))
            else:
                self.step = Step(now, machine.free.copy(), cands)
                started |= self._first_fit(cands, machine, start)
        else:
            started = self._blocked
        self._waiting -= started
        self._pq = [x for x in self._pq if x[2] in self._waiting]

    @staticmethod
    def _first_fit(cands, machine, start) -> set:
        """Start every job of ``cands`` (priority order) that fits."""
        started = set()
        for j in cands:
            if machine.fits(j):
                start(j)
                started.add(j)
        return started

    def _starved(self, now, machine, start):
        """FCFS while the oldest job is starved; None if it blocks (the
        jobs started so far are then in ``self._blocked``)."""
        started: set[int] = set()
        while True:
            o = self._oldest()
            if o is None or not now - self.table.submit[o] > self.starvation_limit:
                return started
            if not machine.fits(o):
                self._blocked = started
                return None
            start(o)
            started.add(o)
            self._waiting.discard(o)


@register_policy("easy", fast=EASY_RULE)
class EASY(_ArrivalQueue):
    """EASY backfilling: the queue's head gets a reservation, later jobs start now if they do not delay it
    ([rajaei-dadfar] table 3; [vadhiyar-notes] "Freedom from starvation").

    The exact rule is the one of this module's docstring.

    [rajaei-dadfar]'s prose for table 3 differs from this strict rule: it lets Job6
    (4 nodes, 3 units) wait until Job5 ends, counting only jobs that end
    before the shadow time (3).  Here Job6 starts at 1, when Job2 ends: it
    runs past the shadow time but needs no more than the 4 extra nodes (16
    free at 3 minus Job3's 12), so Job3 is not delayed.  The simulator
    follows the rule, not the prose (``tests/test_sim_policies.py``
    ``test_easy_table3``).  [vadhiyar-notes] write the start and shadow
    tests with a strict ``size < n``; a job that needs exactly the free
    processors fits here (``<=``), as in every EASY implementation; the
    notes' worked example gives the same either way.  O(q + r log r) per
    pass."""

    def reservation(self, now, machine, head):
        """(shadow, extra) of the blocked ``head``."""
        tb = self.table
        key = {j: max(tb.start[j] + tb.estimate[j], now) for j in machine.running()}
        order = sorted(key, key=lambda j: (key[j], tb.ids[j]))
        free = machine.free.copy()
        shadow = None
        for j in order:
            if shadow is not None and key[j] != shadow:
                break
            free = free + tb.demand[j]
            if shadow is None and (tb.demand[head] <= free).all():
                shadow = key[j]
        return float(shadow), free - tb.demand[head]

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
        if self.selector is not None:
            done = self._choose(now, machine, q[1:], start,
                                lambda mc, st: self._backfill(now, mc, st, shadow, extra), shadow, extra)
        else:
            self.step = Step(now, machine.free.copy(), q[1:], shadow, extra.copy())
            done = self._backfill(now, machine, start, shadow, extra)
        self._q = [j for j in q if j not in done] if done else q

    def _backfill(self, now, machine, start, shadow, extra) -> set:
        return easy_backfill(self.table, machine, self._q[1:], now, shadow, extra, start)


def backfill_candidates(tb: JobTable, machine, cands, now: float, shadow: float, extra) -> list:
    """The jobs of ``cands``, in order, that EASY's backfill rule may start
    now: those that fit (:func:`~epochbench.sim.engine.fitting`) and end by
    the ``shadow`` time or need no more than ``extra``.  No other can start
    later in the pass: the free resources and ``extra`` only fall as jobs
    start.  One numpy test for all, O(q K)."""
    rows = fitting(machine, cands)
    if not len(rows):
        return []
    rows = np.asarray(rows, dtype=np.int64)
    keep = (now + tb.estimate[rows] <= shadow) | (tb.demand[rows] <= extra).all(axis=1)
    return rows[keep].tolist()


def easy_backfill(tb: JobTable, machine, cands, now: float, shadow: float, extra, start: StartFn) -> set:
    """EASY's backfill rule over ``cands`` in their order: a job that fits
    starts if it ends by the ``shadow`` time or takes no more than ``extra``
    (which it then uses up); returns the jobs started.

    The jobs that cannot start are found by one numpy test for all
    (:func:`backfill_candidates`), again after each start, instead of a few
    microseconds of per-job tests each: on a 6,000-job prefix of
    MetaCentrum's wagap-2013 (256 nodes, thousands queued), easy-sjf
    17.4 s -> 1.5 s and generic EASY 7.9 s -> 0.6 s on 4,000 jobs, the same
    schedules.  O(q K) per job started."""
    done = set()
    rows, i = backfill_candidates(tb, machine, cands, now, shadow, extra), 0
    while i < len(rows):
        j = rows[i]
        i += 1
        if not machine.fits(j):
            continue
        if now + tb.estimate[j] <= shadow:
            pass
        elif (tb.demand[j] <= extra).all():
            extra = extra - tb.demand[j]
        else:
            continue
        start(j)
        done.add(j)
        rows, i = backfill_candidates(tb, machine, rows[i:], now, shadow, extra), 0   # those still able to
    return done


@register_policy("conservative", fast=CONS_RULE)
class Conservative(_ArrivalQueue):
    """Conservative backfilling: every queued job gets a reservation, and a job starts early only when it
    delays none ([rajaei-dadfar] table 4, [vadhiyar-notes], [zhang-comparative] section 3).

    The generic engine's version runs over the numpy :class:`~epochbench.sim.profile.Profile`
    (the compiled loop over its compiled twin).  A booking is O(m log m); a
    compression re-books the whole queue, O(q m log m).

    [rajaei-dadfar]'s prose for table 4 differs from the strict rule: it reserves
    Job6 after Job4, "since Job6 cannot be backfilled".  Under the rule
    Job6 gets the earliest slot where it fits for its whole estimate without
    delaying a reservation: at 1, when Job2 ends, 4 nodes stay free beside
    Job3's reservation on [3, 4), so it starts at 1.  The simulator follows
    the rule, not the prose (``test_conservative_table4``)."""

    has_selector = False

    def reset(self, table, machine):
        super().reset(table, machine)
        self.profile = Profile(machine.capacity)
        self.reserved: dict[int, float] = {}
        self._compress = False
        self._wake = np.inf

    def arrive(self, job, now):
        self.profile.advance(now)
        super().arrive(job, now)

    def finished(self, job, now):
        self.profile.advance(now)
        tb = self.table
        end = tb.start[job] + tb.estimate[job]
        if now < end:
            self.profile.add(now, end, tb.demand[job], +1)
            self._compress = True

    def _book(self, j):
        tb, prof = self.table, self.profile
        if j in self.reserved:
            r = self.reserved[j]
            prof.add(r, r + tb.estimate[j], tb.demand[j], +1)
        t = prof.find(tb.demand[j], tb.estimate[j])
        prof.add(t, t + tb.estimate[j], tb.demand[j], -1)
        self.reserved[j] = t
        if np.isnan(tb.promised[j]):
            tb.promised[j] = t

    def schedule(self, now, machine, start):
        self.profile.advance(now)
        for j in self._q:
            if self._compress or j not in self.reserved:
                self._book(j)
        self._compress = False
        keep = []
        for j in self._q:
            if self.reserved[j] <= now:
                if machine.fits(j):
                    start(j)
                    del self.reserved[j]
                    continue
                self._compress = True  # only when a running job overran its estimate
            keep.append(j)
        self._q = keep
        self._wake = wake_time(now, (self.reserved[j] for j in keep))

    def wakeup(self):
        """A reservation can fall where no job ends any more (the job whose
        end it followed moved away in a compression): a pass is due then
        (none while a reservation due now waits: :func:`~epochbench.sim.engine.wake_time`)."""
        return self._wake


# ---- compiled fast path ----------------------------------------------------------------


def fast_takes_options(name: str, options: dict | None, k: int) -> bool:
    """Whether the compiled loop runs policy ``name`` with these selector
    ``options`` on K = ``k`` resources: none given, or BL's and BB's own
    options with values the heuristic takes (:func:`epochbench.sim.greedy_fast.fast_options`)."""
    if not options:
        return True
    code = FAST_CODES.get(name)
    return code in (_BL, _BB) and fast_options(code, options, k) is not None


def fast_option_names(name: str) -> tuple:
    """The selector options the compiled loop takes for policy ``name``
    (BL's and BB's own; none for the others)."""
    code = FAST_CODES.get(name)
    return tuple(GREEDY_OPTIONS[code]) if code in (_BL, _BB) else ()


def python_route(policy: Policy, table: JobTable) -> bool:
    """Whether :func:`run_fast` would run ``policy`` on ``table`` in the
    loop's pure-Python twin (EASY, one resource, a short stream, compiled
    kernels not loaded yet: loading them costs more than the run)."""
    return (FAST_CODES[policy.name] == _EASY and table.k == 1 and table.n <= _easy_python.PY_MAX_JOBS
            and not loop_ready())


def loop_ready() -> bool:
    """Whether the compiled event loop runs at no start-up cost now: the
    kernels are loaded and the loop itself is compiled in this process, or
    its compiled code is in the kernel cache (to load, not to compile).
    Loaded kernels alone are not enough: a process that ran a compiled
    heuristic first (the README's Library example: ``eb.solve(..., "ff")``,
    then a 6-job EASY run) took the compiled loop, and on a fresh
    installation compiled it, about a minute, where the pure-Python twin
    takes a millisecond.  (numba's cache index of the loop, read through
    its dispatcher; should that change, loaded kernels decide as before.)"""
    if not kernels_loaded():
        return False
    try:                                       # _loop: the dispatcher load_kernels put in the namespace
        return bool(_loop.signatures) or os.path.exists(_loop._cache._cache_file._index_path)
    except AttributeError:
        return True


def warm_up(policy: Policy, table: JobTable, capacity: np.ndarray) -> None:
    """Load (or compile, on a cold cache) the compiled loop that
    :func:`run_fast` runs ``policy`` on ``table`` with, by running it on
    the first two jobs: a timed run then times the simulation alone."""
    import dataclasses
    k = min(table.n, 2)
    tiny = dataclasses.replace(table, ids=table.ids[:k], submit=table.submit[:k], runtime=table.runtime[:k],
                               estimate=table.estimate[:k], duration=table.duration[:k],
                               demand=table.demand[:k], start=np.full(k, np.nan), promised=np.full(k, np.nan))
    # multi-queue's partitions are options of the policy object: the tiny run needs them too
    run_fast(copy.deepcopy(policy) if FAST_CODES[policy.name] == _MQ else make(policy.name), tiny, capacity)


def run_fast(policy: Policy, table: JobTable, capacity: np.ndarray, progress=None,
             every: float = 0.5, los_words: int | None = None) -> int:
    """Run ``policy`` (one of :data:`FAST_CODES`, default selector) with the
    compiled event loop; fills ``table.start`` / ``table.promised``, returns
    the number of passes.  Work arrays are allocated here, so that the
    compiled code needs no reference counting.  The loop runs in a worker
    thread (it holds no GIL; :func:`_drive`), so that signals reach this
    one; with ``progress``, ``progress(arrived, now)`` is called every
    ``every`` seconds from this one, and once at the end.
    ``los_words``: the size of the LOS bitsets (:func:`epochbench.sim.los_fast.los_work`);
    a LOS step that needs more stops the loop, which then runs again from
    the start with them.  (The loop's pure-Python twin for a short EASY
    stream, :func:`run_python`, is the caller's to try first:
    :func:`epochbench.sim.pool.simulate_pool`.)"""
    code = FAST_CODES[policy.name]
    n, k = table.n, table.k
    if code == _MQ or code in SLACK_RULES:            # its options checked on the machine, as the generic engine does
        policy.reset(table, SimpleNamespace(capacity=np.asarray(capacity, dtype=np.int64)))
    if n == 0:
        if code in (_LOS, _BL, _BB):                 # as the generic policy reports an empty run
            policy.selector_stats = {"steps": 0, "unproven": 0, "fallback": 0, "rule_better": 0}
        return 0
    if code in OWN_LOOPS:                            # a rule with a compiled loop of its own
        return OWN_LOOPS[code](policy, code, table, capacity, progress, every)
    limit = float(getattr(policy, "starvation_limit", DAY))
    rows = rows_needed(n) if code == _CONS else 1
    lw, lbits = los_work(n, code == _LOS, los_words)
    greedy = code in (_BL, _BB)
    opts = fast_options(code, policy.selector_options, k) if greedy else (1, 0)
    if opts is None:
        raise ValueError(f"policy {policy.name!r}: its selector options {policy.selector_options} have no "
                         "compiled form (see fast_takes_options)")
    gi, gf, glow = greedy_work(n, k, capacity, greedy, *opts)
    work = (np.array(capacity, dtype=np.int64),            # free
            np.empty(n + 1), np.empty(n + 1, np.int64),      # heap: times, jobs
            np.empty(n + 1, np.int64), np.zeros(n, np.bool_),  # queue, queued flags
            np.empty(n + 1 if code in EASY_LIKE else 1, np.int64),  # EASY running list
            *_profile(table, rows),                          # conservative profile
            np.full(n if code == _CONS else 1, np.nan),      # reservations
            np.array([-np.inf, np.inf, np.inf, np.inf]),     # state (see _compress)
            np.array([-1, 0, -1, -1, -1, -1, 0, 0, EXT, SCAN_ROWS, 0]),
            np.empty(k, np.int64),                           # EASY extra
            np.full(3 * k if code == _CONS else 1, -1, np.int64),  # vacated maxima (see _compress)
            *_run_tables(table, code == _CONS),              # vacated runs (see _compress)
            *_buckets(table, capacity, code == _NONFCFS and k == 1 and int(capacity[0]) <= BUCKET_MAX),
            lw, lbits,                                        # LOS work, bitsets
            gi, gf, glow)                                     # BL / BB work
    prog = np.zeros(2)
    # read-only views, whatever the caller's arrays are: one compiled version of the loop (readonly)
    args = (code, *map(readonly, (table.submit, table.duration, table.estimate, table.ids, table.demand)),
            limit, table.start, table.promised, *work, prog)
    passes = _drive(_loop, args, prog, progress, every)
    if lw[LOS_OVERFLOW]:
        table.start[:] = np.nan
        table.promised[:] = np.nan
        return run_fast(policy, table, capacity, progress, every, los_grown(lw, lbits))
    if code == _LOS:
        policy.selector_stats = los_stats(lw)  # as the generic policy reports them
    elif code in (_BL, _BB):
        policy.selector_stats = greedy_stats(gi)
    return passes


def run_python(table: JobTable, capacity: np.ndarray, progress=None) -> int | None:
    """EASY on one resource by :func:`epochbench.sim.easy_python.easy_python`
    (the compiled loop's pure-Python twin, for a process that has not loaded
    the compiled kernels yet); fills the table as :func:`run_fast` does and
    returns the passes, or None when its time budget ran out (nothing written)."""
    done = _easy_python.easy_python(table.submit.tolist(), table.duration.tolist(), table.estimate.tolist(),
                                    table.ids.tolist(), table.demand[:, 0].tolist(), int(capacity[0]),
                                    _easy_python.PY_BUDGET_S,
                                    keep=bool(np.all(table.duration <= table.estimate)))
    if done is None:
        return None
    start, promised, passes, last = done
    table.start[:] = start
    table.promised[:] = promised
    if progress is not None:
        progress(table.n, last)
    return passes


def _run_mq(policy: Policy, code: int, table: JobTable, capacity: np.ndarray, progress, every: float) -> int:
    """multi-queue's own compiled loop (:func:`epochbench.sim.multiqueue_fast.mq_loop`):
    kept apart from :func:`_loop`, whose conservative passes ran 10 % slower
    with its branches in (on a 250,000-job stream)."""
    n = table.n
    prog = np.zeros(2)
    args = (*map(readonly, (table.submit, table.duration, table.estimate, table.ids, table.demand)),
            table.start, table.promised, np.array(capacity, dtype=np.int64),
            np.empty(n + 1), np.empty(n + 1, np.int64),           # heap: times, jobs
            np.zeros(n, np.bool_), np.empty(n + 1, np.int64),     # queued flags, running list
            *mq_work(policy, table), prog)
    return _drive(mq_loop, args, prog, progress, every)


def _run_scan(policy: Policy, code: int, table: JobTable, capacity: np.ndarray, progress, every: float) -> int:
    """easy-sjf's and easy-xfactor's own compiled loop
    (:func:`epochbench.sim.scan_fast.scan_loop`): in :func:`_loop` their
    pass slowed EASY's and conservative's by a few per cent."""
    n = table.n
    prog = np.zeros(2)
    args = (code, *map(readonly, (table.submit, table.duration, table.estimate, table.ids, table.demand)),
            table.start, table.promised, np.array(capacity, dtype=np.int64),
            np.empty(n + 1), np.empty(n + 1, np.int64),           # heap: times, jobs
            np.empty(n + 1, np.int64), np.zeros(n, np.bool_),     # queue, queued flags
            np.empty(n + 1, np.int64), np.empty(table.k, np.int64),   # running list, extra
            *scan_work(n), prog)
    return _drive(scan_loop, args, prog, progress, every)


def _run_orders(policy: Policy, code: int, table: JobTable, capacity: np.ndarray, progress, every: float) -> int:
    """The priority orders' own compiled loop (:func:`epochbench.sim.orders_fast.orders_loop`)."""
    n = table.n
    prog = np.zeros(2)
    args = (code, *map(readonly, (table.submit, table.duration, table.estimate, table.ids, table.demand)),
            np.array(capacity, dtype=np.int64), table.start, table.promised, np.array(capacity, dtype=np.int64),
            np.empty(n + 1), np.empty(n + 1, np.int64), np.zeros(n, np.bool_),   # heap: times, jobs; queued flags
            *orders_work(table), prog)
    return _drive(orders_loop, args, prog, progress, every)


def _run_slack(policy: Policy, code: int, table: JobTable, capacity: np.ndarray, progress, every: float,
               rows: int | None = None) -> int:
    """slack-bf's and threshold-bf's own compiled loop
    (:func:`epochbench.sim.slack_fast.slack_loop`); a run whose plans
    outgrow the profile's rows starts again with more."""
    n = table.n
    prog = np.zeros(2)
    work = slack_work(policy, table, capacity, rows)
    args = (*map(readonly, (table.submit, table.duration, table.estimate, table.ids, table.demand)),
            np.array(capacity, dtype=np.int64), table.start, table.promised, np.array(capacity, dtype=np.int64),
            np.empty(n + 1), np.empty(n + 1, np.int64), np.zeros(n, np.bool_),   # heap: times, jobs; queued flags
            *work, prog)
    passes = _drive(slack_loop, args, prog, progress, every)
    if work[-1][SLACK_OVERFLOW]:
        table.start[:] = np.nan
        table.promised[:] = np.nan
        return _run_slack(policy, code, table, capacity, progress, every, slack_grown(work[-1], work[2].shape[0]))
    return passes


#: the rules that run in a compiled loop of their own (kept apart from :func:`_loop`,
#: whose EASY and conservative passes their branches slowed), and what runs each
OWN_LOOPS = {_MQ: _run_mq, **{c: _run_slack for c in SLACK_RULES}, **{c: _run_orders for c in ORDERS_RULE.values()},
             **{c: _run_scan for c in SCAN_RULES}}


def _drive(loop, args, prog, progress, every) -> int:
    """Run ``loop`` (:func:`_loop` or
    :func:`~epochbench.sim.multiqueue_fast.mq_loop`) on ``args`` in a
    worker thread (it holds no GIL), this one waiting in steps of ``every`` seconds and reporting
    ``progress`` after each when one is given (see :func:`run_fast`).  The
    wait is what lets Ctrl-C and SIGTERM through: run in this thread, the
    loop held off every signal handler until it returned, so a long
    simulation could be stopped only by SIGKILL (one on 2 million
    overloaded jobs ran on for over an hour).  A stopped wait leaves the
    worker, a daemon thread, to the end of the process."""
    import threading
    out, failed = [], []

    def work():
        try:
            out.append(loop(*args))
        except BaseException as exc:              # re-raised here, as a call in this thread would
            failed.append(exc)

    worker = threading.Thread(target=work, name="epochbench-loop", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(every)
        if progress is not None and worker.is_alive():
            progress(int(prog[0]), float(prog[1]))
    if failed:
        raise failed[0]
    if progress is not None:
        progress(int(prog[0]), float(prog[1]))  # the final state, always reported
    return int(out[0])


def _run_tables(table: JobTable, used: bool) -> tuple:
    """Conservative's vacated-run tables (two rounds, then the same two for
    the runs cut short: :func:`_vr_put`), the slots vacated but not yet
    entered in them (two rounds; start, end, first row, ``ci[EDITS]`` then:
    :func:`_enter`), each job's
    demand bucket on resource 0 (floor(log2); -1 for no demand there: such a
    job is always searched)."""
    if not used:
        return np.empty((2, 1, 1)), np.empty((2, 1, 2)), np.empty(1, np.int64)
    d = np.asarray(table.demand[:, 0], dtype=np.int64)
    b = np.full(d.shape[0], -1, np.int64)
    pos = d >= 1
    e = np.frexp(d[pos].astype(np.float64))[1].astype(np.int64) - 1  # float(d) may round up to a power of two
    e -= np.left_shift(np.uint64(1), e.astype(np.uint64)) > d[pos].astype(np.uint64)
    b[pos] = e
    return np.full((4, RELEASE + 1, RUN_LB), np.inf), np.empty((2, PENDING, 4)), b


def _profile(table: JobTable, rows: int) -> tuple:
    """Profile arrays (times, free) and the demand as the profile holds it:
    1-D with one resource, so that the kernels of :mod:`epochbench.sim.profile` skip
    the loop over resources."""
    if table.k == 1:
        return np.empty(rows), np.empty(rows, np.int64), readonly(np.ascontiguousarray(table.demand[:, 0]))
    return np.empty(rows), np.empty((rows, table.k), np.int64), readonly(table.demand)


#: largest machine (processors) for the Non-FCFS buckets, one per processor count
#: (16 bytes each); a larger one takes the sorted-queue pass of K > 1 (same rule)
BUCKET_MAX = 2**22


def _buckets(table: JobTable, capacity, used: bool) -> tuple:
    """Work arrays of the Non-FCFS buckets (see ``_bucket_starts``): heaps,
    sizes, offsets per processor count, non-empty counts per block of 64;
    placeholders (``off`` of length 2) when not ``used``."""
    if not used:
        return np.empty(1, np.int64), np.zeros(1, np.int64), np.zeros(2, np.int64), np.zeros(1, np.int64)
    procs = int(capacity[0])
    counts = np.bincount(table.demand[:, 0], minlength=procs + 1)
    off = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return (np.empty(table.n, np.int64), np.zeros(procs + 1, np.int64), off,
            np.zeros(procs // 64 + 1, np.int64))


@njit(**JIT)
def _los_starts(now, shadow, q, qh, qt, inq, dem, dur, est, ids, free, start,
                run, rn, ht, hj, hn, extra, lw, lbits):
    """Start the set of :func:`epochbench.sim.los_fast.los_select` among the
    jobs behind the head q[qh], in queue order, each while it fits now and,
    past the shadow time, in ``extra`` (which shrinks by it); drop them from
    the queue.  Returns (qt, rn, hn).  A set of m < 0 is an overflow: nothing
    starts and the loop stops (see :func:`run_fast`)."""
    m = los_select(now, shadow, q, qh + 1, qt, dem, est, free, extra, lw, lbits)
    if m <= 0:
        return qt, rn, hn
    for b in range(m):
        j = lw[LOS_OUT + b]
        if not _fits(dem, j, free):
            continue
        if now + est[j] > shadow:
            if not _fits(dem, j, extra):
                continue
            for r in range(free.shape[0]):
                extra[r] -= dem[j, r]
        hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
        rn = _run_add(run, rn, j, start, est, ids)
    return _compact(q, qh + 1, qt, inq), rn, hn


@njit(**JIT)
def _easy_like(code):
    return code == _EASY or code == _LOS or code == _BL or code == _BB


@njit(**JIT)
def _greedy_starts(now, shadow, q, qh, qt, inq, dem, dur, est, ids, free, start,
                   run, rn, ht, hj, hn, extra, code, gi, gf, glow):
    """Start the picks of :func:`epochbench.sim.greedy_fast.greedy_select`
    (BL or BB) among the jobs behind the head q[qh], in pick order, and drop
    them from the queue (they fit: the heuristic took them in turn out of
    copies of ``free`` and ``extra``).  Returns (qt, rn, hn)."""
    m = greedy_select(now, shadow, q, qh + 1, qt, dem, est, free, extra, code, gi, gf, glow)
    if m == 0:
        return qt, rn, hn
    for b in range(m):
        j = gi[GREEDY_OUT + b]
        hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
        rn = _run_add(run, rn, j, start, est, ids)
    return _compact(q, qh + 1, qt, inq), rn, hn


@njit(**JIT)
def _easy_pass(now, q, qh, qt, inq, dem, dur, est, ids, free, start, promised,
               run, rn, ht, hj, hn, extra, code, lw, lbits, gi, gf, glow):
    """One EASY pass of rule ``code`` (:data:`EASY_LIKE`); with LOS the
    backfill step first starts the LOS set (:func:`_los_starts`), then scans
    the rest as EASY does (the first fit of
    :func:`epochbench.heuristics.packing.los`); with BL or BB it starts the
    heuristic's picks (:func:`_greedy_starts`) and nothing else."""
    qh, rn, hn, shadow = _easy_head(now, q, qh, qt, inq, dem, dur, est, ids, free, start, promised,
                                    run, rn, ht, hj, hn, extra)
    if qh == qt:
        return qh, qt, rn, hn
    if code == _BL or code == _BB:
        qt, rn, hn = _greedy_starts(now, shadow, q, qh, qt, inq, dem, dur, est, ids, free, start,
                                    run, rn, ht, hj, hn, extra, code, gi, gf, glow)
        return qh, qt, rn, hn
    if code == _LOS:
        qt, rn, hn = _los_starts(now, shadow, q, qh, qt, inq, dem, dur, est, ids, free, start,
                                 run, rn, ht, hj, hn, extra, lw, lbits)
        if free.shape[0] == 1:
            return qh, qt, rn, hn  # K = 1: the DP's set is optimal, nothing else fits
    first = -1
    for p in range(qh + 1, qt):
        if free[0] <= 0:
            break  # procs >= 1: nothing more fits
        j = q[p]
        if not easy_admits(j, now, shadow, dem, est, free, extra):
            continue
        hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
        rn = _run_add(run, rn, j, start, est, ids)
        if first < 0:
            first = p
    if first >= 0:
        qt = _compact(q, first, qt, inq)
    return qh, qt, rn, hn


# -- Non-FCFS: q[qh:qt] sorted by (procs, estimate, row) --
@njit(**JIT)
def _before(a, b, dem, est):
    if dem[a, 0] != dem[b, 0]:
        return dem[a, 0] < dem[b, 0]
    if est[a] != est[b]:
        return est[a] < est[b]
    return a < b


@njit(**JIT)
def _prio_insert(q, qh, qt, j, dem, est):
    lo, hi = qh, qt
    while lo < hi:
        mid = (lo + hi) // 2
        if _before(q[mid], j, dem, est):
            lo = mid + 1
        else:
            hi = mid
    for a in range(qt, lo, -1):
        q[a] = q[a - 1]
    q[lo] = j
    return qt + 1


# -- Non-FCFS with one resource: a heap per processor count --
# The sorted array above costs O(q) per arrival, quadratic on a saturated
# stream (250k jobs at load 0.85 on 1024 nodes: 19 s).  With K = 1 the order
# (procs, estimate, row) is a bucket per processor count, each a binary heap
# on (estimate, row): a job that fits is the top of the smallest non-empty
# bucket <= free, so a pass pops tops while they fit.  Started jobs (by the
# starvation rule) stay in their heap and are dropped when they surface.
# ``bh[off[p]:off[p + 1]]`` holds bucket p's heap (size ``bs[p]``), ``blk``
# counts the non-empty buckets in each block of 64 so that a pass skips
# empty blocks.  O(log q) per arrival and per start, O(P / 64) per pass.
@njit(**JIT)
def _lt(a, b, est):
    return est[a] < est[b] or (est[a] == est[b] and a < b)


@njit(**JIT)
def _bucket_push(bh, bs, off, blk, p, j, est):
    base, i = off[p], bs[p]
    while i > 0:
        par = (i - 1) // 2
        o = bh[base + par]
        if _lt(o, j, est):
            break
        bh[base + i] = o
        i = par
    bh[base + i] = j
    if bs[p] == 0:
        blk[p >> 6] += 1
    bs[p] += 1


@njit(**JIT)
def _bucket_pop(bh, bs, off, blk, p, est):
    base = off[p]
    n = bs[p] - 1
    bs[p] = n
    if n == 0:
        blk[p >> 6] -= 1
        return
    last, i = bh[base + n], 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _lt(bh[base + c + 1], bh[base + c], est):
            c += 1
        if not _lt(bh[base + c], last, est):
            break
        bh[base + i] = bh[base + c]
        i = c
    bh[base + i] = last


@njit(**JIT)
def _bucket_starts(now, bh, bs, off, blk, est, dem, dur, free, start, inq, ht, hj, hn):
    """Start jobs in (procs, estimate, row) order while they fit (K = 1);
    returns (hn, jobs started)."""
    ns = 0
    p = 1
    while p <= free[0] and p < bs.shape[0]:
        if blk[p >> 6] == 0:
            p = ((p >> 6) + 1) << 6
            continue
        while bs[p] > 0 and p <= free[0]:
            j = bh[off[p]]
            _bucket_pop(bh, bs, off, blk, p, est)
            if inq[j]:
                hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
                ns += 1
        p += 1
    return hn, ns


@njit(**JIT)
def _nonfcfs_pass(now, q, qh, qt, inq, old, ai, limit, submit, dem, dur, free, start, ht, hj, hn):
    """Returns (old, hn, jobs started).  Started jobs stay in q as dead
    entries; the loop compacts q when they are the majority."""
    old, hn, ns, blocked = _starved_pass(now, old, ai, limit, submit, inq, dem, dur, free, start,
                                         ht, hj, hn)
    if blocked:
        return old, hn, ns
    for p in range(qh, qt):
        j = q[p]
        if not inq[j]:
            continue
        if dem[j, 0] > free[0]:
            break  # sorted by procs: no later job fits
        if _fits(dem, j, free):
            hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
            ns += 1
    return old, hn, ns


@njit(**JIT)
def _starved_pass(now, old, ai, limit, submit, inq, dem, dur, free, start, ht, hj, hn):
    """The starvation rule: FCFS in arrival order while the oldest waiting
    job has waited past ``limit``.  Returns (old, hn, started, blocked)."""
    ns = 0
    while True:
        while old < ai and not inq[old]:
            old += 1
        if old >= ai or not now - submit[old] > limit:
            return old, hn, ns, False
        if not _fits(dem, old, free):
            return old, hn, ns, True
        hn = _begin(old, now, dem, dur, free, start, inq, ht, hj, hn)
        ns += 1


# -- conservative: reservations in the compiled profile --
# A compression checks each queued job where an earlier slot can have opened.
# Its reservation r was its earliest fit when it was last booked or checked;
# since then free capacity rose only on the released intervals [now, start +
# estimate) of jobs that ended early, and on the slots vacated by jobs that
# moved.  If no slot vacated since j was last checked (by a job earlier in
# this round or after it in the previous round) starts before r, a window that
# became feasible meets a released interval before r, so it starts before
# ``rb`` (their largest end) and j fits in the most free capacity ``mr`` seen
# before rb (free capacity there only fell since); otherwise all of [now, r)
# is searched.  Such a window also lies in a run of rows that had room for j
# when the compression began, so [now, rb) is searched only for a job that a
# run starting before rb can hold (long enough, or reaching r: the runs by
# free-capacity bucket, :func:`_release_runs`; a window that also meets a
# vacated slot is found on that slot's path): on the saturated 400,000-job
# stream of issue 18, 30.4 M -> 5.7 M such searches (1.47 M moves came from
# them, 1.44 M now, the rest through the slots); medians of six runs each in
# one process 15.90 -> 14.58 s, the same schedules.  A window that became
# feasible through a vacated slot holds a
# point of that slot, so j also needs no more than the most free capacity
# seen on the vacated slots (recorded right after each move, ``vm``; it only
# falls afterwards unless another move vacates the same place, which records
# it again): on a saturated machine a vacated slot has room for few of the
# queued jobs, and the others are not searched.  The result is the same as
# re-booking every job from scratch, as the generic policy does
# (tests/test_sim_engine.py).
# On a long profile (more than SCAN_ROWS rows) the jobs that pass those tests
# are not searched from now either (:func:`_vacated_fit`).  A fit that became
# possible through a vacated slot lies in a run of rows (free capacity >= j's
# demand) that meets the slot; :func:`_slot_runs` records every such run (free
# capacity of resource 0, length, start: ``vr``, one table per round, bucketed
# by log2, so a query is one lookup) when the table is next read, from the
# profile as it is then; a run only shrinks afterwards unless another move
# vacates a place of it, which is recorded too before the next read.  The
# window of j is capped by its own reservation at r, so j fits at the start a
# of the run of rows with room for it that ends at r, if there is one
# (:func:`_final_run`); any earlier fit is a whole window of j's estimate in a
# run recorded long enough and starting before a; only then is [now, a)
# searched.  Measured on a saturated 400,000-job stream (issue 18): of the
# jobs the vacated-slot test lets through that cannot move, 93 % are no
# longer searched; four in five of those that move take the capped run
# without a search.  Per compression on that stream: 372 queued jobs
# visited, 55 moved, 214 checked against the run tables, 54 slots entered
# (54 rows each); 23.4 s in all before the slots' runs were grown from the
# slot (:func:`_slot_runs`), the bisections made branch-free
# (:func:`~epochbench.sim.profile._locate_from`), the table checks inlined
# and the buckets read from the bits; 13.3 s after, the same schedules.
# Two more filters of the same kind: a vacated slot also enters a staircase
# of its table by its most free capacity (row SLOTS: the earliest start of a
# slot with at least 2**x free), and j is checked only if a slot with room for
# its demand bucket was vacated before r (the vm test above takes the most
# free capacity and the earliest start of different slots): 65.3 M -> 57.5 M
# checks on that stream.  The searches, :func:`_final_run` and the walks of
# :func:`_slot_runs` read the rows 8 at a time
# (:func:`~epochbench.sim.profile._ge8`); searching every such job from now
# instead of using the tables was tried again with these faster scans: 43 s
# against 19 s, since the cost is the number of runs of rows a search steps
# over, not the rows.
# What is left is the cascade itself (measured on that stream with counters
# and the cycle counter): a compression moves about a fifth of the queue (11
# moves at 64-127 queued, 53 at 256-511, 115 at 512-1,023, 190 at 1,024-2,047;
# 16.9 M in all), at about 1 us a move all-in (entering slots 24 % of the
# compression's time, p_move 12 %, _vacate 5 %, the visits, checks and
# searches the rest).  Those reservations do change, so an early end costs
# O(queue) here whatever finds the movers; 82 % of the moves are of a job
# whose reservation starts exactly where a slot vacated earlier in the round
# ends, 15 % come through the previous round's slots or a full window.
# A move found by a check reuses the row of r that the check bisected
# (:func:`~epochbench.sim.profile.p_move_at`), and the vacated slot's first
# row comes back from the move: one or two bisections fewer a move (on an AMD EPYC
# of this project's CI kind: 18.05 -> 17.26 s, medians of four runs each in
# one process, the same schedules).
RB, SOON, WAKE, VAC = 0, 1, 2, 3  # float state: release bound (+inf: search all),
# earliest reservation, earliest reservation after now (a pass is due then),
# earliest start of a slot vacated in the previous compression
LAST_MOVED, CUR, TOP_H, TOP_L, WAITING, EXT_AT, SCAN_AT, EDITS = 0, 1, 2, 4, 6, 8, 9, 10  # int state:
# largest row moved in the previous compression (-1: none); this round's
# table of vacated runs (0 or 1); the largest buckets written in each table
# (2 entries each, -1: none); the slots waiting to be entered in each table
# (2 entries); EXT and SCAN_ROWS as run_fast read them (the tests lower them
# to reach the tables on short streams); a count of the compressions and
# their changes to the profile, which a waiting slot keeps beside its first
# row: while the count is the same, the row is still where it was
#: rows looked at on either side of a vacated slot for its runs (a run that
#: reaches past them counts as unbounded)
EXT = 64
#: buckets of the vacated-run tables: free capacity (floor(log2), resource 0)
#: and run length (floor(log2 of the time span) + 1; the last: unbounded)
RUN_HB, RUN_LB = 64, 64
#: the row of each table after its run buckets: vr[c, SLOTS, x] = the earliest
#: start of a slot vacated in that round whose free capacity (resource 0) was
#: at least 2**x somewhere right after the move
SLOTS = RUN_HB
#: the row after those: vr[0, RELEASE, x] = the longest run with at least
#: 2**x free (resource 0) that starts before the released interval ends, as
#: the compression found the profile, and vr[1, RELEASE, x] the latest end of
#: such a run (:func:`_release_runs`)
RELEASE = SLOTS + 1
#: vacated slots held before their runs are entered in the table, which
#: happens only when a job needs the table; past this many the table is not
#: used in that round (its jobs are searched from now)
PENDING = 1024
#: a profile of at most this many rows is searched from now for every job that
#: may move, without the run tables (measured on KTH, 100 nodes: entering the
#: slots cost more than the short searches they saved)
SCAN_ROWS = 128
# vm: the most free capacity on the slots vacated in this round (vm[0:K]), in
# this round and the previous one (vm[K:2K]) and in the previous one (vm[2K:3K])


@njit(**INLINE)
def _book(j, pdem, est, res, promised, pt, pf, m):
    """Book job j at its earliest fit (``pdem``: the demand as the profile holds it)."""
    i = p_find(pt, pf, m, pdem, j, est[j])
    res[j] = pt[i]
    if np.isnan(promised[j]):
        promised[j] = pt[i]
    return p_book(pt, pf, m, i, est[j], pdem, j)


@njit(**JIT)
def _max_free(pt, pf, m, until, out):
    """Largest free capacity per resource on [pt[0], until)."""
    if pf.ndim == 1:
        out[0] = pf[0]
        i = 1
        while i < m and pt[i] < until:
            out[0] = max(out[0], pf[i])
            i += 1
        return
    for r in range(pf.shape[1]):
        out[r] = pf[0, r]
    i = 1
    while i < m and pt[i] < until:
        for r in range(pf.shape[1]):
            out[r] = max(out[r], pf[i, r])
        i += 1


@njit(**JIT)
def _row_at(pt, m, t):
    """The row whose interval holds time t (row 0 for a time before it)."""
    i = max(_locate(pt, m, t) - 1, 0)
    if i + 1 < m and pt[i + 1] <= t:
        i += 1
    return i


@njit(**JIT)
def _raise_max(pt, pf, m, a, b, vm, k, ia):
    """vm[0:k] and vm[k:2k] = at least the free capacity on [a, b); returns
    the most free capacity of resource 0 there (-1: no row).  ``ia``: the
    row that starts at a, if the caller has it, else -1."""
    i = ia if ia >= 0 else _row_at(pt, m, a)
    top = -1
    while i < m and pt[i] < b:
        if pf.ndim == 1:
            vm[0], vm[1] = max(vm[0], pf[i]), max(vm[1], pf[i])
        else:
            for r in range(k):
                vm[r] = max(vm[r], pf[i, r])
                vm[k + r] = max(vm[k + r], pf[i, r])
        top = max(top, _h(pf, i))
        i += 1
    return top


#: a relative bound (4 units in the last place) on how far a difference of
#: two times can fall short of a window that fits between them by addition
ROUNDING = 2.0**-50


@njit(**JIT)
def _span(a, b):
    """The length of [a, b) as the run tables hold it: b - a raised by 4
    ulp of the larger end, so that a window of estimate e that fits in the
    run by the search's own test (a + e <= b) is never judged too long for
    it: with fractional times b - a can come out an ulp or two below e
    (found by fuzzing: with the tables in use on a short profile, a job of
    estimate 1 kept a reservation 10 s later than the fit that the generic
    engine found).  The tables only decide which jobs are searched, so a
    length read long costs a search, never a schedule."""
    return (b - a) + max(abs(a), abs(b)) * ROUNDING


@njit(**JIT)
def _release_runs(pt, pf, m, rb, top, vr):
    """Fill vr[0:2, RELEASE] for the runs of rows that start before rb (the
    end of the released interval, +inf: every row) with at least 2**x free
    on resource 0: the longest, and the latest end (+inf: the last row).
    ``top``: the most free capacity of resource 0 before rb (as
    :func:`_max_free` finds it; no bucket above it has such a run).  A fit
    that a compression finds before rb without a slot vacated in it lies in
    such a run of the profile as it was when the compression began
    (:func:`_release_fit`).  O(rows x buckets)."""
    hb = _log2(top) if top >= 1 else -1
    for x in range(vr.shape[2]):
        vr[0, RELEASE, x] = vr[1, RELEASE, x] = -np.inf
    for x in range(hb + 1):
        thr = np.int64(1) << x
        i = 0
        while True:
            if pf.ndim == 1:
                i = _room_from(pt, pf, i, m, thr, rb)
            else:
                while i < m and pt[i] < rb and _h(pf, i) < thr:
                    i += 1
            if i >= m or not pt[i] < rb:
                break
            if pf.ndim == 1:
                k = _below_from(pf, i + 1, m, thr)
            else:
                k = i + 1
                while k < m and _h(pf, k) >= thr:
                    k += 1
            end = pt[k] if k < m else np.inf
            vr[0, RELEASE, x] = max(vr[0, RELEASE, x], _span(pt[i], end))
            vr[1, RELEASE, x] = max(vr[1, RELEASE, x], end)
            i = k


@njit(**JIT)
def _release_fit(vr, b, e, r):
    """Job j (demand bucket b on resource 0, -1: none there; estimate e,
    reserved at r) may fit, without a slot vacated since it was checked,
    somewhere that the released interval made room: a run from
    :func:`_release_runs` is long enough for it, or reaches r (its window
    ends at its own reservation).  Such a fit lies in rows that had room
    for j when the compression began (only vacated slots gave capacity back
    since), in one of those runs."""
    return b < 0 or vr[0, RELEASE, b] >= e or vr[1, RELEASE, b] >= r


@njit(**JIT)
def _fits_in(dem, j, vm, off):
    """Job j fits in vm[off:off + K]."""
    for r in range(dem.shape[1]):
        if dem[j, r] > vm[off + r]:
            return False
    return True


@njit(**JIT)
def _vm_round(vm, k):
    """Start a round: nothing vacated in it yet; both = the previous round."""
    for r in range(k):
        vm[r] = -1
        vm[k + r] = vm[2 * k + r]


@intrinsic
def _exponent(typingctx, x):
    """The binary exponent of a float64 read from its bits: floor(log2(x))
    for a normal x > 0, without the call that ``math.frexp`` makes (measured:
    2.5 % of conservative's time on the saturated 400,000-job stream)."""
    from llvmlite import ir
    from numba.core import types

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        bits = builder.bitcast(args[0], i64)
        e = builder.and_(builder.lshr(bits, ir.Constant(i64, 52)), ir.Constant(i64, 0x7FF))
        return builder.sub(e, ir.Constant(i64, 1023))

    if x != types.float64:
        raise TypeError("_exponent: a float64")
    return types.int64(x), codegen


#: floor(log2(x)) for an int64 x >= 1: the index of its highest set bit
_log2 = _high_bit


@njit(**JIT)
def _len_bucket(L):
    """Bucket of a time span: floor(log2) + 1 on [0, 62], 0 below 1, 63 for inf."""
    if L >= 2.0**61:
        return 63
    if L < 1.0:
        return 0
    return min(_exponent(np.float64(L)) + 1, 62)


@njit(**JIT)
def _h(pf, i):
    """Free capacity of resource 0 on row i."""
    if pf.ndim == 1:
        return pf[i]
    return pf[i, 0]


@njit(**JIT)
def _vr_put(vr, c, ci, h, L, t):
    """Record a run [t, t + L) with free capacity h on resource 0 in table
    c: vr[c, x, y] = the earliest start of a recorded run with free >= 2**x
    and length bucket >= y (a staircase: rows are updated until one already
    starts no later).  Table 2 + c is the same staircase of the runs cut at
    the left of their slot's reach (:func:`_slot_runs`), holding the slot's
    start."""
    bh, bl = min(_log2(h), RUN_HB - 1), _len_bucket(L)
    ci[TOP_H + c % 2] = max(ci[TOP_H + c % 2], bh)
    ci[TOP_L + c % 2] = max(ci[TOP_L + c % 2], bl)
    for x in range(bh, -1, -1):
        if vr[c, x, bl] <= t:
            break
        for y in range(bl, -1, -1):
            if vr[c, x, y] <= t:
                break
            vr[c, x, y] = t


@njit(**JIT)
def _vr_reset(vr, c, ci):
    """Empty table c (only the buckets written) and its slot staircase."""
    for x in range(vr.shape[2]):
        vr[c, SLOTS, x] = np.inf
    for x in range(ci[TOP_H + c] + 1):
        for y in range(ci[TOP_L + c] + 1):
            vr[c, x, y] = vr[2 + c, x, y] = np.inf
    ci[TOP_H + c] = ci[TOP_L + c] = -1


@njit(**JIT)
def _vr_before(vr, c, b, e, t):
    """A run recorded in table c with free >= 2**b and length >= e (up to
    the bucket) starts before t."""
    return vr[c, b, _len_bucket(e)] < t


@njit(**JIT)
def _slot_runs(pt, pf, m, a, b, vr, c, ci, ia):
    """Record in table c every maximal run of rows (free capacity of
    resource 0 at least that of its lowest row) that meets the slot [a, b).
    Rows with nothing free bound the runs; past EXT rows on either side a
    run counts as unbounded.  From each row of the slot the run grows one
    bucket of the table at a time: to the maximal run with at least 2**x
    free, x the bucket of the higher of its two neighbours (the levels of
    one bucket have runs that this one holds, and it starts no later and
    lasts no less, so the table comes out as if each level were recorded),
    so each row on either side is looked at once per slot row; a slot row
    stops where its runs reach the row before it (those runs were recorded
    from there).  Measured on the saturated 400,000-job stream of issue 18:
    54 rows a slot; this replaced a pass with a stack over the same rows at
    about four times the cost, and the climb by buckets one by levels.
    A run cut off EXT rows left of the slot is recorded from the row where
    the cut falls, later than its true start; :func:`_vacated_fit` still
    finds every fit: a fit before its bound t (the capped run's start, or r)
    that meets the slot lies wholly before t (a run reaching r would start
    the capped run no later than the fit), so the slot row it holds, and the
    recorded start at or before that row, are before t too.  Where the row
    before the cut has room, the runs of the lower levels reach past the cut
    and are not recorded on their own (the climb stops looking left there),
    so such a record also enters table 2 + c with the slot's start ``a``:
    a fit in those runs meets the slot, so it starts after a less its length
    (the search bound of :func:`_runs_from`; found with the cut at 2 rows:
    the record's own start is no bound for them).
    O(rows of the slot x (rows of the slot + 2 EXT))."""
    ext = ci[EXT_AT]
    i0 = ia if ia >= 0 else _row_at(pt, m, a)  # ia: the slot's first row, if known
    i1 = i0 + 1
    while i1 < m and pt[i1] < b:
        i1 += 1
    lmin, rmax = max(i0 - ext, 0), min(i1 + ext, m)
    for s in range(i0, min(i1, m)):
        lev = _h(pf, s)
        lo, hi = s, s + 1
        while lev >= 1:
            thr = np.int64(1) << _log2(lev)  # the least free capacity of lev's bucket
            if pf.ndim == 1:  # 8 rows a step (measured: entering the slots 12.0 -> 10.9 G cycles)
                lo = _below_back(pf, lmin, lo, thr) + 1
            else:
                while lo > lmin and _h(pf, lo - 1) >= thr:
                    lo -= 1
            if lo < s and s > i0:
                break  # these runs hold row s - 1: recorded from there
            if pf.ndim == 1:
                hi = _below_from(pf, hi, rmax, thr)
            else:
                while hi < rmax and _h(pf, hi) >= thr:
                    hi += 1
            nxt = -1  # below thr: the next bucket down, or none
            if lo > lmin:
                nxt = _h(pf, lo - 1)
            if hi < rmax:
                nxt = max(nxt, _h(pf, hi))
            cut = lo == i0 - ext and lo > 0 and _h(pf, lo - 1) >= 1  # lower levels reach past it
            if cut or hi >= m or (hi == i1 + ext and _h(pf, hi) >= 1):
                L = np.inf
            else:
                L = _span(pt[lo], pt[hi])
            _vr_put(vr, c, ci, lev, L, pt[lo])
            if cut:  # runs from there on lie before pt[lo] too
                _vr_put(vr, 2 + c, ci, lev, L, a)
            lev = nxt


@njit(**JIT)
def _vacate(pt, pf, m, a, b, vm, k, vr, wait, ci, ia):
    """A job left the slot [a, b) (``ia``: its first row, -1 if not known):
    raise ``vm`` over it; its runs are entered in this round's table before
    the table is next read (:func:`_runs_from`), and the slot in its
    staircase by free capacity (row SLOTS)."""
    top = _raise_max(pt, pf, m, a, b, vm, k, ia)
    c = ci[CUR]
    if top >= 1:
        for x in range(_log2(top), -1, -1):
            if vr[c, SLOTS, x] <= a:
                break
            vr[c, SLOTS, x] = a
    if not b > a:
        return
    n = ci[WAITING + c]
    if n < wait.shape[1]:
        wait[c, n, 0], wait[c, n, 1], wait[c, n, 2], wait[c, n, 3] = a, b, ia, ci[EDITS]
    ci[WAITING + c] = min(n + 1, wait.shape[1] + 1)  # one past: too many, the table is not used


@njit(**JIT)
def _enter(pt, pf, m, vr, wait, c, ci):
    """Enter the runs of the slots waiting for table c, from the profile as
    it is now: a fit that meets such a slot lies in one of them (the
    profile only lost capacity since, except where a later move vacated a
    slot, which is entered too before the table is read).  A slot's first
    row, when its move gave it, is taken as it is while nothing changed
    the profile since (``ci[EDITS]``): usually the slot just vacated."""
    for x in range(ci[WAITING + c]):
        ia = int(wait[c, x, 2]) if wait[c, x, 3] == ci[EDITS] else -1
        _slot_runs(pt, pf, m, wait[c, x, 0], wait[c, x, 1], vr, c, ci, ia)
    ci[WAITING + c] = 0


@njit(**INLINE)
def _runs_from(pt, pf, m, vr, wait, c, ci, b, e, t):
    """Where a fit of job j (demand bucket b, estimate e) that meets a slot
    of table c can start at the earliest, if :func:`_vr_before` finds a run
    for it there before t (its waiting slots entered first); +inf if none,
    -inf when too many slots waited (the table is not used).  Such a fit
    lies in a recorded run, which starts no later (``vr[c]``), or in a run
    that reaches past a cut (:func:`_slot_runs`), and then meets that run's
    slot, which starts before the fit ends (``vr[2 + c]``, less e)."""
    if ci[WAITING + c] > wait.shape[1]:
        return -np.inf
    if ci[WAITING + c] > 0:
        _enter(pt, pf, m, vr, wait, c, ci)
    if not _vr_before(vr, c, b, e, t):
        return np.inf
    y = _len_bucket(e)
    a = vr[2 + c, b, y]  # +inf: no cut run recorded (inf - inf would be NaN)
    return min(vr[c, b, y], a - e - max(abs(a), e) * ROUNDING if a < np.inf else np.inf)


@njit(**JIT)
def _final_run(pt, pf, m, pdem, j, r):
    """Row where the run of rows with room for j that ends at r starts
    (job j then fits there, capped by its own reservation at r); -1 if the
    row before r has no room.  Also returns the first row at or after r
    (:func:`_locate`), which a move of j then need not bisect again."""
    ir = _locate(pt, m, r)
    i = ir - 1
    if i < 0 or not _covers(pf, i, pdem, j):
        return -1, ir
    if pf.ndim == 1:  # 8 rows a step back: the last row before i without room
        return _below_back(pf, 0, i, pdem[j]) + 1, ir
    while i > 0 and _covers(pf, i - 1, pdem, j):
        i -= 1
    return i, ir


@njit(**INLINE)
def _vacated_fit(pt, pf, m, pdem, j, e, r, b, vr, wait, ci, vac, prev):
    """Earliest row where job j (reserved at r, demand bucket b) fits among
    the windows that meet a slot vacated since its last check (the earliest
    in this round starts at ``vac``, in the previous one after j at
    ``prev``), -1 if none: the start of the run of rows that ends at r when
    there is one, unless a run long enough for j's estimate e starts before
    it (then the rows from where such a fit can start at the earliest,
    :func:`_runs_from`, to that start are searched; measured on the
    saturated 400,000-job stream of issue 18: 6.27 M such searches, 8 % of
    them find a fit; started there instead of at now they read 43 % fewer
    rows and take about 1.2 s less, of about 3 s, measured with each search
    run five times).  Also returns the first row at or after r, as
    :func:`_final_run` found it."""
    a, ir = _final_run(pt, pf, m, pdem, j, r)
    t = pt[a] if a >= 0 else r
    lo = -np.inf if b < 0 else np.inf  # where such a fit can start at the earliest
    if b >= 0 and vac < t:
        lo = _runs_from(pt, pf, m, vr, wait, ci[CUR], ci, b, e, t)
    if b >= 0 and prev < t and lo > pt[0]:
        lo = min(lo, _runs_from(pt, pf, m, vr, wait, 1 - ci[CUR], ci, b, e, t))
    if lo < t:
        i = p_find_between(pt, pf, m, pdem, j, e, r, _row_at(pt, m, lo) if lo > pt[0] else 0, t)
        if i >= 0:
            return i, ir
    return a, ir


@njit(**INLINE)
def _compress(now, q, qh, qt, cf, ci, dem, pdem, est, res, promised, pt, pf, m, mr, vm, vr, wait, jb):
    """Re-book the queued jobs in order, each at its earliest fit (never
    later); sets ``cf[SOON]`` to the earliest reservation."""
    rb, before, moved, k, scan = cf[RB], ci[LAST_MOVED], -1, dem.shape[1], ci[SCAN_AT]
    cur = 1 - ci[CUR]
    ci[CUR] = cur
    ci[EDITS] += 1  # the rows of waiting slots from before are no longer known
    _vr_reset(vr, cur, ci)
    ci[WAITING + cur] = 0
    vac = soon = np.inf  # vac: earliest start of a slot vacated in this round
    _max_free(pt, pf, m, rb, mr)
    _release_runs(pt, pf, m, rb, mr[0], vr)
    _vm_round(vm, k)
    for p in range(qh, qt):
        j = q[p]
        r = res[j]
        if np.isnan(r):
            continue  # a fresh arrival, booked next
        if r < now:  # due but never started (a job overran): book afresh
            m = p_add(pt, pf, m, r, r + est[j], pdem, j, 1)
            m = _book(j, pdem, est, res, promised, pt, pf, m)
            moved, vac = j, now
            ci[EDITS] += 1
            _vacate(pt, pf, m, now, r + est[j], vm, k, vr, wait, ci, -1)
        else:
            old = before > j  # slots vacated after j's check in the previous round count
            lo = min(vac, cf[VAC]) if old else vac
            vacated = lo < r and _fits_in(dem, j, vm, k if old else 0)
            if vacated and jb[j] >= 0:  # a slot with room for j vacated before r
                vacated = vr[cur, SLOTS, jb[j]] < r or (old and vr[1 - cur, SLOTS, jb[j]] < r)
            if vacated and m <= scan:
                hi = r
            else:
                hi = min(r, rb) if _fits(dem, j, mr) and _release_fit(vr, jb[j], est[j], r) else now
            i = p_find_before(pt, pf, m, pdem, j, est[j], r, hi) if hi > now else -1
            ir = -1  # the first row at or after r, where a check found it
            if i < 0 and vacated and m > scan:
                i, ir = _vacated_fit(pt, pf, m, pdem, j, est[j], r, jb[j], vr, wait, ci, vac,
                                     cf[VAC] if old else np.inf)
            if i >= 0:
                res[j] = pt[i]
                m, ia = p_move_at(pt, pf, m, i, r, est[j], pdem, j, ir)
                ci[EDITS] += 1
                moved, vac = j, min(vac, max(r, res[j] + est[j]))
                _vacate(pt, pf, m, max(r, res[j] + est[j]), r + est[j], vm, k, vr, wait, ci, ia)
        soon = min(soon, res[j])
    ci[LAST_MOVED], cf[VAC], cf[SOON] = moved, vac, soon
    for r in range(k):
        vm[2 * k + r] = vm[r]
    return m


@njit(**INLINE)
def _cons_pass(now, q, qh, qt, fresh, cf, ci, inq, dem, pdem, dur, est, free, start, promised,
               res, pt, pf, m, ht, hj, hn, extra, vm, vr, wait, jb):
    """Compress if a job ended early, book the ``fresh`` arrivals (the
    queue's tail), start every job booked now.  Returns (qt, m, hn).  A
    reservation can fall where no job ends any more (the job whose end it
    followed moved away in a compression), so the loop also runs a pass at
    ``cf[WAKE]``: the earliest reservation after now, or none while a job
    booked now waits (:func:`epochbench.sim.engine.wake_time`)."""
    if cf[RB] > -np.inf:
        m = _compress(now, q, qh, qt, cf, ci, dem, pdem, est, res, promised, pt, pf, m, extra, vm, vr, wait,
                      jb)
    cf[RB] = -np.inf
    for p in range(qt - fresh, qt):
        j = q[p]
        m = _book(j, pdem, est, res, promised, pt, pf, m)
        cf[SOON] = min(cf[SOON], res[j])
    if cf[SOON] > now:
        cf[WAKE] = cf[SOON]
        return qt, m, hn
    first = -1
    soon = wake = np.inf
    for p in range(qh, qt):
        j = q[p]
        if res[j] <= now:
            if _fits(dem, j, free):
                hn = _begin(j, now, dem, dur, free, start, inq, ht, hj, hn)
                if first < 0:
                    first = p
                continue
            cf[RB] = np.inf  # a running job overran its estimate: re-book all
        else:
            wake = min(wake, res[j])
        soon = min(soon, res[j])
    # a job booked now that did not fit: no pass before the next event (engine.wake_time)
    cf[SOON], cf[WAKE] = soon, (wake if soon > now else np.inf)
    if first >= 0:
        qt = _compact(q, first, qt, inq)
    return qt, m, hn


@njit(nogil=True, **JIT)
def _loop(code, submit, dur, est, ids, dem, limit, start, promised,
          free, ht, hj, q, inq, run, pt, pf, pdem, res, cf, ci, extra, vm, vr, wait, jb, bh, bs, off, blk,
          lw, lbits, gi, gf, glow, prog):
    """The whole simulation: finishes, then arrivals, then one pass per event
    time, as :class:`epochbench.sim.engine.Engine` does."""
    n, k = dem.shape
    m = p_init(pt, pf, free, submit[0])
    hn = qh = qt = rn = ai = old = passes = dead = 0  # dead: started jobs left in q (nonfcfs)
    buckets = code == _NONFCFS and k == 1 and off.shape[0] > 2   # the Non-FCFS buckets were built
    while ai < n or hn > 0 or cf[WAKE] < np.inf:
        now = ht[0] if hn > 0 else np.inf
        if ai < n and submit[ai] < now:
            now = submit[ai]
        if cf[WAKE] < now:
            now = cf[WAKE]
        prog[0], prog[1] = ai, now  # read by run_fast's progress thread
        if code == _CONS:
            m = p_advance(pt, pf, m, now, True)
        while hn > 0 and ht[0] == now:
            j, hn = _pop(ht, hj, hn)
            for r in range(k):
                free[r] += dem[j, r]
            if _easy_like(code):
                rn = _run_del(run, rn, j, start, est, ids)
            elif code == _CONS and now < start[j] + est[j]:
                m = p_release(pt, pf, m, start[j] + est[j], pdem, j)
                cf[RB] = max(cf[RB], start[j] + est[j])
        fresh = 0
        while ai < n and submit[ai] == now:
            fresh += 1
            inq[ai] = True
            if buckets:
                _bucket_push(bh, bs, off, blk, dem[ai, 0], ai, est)
                qt += 1  # counts arrivals; dead counts starts
            elif code == _NONFCFS:
                qt = _prio_insert(q, qh, qt, ai, dem, est)
            else:
                q[qt] = ai
                qt += 1
            ai += 1
        if qt - qh == dead:
            continue  # empty queue: no pass
        passes += 1
        if code == _FCFS:
            while qh < qt and _fits(dem, q[qh], free):
                hn = _begin(q[qh], now, dem, dur, free, start, inq, ht, hj, hn)
                qh += 1
        elif buckets:
            old, hn, ns, blocked = _starved_pass(now, old, ai, limit, submit, inq, dem, dur, free,
                                                 start, ht, hj, hn)
            if not blocked:
                hn, ns2 = _bucket_starts(now, bh, bs, off, blk, est, dem, dur, free, start, inq,
                                         ht, hj, hn)
                ns += ns2
            dead += ns
        elif code == _NONFCFS:
            old, hn, ns = _nonfcfs_pass(now, q, qh, qt, inq, old, ai, limit, submit, dem, dur,
                                        free, start, ht, hj, hn)
            dead += ns
            if 2 * dead > qt - qh:
                qt, dead = _compact(q, qh, qt, inq), 0
        elif _easy_like(code):
            qh, qt, rn, hn = _easy_pass(now, q, qh, qt, inq, dem, dur, est, ids, free, start,
                                        promised, run, rn, ht, hj, hn, extra, code, lw, lbits, gi, gf, glow)
            if lw[LOS_OVERFLOW]:
                break  # LOS work arrays too small: run_fast runs again with larger ones
        else:
            qt, m, hn = _cons_pass(now, q, qh, qt, fresh, cf, ci, inq, dem, pdem, dur, est, free, start,
                                   promised, res, pt, pf, m, ht, hj, hn, extra, vm, vr, wait, jb)
    return passes
