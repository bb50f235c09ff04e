"""Compiled kernel of the greedy packing heuristics (FCFS, FF, BFit, WFit, BB, BL).

Measured on n = 256, K = 8 with ~54 jobs started per epoch: the numpy
version (one vectorised score per pick) took 6.6 ms for BB, about 120 us of
numpy call overhead per pick; this loop takes a few microseconds per pick.
One pass per pick over the open jobs; a job that does not fit is closed for
good, since capacity only shrinks.  O(picks * n * K).
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit

FCFS, FF, BESTFIT, WORSTFIT, BB, BL = range(6)
#: a unit in the last place of 1 (float64): the scores' rounding bounds (:func:`_rounding`) are
#: counted in it.  Two scores closer than their bounds together are a tie, and a tie goes to the
#: earlier job.  Equal scores computed in another order come out a few units in the last place
#: apart: BB's balance 7/5 read 1.4 for one job and 1.4000000000000001 for another (capacity
#: [4, 14, 14], 3 of 4 processors used, jobs (1, 2, 14) and (0, 8, 4)), and the later job was
#: picked in either order (6 of 92,000 comparisons against exact arithmetic, a review;
#: worstfit's sums of K terms tie on most epochs)
TIE = 2.220446049250313e-16
#: how the fullness modifier f = 1 - mean(U + R) enters the BB / BL score
#: (:data:`FULLNESS` names them)
OFF, EXCESS, SCALED = range(3)

#: BB / BL fullness readings, by what they compute (:func:`balance_score`):
#: ``scaled`` measure x availability ([leinberger1999]'s modifier, the default), ``excess``
#: (measure - 1) x availability (epochbench's earlier reading), ``off`` the measure alone
FULLNESS = {"scaled": SCALED, "excess": EXCESS, "off": OFF}
DEFAULT_FULLNESS = "scaled"


def fullness_mode(fullness) -> int:
    """Kernel code of a fullness reading: a name of :data:`FULLNESS`, or a
    bool (True: the default reading, False: ``off``)."""
    if isinstance(fullness, (bool, np.bool_)):
        fullness = DEFAULT_FULLNESS if fullness else "off"
    if fullness not in FULLNESS:
        raise ValueError(f"option 'fullness' must be one of {sorted(FULLNESS)} or a bool, got {fullness!r}")
    return FULLNESS[fullness]


def window_code(window, k: int) -> int:
    """BL's window as the kernel takes it: [leinberger1999]'s w, clipped to K (w >= K
    flags every resource as low, so every job matches, as w = 0 does)."""
    if isinstance(window, bool) or not isinstance(window, (int, float, np.integer, np.floating)) \
            or int(window) != window or window < 0:
        raise ValueError(f"option 'window' must be an integer >= 0 (the paper's w, 0 <= w <= K - 1; w = 0 and "
                         f"any w >= K check no resource), got {window!r}")
    return min(int(window), k)


@njit(cache=True)
def _modify(measure, floor, avail, fullness):
    """Apply the fullness modifier ``avail`` to a balance ``measure`` whose
    best value is ``floor``: OFF the measure, EXCESS ``(measure - floor) *
    avail``, SCALED ``measure * avail``.  Lower is better."""
    if fullness == SCALED:
        return measure * avail
    if fullness == EXCESS:
        return (measure - floor) * avail
    return measure


@njit(cache=True)
def balance_score(used, share, fullness):
    """BB score of one job ([leinberger1999] section 2.2), lower is better.

    The max/average balance measure ``b = max_i(U_i + R_i) / (sum_i (U_i +
    R_i) / K)`` (>= 1) with the fullness modifier ``f = 1 - sum_i (U_i +
    R_i) / K`` (the average availability after the job) applied as
    ``fullness`` says: SCALED (the default of :func:`epochbench.heuristics.packing.backfill_balanced`)
    ``b * f``; EXCESS ``(b - 1) * f``; OFF ``b``.

    The paper gives the modifier and what it must do, not the formula that
    combines it: "this allows a larger job which achieves a worse balance to
    be selected over a smaller job which achieves a better balance when the
    larger job nearly fills the machine".  SCALED, the measure times the
    modifier, does that for every pair: a perfectly balanced small job
    scores ``1 * f`` with f near 1, a job that nearly fills the machine
    ``b * f`` with f near 0.  EXCESS gives any perfectly balanced job the
    score 0, which nothing can beat (empty 100/100 machine, jobs (100, 90)
    and (1, 1): EXCESS starts the 1 % job and blocks the 95 % one; SCALED
    starts the large one).  As availability falls every SCALED score tends
    to 0 and the fullest job wins: the paper's "BB approaches FF" holds for
    EXCESS (ties go to queue order), not for SCALED, which on a nearly full
    machine starts the job that fills it most (capacity (100, 100), used
    (80, 80), queue (10, 10), (15, 15): SCALED starts the second, EXCESS,
    OFF and FF the first).  O(K)."""
    k = used.shape[0]
    mx = 0.0
    sm = 0.0
    for i in range(k):
        t = used[i] + share[i]
        sm += t
        if t > mx:
            mx = t
    bal = mx / (sm / k) if sm > 0 else 1.0
    return _modify(bal, 1.0, 1.0 - sm / k, fullness)


@njit(cache=True)
def lowest_score(used, share, low, window, fullness):
    """BL score of one job ([leinberger1999] section 2.2), lower is better.

    The mismatch m, the share of its ``window`` largest requirements that
    miss the ``window`` least-utilised resources (``low`` flags them; 0 when
    ``window`` is 0), read as the measure ``1 + m`` (1 = matches) with the
    fullness modifier ``f = 1 - mean(U + R)`` applied as for
    :func:`balance_score`: SCALED ``(1 + m) * f``, EXCESS ``m * f`` (a
    matching job scores 0 and always wins), OFF ``m``.  Ties between
    requirements go to the lower resource index, and so do ties in
    utilisation (the paper defines K_j only when one resource is below the
    others; on an empty machine resource 0 counts as the least utilised, so
    the result can depend on the order the resources are listed; the
    K-extended workload's whole units make ties between requirements
    common, :func:`epochbench.instances.generators.k_requirements`).
    ``window`` is at most K (:func:`window_code` clips it).  Allocates nothing, so that the compiled event loop calls it too
    (:mod:`epochbench.sim.greedy_fast`).  O(K window)."""
    k = used.shape[0]
    if window == 0:
        miss = 0
    elif window == 1:  # the paper's BL: no scratch array in the hot loop
        best = 0
        for i in range(1, k):
            if share[i] > share[best]:
                best = i
        miss = 0 if low[best] else 1
    else:  # the window largest in the order (share descending, index ascending), no scratch array
        miss = 0
        prev = -1
        for _ in range(window):
            best = -1
            for i in range(k):
                after = prev < 0 or share[i] < share[prev] or (share[i] == share[prev] and i > prev)
                if after and (best < 0 or share[i] > share[best]):
                    best = i
            prev = best
            if not low[best]:
                miss += 1
    mis = miss / window if window > 0 else 0.0
    if fullness == OFF:
        return mis
    sm = 0.0
    for i in range(k):
        sm += used[i] + share[i]
    return _modify(1.0 + mis, 1.0, 1.0 - sm / k, fullness)


@njit(cache=True)
def _rounding(rule, fullness, used, share, s, k):
    """A bound on how far score ``s`` of a job (``share``, on a machine at
    ``used``) lies from its exact value, in units :data:`TIE`: each term
    U_i + R_i (at most 1) is off by about a unit and a sum of K of them by
    K / 2 units of K more, so BestFit's and WorstFit's sum by K (K + 4) / 2;
    BB's balance (OFF) by K + 3 units of itself; the modifier f = 1 -
    mean(U + R) by K / 2 + 1 units of 1, which SCALED multiplies by the
    measure m = s / f; EXCESS multiplies f by the measure's excess over 1,
    off by 3 units of the measure (at most K).  A fixed floor would merge
    real differences of the tiny scores of a nearly full large machine
    (1e-13 did: capacities 1e7, two jobs whose exact BB EXCESS scores
    differ fivefold near 1e-14 read as a tie).  O(K)."""
    if rule == BESTFIT or rule == WORSTFIT:
        return TIE * k * (k + 4) / 2
    if fullness == OFF:
        return TIE * (k + 3) * abs(s)
    sm = 0.0
    for i in range(k):
        sm += used[i] + share[i]
    f = 1.0 - sm / k
    if not f > 0:
        return TIE * (k + 2) * (k + abs(s))       # a full machine: no scale to read, the measure at most K
    m = abs(s) / f                                 # SCALED: the measure; EXCESS: its excess over 1
    if fullness == SCALED:
        return TIE * ((k + 2) * m + 2 * abs(s))
    return TIE * (3 * k * f + (k + 2) * m + 2 * abs(s))


@njit(cache=True)
def _fits(dt, j, free, extra, flag, has_res):
    for i in range(dt.shape[0]):
        if dt[i, j] > free[i]:
            return False
        if has_res and flag[j] and dt[i, j] > extra[i]:
            return False
    return True


@njit(cache=True)
def select(dt, capacity, free, extra, flag, has_res, rule, window, fullness):
    """Jobs started by ``rule``, in pick order.

    ``dt`` is the demand transposed (K x n), ``free`` and ``extra`` (K) are
    copied, ``flag`` marks jobs running past the shadow time (used only when
    ``has_res``).  ``window`` (0..K) is BL's, ``fullness`` (OFF, EXCESS,
    SCALED) BB's and BL's.  Ties go to the earlier job in the queue,
    scores within their rounding (:func:`_rounding`) counting as tied.
    """
    k, n = dt.shape
    free = free.copy()
    extra = extra.copy()
    scale = np.empty(k)
    for i in range(k):
        scale[i] = capacity[i] if capacity[i] > 0 else 1.0
    share = np.empty(k)
    used = np.empty(k)
    low = np.zeros(k, dtype=np.bool_)
    alive = np.ones(n, dtype=np.bool_)
    picked = np.empty(n, dtype=np.int64)
    m = 0
    start = 0
    while True:
        for i in range(k):
            used[i] = (capacity[i] - free[i]) / scale[i]
        if rule == BL:
            order = np.argsort(used, kind="mergesort")
            low[:] = False
            for i in range(window):
                low[order[i]] = True
        best = -1
        best_s = np.inf
        best_err = 0.0
        for j in range(start, n):
            if not alive[j]:
                continue
            if not _fits(dt, j, free, extra, flag, has_res):
                alive[j] = False
                if rule == FCFS:
                    return picked[:m]
                continue
            if rule == FCFS or rule == FF:
                best = j
                break
            for i in range(k):
                share[i] = dt[i, j] / scale[i]
            if rule == BB:
                s = balance_score(used, share, fullness)
            elif rule == BL:
                s = lowest_score(used, share, low, window, fullness)
            else:
                left = 0.0
                for i in range(k):
                    left += 1.0 - used[i] - share[i]
                s = left if rule == BESTFIT else -left
            err = _rounding(rule, fullness, used, share, s, k)
            if best < 0 or s < best_s - (err + best_err):       # within both roundings: a tie, the earlier job
                best_s, best_err = s, err
                best = j
        if best < 0:
            return picked[:m]
        for i in range(k):
            free[i] -= dt[i, best]
            if has_res and flag[best]:
                extra[i] -= dt[i, best]
        alive[best] = False
        picked[m] = best
        m += 1
        if rule == FCFS or rule == FF:
            start = best + 1
