"""More space-sharing policies on the generic engine (issue 4 item 2); each
also runs on a compiled loop with the same schedules (the ``*-bf`` orders:
:mod:`epochbench.sim.orders_fast`).

=============  ==================================================================
name           rule
=============  ==================================================================
ff-easy        [leinberger1999] section 3: EASY whose backfill step is first fit over K
               resources.  EASY's own rule *is* first fit in queue order
               (tests/test_sim_engine.py), so this is ``easy`` (fast path).
bl-easy        EASY whose backfill step is the BL packing heuristic ([leinberger1999]
               section 2.2), on the candidates with the head's reservation;
               fast path :mod:`epochbench.sim.greedy_fast` (K >= 1, the
               heuristic's own options).
bb-easy        the same with BB ([leinberger1999] section 2.2).
los            [vadhiyar-notes] "LOS": EASY whose backfill step is the LOS dynamic
               program with the head's reservation (shadow time, extra);
               fast path :mod:`epochbench.sim.los_fast` (K >= 1, without
               selector options).
ff-cons        [leinberger1999] section 3: conservative backfilling over K resources
               (``conservative``, fast path).
fcfs-bf        [zhang-comparative] section 3: the schedule of the whole queue is built in
sjf-bf         priority order at every scheduling event, each job at its
bfit-bf        earliest fit in the availability profile of the running jobs and
wfit-bf        the jobs before it; a job starts when its slot is now.  Orders:
               FCFS (arrival), SJF (estimate), BFit (jobs that fit now first,
               smallest leftover first, then the others by smallest excess
               over what is free at the event; recomputed at every event, as
               the paper says the queue "has to be reordered after each
               scheduling event", not again after each start within one:
               the packing heuristic ``bestfit`` re-ranks after each pick,
               and the two can differ), WFit (size,
               smallest first).  Lower-priority jobs never delay higher ones
               in the plan of one event ([zhang-comparative]: "does not incur a
               delay on the start time of job i for that particular schedule"),
               but, unlike ``conservative``, a job's planned start may move
               later from one event's plan to the next: when a higher-priority
               job arrives, and after an early end, when jobs before it move
               forward into the capacity its slot relied on (so ``promised``,
               the first plan's start, is no bound on its start).
=============  ==================================================================

On the generic engine the ``*-easy`` and ``los`` policies call a packing
heuristic of ``epochbench.instances.registry`` at each backfill step, so every such
step is a packing instance that ``--record-epochs`` can save and score; their
compiled loops make the same choices without building the instance.
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.arguments import args
from .greedy_fast import BB_RULE, BL_RULE
from .los_fast import LOS_RULE
from .engine import wake_time
from .policies import CONS_RULE, EASY, EASY_RULE, Conservative, _ArrivalQueue, register_policy
from .orders_fast import ORDERS_RULE, plan_queue
from .profile import rows_needed


def _easy_with(name: str, selector: str, doc: str, fast: int | None = None):
    """Register EASY whose backfill step is packing heuristic ``selector``
    (``fast``: its rule in the compiled loop, if it has one)."""
    default = selector

    def __init__(self, selector: str | None = None, selector_options: dict | None = None):
        if selector is not None and selector != default:     # the step is what the policy's name says
            raise ValueError(f"policy {name!r} is EASY whose backfill step is {default!r}; a selector would "
                             f"replace that step: give {args(policy='easy', selector=selector)}")
        EASY.__init__(self, default, selector_options)

    cls = type(f"EASY_{name.replace('-', '_')}", (EASY,), {"__init__": __init__, "__doc__": doc,
                                                          "__module__": __name__})
    globals()[cls.__name__] = cls          # found by name: its objects pickle (a sweep's workers, deepcopy)
    return register_policy(name, fast=fast)(cls)


@register_policy("ff-easy", fast=EASY_RULE)
class FFEASY(EASY):
    """FF-EASY ([leinberger1999] section 3): EASY's own backfill rule, first fit in
    queue order over the K resources; compiled fast path as ``easy``."""

    def __init__(self, selector: str | None = None, selector_options: dict | None = None):
        if selector is not None and selector != "ff":  # the step is what the policy's name says
            raise ValueError(f"policy 'ff-easy' is EASY whose backfill step is first fit ('ff'); a selector "
                             f"would replace that step: give {args(policy='easy', selector=selector)}")
        super().__init__(selector, selector_options)


@register_policy("ff-cons", fast=CONS_RULE)
class FFCons(Conservative):
    """FF-CONS ([leinberger1999] section 3): conservative backfilling over K
    resources; compiled fast path as ``conservative``."""



BLEASY = _easy_with("bl-easy", "bl", "BL-EASY ([leinberger1999] section 3): EASY backfilled by the BL heuristic.",
                    fast=BL_RULE)
BBEASY = _easy_with("bb-easy", "bb", "BB-EASY ([leinberger1999] section 3): EASY backfilled by the BB heuristic.",
                    fast=BB_RULE)
LOS = _easy_with("los", "los", "LOS ([vadhiyar-notes]): EASY whose backfill step is the LOS dynamic program "
                               "with the head's reservation.", fast=LOS_RULE)


# ---- [zhang-comparative] section 3: priority orders with backfilling -------------------------------
def _fcfs_key(tb, rows, free):
    return rows


def _sjf_key(tb, rows, free):
    return rows[np.lexsort((rows, tb.estimate[rows]))]


def _wfit_key(tb, rows, free):
    return rows[np.lexsort((rows, tb.demand[rows, 0]))]


def _bfit_key(tb, rows, free):
    size = tb.demand[rows, 0]
    left = int(free[0]) - size
    fits = left >= 0
    return rows[np.lexsort((rows, np.abs(left), ~fits))]


ORDERS = {"fcfs": _fcfs_key, "sjf": _sjf_key, "bfit": _bfit_key, "wfit": _wfit_key}


class OrderedBackfill(_ArrivalQueue):
    """Backfilling under a queue priority order ([zhang-comparative] section 3; see the
    module docstring).  O(q m K) compiled work per pass; FCFS, O(q' m K) for
    q' jobs arrived since the last pass when its plan still holds (``extends``)."""

    order = "fcfs"
    has_selector = False
    #: a pass may extend the last pass's plan with the jobs arrived since,
    #: instead of planning the whole queue again, when nothing that plan
    #: counted on has changed (:meth:`_plan`); only where new jobs come
    #: last in the order, which FCFS's is
    extends = False

    def reset(self, table, machine):
        super().reset(table, machine)
        rows = rows_needed(table.n)
        self._pt, self._pf = np.empty(rows), np.empty((rows, table.k), np.int64)
        self._res = np.full(table.n, np.nan)
        self._wake = np.inf
        self._rows = 0           # rows of the last plan's profile; 0: it cannot be extended
        self._planned = 0        # the jobs at the head of the queue that plan holds
        self.extended = 0        # the passes that extended the last plan

    def finished(self, job, now):
        if self.extends and now != self.table.start[job] + self.table.estimate[job]:
            self._rows = 0                              # its resources free at another time than planned

    def _plan(self, now, machine) -> np.ndarray:
        """Plan the queue: the whole of it in priority order, or, where the
        last plan holds, only the jobs arrived since, at the end of it.  That
        plan holds while every job ended at its estimate (the running jobs
        free their resources where it booked them; the jobs it started at
        their slots hold what it booked), none runs past its estimate (then
        it is expected to end now, a time that moves), and every job planned
        by the last pass started: each old slot is then still the earliest
        fit from now on, and the new jobs come after all of them in FCFS
        order, as in a plan of the whole queue.  On a stream whose estimates
        are exact, every pass but the first extends.  (Either of the last two
        conditions would do alone where every slot has a width: a job due now
        then does not fit only while one runs past its estimate, and that
        job's resources count as free from now on in either plan; the tests'
        mutants of both at once fail.  A plan with a slot of no width, an
        estimate lost in the time it is added to, is never extended:
        :func:`plan_queue`.)  One compiled call a pass."""
        tb = self.table
        running = np.asarray(machine.running(), dtype=np.int64)
        queue = np.asarray(self._q, dtype=np.int64)
        order = queue if self.extends else ORDERS[self.order](tb, queue, machine.free)
        rows, holds, whole = plan_queue(now, order, self._planned, running, tb.start, tb.demand, tb.estimate,
                                        machine.capacity, self._pt, self._pf, self._res,
                                        self._rows if self.extends else 0)
        self._rows = rows if holds else 0
        self.extended += not whole
        return order

    def schedule(self, now, machine, start):
        tb = self.table
        if not self._q:
            return
        order = self._plan(now, machine)
        # numpy over the queue, Python only for the jobs planned now (measured: the per-job loop
        # was 60 % of fcfs-bf's time on an 8,000-job stream at load 1.3; starting does not touch
        # promised, so setting every promise first is the same)
        res = self._res[order]
        first = np.isnan(tb.promised[order])
        if first.any():
            tb.promised[order[first]] = res[first]
        started, left = set(), np.ones(order.shape[0], dtype=bool)
        due = np.flatnonzero(res <= now).tolist()
        for p in due:
            j = int(order[p])
            if machine.fits(j):
                start(j)
                started.add(j)
                left[p] = False
        if len(started) < len(due):                     # a slot of the plan that was not there (see _plan)
            self._rows = 0
        if started:
            self._q = [j for j in self._q if j not in started]
            res = res[left]
        self._planned = len(self._q)
        self._wake = wake_time(now, [float(res.min())] if res.size else [])

    def wakeup(self):
        return self._wake


for _name in ORDERS:                       # module attributes, named as their classes: their objects pickle
    _doc = f"{_name.upper()} priority order with backfilling ([zhang-comparative] section 3)."
    globals()[f"{_name.upper()}Backfill"] = register_policy(f"{_name}-bf", fast=ORDERS_RULE[_name])(type(
        f"{_name.upper()}Backfill", (OrderedBackfill,), {"order": _name, "extends": _name == "fcfs",
                                                         "__module__": __name__, "__doc__": _doc}))
