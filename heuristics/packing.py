"""Packing heuristics: which queued jobs start now on a K-resource machine.

Every function takes a :class:`~instances.packing.PackingInstance` and returns
the indices of the jobs it starts, in the order it picks them.  All respect
the instance's reservation when it has one (a job flagged as running past the
shadow time must also fit in what is left of ``extra``), so they serve as the
backfill step of EASY-style policies.

Applied epoch after epoch, each one also solves an ``epochs`` instance
(:func:`epochs_by`), registered under the same name.
"""
from __future__ import annotations

import numpy as np

from instances.packing import EpochsInstance, PackingInstance
from instances.registry import register


# ---- shared state of a greedy selection ------------------------------------------
class _Greedy:
    """Free capacity, remaining extra and the jobs still eligible.

    ``fits()`` is one vectorised test over the whole queue, O(n K).
    """

    def __init__(self, inst: PackingInstance):
        self.inst = inst
        self.demand = inst.demand
        self.free = inst.free.astype(np.int64).copy()
        res = inst.reservation
        self.flag = res.past_shadow if res is not None else None
        self.extra = res.extra.astype(np.int64).copy() if res is not None else None
        self.open = np.ones(inst.n, dtype=bool)
        self.picked: list[int] = []

    def fits(self, start: int = 0) -> np.ndarray:
        d = self.demand[start:]
        ok = self.open[start:] & (d <= self.free).all(axis=1)
        if self.flag is not None:
            ok &= ~self.flag[start:] | (d <= self.extra).all(axis=1)
        return ok

    def take(self, j: int) -> None:
        self.free -= self.demand[j]
        if self.flag is not None and self.flag[j]:
            self.extra -= self.demand[j]
        self.open[j] = False
        self.picked.append(int(j))

    def shares(self) -> tuple[np.ndarray, np.ndarray]:
        """(U, R): current machine utilisation per resource and every job's
        requirement, both as fractions of capacity (seed 000 section 2.2)."""
        cap = self.inst.capacity.astype(float)
        safe = np.where(cap > 0, cap, 1.0)
        used = (self.inst.capacity - self.free) / safe
        return used, self.demand / safe


def _greedy_by_score(inst: PackingInstance, score) -> list[int]:
    """Repeatedly start the fitting job of lowest ``score(state, candidates)``;
    ties go to the earlier job in the queue.  O(picks * n K)."""
    g = _Greedy(inst)
    while True:
        cand = np.flatnonzero(g.fits())
        if cand.size == 0:
            return g.picked
        g.take(int(cand[int(np.argmin(score(g, cand)))]))


# ---- FCFS-family ----------------------------------------------------------------
@register("packing", "fcfs")
def fcfs(inst: PackingInstance) -> list[int]:
    """FCFS (seed 002 "Scheduling policies"; seed 000 fig. 1): start jobs in
    queue order and stop at the first one that does not fit.  O(n K)."""
    g = _Greedy(inst)
    ok = g.fits()
    for j in range(inst.n):
        if not ok[j]:
            break
        g.take(j)
        ok = g.fits()
    return g.picked


@register("packing", "ff")
def first_fit(inst: PackingInstance) -> list[int]:
    """First fit, FCFS/FF (seed 000 section 1): scan the whole queue in order
    and start every job that fits in what is left.  O(picks * n K)."""
    g = _Greedy(inst)
    start = 0
    while start < inst.n:
        hit = np.flatnonzero(g.fits(start))
        if hit.size == 0:
            break
        j = start + int(hit[0])
        g.take(j)
        start = j + 1
    return g.picked


def _leftover(g: _Greedy, cand: np.ndarray) -> np.ndarray:
    """Capacity fraction left idle after starting each candidate, summed over K."""
    used, share = g.shares()
    return (1.0 - used - share[cand]).sum(axis=1)


@register("packing", "bestfit")
def best_fit(inst: PackingInstance) -> list[int]:
    """Best fit, BFit (seed 004 section 3): repeatedly start the job that
    leaves the smallest fragment (sum over resources of the free share left)."""
    return _greedy_by_score(inst, _leftover)


@register("packing", "worstfit")
def worst_fit(inst: PackingInstance) -> list[int]:
    """Worst fit, WFit (seed 004 section 3): repeatedly start the job that
    leaves the largest fragment, i.e. the smallest job first."""
    return _greedy_by_score(inst, lambda g, cand: -_leftover(g, cand))


