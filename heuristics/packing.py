"""Packing heuristics: which queued jobs start now on a K-resource machine.

Every function takes a :class:`~epochbench.instances.packing.PackingInstance` and returns
the indices of the jobs it starts, in the order it picks them.  All respect
the instance's reservation when it has one (a job flagged as running past the
shadow time must also fit in what is left of ``extra``), so they serve as the
backfill step of EASY-style policies.

Applied epoch after epoch, each one also solves an ``epochs`` instance
(:func:`epochs_by`), registered under the same name.
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.packing import EpochsInstance, PackingInstance
from epochbench.instances.packing import epochs_by  # noqa: F401  (re-exported)
from epochbench.instances.registry import register

from . import _greedy
# BB's and BL's options, read where the compiled event loop reads them too (epochbench.sim.greedy_fast)
from ._greedy import DEFAULT_FULLNESS, FULLNESS, fullness_mode, window_code as _window  # noqa: F401


# ---- greedy rules (compiled kernel in heuristics/_greedy.py) ---------------------
def _resource(resource, k: int) -> int:
    """LOS's resource, checked: an integer in 0..K-1."""
    if isinstance(resource, bool) or not isinstance(resource, (int, np.integer)) or not 0 <= resource < k:
        raise ValueError(f"option 'resource' must be an integer in 0..{k - 1} (K = {k}), got {resource!r}")
    return int(resource)


# ---- parameter checks before a run (``check_params`` hooks, :mod:`epochbench.methods`) ----
def _check_bb(inst, fullness=DEFAULT_FULLNESS) -> None:
    fullness_mode(fullness)


def _check_bl(inst, window=1, fullness=DEFAULT_FULLNESS) -> None:
    _window(window, inst.k)
    fullness_mode(fullness)


def _check_los(inst, resource=0) -> None:
    _resource(resource, inst.k)


def _run(inst: PackingInstance, rule: int, window: int = 1, fullness="off") -> list[int]:
    res = inst.reservation
    k = inst.k
    extra = res.extra.astype(np.int64) if res is not None else np.zeros(k, dtype=np.int64)
    flag = res.past_shadow.copy() if res is not None else np.zeros(inst.n, dtype=bool)
    # fresh writable copies: numba compiles read-only arrays as another type
    picked = _greedy.select(np.array(inst.demand.T, order="C"), inst.capacity.astype(np.float64),
                            inst.free.astype(np.int64), extra, flag, res is not None, rule,
                            _window(window, k), fullness_mode(fullness))
    return picked.tolist()


@register("packing", "fcfs")
def fcfs(inst: PackingInstance) -> list[int]:
    """FCFS ([vadhiyar-notes] "Scheduling policies"; [leinberger1999] fig. 1): start jobs in
    queue order and stop at the first one that does not fit.  O(n K).

    Parameters
    ----------
    inst : PackingInstance
        The epoch: ``capacity`` and ``used`` (K), the queue's ``demand`` (n x K),
        optionally the head's reservation (``epochbench.instances.packing``).

    Returns
    -------
    list of int
        Indices of the jobs to start now, in pick order (checked by
        ``check_packing``).

    Notes
    -----
    Cost: O(n K).

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    .. [leinberger1999] W. Leinberger, G. Karypis, V. Kumar. Job Scheduling in the Presence of
       Multiple Resource Requirements. Technical Report TR 99-025 (revised May 27, 1999), Department
       of Computer Science and Engineering, University of Minnesota, 1999.
    """
    return _run(inst, _greedy.FCFS)


@register("packing", "ff")
def first_fit(inst: PackingInstance) -> list[int]:
    """First fit, FCFS/FF ([leinberger1999] section 1): scan the whole queue in order
    and start every job that fits in what is left.  O(n K).

    Parameters
    ----------
    inst : PackingInstance
        The epoch: ``capacity`` and ``used`` (K), the queue's ``demand`` (n x K),
        optionally the head's reservation (``epochbench.instances.packing``).

    Returns
    -------
    list of int
        Indices of the jobs to start now, in pick order (checked by
        ``check_packing``).

    Notes
    -----
    Cost: O(n K).

    References
    ----------
    .. [leinberger1999] W. Leinberger, G. Karypis, V. Kumar. Job Scheduling in the Presence of
       Multiple Resource Requirements. Technical Report TR 99-025 (revised May 27, 1999), Department
       of Computer Science and Engineering, University of Minnesota, 1999.
    """
    return _run(inst, _greedy.FF)


