"""Metrics of a simulated run, per job and summarised (issue 3 item 4).

Input is the simulator's per-job result table: at least ``id, submit, start,
end, procs, duration`` (``estimate``, ``runtime`` and ``res_<name>`` columns
are carried along), times in seconds.  Notation of [zhang-comparative] section 2.3:
t^a = submit, t^s = start, t^f = end, t^e = duration (execution time in a
dedicated setting: the run time, cut at the estimate when jobs are killed
there), n = procs, N = capacity[0].  Everything is vectorised: O(n log n) for
the sorts, well under a second for 250,000 jobs.  A result table is a
DataFrame or numpy :class:`~epochbench.instances.table.Columns` (what the
fast path produces, so that a run needs no pandas); :func:`per_job` returns
the same kind it is given.
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import kernels_loaded, njit
from epochbench.instances.table import Columns, as_columns, in_arrival_order

TAU = 10.0  # [zhang-comparative] section 2.3: Gamma = 10 s
NEEDED = ("id", "submit", "start", "end", "procs", "duration")


def _col(table, name: str, out: np.ndarray | None = None) -> np.ndarray:
    """Column ``name`` of a DataFrame or :class:`Columns` as float64: the
    column itself when it is, else a converted copy (into ``out``, a float64
    array as long, when given: no new array)."""
    values = np.asarray(table[name])
    if out is None or values.dtype == np.float64:
        return np.asarray(values, dtype=np.float64)
    np.copyto(out, values, casting="unsafe")
    return out


def _check(result) -> None:
    missing = [c for c in NEEDED if c not in result.columns]
    if missing:
        raise ValueError(f"result table lacks column(s) {missing}")


def _capacity(workload) -> np.ndarray:
    """``workload.capacity`` of a :class:`~epochbench.instances.jobs.Workload`, or the capacity itself."""
    return np.atleast_1d(np.asarray(getattr(workload, "capacity", workload), dtype=np.int64))


def _resources(workload, k: int) -> tuple:
    return tuple(getattr(workload, "resources", ("procs", *(f"r{i}" for i in range(1, k)))))


def requirement(result, workload=None, *, out: np.ndarray | None = None) -> np.ndarray:
    """The resource requirement of each job in node equivalents: ``procs`` for
    K = 1; for K > 1, N x the mean over the K resources of the fraction of each
    that the job holds (so a job holding all of every resource weighs N).
    [leinberger1999] section 3.2 weighs a job by "its resource requirement"
    without saying how K of them combine; the mean share is the packing
    objective's measure (:meth:`~epochbench.instances.packing.PackingInstance.weights`),
    and the largest share (the workload's job size) or the processors alone
    move BB's and BL's measured gains by up to about 2 points.
    ``out``: a float64 work array (as long) that may hold the converted ``procs``."""
    procs = _col(result, "procs", out)
    if workload is None:
        return procs
    cap = _capacity(workload)
    names = _resources(workload, len(cap))
    if len(cap) == 1:
        return procs
    frac = procs / cap[0]
    for k, name in enumerate(names[1:], start=1):
        frac = frac + _col(result, f"res_{name}") / cap[k]
    return cap[0] * frac / len(cap)


def out_of_order(submit, job_id, start) -> np.ndarray:
    """Flags the jobs started out of arrival order: job j is flagged iff some job
    i that arrived earlier ((submit_i, id_i) < (submit_j, id_j)) started later
    (start_i > start_j).  One lexsort (none for a table in arrival order) and a
    compiled running maximum: O(n log n)."""
    submit, job_id, start = (np.asarray(a) for a in (submit, job_id, start))
    flags = np.empty(len(submit), dtype=bool)
    start, order = start.astype(np.float64, copy=False), _arrival_order(submit, job_id)
    if not kernels_loaded():
        flags[order if order.shape[0] else slice(None)] = _late_numpy(start, order)
        return flags
    _started_late(start, order, flags)
    return flags


def _late_count(submit, job_id, start) -> int:
    """The number of jobs :func:`out_of_order` flags, without the flags."""
    order = _arrival_order(submit, job_id)
    if not kernels_loaded():
        return int(np.count_nonzero(_late_numpy(start, order)))
    return int(_started_late(start, order, np.empty(0, dtype=bool)))


def _late_numpy(start, order) -> np.ndarray:
    """:func:`_started_late`'s flags in arrival order, by numpy (for a process
    that has not loaded the compiled kernels): the running maximum of the
    starts before each job (``maximum.accumulate``, NaN wins as in the
    kernel) compared with its start.  The same comparisons, so the same flags."""
    s = start if order.shape[0] == 0 else start[order]
    before = np.empty_like(s)
    if len(s):
        before[0] = -np.inf
        np.maximum.accumulate(s[:-1], out=before[1:])
    return before > s


def _arrival_order(submit: np.ndarray, job_id: np.ndarray) -> np.ndarray:
    """Rows by (submit, id); empty when they already are (no sort, no index array)."""
    return np.empty(0, dtype=np.int64) if in_arrival_order(submit, job_id) else np.lexsort((job_id, submit))


@njit(cache=True, nogil=True, inline="always")
def _at(order, i):
    """Row ``i`` of an ordering: ``order[i]``, or ``i`` itself when ``order`` is
    empty (rows already in that order: no index array)."""
    return i if order.shape[0] == 0 else order[i]


@njit(cache=True, nogil=True)
def _started_late(start, order, flags):
    """Jobs, in arrival order (``order``, or row order when it is empty),
    started before the latest start of the jobs before them: the count, and
    ``flags[row]`` for each when ``flags`` is not empty.  The running maximum
    is numpy's ``maximum.accumulate`` (a NaN start makes every later
    comparison false)."""
    n = start.shape[0]
    write = flags.shape[0] > 0
    top = -np.inf
    count = 0
    for i in range(n):
        row = _at(order, i)
        s = start[row]
        late = top > s
        count += late
        if write:
            flags[row] = late
        if top == top and not (s <= top):          # np.maximum: NaN wins
            top = s
    return count


def per_job(result, workload=None, *, tau: float = TAU):
    """Per-job metrics: the result's ``id, submit, start, end, procs, duration``
    plus

    - ``wait`` = t^s - t^a and ``response`` = t^f - t^a ([zhang-comparative] section 2.3);
    - ``bsld`` = max(t^r, tau) / max(t^e, tau), the bounded slowdown of [zhang-comparative]
      section 2.3 with Gamma = tau = 10 s (equal to max(t^r / max(t^e, tau), 1)
      whenever t^r >= t^e, which always holds);
    - ``weight`` = requirement x t^e ([leinberger1999] section 3.2; see
      :func:`requirement`) and ``weighted_response`` = weight x response;
    - ``out_of_order``: started before some job that arrived earlier
      (:func:`out_of_order`).
    """
    _check(result)
    frame = not isinstance(result, Columns)
    base = as_columns(result).select(NEEDED)
    submit, start, end = (_col(base, c) for c in ("submit", "start", "end"))
    execution = _col(base, "duration")
    response = end - submit
    weight = requirement(result, workload) * execution
    out = base.assign(wait=start - submit, response=response,
                      bsld=np.maximum(response, tau) / np.maximum(execution, tau),
                      weight=weight, weighted_response=weight * response,
                      out_of_order=out_of_order(submit, np.asarray(base["id"]), start))
    return out.to_frame() if frame else out


def step_function(times_up, amount_up, times_down, amount_down, grid=None) -> tuple[np.ndarray, np.ndarray]:
    """A counter that rises by ``amount_up`` at ``times_up`` and falls by
    ``amount_down`` at ``times_down``, as (grid, value): value[k] holds on
    [grid[k], grid[k+1]), after every change at grid[k].  ``grid`` defaults to
    the sorted distinct event times and must contain them all.  O(n log n)."""
    up, down = np.asarray(times_up, dtype=np.float64), np.asarray(times_down, dtype=np.float64)
    if grid is None:
        grid = np.unique(np.concatenate((up, down)))
    delta = np.bincount(np.searchsorted(grid, up), weights=np.broadcast_to(amount_up, up.shape),
                        minlength=len(grid))[:len(grid)]
    delta -= np.bincount(np.searchsorted(grid, down), weights=np.broadcast_to(amount_down, down.shape),
                         minlength=len(grid))[:len(grid)]
    return grid, np.cumsum(delta)


def busy_over_time(result, column: str = "procs", grid=None):
    """Units of ``column`` held by running jobs over time, as :func:`step_function`;
    a job holds its units on [start, end) (space sharing)."""
    amount = _col(result, column)
    return step_function(result["start"], amount, result["end"], amount, grid)


def queue_over_time(result, grid=None):
    """Number of jobs waiting (submitted, not started) over time, as :func:`step_function`."""
    return step_function(result["submit"], 1.0, result["start"], 1.0, grid)


def _horizon(result) -> tuple[float, float]:
    """(first arrival, t^f_m - first arrival): [zhang-comparative] eq. 1 puts the first arrival at t = 0.
    A job that never ended (NaN) leaves no t^f_m: NaN, from a DataFrame as from
    Columns (pandas' ``max`` skipped the NaN, and a DataFrame's utilization
    counted the unrun job's work over the others' span: 1.0 where Columns gave NaN)."""
    t0 = float(np.min(np.asarray(result["submit"], dtype=float)))
    return t0, float(np.max(np.asarray(result["end"], dtype=float))) - t0


def utilization(result, workload, column: str = "procs", *, out: np.ndarray | None = None) -> float:
    """rho = sum_i n_i t^e_i / (N x t^f_m), [zhang-comparative] eq. 1, time measured from the
    first arrival; for ``column = "res_<name>"`` the same with that resource's
    amounts and capacity.  NaN for an empty or zero-length run, and for one
    with a job that never ended (no t^f_m).  ``out``: a
    float64 work array (as long) that may hold the converted amounts and
    their products.

    The sum is numpy's pairwise sum of the products, in one order on every
    machine.  ``np.dot`` (BLAS) splits a long sum between its threads, so
    its last bits changed with the machine's core count and
    ``OPENBLAS_NUM_THREADS`` (200,000 jobs of fractional durations: 1 and
    2 threads differed; whole-second work, as KTH's, sums exactly either
    way)."""
    if len(result) == 0:
        return float("nan")
    cap = _capacity(workload)
    k = 0 if column == "procs" else 1 + _resources(workload, len(cap))[1:].index(column[4:])
    _, span = _horizon(result)
    work = float(np.sum(np.multiply(_col(result, column, out), _col(result, "duration"), out=out)))
    return work / float(cap[k] * span) if span > 0 else float("nan")


def capacity_loss(result, workload) -> float:
    """kappa = sum_i e_i (psi_{i+1} - psi_i) delta_i / (t^f_m x N), [zhang-comparative] eq. 2
    (purely space-shared machine): the node-time left empty while at least one
    job waits, over N x t^f_m.  The psi are the distinct submit, start and end
    times (starts coincide with arrivals or terminations under continuous
    scheduling; adding them as breakpoints changes nothing then and is exact
    otherwise); e_i and delta_i are taken after all events at psi_i.
    O(n log n): three sorts (none for a table in submit order) and a compiled
    sweep.  NaN for an empty or zero-length run, when a time is NaN (a
    job that never started: the sweep has no place for it), and when the
    jobs hold more than N nodes at some time: they share nodes in time (a
    gang run's table), where eq. 2's idle nodes N - busy go negative; its
    capacity loss is eq. 3 (:func:`epochbench.sim.gang.summarize_gang`)."""
    if len(result) == 0:
        return float("nan")
    nodes = float(_capacity(workload)[0])
    t0, span = _horizon(result)
    if not span > 0:
        return float("nan")
    submit, start, end = (_col(result, c) for c in ("submit", "start", "end"))
    if np.isnan(submit).any() or np.isnan(start).any() or np.isnan(end).any():
        return float("nan")
    procs = np.asarray(result["procs"], dtype=np.int64)
    if not kernels_loaded():
        return _empty_numpy(submit, start, end, procs, int(nodes)) / (nodes * span)
    # stable sorts: timsort on times nearly in order (starts, ends) is quicker than quicksort (5M
    # starts: 0.05 s, not 0.09 s); ties may come in any order (the sweep takes all events at a time at once)
    by_submit = np.empty(0, dtype=np.int64) if _sorted(submit) else np.argsort(submit, kind="stable")
    empty = _empty_while_waiting(submit, start, end, procs, by_submit, np.argsort(start, kind="stable"),
                                 np.argsort(end, kind="stable"), int(nodes))
    return empty / (nodes * span)


def _sorted(values: np.ndarray) -> bool:
    return bool((values[1:] >= values[:-1]).all())


@njit(cache=True, nogil=True)
def _empty_while_waiting(submit, start, end, procs, by_submit, by_start, by_end, nodes):
    """Node-time left empty while a job waits: one sweep over the submit,
    start and end times in time order (the ``by_*`` orders; an empty
    ``by_submit``: the rows are in submit order), adding
    (nodes - busy) x (psi_{i+1} - psi_i) over the intervals between
    consecutive distinct times where a job waits; busy and waiting counted
    after all events at psi_i; NaN where busy exceeds ``nodes`` (the jobs
    share nodes in time: eq. 2 does not apply).  O(n) after the sorts; busy and queue length
    are integers, so every term is exact and only the order of the sum
    differs from a dot product over the grid."""
    n = submit.shape[0]
    a = b = c = 0
    busy = queued = 0
    total = 0.0
    t = -np.inf
    while a < n or b < n or c < n:
        ta = submit[_at(by_submit, a)] if a < n else np.inf
        tb = start[by_start[b]] if b < n else np.inf
        tc = end[by_end[c]] if c < n else np.inf
        now = min(ta, tb, tc)
        if queued > 0 and now > t:
            total += float(nodes - busy) * (now - t)
        t = now
        while a < n and submit[_at(by_submit, a)] == now:
            queued += 1
            a += 1
        while b < n and start[by_start[b]] == now:
            queued -= 1
            busy += procs[by_start[b]]
            b += 1
        while c < n and end[by_end[c]] == now:
            busy -= procs[by_end[c]]
            c += 1
        if busy > nodes:
            return np.nan  # more nodes held than the machine has: time sharing
    return total


def _empty_numpy(submit, start, end, procs, nodes) -> float:
    """:func:`_empty_while_waiting` by numpy, for a process that has not
    loaded the compiled kernels: the event times sorted, the queue length
    and busy nodes after the last event at each distinct time (cumulative
    sums of integers, exact), and the same terms (nodes - busy) x (psi_{i+1}
    - psi_i) where a job waits, added in the same order (``cumsum`` adds
    sequentially; the terms where none waits are 0.0, which leaves a sum of
    non-negative terms unchanged): the same float, bit for bit.  Times must
    not be NaN (:func:`capacity_loss` returns NaN before)."""
    n = len(submit)
    times = np.concatenate((submit, start, end))
    order = np.argsort(times, kind="stable")
    times = times[order]
    queued = np.cumsum(np.concatenate((np.ones(n, np.int64), np.full(n, -1, np.int64),
                                       np.zeros(n, np.int64)))[order])
    busy = np.cumsum(np.concatenate((np.zeros(n, np.int64), procs, -procs))[order])
    last = np.flatnonzero(np.append(times[1:] != times[:-1], True))   # the last event at each time
    psi, queued, busy = times[last], queued[last], busy[last]
    if (busy > nodes).any():
        return float("nan")                                         # time sharing, as the kernel says
    waiting = queued[:-1] > 0
    with np.errstate(over="ignore", invalid="ignore"):            # inf as the kernel gives it, silently
        terms = (nodes - busy[:-1][waiting]).astype(np.float64) * (psi[1:][waiting] - psi[:-1][waiting])
        return float(np.cumsum(terms)[-1]) if len(terms) else 0.0


def _stats(prefix: str, values: np.ndarray, scratch: np.ndarray) -> dict:
    """Mean, median, 90th percentile (numpy's linear rule), max and
    population std of ``values``, numpy's own figures (bit for bit), with
    ``scratch`` (as long) for the partitions and the std's deviations
    instead of new arrays."""
    if len(values) == 0:
        return {f"{prefix}_{s}": float("nan") for s in ("mean", "median", "p90", "max", "std")}
    part = scratch[:len(values)]
    np.copyto(part, values)
    median = _median(part)                   # part is reordered, not changed: the quantile reads it as is
    return {f"{prefix}_mean": float(values.mean()), f"{prefix}_median": median,
            f"{prefix}_p90": _quantile(part, 0.9),
            f"{prefix}_max": float(values.max()), f"{prefix}_std": _std(values, scratch)}


def _median(part: np.ndarray) -> float:
    """``numpy.median(part, overwrite_input=True)`` of a non-empty float64
    array, step for step as numpy 2 computes it (the same partition, the
    mean of the middle slice, NaN when the last element after the partition
    is NaN), without the ``numpy.ma`` import of numpy's NaN check on first
    use (11 ms of a short ``simulate``).  ``part`` is reordered."""
    h = len(part) // 2
    middle = [h - 1, h] if len(part) % 2 == 0 else [h]
    part.partition([*middle, -1])
    value = part[middle[0]:h + 1].mean()
    return float(part[-1]) if np.isnan(part[-1]) else float(value)


def _quantile(part: np.ndarray, q: float) -> float:
    """``numpy.quantile(part, q, overwrite_input=True)`` (the linear rule)
    of a non-empty float64 array, step for step as numpy 2 computes it: the
    virtual index (n - 1) q, its neighbours (the last element from n - 1
    on), the partition at the unique sorted positions (0, -1, neighbours),
    the two-sided interpolation of ``numpy.lib._function_base_impl._lerp``,
    NaN when the last element after the partition is NaN.  Without the
    ``numpy.ma`` import of the ``numpy.unique`` that numpy's quantile calls
    (14 ms of a short ``simulate``).  ``part`` is reordered."""
    n = len(part)
    v = (n - 1) * q
    lo = -1 if v >= n - 1 else int(np.floor(v))
    hi = -1 if lo < 0 else lo + 1
    part.partition(sorted({0, -1, lo, hi}))
    a, b, t = part[lo], part[hi], v - lo
    d = b - a
    value = b - d * (1 - t) if t >= 0.5 else a + d * t
    return float(part[-1]) if np.isnan(part[-1]) else float(value)


def _std(values: np.ndarray, scratch: np.ndarray) -> float:
    """``values.std()`` computed as numpy computes it (the mean, the squared
    deviations, their sum over the count) with the deviations in ``scratch``
    (which may be ``values`` itself)."""
    dev = np.subtract(values, values.mean(), out=scratch[:len(values)])
    np.square(dev, out=dev)
    return float(np.sqrt(dev.sum() / len(values)))


def summarize(result, workload, small_threshold: int = 32, *, tau: float = TAU) -> dict:
    """One flat dict of run metrics: Python floats and ints, NaN where a
    figure is undefined (``small_*`` / ``large_*`` with no job on that side
    of ``small_threshold``: ``small_threshold=0`` leaves no small job);
    ``json.dumps`` writes NaN as the non-standard ``NaN`` (with
    ``allow_nan=False`` it refuses it), the command line's ``--json`` and
    ``report.json`` as ``null`` (:func:`epochbench.sim.runner.to_json`).

    - ``jobs``; ``makespan`` = t^f_m - first arrival ([zhang-comparative] eq. 1's t^f_m);
    - ``wait_*``, ``response_*``, ``bsld_*`` with ``*`` in mean, median, p90, max, std
      (population std, ddof = 0; [zhang-comparative] section 2.3 reads the std as fairness);
    - ``weighted_response`` = mean over jobs of weight x response, exactly seed
      000 section 3.2 (unit node x s^2, compare only on one workload), and
      ``weighted_response_norm`` = sum(weight x response) / sum(weight), the same
      weighting normalised back to seconds;
    - ``utilization`` ([zhang-comparative] eq. 1), ``utilization_<name>`` per extra
      resource, ``capacity_loss`` (eq. 2);
    - ``small_*`` / ``large_*``: jobs, mean and std of wait and bounded slowdown
      for jobs with procs <= ``small_threshold`` and above ([zhang-comparative] section 2.2:
      small jobs use 32 or fewer nodes);
    - ``out_of_order_jobs`` and ``out_of_order_share`` (:func:`out_of_order`).
    """
    if isinstance(small_threshold, bool) or not isinstance(small_threshold, (int, np.integer)) or small_threshold < 0:
        raise ValueError(f"small_threshold: processors, an integer >= 0, got {small_threshold!r}")
    result = as_columns(result)
    _check(result)
    n = len(result)
    if not kernels_loaded():                 # numpy's capacity loss holds the GIL: no thread
        return _summary(result, workload, small_threshold, tau, n, _Done(capacity_loss(result, workload)))
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as pool:      # the capacity loss (sorts, a compiled sweep: no GIL) meanwhile
        loss = pool.submit(capacity_loss, result, workload)
        return _summary(result, workload, small_threshold, tau, n, loss)


class _Done:
    """A value as a finished future (``result()``)."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def _summary(result: Columns, workload, small_threshold: int, tau: float, n: int, loss) -> dict:
    """:func:`summarize`'s figures in its order; ``loss``: the capacity loss's future.
    The per-job figures go through two work arrays, reused from one metric to
    the next (the response is computed twice rather than kept in a third): a
    run of millions of jobs allocates, and the kernel zeroes, two columns, not
    one per intermediate."""
    out = {"jobs": int(n), "makespan": _horizon(result)[1] if n else float("nan")}
    submit, start, end, execution = (_col(result, c) for c in ("submit", "start", "end", "duration"))
    small = np.asarray(result["procs"]) <= small_threshold
    parts = {"small": {"small_jobs": int(small.sum())}, "large": {"large_jobs": int(n - small.sum())}}
    values, scratch = np.empty(n), np.empty(n)
    wait = np.subtract(start, submit, out=values)
    out.update(_stats("wait", wait, scratch))
    _split_stats(parts, "wait", wait, small, scratch)
    response = np.subtract(end, submit, out=values)
    out.update(_stats("response", response, scratch))
    np.maximum(response, tau, out=values)
    bsld = np.divide(values, np.maximum(execution, tau, out=scratch), out=values)
    out.update(_stats("bsld", bsld, scratch))
    _split_stats(parts, "bsld", bsld, small, scratch)
    weight = np.multiply(requirement(result, workload, out=scratch), execution, out=scratch)
    wresp = np.multiply(weight, np.subtract(end, submit, out=values), out=values)
    out["weighted_response"] = float(wresp.mean()) if n else float("nan")
    out["weighted_response_norm"] = float(wresp.sum() / weight.sum()) if weight.sum() > 0 else float("nan")
    del weight, wresp, response
    out["utilization"] = utilization(result, workload, out=values)
    cap = _capacity(workload)
    for name in _resources(workload, len(cap))[1:]:
        out[f"utilization_{name}"] = utilization(result, workload, f"res_{name}", out=values)
    del values, scratch
    out["capacity_loss"] = loss.result()
    out.update(parts["small"])
    out.update(parts["large"])
    late = _late_count(submit, np.asarray(result["id"]), start)
    out["out_of_order_jobs"] = late
    out["out_of_order_share"] = late / n if n else float("nan")
    return out


def _split_stats(parts: dict, col: str, values: np.ndarray, small: np.ndarray, scratch: np.ndarray) -> None:
    """Mean and std of ``values`` over the small and the large jobs (``small_wait_mean``, ...),
    each part gathered into ``scratch`` in row order."""
    for prefix, which in (("small", True), ("large", False)):
        part = scratch[:_gather(values, small, which, scratch)] if kernels_loaded() else values[small == which]
        parts[prefix][f"{prefix}_{col}_mean"] = float(part.mean()) if len(part) else float("nan")
        parts[prefix][f"{prefix}_{col}_std"] = _std(part, part) if len(part) else float("nan")


@njit(cache=True, nogil=True)
def _gather(values, mask, which, out):
    """``values[mask == which]`` written to the front of ``out``, in row
    order (what boolean indexing gives, without a new array); returns how many."""
    k = 0
    for i in range(values.shape[0]):
        if mask[i] == which:
            out[k] = values[i]
            k += 1
    return k
