"""BL-EASY and BB-EASY on the compiled event loop.

``bl-easy`` and ``bb-easy`` (:mod:`epochbench.sim.backfill`) are EASY whose
backfill step is the packing heuristic BL or BB of [leinberger1999] section
2.2 (:func:`epochbench.heuristics.packing.backfill_lowest`,
:func:`~epochbench.heuristics.packing.backfill_balanced`) with the blocked
head's reservation.  On the generic engine every step builds a packing
instance, validates it, runs the heuristic and checks its answer: about
250 us a step, 14 s on KTH where EASY takes 0.2 s.  :func:`greedy_select`
makes the same choice inside the compiled loop of :mod:`epochbench.sim.policies`
(rules :data:`BL_RULE`, :data:`BB_RULE`), so that the two engines give
identical schedules (tests/test_sim_engine.py):

* the candidates are the queue after the head, in queue order; a candidate
  is flagged when it would still run at the shadow time (``now + estimate >
  shadow``), and a flagged job must also fit in ``extra`` (clipped at 0, as
  the packing instance clips it);
* each pick scores every open candidate that fits with the heuristic's own
  compiled scores (:func:`epochbench.heuristics._greedy.balance_score`,
  :func:`~epochbench.heuristics._greedy.lowest_score`, their rounding
  bounds :func:`~epochbench.heuristics._greedy._rounding`): the lowest
  wins, scores within both bounds tie and a tie goes to the earlier job,
  exactly as :func:`epochbench.heuristics._greedy.select` picks; a
  candidate that does not fit is closed for good (the free resources and
  ``extra`` only fall);
* the caller starts the picks in pick order.

The heuristic's options (BL's ``window``, the ``fullness`` reading of both)
go to the kernel as numbers (:func:`fast_options`); other
``selector_options`` run on the generic engine, which names what is wrong
with them.  The kernels allocate nothing (:data:`epochbench.sim.profile.JIT`):
the work arrays come from :func:`greedy_work`.

References
----------
.. [leinberger1999] W. Leinberger, G. Karypis, V. Kumar. Job Scheduling in the Presence of
   Multiple Resource Requirements. Technical Report TR 99-025 (revised May 27, 1999), Department
   of Computer Science and Engineering, University of Minnesota, 1999.
"""
from __future__ import annotations

import numpy as np

from epochbench.heuristics._greedy import (BB, BL, SCALED, _rounding, balance_score, fullness_mode, lowest_score,
                                          window_code)
from epochbench.instances.lazy import njit
from .profile import JIT

#: rule codes in the compiled event loop (after fcfs 0, nonfcfs 1, easy 2, conservative 3, los 4)
BL_RULE, BB_RULE = 5, 6
#: the packing heuristic's rule (:mod:`epochbench.heuristics._greedy`) of each loop rule
HEURISTIC = {BL_RULE: BL, BB_RULE: BB}
#: the options each heuristic takes, with their defaults (BL's window is the paper's w = 1)
OPTIONS = {BL_RULE: {"window": 1, "fullness": "scaled"}, BB_RULE: {"fullness": "scaled"}}
#: ``gi`` header: selection steps (backfill steps with candidates), BL's window, the fullness code
STEPS, WINDOW, FULLNESS = 0, 1, 2
#: ``gi[OUT:OUT + m]``: the rows :func:`greedy_select` picked, in pick order
OUT = 3


def fast_options(rule: int, options: dict | None, k: int) -> tuple[int, int] | None:
    """BL's window and the fullness code (:mod:`epochbench.heuristics._greedy`)
    that ``options`` (a policy's ``selector_options``) give the kernel, or
    None when they hold anything else or a value the heuristic refuses (the
    generic engine then runs the step and names the error).

    Parameters
    ----------
    rule : int
        :data:`BL_RULE` or :data:`BB_RULE`.
    options : dict or None
        The selector's options.
    k : int
        Resources (BL's window is clipped to K, as the heuristic clips it).

    Returns
    -------
    tuple of int or None
        ``(window, fullness)``.
    """
    given = {**OPTIONS[rule], **(options or {})}
    if set(given) != set(OPTIONS[rule]):
        return None
    try:
        return window_code(given.get("window", 1), k), fullness_mode(given["fullness"])
    except (ValueError, TypeError, OverflowError):      # the generic engine's step raises it, named
        return None


def greedy_work(n: int, k: int, capacity, used: bool, window: int = 1, fullness: int = SCALED):
    """Work arrays of :func:`greedy_select` for ``n`` jobs on ``k`` resources.

    Parameters
    ----------
    n : int
        Jobs in the stream (bounds the queue).
    k : int
        Resources.
    capacity : array_like
        The machine (K entries).
    used : bool
        False: one-element arrays (a policy other than ``bl-easy`` or ``bb-easy``).
    window, fullness : int
        BL's window and the fullness code (:func:`fast_options`).

    Returns
    -------
    tuple of numpy.ndarray
        ``gi`` (int64: header, picks, open flags of the candidates, free and
        extra copies), ``gf`` (float64: capacity, its scale, utilisation,
        shares; K each) and ``low`` (bool, K: BL's least-used resources).

    Notes
    -----
    Memory O(n + K).
    """
    if not used:
        return np.zeros(OUT + 1, np.int64), np.zeros(1), np.zeros(1, np.bool_)
    cap = np.asarray(capacity, dtype=np.float64)
    gf = np.zeros(4 * k)
    gf[:k] = cap
    gf[k:2 * k] = np.where(cap > 0, cap, 1.0)
    gi = np.zeros(OUT + 2 * n + 2 * k, np.int64)
    gi[WINDOW], gi[FULLNESS] = window, fullness
    return gi, gf, np.zeros(k, np.bool_)


