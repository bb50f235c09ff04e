"""EASY on one resource in plain Python: the twin of the compiled event loop
(:func:`epochbench.sim.policies.run_fast`) for short streams (issue 18).

Loading numba and its compiled kernels costs about 0.35 s per process (0.6
to 1.2 s on a loaded machine), more than simulating a trace of tens of
thousands of jobs takes in Python.  Before the kernels are loaded,
:func:`run_fast` therefore runs EASY with one resource here, under a time
budget: a stream whose rest, at the pace so far, would take longer than
loading the kernels is handed to the compiled loop, which starts again from
scratch.  The rule, the order of
every floating-point operation and the tie-breaks are those of the compiled
loop (``_loop`` and ``_easy_pass`` there), so the schedules are identical
bit for bit (``tests/test_sim_face.py`` compares them on random streams,
with and without jobs killed at their estimate).
"""
from __future__ import annotations

import time
from bisect import bisect_left, insort
from heapq import heappop, heappush

#: the pure-Python loop is tried on streams of at most this many jobs ...
PY_MAX_JOBS = 100_000
#: ... and gives up (the compiled loop takes over) as soon as the rest of the
#: stream, projected from the pace so far (jobs arrived), would take longer
#: than this many seconds (about what loading the compiled kernels costs on
#: an idle machine; times the load, :func:`_give_up`): the decision comes
#: early, when little is lost, and a run close to its end is not abandoned on
#: a loaded machine (a fixed 0.3 s limit there cost the whole KTH command
#: about a second) ...
PY_BUDGET_S = 0.4
#: ... or after this many seconds whatever the projection says (a queue that
#: grows late makes the pace so far too optimistic)
PY_CAP_S = 1.6
#: passes between two looks at the clock
_CHECK_EVERY = 2048
#: a pass that started at most this many backfilled jobs deletes them from
#: the queue one by one; more are filtered out in one list
_FEW_STARTS = 8


def _give_up(spent: float, cpu: float, arrived: int, n: int, budget: float, cap: float) -> bool:
    """Whether a run that has taken ``spent`` seconds (``cpu`` of them on
    the processor) for the first ``arrived`` of ``n`` jobs should be
    abandoned: past ``cap``, or when the rest at that pace would take longer
    than ``budget`` times the load (``spent / cpu``, between 1 and 4: on a
    machine shared with other work, loading the compiled kernels is as much
    slower as this loop is)."""
    if spent > cap:
        return True
    load = min(max(spent / cpu, 1.0), 4.0) if cpu > 0 else 1.0
    return spent * (n - arrived) > budget * load * arrived