@register("packing", "bestfit")
def best_fit(inst: PackingInstance) -> list[int]:
    """Best fit, BFit ([zhang-comparative] section 3): repeatedly start the job that
    leaves the smallest fragment, the sum over resources of the capacity
    share left idle.  O(picks * n K).

    Parameters
    ----------
    inst : PackingInstance
        The epoch: ``capacity`` and ``used`` (K), the queue's ``demand`` (n x K),
        optionally the head's reservation (``epochbench.instances.packing``).

    Returns
    -------
    list of int
        Indices of the jobs to start now, in pick order (checked by
        ``check_packing``).

    Notes
    -----
    Cost: O(picks * n K).

    References
    ----------
    .. [zhang-comparative] Y. Zhang, H. Franke, J. E. Moreira, A. Sivasubramaniam. A Comparative
       Analysis of Space- and Time-Sharing Techniques for Parallel Job Scheduling in Large Scale
       Parallel Systems. manuscript, The Pennsylvania State University and IBM T. J. Watson Research
       Center (undated).
    """
    return _run(inst, _greedy.BESTFIT)


@register("packing", "worstfit")
def worst_fit(inst: PackingInstance) -> list[int]:
    """Worst fit, WFit ([zhang-comparative] section 3): repeatedly start the job that
    leaves the largest fragment, i.e. the smallest job first.  O(picks * n K).

    Parameters
    ----------
    inst : PackingInstance
        The epoch: ``capacity`` and ``used`` (K), the queue's ``demand`` (n x K),
        optionally the head's reservation (``epochbench.instances.packing``).

    Returns
    -------
    list of int
        Indices of the jobs to start now, in pick order (checked by
        ``check_packing``).

    Notes
    -----
    Cost: O(picks * n K).

    References
    ----------
    .. [zhang-comparative] Y. Zhang, H. Franke, J. E. Moreira, A. Sivasubramaniam. A Comparative
       Analysis of Space- and Time-Sharing Techniques for Parallel Job Scheduling in Large Scale
       Parallel Systems. manuscript, The Pennsylvania State University and IBM T. J. Watson Research
       Center (undated).
    """
    return _run(inst, _greedy.WORSTFIT)


@register("packing", "bb")
def backfill_balanced(inst: PackingInstance, fullness: str = DEFAULT_FULLNESS) -> list[int]:
    """Backfill Balanced, BB ([leinberger1999] section 2.2).

    Repeatedly starts the fitting job with the lowest score built from the
    max/average balance measure b of U + R (U: machine utilisation, R: the
    job's requirement, both as capacity shares) and the fullness modifier
    f = 1 - mean(U + R).  ``fullness`` (:data:`FULLNESS`): ``scaled``
    (default) ``b * f``, so a job that nearly fills the machine wins over a
    better-balanced small one, as the paper says; ``excess`` ``(b - 1) * f``
    (the earlier reading: a perfectly balanced job scores 0 and always wins);
    ``off`` b alone; a bool means default / off
    (:func:`epochbench.heuristics._greedy.balance_score` explains the readings).  Ties go
    to the earlier job.  O(picks * n K).

    Parameters
    ----------
    inst : PackingInstance
        The epoch: ``capacity`` and ``used`` (K), the queue's ``demand`` (n x K),
        optionally the head's reservation (``epochbench.instances.packing``).
    fullness : str, default DEFAULT_FULLNESS
        As described above.

    Returns
    -------
    list of int
        Indices of the jobs to start now, in pick order (checked by
        ``check_packing``).

    Notes
    -----
    Cost: O(picks * n K).

    References
    ----------
    .. [leinberger1999] W. Leinberger, G. Karypis, V. Kumar. Job Scheduling in the Presence of
       Multiple Resource Requirements. Technical Report TR 99-025 (revised May 27, 1999), Department
       of Computer Science and Engineering, University of Minnesota, 1999.
    """
    return _run(inst, _greedy.BB, fullness=fullness)