def greedy_stats(gi: np.ndarray) -> dict:
    """The ``selector_stats`` of a run, as the generic policy counts them
    (steps with candidates; a heuristic is never unproven nor falls back).

    Parameters
    ----------
    gi : numpy.ndarray
        The run's integer work array.

    Returns
    -------
    dict
        ``steps``, ``unproven``, ``fallback``, ``rule_better``.
    """
    return {"steps": int(gi[STEPS]), "unproven": 0, "fallback": 0, "rule_better": 0}


@njit(**JIT)
def _fits_now(dem, j, gi, fr, ex, past):
    """Does job j fit in the copies of free (at ``fr``) and, when
    ``past``, of extra (at ``ex``)?"""
    for r in range(dem.shape[1]):
        if dem[j, r] > gi[fr + r]:
            return False
        if past and dem[j, r] > gi[ex + r]:
            return False
    return True


@njit(**JIT)
def greedy_select(now, shadow, q, p0, qt, dem, est, free, extra, rule, gi, gf, low):
    """The jobs of q[p0:qt] that BL or BB (``rule``: :data:`BL_RULE`,
    :data:`BB_RULE`) starts with the reservation (``shadow``, ``extra``),
    as :func:`epochbench.heuristics._greedy.select` picks them.

    Parameters
    ----------
    now, shadow : float
        The time and the blocked head's shadow time.
    q : numpy.ndarray
        The queue (job rows); the candidates are q[p0:qt], in queue order.
    p0, qt : int
        Bounds of the candidates.
    dem : numpy.ndarray
        Demands (n x K).
    est : numpy.ndarray
        Estimates.
    free, extra : numpy.ndarray
        Free resources now and the head's ``extra`` (K; read, not written).
    rule : int
        :data:`BL_RULE` or :data:`BB_RULE`.
    gi, gf, low : numpy.ndarray
        Work arrays (:func:`greedy_work`).

    Returns
    -------
    int
        m, the picked rows being ``gi[OUT:OUT + m]`` in pick order.

    Notes
    -----
    O(picks * q * K): one pass per pick over the open candidates.
    """
    c = qt - p0
    if c <= 0:
        return 0
    gi[STEPS] += 1
    k = free.shape[0]
    n = (gi.shape[0] - OUT - 2 * k) // 2
    alive, fr, ex = OUT + n, OUT + 2 * n, OUT + 2 * n + k
    cap, scale, used, share = gf[:k], gf[k:2 * k], gf[2 * k:3 * k], gf[3 * k:]
    h = BL if rule == BL_RULE else BB
    window, fullness = gi[WINDOW], gi[FULLNESS]
    for r in range(k):
        gi[fr + r] = free[r]
        gi[ex + r] = max(extra[r], 0)
    for p in range(c):
        gi[alive + p] = 1
    m = 0
    while True:
        for r in range(k):
            used[r] = (cap[r] - gi[fr + r]) / scale[r]
        if h == BL:
            _least_used(used, low, window)
        best = -1
        best_s = np.inf
        best_err = 0.0
        for p in range(c):
            if not gi[alive + p]:
                continue
            j = q[p0 + p]
            past = now + est[j] > shadow
            if not _fits_now(dem, j, gi, fr, ex, past):
                gi[alive + p] = 0
                continue
            for r in range(k):
                share[r] = dem[j, r] / scale[r]
            if h == BB:
                s = balance_score(used, share, fullness)
            else:
                s = lowest_score(used, share, low, window, fullness)
            err = _rounding(h, fullness, used, share, s, k)
            if best < 0 or s < best_s - (err + best_err):   # within both roundings: a tie, the earlier job
                best_s, best_err = s, err
                best = p
        if best < 0:
            return m
        j = q[p0 + best]
        past = now + est[j] > shadow
        for r in range(k):
            gi[fr + r] -= dem[j, r]
            if past:
                gi[ex + r] -= dem[j, r]
        gi[alive + best] = 0
        gi[OUT + m] = j
        m += 1


@njit(**JIT)
def _least_used(used, low, window):
    """Flag the ``window`` least-used resources in ``low``, ties to the lower
    index (the first ``window`` of a stable argsort, as
    :func:`epochbench.heuristics._greedy.select` takes them).  O(K window)."""
    k = used.shape[0]
    for r in range(k):
        low[r] = False
    prev = -1
    for _ in range(window):
        best = -1
        for r in range(k):
            after = prev < 0 or used[r] > used[prev] or (used[r] == used[prev] and r > prev)
            if after and (best < 0 or used[r] < used[best]):
                best = r
        prev = best
        low[best] = True