# ---- resource balancing (seed 000 section 2.2) -----------------------------------
def _fullness(used: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Fullness modifier ``1 - sum_i (U_Si + R_Ji) / K``: the average resource
    availability after starting J (seed 000 section 2.2)."""
    return 1.0 - (used + share).mean(axis=1)


def balance_measure(used: np.ndarray, share: np.ndarray) -> np.ndarray:
    """BB's max/average balance ``max_i(U_Si + R_Ji) / (sum_i (U_Si + R_Ji) / K)``
    per candidate row of ``share``; lower is better, 1 is perfect balance
    (seed 000 section 2.2).  A job that leaves every resource at 0 scores 1."""
    tot = used + share
    mean = tot.mean(axis=1)
    return np.divide(tot.max(axis=1), mean, out=np.ones_like(mean), where=mean > 0)


@register("packing", "bb")
def backfill_balanced(inst: PackingInstance, fullness: bool = True) -> list[int]:
    """Backfill Balanced, BB (seed 000 section 2.2).

    Repeatedly starts the fitting job with the best (lowest) balance measure,
    multiplied by the fullness modifier when ``fullness`` is set, so that a
    job that nearly fills the machine can win over a better-balanced small
    one.  Ties go to the earlier job.  O(picks * n K).
    """
    def score(g, cand):
        used, share = g.shares()
        s = balance_measure(used, share[cand])
        return s * _fullness(used, share[cand]) if fullness else s
    return _greedy_by_score(inst, score)


def window_mismatch(used: np.ndarray, share: np.ndarray, window: int) -> np.ndarray:
    """Share of each job's ``window`` largest requirements that fall outside the
    machine's ``window`` least-utilised resources (0 = the job matches).

    For ``window = 1``: 0 if the job's largest requirement is on the least
    utilised resource, else 1 (ties broken by resource index).
    """
    k = used.shape[0]
    w = min(max(int(window), 1), k)
    low = np.zeros(k, dtype=bool)
    low[np.argsort(used, kind="stable")[:w]] = True
    top = np.argsort(-share, axis=1, kind="stable")[:, :w]
    return (~low[top]).sum(axis=1) / w


@register("packing", "bl")
def backfill_lowest(inst: PackingInstance, window: int = 1, fullness: bool = True) -> list[int]:
    """Backfill Lowest, BL, windowed (seed 000 section 2.2; ``window = 1`` is the
    paper's BL).

    Repeatedly starts the first fitting job whose largest requirements lie on
    the ``window`` least-utilised resources; if none matches, the one that
    matches best, then the earliest (so BL degrades to first fit).  With
    ``fullness`` the score ``(1 + mismatch) * (1 - mean(U + R))`` lets a job
    that nearly fills the machine win over a better-matching small one.
    """
    def score(g, cand):
        used, share = g.shares()
        s = window_mismatch(used, share[cand], window)
        return (1.0 + s) * _fullness(used, share[cand]) if fullness else s
    return _greedy_by_score(inst, score)


# ---- LOS dynamic programming (seed 002) ------------------------------------------
def los_matrix(sizes, free: int) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 of seed 002 (LOS, constructing M).

    Returns ``(util, selected)``, both of shape ``(len(sizes) + 1, free + 1)``:
    ``util[i, j]`` is the most processors jobs 1..i can use with j free,
    ``selected[i, j]`` whether job i is chosen there.  One vectorised row per
    job: O(q * n) work, O(q * n) memory.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    q, n = sizes.shape[0], int(free)
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
    """Algorithm 2 of seed 002 (constructing S): follow the flags back from the
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
    """LOS with the head-of-queue reservation (seed 002 "Freedom from
    starvation"; Shmueli and Feitelson's reservation DP).

    Maximises the processors used subject to ``sum(size) <= free`` and, over
    the jobs still running at the shadow time, ``sum(size) <= extra``.  The DP
    runs over (free, extra) pairs: O(q * free * extra).  Returns queue order.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    flags = np.asarray(past_shadow, dtype=bool)
    n, e = int(free), int(min(extra, free))
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
    """LOS, the Lookahead Optimizing Scheduler (seed 002, algorithms 1 and 2).

    Dynamic programming over the free processors (resource ``resource``)
    selects the job set that uses the most of them; with a reservation the DP
    also keeps the jobs running past the shadow time within ``extra``.  Exact
    for K = 1.  For K > 1 (an epochbench extension) the DP sees only that
    resource: its set is then kept in queue order as far as it fits on every
    resource, and the rest of the queue is first-fitted (which also starts
    jobs of size 0, never chosen by the DP).  Returns queue order.
    """
    if not 0 <= resource < inst.k:
        raise ValueError(f"resource {resource} out of range for K = {inst.k}")
    g = _Greedy(inst)
    fits_alone = g.fits()
    sizes = np.where(fits_alone, inst.demand[:, resource], 0)
    free = int(g.free[resource])
    if inst.reservation is None:
        chosen = los_trace(sizes, los_matrix(sizes, free)[1])
    else:
        chosen = los_reserved(sizes, inst.reservation.past_shadow, free,
                              int(inst.reservation.extra[resource]))
    for j in chosen:
        if g.fits(j)[0]:
            g.take(j)
    for j in np.flatnonzero(g.fits()):
        if g.fits(int(j))[0]:
            g.take(int(j))
    return g.picked


# ---- epochs: a packing heuristic applied epoch after epoch ------------------------
def epochs_by(packer):
    """Turn a packing heuristic into an ``epochs`` solver: each epoch starts
    what ``packer`` picks from the jobs left on an empty machine (seed 000
    fig. 1).  Raises ``ValueError`` if it ever picks nothing."""
    def solve(inst: EpochsInstance, **params) -> list[list[int]]:
        remaining = np.arange(inst.n)
        bins = []
        while remaining.size:
            picked = packer(inst.packing(remaining), **params)
            if not len(picked):
                raise ValueError(f"{inst.name}: {packer.__name__} started nothing with "
                                 f"{remaining.size} jobs left")
            bins.append([int(remaining[i]) for i in picked])
            remaining = np.delete(remaining, list(picked))
        return bins
    solve.__name__ = f"epochs_{packer.__name__}"
    solve.__doc__ = f"Epoch-after-epoch {packer.__name__}: " + (packer.__doc__ or "").split("\n")[0]
    return solve


for _name, _f in {"fcfs": fcfs, "ff": first_fit, "bestfit": best_fit, "worstfit": worst_fit,
                  "bl": backfill_lowest, "bb": backfill_balanced, "los": los}.items():
    register("epochs", _name)(epochs_by(_f))