@register("packing", "bl")
def backfill_lowest(inst: PackingInstance, window: int = 1, fullness: str = DEFAULT_FULLNESS) -> list[int]:
    """Backfill Lowest, BL, windowed ([leinberger1999] section 2.2; ``window = 1`` is the
    paper's BL).

    ``window`` is the paper's w, ``0 <= w <= K - 1``: the job's w largest
    requirements should lie on the w least-utilised resources; its mismatch
    m is the share that does not.  w = 0 (and any w >= K) checks nothing:
    every job matches.  Without the modifier (``fullness="off"``) BL starts
    the first job with the lowest m, so it degrades to first fit.  With the
    fullness modifier f = 1 - mean(U + R) (:data:`FULLNESS`): ``scaled``
    (default) ``(1 + m) * f``, so a non-matching job that nearly fills the
    machine beats a matching small one; ``excess`` ``m * f`` (the earlier
    reading: a matching job always wins)
    (:func:`epochbench.heuristics._greedy.lowest_score`).  O(picks * n K (window + 1)).

    Parameters
    ----------
    inst : PackingInstance
        The epoch: ``capacity`` and ``used`` (K), the queue's ``demand`` (n x K),
        optionally the head's reservation (``epochbench.instances.packing``).
    window : int, default 1
        As described above.
    fullness : str, default DEFAULT_FULLNESS
        See above.

    Returns
    -------
    list of int
        Indices of the jobs to start now, in pick order (checked by
        ``check_packing``).

    Notes
    -----
    Cost: O(picks * n K (window + 1)).

    References
    ----------
    .. [leinberger1999] W. Leinberger, G. Karypis, V. Kumar. Job Scheduling in the Presence of
       Multiple Resource Requirements. Technical Report TR 99-025 (revised May 27, 1999), Department
       of Computer Science and Engineering, University of Minnesota, 1999.
    """
    return _run(inst, _greedy.BL, window=window, fullness=fullness)


# ---- LOS dynamic programming ([vadhiyar-notes]) ------------------------------------------
#: largest LOS table (bytes) built: the DP is pseudo-polynomial in the free capacity
LOS_TABLE_BYTES = 2**31


def _los_table_fits(nbytes: int, shape: str) -> None:
    """Refuse, in one line, a LOS table over :data:`LOS_TABLE_BYTES`."""
    if nbytes > LOS_TABLE_BYTES:
        raise ValueError(f"los: its dynamic-programming table ({shape} cells, {nbytes / 2**30:.3g} GiB) is "
                         f"over the {LOS_TABLE_BYTES / 2**30:.3g} GiB limit; LOS is pseudo-polynomial in the "
                         "free capacity, so express the resource in coarser units")


def los_matrix(sizes, free: int) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 of [vadhiyar-notes] (LOS, constructing M).

    Returns ``(util, selected)``, both of shape ``(len(sizes) + 1, free + 1)``:
    ``util[i, j]`` is the most processors jobs 1..i can use with j free,
    ``selected[i, j]`` whether job i is chosen there.  One vectorised row per
    job: O(q * n) work, O(q * n) memory.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    q, n = sizes.shape[0], int(free)
    _los_table_fits(9 * (q + 1) * (n + 1), f"{q + 1} x {n + 1}")
    util = np.zeros((q + 1, n + 1), dtype=np.int64)
    sel = np.zeros((q + 1, n + 1), dtype=bool)
    for i, s in enumerate(sizes, start=1):
        prev = util[i - 1]
        util[i] = prev
        if 0 < s <= n:
            cand = prev[: n + 1 - s] + s
            better = cand > prev[s:]
            sel[i, s:] = better
            util[i, s:] = np.where(better, cand, prev[s:])
    return util, sel


def los_trace(sizes, selected: np.ndarray) -> list[int]:
    """Algorithm 2 of [vadhiyar-notes] (constructing S): follow the flags back from the
    last cell.  Returns 0-based job indices in queue order."""
    sizes = np.asarray(sizes, dtype=np.int64)
    i, j, out = selected.shape[0] - 1, selected.shape[1] - 1, []
    while i > 0 and j > 0:
        if selected[i, j]:
            out.append(i - 1)
            j -= int(sizes[i - 1])
        i -= 1
    return out[::-1]