def easy_python(submit, duration, estimate, ids, procs, capacity: int,
                budget: float = PY_BUDGET_S, cap: float = PY_CAP_S,
                keep: bool | None = None) -> tuple[list, list, int, float] | None:
    """EASY backfilling on one resource, as the compiled loop runs it.

    Parameters
    ----------
    submit, duration, estimate : list of float
        Per job, in arrival order (submit, then id): arrival, time it runs,
        estimate (``duration <= estimate`` when jobs are killed there; a job
        running past its estimate is expected to end now).
    ids : list of int
        Job ids (the tie-break of equal expected ends).
    procs : list of int
        Processors per job, each at most ``capacity``.
    capacity : int
        Processors of the machine.
    budget : float
        The run is abandoned when its rest, projected from the time spent
        per job arrived so far, would take longer than this many seconds
        times the machine's load (:func:`_give_up`).
    cap : float
        Seconds after which the run is abandoned in any case.
    keep : bool, optional
        Whether every ``duration <= estimate`` (the caller may know it from
        its arrays; None: checked here, a Python loop over the jobs).

    Returns
    -------
    (start, promised, passes, last) or None
        Start time and first shadow time (NaN: never the blocked head) of each
        job, the number of passes and the time of the last event; None when
        it was abandoned (``budget``, ``cap``).

    Notes
    -----
    O(q) per pass for a queue of q jobs and O(r) for r running jobs (the
    shadow time), as in the compiled loop; about 2.5 us per job on the KTH
    trace, 7 times the compiled loop's time.  One loop without calls (a
    Python call per pass or per start costs 10 %).

    When no job has ended since the last pass and none runs past its
    estimate, a pass scans the arrivals only: the head is still blocked
    (the free processors only fell), the shadow time and ``extra`` computed
    again would be those the last scan left (a job it started either ends by
    the shadow time or was taken from ``extra``), and every job the last
    scan rejected is rejected again (its ``now + estimate`` only grew, free
    processors and ``extra`` only fell).  The compiled loop scans the whole
    queue and starts the same jobs.
    """
    n = len(submit)
    nan, inf = float("nan"), float("inf")
    start, promised = [nan] * n, [nan] * n
    ends: list = []                   # heap of (end, row)
    running: list = []                # (start + estimate, id, row), sorted
    queue: list = []                  # waiting rows in arrival order; queue[0] is the head
    free, ai, passes, now = capacity, 0, 0, nan
    shadow = extra = nan
    resume = False                    # shadow and extra still hold (see the Notes)
    if keep is None:                                 # no job runs past its estimate
        keep = all(d <= e for d, e in zip(duration, estimate))
    clock, pop, push, locate, insert, every, few = (time.perf_counter, heappop, heappush, bisect_left, insort,
                                                    _CHECK_EVERY, _FEW_STARTS)   # locals: one loop, no calls
    began, began_cpu = clock(), time.process_time()
    while ai < n or ends:
        now = ends[0][0] if ends else inf
        if ai < n and submit[ai] < now:
            now = submit[ai]
        ended = False
        while ends and ends[0][0] == now:
            j = pop(ends)[1]
            free += procs[j]
            del running[locate(running, (start[j] + estimate[j], ids[j], j))]
            ended = True
        first = len(queue)                              # where the arrivals go
        while ai < n and submit[ai] == now:
            queue.append(ai)
            ai += 1
        if not queue:
            continue
        passes += 1
        if passes % every == 0 and _give_up(clock() - began, time.process_time() - began_cpu, ai, n, budget, cap):
            return None
        if not resume or ended:
            p = 0                                       # queue-head jobs while they fit
            while p < len(queue) and procs[queue[p]] <= free:
                j = queue[p]
                start[j] = now
                free -= procs[j]
                push(ends, (now + duration[j], j))
                insert(running, (now + estimate[j], ids[j], j))
                p += 1
            if p:
                del queue[:p]
            resume = bool(queue) and keep
            if not queue:
                continue
            head = queue[0]                             # the shadow time and extra of the head
            need = procs[head]
            acc, shadow, found = free, inf, False
            for expected, _, j in running:
                key = expected if expected > now else now   # max(start + estimate, now)
                if found and key != shadow:
                    break
                acc += procs[j]
                if not found and need <= acc:
                    shadow, found = key, True
            extra = acc - need
            if promised[head] != promised[head]:
                promised[head] = shadow
            first = 1
        started = None                                  # backfill from queue[first] on
        for p in range(first, len(queue)):
            if free <= 0:
                break
            j = queue[p]
            d = procs[j]
            if d > free:
                continue
            if now + estimate[j] <= shadow:
                pass
            elif d <= extra:
                extra -= d
            else:
                continue
            start[j] = now
            free -= d
            push(ends, (now + duration[j], j))
            insert(running, (now + estimate[j], ids[j], j))
            if started is None:
                started = [p]
            else:
                started.append(p)
        if started is not None:
            if len(started) <= few:             # one memmove each (a rebuilt list cost 7 % on KTH)
                for p in reversed(started):
                    del queue[p]
            else:
                queue[started[0]:] = [j for j in queue[started[0]:] if start[j] != start[j]]
    return start, promised, passes, now