def los_reserved(sizes, past_shadow, free: int, extra: int) -> list[int]:
    """LOS with the head-of-queue reservation ([vadhiyar-notes] "Freedom from
    starvation"; Shmueli and Feitelson's reservation DP).

    Maximises the processors used subject to ``sum(size) <= free`` and, over
    the jobs still running at the shadow time, ``sum(size) <= extra``.  The DP
    runs over (free, extra) pairs: O(q * free * extra).  Returns queue order.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    flags = np.asarray(past_shadow, dtype=bool)
    n, e = int(free), int(min(extra, free))
    _los_table_fits((sizes.shape[0] + 8) * (n + 1) * (e + 1), f"{sizes.shape[0]} x {n + 1} x {e + 1}")
    util = np.zeros((n + 1, e + 1), dtype=np.int64)
    sel = np.zeros((sizes.shape[0], n + 1, e + 1), dtype=bool)
    for i, s in enumerate(sizes):
        s = int(s)
        if s <= 0 or s > n or (flags[i] and s > e):
            continue
        de = s if flags[i] else 0
        cand = util[: n + 1 - s, : e + 1 - de] + s
        cur = util[s:, de:]
        better = cand > cur
        sel[i, s:, de:] = better
        util[s:, de:] = np.where(better, cand, cur)
    out, j, x = [], n, e
    for i in range(sizes.shape[0] - 1, -1, -1):
        if sel[i, j, x]:
            out.append(i)
            j -= int(sizes[i])
            x -= int(sizes[i]) if flags[i] else 0
    return out[::-1]


@register("packing", "los")
def los(inst: PackingInstance, resource: int = 0) -> list[int]:
    """LOS, the Lookahead Optimizing Scheduler ([vadhiyar-notes], algorithms 1 and 2).

    Dynamic programming over the free processors (resource ``resource``)
    selects the job set that uses the most of them; with a reservation the DP
    also keeps the jobs running past the shadow time within ``extra``.  Exact
    for K = 1.  For K > 1 (an epochbench extension) the DP sees only that
    resource: its set is then kept in queue order as far as it fits on every
    resource, and the rest of the queue is first-fitted (which also starts
    jobs of size 0, never chosen by the DP).  Returns queue order.

    An epoch without a reservation is algorithm 1's: the head is one job
    among the others and may be left waiting where another set uses more
    processors (the notes' "Starvation" slide).  The starvation-free rule
    ("Freedom from Starvation": start the head if it fits, else reserve it)
    is the scheduler's: the simulator's ``los`` policy starts the heads that
    fit first and asks LOS only with the blocked head's reservation, and
    the ``los`` generator gives a blocked head that reservation.

    Parameters
    ----------
    inst : PackingInstance
        The epoch: ``capacity`` and ``used`` (K), the queue's ``demand`` (n x K),
        optionally the head's reservation (``epochbench.instances.packing``).
    resource : int, default 0
        As described above.

    Returns
    -------
    list of int
        Indices of the jobs to start now, in pick order (checked by
        ``check_packing``).

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    """
    resource = _resource(resource, inst.k)
    res = inst.reservation
    free = inst.free.astype(np.int64)
    extra = res.extra.astype(np.int64) if res is not None else np.zeros(inst.k, dtype=np.int64)
    flag = res.past_shadow if res is not None else np.zeros(inst.n, dtype=bool)
    alone = (inst.demand <= free).all(axis=1) & (~flag | (inst.demand <= extra).all(axis=1))
    sizes = np.where(alone, inst.demand[:, resource], 0)
    if res is None:
        chosen = los_trace(sizes, los_matrix(sizes, int(free[resource]))[1])
    else:
        chosen = los_reserved(sizes, flag, int(free[resource]), int(extra[resource]))
    picked = []
    for j in chosen:  # K > 1: keep the DP's jobs, in queue order, while they fit
        d = inst.demand[j]
        if (d <= free).all() and (not flag[j] or (d <= extra).all()):
            picked.append(j)
            free = free - d
            extra = extra - d if flag[j] else extra
    rest = np.setdiff1d(np.arange(inst.n), picked)
    fill = _greedy.select(np.array(inst.demand[rest].T, order="C"), inst.capacity.astype(np.float64),
                          free, extra, flag[rest], res is not None, _greedy.FF, 1, _greedy.OFF)
    return picked + rest[fill].tolist()


backfill_balanced.check_params = _check_bb
backfill_lowest.check_params = _check_bl
los.check_params = _check_los


# ---- epochs: every packing heuristic also solves ``epochs`` ----------------------
# (epoch after epoch, :func:`epochbench.instances.packing.epochs_by`; the
# registry derives the ``epochs`` method of each packing heuristic on lookup)


def warm_up() -> None:
    """Load the compiled kernel (from numba's cache, or compile it) once, so
    that the first timed decision does not pay for it.  The registry calls
    it before the first timed solve of a method that names it
    (``func.warm_up``); not at import, so that importing or listing the
    methods does not load numba's compiler."""
    if _WARM:
        return
    tiny = PackingInstance.build([2], [[1]], meta={"name": "warm-up"})
    for rule in (_greedy.FF, _greedy.BB, _greedy.BL):
        _run(tiny, rule, fullness=DEFAULT_FULLNESS)
    _WARM.append(True)


_WARM: list = []
for _func in (fcfs, first_fit, best_fit, worst_fit, backfill_balanced, backfill_lowest):
    _func.warm_up = warm_up
