"""Large-neighbourhood search for the mapping family (beyond the seeds).

The seeds' metaheuristics ([vadhiyar-notes]: GA, SA, tabu) move one or two
tasks at a time. :func:`lns` first lets HiGHS work on the whole model for a
share of the time (its incumbent is the best of the exact methods' on the
Braun matrices after a few seconds; optionally on a size-reduced model
[fanjulpeyro2011]), minimising the makespan plus a small weight of the total
work (ours: the repairs balance the machines but rarely lower the total
work, so the first phase should end where little work is done; the work
priced by the LP relaxation's machine duals, ``prices``), then
alternates fast local moves with an exact repair of a few machines at once,
in the manner of Shaw's large neighbourhood search
[shaw1998]: the tasks of the makespan machine and of ``machines - 1`` others
(the least loaded ones and, in turn, related ones in Shaw's sense: machines
between which tasks could move at a small LP reduced cost) are reassigned
among those machines optimally by CP-SAT, started from their current
assignment (so a repair never makes them worse), for the same objective as
the first phase (the makespan, never raised, plus a weight of the total
work; the makespan alone in the last quarter of the time). A machine set
that CP-SAT proved
optimal is not drawn again while the same tasks are on it. When repairs
stop improving, the neighbourhood grows; after a few sweeps of its sizes
without improvement, a long hop (random moves of a few tasks, as the tabu
search's long hops) restarts the descent from elsewhere; the best mapping is
kept. From half the time on, when the best mapping has not improved for a
while, a kernel search [angelelli2010] takes its turn: CP-SAT on the whole
model restricted to the pairs of small LP reduced cost, the kernel growing
while the searches find nothing better (ours: on the Braun matrices a
stuck mapping and a better one differ in 16 to 58 tasks spread over 13 to
16 of the 16 machines, more than the repairs free at once, but every pair
of the better one has a small reduced cost).

It returns its best mapping and a valid lower bound: the largest of the
instance's combinatorial bound and the LP relaxation's Lagrangian bound
(:func:`epochbench.exact.mapping.lp_bound`); status ``optimal`` only when
the mapping meets that bound.

References
----------
.. [shaw1998] P. Shaw. Using Constraint Programming and Local Search Methods to Solve Vehicle
   Routing Problems. Principles and Practice of Constraint Programming (CP 1998), LNCS 1520,
   pp. 417-431. https://doi.org/10.1007/3-540-49481-2_30.
.. [angelelli2010] E. Angelelli, R. Mansini, M. G. Speranza. Kernel search: a general heuristic for the
   multi-dimensional knapsack problem. Computers & Operations Research 37(11):2017-2026, 2010.
   https://doi.org/10.1016/j.cor.2010.02.002.  (The kernel there is built from the LP solution and
   enlarged by buckets of variables in order of reduced cost; ours takes the reduced-cost buckets
   alone, as shares of the gap to the LP bound.)
.. [fanjulpeyro2011] L. Fanjul-Peyro, R. Ruiz. Size-reduction heuristics for the unrelated parallel
   machines scheduling problem. Computers & Operations Research 38(1):301-309, 2011.
   https://doi.org/10.1016/j.cor.2010.05.005.  (They keep each job's fastest machines; ranking by
   the LP duals' prices instead is ours.)
.. [vadhiyar-notes] S. Vadhiyar. Scheduling lecture notes (task mapping heuristics: GA, SA, tabu).
"""
from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np

from epochbench.instances.checks import check_count, check_positive, check_share
from epochbench.instances.core import Result
from epochbench.instances.mapping import MappingInstance
from epochbench.instances.registry import forwards, register

from ._binary import against, refuted, time_left, warm_up_backends
from .mapping import (METHODS, WEIGHTED, Relaxation, Scaled, _allowed, _cpsat, _descent, check_hint, lp_relaxation,
                      decimal_grid, meets, scaled, start_mapping)
from .starts import START_SHARE

#: repairs without improvement before a long hop
PATIENCE = 8
#: share of the tasks a long hop moves at random
KICK = 0.02
#: sweeps of the neighbourhood sizes (``machines`` up to ``max_machines``) without improvement
#: before a long hop
SWEEPS = 3
#: most machine sets remembered as proven (a bound on memory)
PROVEN_CAP = 100_000
#: random draws tried for a neighbourhood that has not been proven optimal already
DRAWS = 8
#: the first phase's weight of total work (``work_weight`` of the MILP methods)
FIRST_WORK_WEIGHT = 0.1
#: the repairs' weight of total work (their objective: makespan + this x the priced work, ``prices``) ...
REPAIR_WORK_WEIGHT = 0.5
#: ... except in this last share of the time limit, where they lower the makespan alone
TAIL_SHARE = 0.25
#: the repairs' weights are integers: the work weight is rounded to 1 / WEIGHT_GRID
WEIGHT_GRID = 100
#: kernel searches when the repairs stall: shares of (best makespan - LP bound) up to which a pair's
#: LP reduced cost lets it into the kernel, the next after a search that found nothing better, the
#: first again after one that did (1 would keep every pair that a better mapping may use)
KERNEL_SHARES = (0.03, 0.05, 0.08, 0.12, 1 / 6)
#: no kernel search before this share of the time limit (the repairs first) ...
KERNEL_AT = 0.5
#: ... nor before the best mapping has not improved for this share of the time limit
KERNEL_IDLE = 1 / 15
#: share of the time limit that each kernel search may take (``kernel_share`` of :func:`lns`)
KERNEL_SHARE = 1 / 6
#: how the work terms price a unit of work on each machine (``prices`` of :func:`lns`)
PRICES = ("lp", "uniform")
#: related neighbourhoods (odd turns): a pair (task, machine) is cheap when its LP reduced cost is at
#: most this share of (best makespan - LP bound); machines are related by their tasks' cheap pairs on
#: each other (``related_share`` of :func:`lns`; 0: random neighbourhoods on odd turns)
RELATED_SHARE = 1 / 3
#: the least loaded machines in every related neighbourhood
RELATED_SLACK = 1
#: added to every machine's relatedness when drawing (so that every machine can be drawn)
RELATED_FLOOR = 1e-3


def _finish(sc: Scaled, a: np.ndarray) -> np.ndarray:
    """Finishing time of every machine (0 where unused), integer units."""
    t, m = sc.etc.shape
    load = np.bincount(a, weights=sc.etc[np.arange(t), a], minlength=m).astype(np.int64)
    used = np.bincount(a, minlength=m) > 0
    return np.where(used, load + sc.ready, 0)


def _merit(sc: Scaled, a: np.ndarray, weights: tuple) -> int:
    """What a weighted repair lowers, with ``weights = (p, q)``: ``p`` x
    makespan + ``q`` x total work, or + sum_j ``q[j]`` x (work on machine
    j) when ``q`` is an array (integer units, exact)."""
    q = np.broadcast_to(np.asarray(weights[1], dtype=np.int64), (sc.etc.shape[1],))
    return weights[0] * int(_finish(sc, a).max()) + int((q[a] * sc.etc[np.arange(a.size), a]).sum())


def _weights(sc: Scaled, work_weight: float, prices: np.ndarray | None = None) -> tuple | None:
    """Integer weights of C + ``work_weight`` x (total work) / m, to
    :data:`WEIGHT_GRID`: (m G, round(``work_weight`` G)); with ``prices``
    (m numbers >= 0 summing to 1) those of C + ``work_weight`` x sum_j
    ``prices[j]`` x (work on machine j): (m G, the array round(``work_weight``
    G m ``prices[j]``)).  None when ``work_weight`` rounds to 0 or the
    objective could leave CP-SAT's integer range (then the repairs weigh the
    makespan alone)."""
    t, m = sc.etc.shape
    q = int(round(float(work_weight) * WEIGHT_GRID))
    p = m * WEIGHT_GRID
    top = int(sc.etc.max(axis=1).sum()) + int(sc.ready.max(initial=0))
    if prices is not None:
        q = float(work_weight) * WEIGHT_GRID * m * np.asarray(prices, dtype=float)
        if q.max() >= 2**62:
            return None                 # beyond int64 (a weight of 1e30 overflowed the cast)
        q = np.round(q).astype(np.int64)
    if int(np.max(q)) <= 0 or (p + int(np.max(q))) * top >= 2**62:
        return None
    return p, q


def _repair(inst: MappingInstance, sc: Scaled, a: np.ndarray, cols: np.ndarray, deadline: float,
            threads: int, seed: int, weights: tuple[int, int] | None = None) -> tuple[np.ndarray | None, bool]:
    """Reassign the tasks of machines ``cols`` among them by CP-SAT until
    ``deadline``, from their current assignment: the new full mapping (None
    when CP-SAT found nothing in time) and whether CP-SAT proved it optimal
    for those machines.  With ``weights`` (:func:`_weights`) it minimises
    :func:`_merit` of the whole mapping: the makespan there is at least the
    other machines' largest finishing time."""
    rows = np.flatnonzero(np.isin(a, cols))
    if rows.size == 0:
        return None, False
    pos = {int(c): k for k, c in enumerate(cols)}
    sub_sc = Scaled(sc.etc[np.ix_(rows, cols)], sc.ready[cols], sc.scale, sc.exact)
    sub = SimpleNamespace(etc=inst.etc[np.ix_(rows, cols)], has_ready=bool(sub_sc.ready.any()),
                          name=f"{inst.name}[lns]")
    hint = np.array([pos[int(j)] for j in a[rows]], dtype=np.int64)
    allowed = np.ones(sub_sc.etc.shape, dtype=bool)
    floor = 0
    if weights is not None:
        rest = np.delete(_finish(sc, a), cols)
        floor = int(rest.max(initial=0))
    if weights is not None and np.ndim(weights[1]):                     # priced work: the repaired machines'
        weights = (weights[0], np.asarray(weights[1])[cols])
    status, sub_a, _, _ = _cpsat(sub, sub_sc, hint, allowed, 0, deadline, threads, seed, floor, weights)
    if sub_a is None:
        return None, False
    out = a.copy()
    out[rows] = cols[sub_a]
    return out, status == "optimal"


def _key(a: np.ndarray, cols: np.ndarray) -> tuple:
    """What a repair of ``cols`` depends on: the machines and the tasks on
    them.  (A weighted repair depends on the other machines' largest
    finishing time too; the key leaves it out, so a set proven optimal is
    not tried again when that time falls: a heuristic choice.)"""
    return tuple(sorted(int(c) for c in cols)), np.flatnonzero(np.isin(a, cols)).tobytes()


def _relatedness(a: np.ndarray, cheap: np.ndarray) -> np.ndarray:
    """Shaw's relatedness [shaw1998] of the machines (m x m, symmetric, 0 on
    the diagonal): the number of tasks on either machine that have a cheap
    pair (``cheap``, t x m) on the other.  O(t m + m^2)."""
    m = cheap.shape[1]
    rel = np.zeros((m, m))
    np.add.at(rel, a, cheap.astype(float))
    rel += rel.T
    np.fill_diagonal(rel, 0.0)
    return rel


def _related(fin: np.ndarray, k: int, rng: np.random.Generator, rel: np.ndarray) -> np.ndarray:
    """The makespan machine, the :data:`RELATED_SLACK` least loaded ones and
    others drawn one at a time with probability proportional to their
    relatedness to the machines drawn so far (plus :data:`RELATED_FLOOR`,
    so that every machine can be drawn)."""
    m = fin.size
    c = int(fin.argmax())
    cols = [c] + [int(j) for j in np.argsort(fin, kind="stable") if j != c][: min(RELATED_SLACK, k - 1)]
    while len(cols) < min(k, m):
        score = rel[cols].sum(axis=0) + RELATED_FLOOR
        score[cols] = 0.0
        cols.append(int(rng.choice(m, p=score / score.sum())))
    return np.array(cols, dtype=np.int64)


def _neighbourhood(fin: np.ndarray, k: int, rng: np.random.Generator, turn: int,
                   rel: np.ndarray | None = None) -> np.ndarray:
    """The makespan machine and ``k - 1`` others: the least loaded on even
    turns; on odd turns related ones (:func:`_related`) when ``rel`` is
    given, else random ones."""
    m = fin.size
    c = int(fin.argmax())
    if turn % 2 == 1 and rel is not None:
        return _related(fin, k, rng, rel)
    rest = np.array([j for j in range(m) if j != c])
    if turn % 2 == 0:
        others = rest[np.argsort(fin[rest], kind="stable")[: k - 1]]
    else:
        others = rng.choice(rest, size=min(k - 1, rest.size), replace=False)
    return np.concatenate([[c], others]).astype(np.int64)


def _fresh_neighbourhood(a: np.ndarray, fin: np.ndarray, k: int, rng: np.random.Generator, turn: int,
                         proven: set, rel: np.ndarray | None = None) -> np.ndarray | None:
    """:func:`_neighbourhood`, redrawn (on an odd turn, up to :data:`DRAWS`
    times) while CP-SAT has already proven that machine set optimal with
    the same tasks on it; None when every draw was such a set."""
    for draw in range(DRAWS):
        cols = _neighbourhood(fin, k, rng, turn if draw == 0 else 1, rel)
        if _key(a, cols) not in proven:
            return cols
    return None


def _reduced_costs(inst: MappingInstance, relax: Relaxation) -> np.ndarray:
    """The LP reduced cost of every pair (t x m): ``w_j etc[i, j] - min_k
    w_k etc[i, k]``, ``w`` the machine duals.  O(t m)."""
    priced = inst.etc * relax.weights[None, :]
    return priced - priced.min(axis=1, keepdims=True)


def _kernel(inst: MappingInstance, sc: Scaled, relax: Relaxation, best: np.ndarray, share: float,
            deadline: float, threads: int, seed: int) -> tuple[np.ndarray | None, bool, int]:
    """CP-SAT for the makespan on the whole model restricted to a kernel, in
    the manner of kernel search [angelelli2010]: the pairs whose LP reduced
    cost ``w_j etc[i, j] - min_k w_k etc[i, k]`` (``w`` the machine duals)
    is at most ``share`` x (makespan of ``best`` - the LP bound), those of
    ``best`` and of the LP solution, from ``best``, until ``deadline``.  A
    mapping ``a`` has makespan at least the LP bound + the sum of its
    reduced costs, so with ``share`` 1 no mapping better than ``best`` is
    left out.  Returns the mapping (None if none), whether CP-SAT proved it
    optimal over the kernel, and the kernel's size (pairs).  O(t m) plus the
    CP-SAT call."""
    rc = _reduced_costs(inst, relax)
    allowed = rc <= share * max(inst.value(best) - relax.bound, 0.0)
    allowed |= relax.x > 1e-9
    allowed &= _allowed(inst, best, sc)
    allowed[np.arange(inst.n), best] = True
    status, got, _, _ = _cpsat(inst, sc, best, allowed, 0, deadline, threads, seed)
    return got, status == "optimal", int(allowed.sum())


def _kick(a: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """A long hop: a few tasks (:data:`KICK` of them, at least 2) to random machines."""
    out = a.copy()
    n = max(2, int(KICK * a.size))
    idx = rng.choice(a.size, size=min(n, a.size), replace=False)
    out[idx] = rng.integers(0, m, size=idx.size)
    return out


def _reduced(inst: MappingInstance, relax: Relaxation, a: np.ndarray, r: int) -> MappingInstance:
    """The instance of a size-reduced first phase [fanjulpeyro2011]: each
    task keeps the ``r`` machines of least ``w_j etc[i, j]`` (``w`` the LP
    relaxation's machine duals, which price the machines' loads), the
    machines its LP share uses and its machine in ``a``.  Every other pair
    gets a processing time above the makespan of ``a``, which the exact
    models drop (a mapping using one would be worse than their start), so
    the mapping they return is one of ``inst`` with the same makespan; their
    bound is not one of ``inst``."""
    keep = np.zeros(inst.etc.shape, dtype=bool)
    order = np.argsort(inst.etc * relax.weights[None, :], axis=1, kind="stable")[:, :r]
    np.put_along_axis(keep, order, True, axis=1)
    keep |= relax.x > 1e-9
    keep[np.arange(inst.n), a] = True
    etc = np.where(keep, inst.etc, inst.etc + 2.0 * inst.value(a))
    return MappingInstance.build(etc, inst.ready, {**inst.meta, "name": f"{inst.name}[reduced]"})


def _first_phase(inst: MappingInstance, first: str, start: np.ndarray, relax: Relaxation | None, reduce: int,
                 seconds: float, threads: int, seed: int, work_weight: float,
                 prices: np.ndarray | None = None) -> tuple:
    """Run the exact method ``first`` from ``start`` for ``seconds`` (with
    ``work_weight`` and the work ``prices`` when it takes them): its
    mapping when better than ``start`` (else None), what ``info["first"]``
    records of it, and its proven bound on the instance (None for a
    size-reduced model or a method that proved none)."""
    from epochbench.instances.registry import solve
    m = inst.k
    small = reduce > 0 and relax is not None and reduce < m
    weighted = {"work_weight": float(work_weight)} if first in WEIGHTED else {}
    if weighted and work_weight > 0 and prices is not None:
        weighted["work_prices"] = prices
    pre = solve(_reduced(inst, relax, start, int(reduce)) if small else inst, first,
                time_limit=max(0.0, seconds), threads=threads, seed=seed, hint=start, **weighted)
    value = inst.value(np.asarray(pre.decision, dtype=np.int64)) if pre.decision else np.inf
    info = {"method": first, "value": value, "status": pre.status, "bound": None if small else pre.bound,
            "machines_per_task": int(reduce) if small else m, "work_weight": weighted.get("work_weight")}
    better = np.asarray(pre.decision, dtype=np.int64) if value < inst.value(start) else None
    proved = not small and pre.bound is not None and pre.info.get("bound_kind") == "solver"
    return better, info, float(pre.bound) if proved else None


def lns(inst: MappingInstance, *, time_limit: float, threads: int = 1, seed: int = 0, machines: int = 4,
        max_machines: int = 10, repair_s: float = 0.25, hint=None, warm: bool = True,
        first: str | None = "milp-highs", first_share: float = 0.3, reduce: int = 0,
        first_work_weight: float = FIRST_WORK_WEIGHT, repair_work_weight: float = REPAIR_WORK_WEIGHT,
        tail_share: float = TAIL_SHARE, prices: str = "lp", kernel_share: float = KERNEL_SHARE,
        related_share: float = RELATED_SHARE) -> Result:
    """Large-neighbourhood search for the minimum makespan (beyond the seeds).

    Parameters
    ----------
    inst : MappingInstance
        ETC matrix (t x m) and ready times.
    time_limit : float
        Wall time of the whole call (seconds), the LP bound included.
    threads : int
        CP-SAT workers of each repair.
    seed : int
        Random choices (neighbourhoods, long hops) and CP-SAT's seed.
    machines, max_machines : int
        Machines per repair: ``machines`` at first and after every
        improvement, two more after :data:`PATIENCE` repairs without one, up
        to ``max_machines`` (a variable neighbourhood); after :data:`SWEEPS`
        such sweeps without improvement, a long hop.  A machine set that
        CP-SAT has proven optimal is not drawn again while the same tasks
        are on it.
    repair_s : float
        Time limit of a repair of ``machines`` machines (scaled with the
        neighbourhood's size).
    hint : array of int, optional
        Start mapping (default: the best of Min-Min and the fast mapping
        heuristics, :func:`~epochbench.exact.starts.best_start`; ``warm=False``:
        Min-Min).
    first : str or None
        An exact method run first for ``first_share`` of the time limit,
        from the start mapping (default ``milp-highs``: on the Braun matrices
        its incumbent is the best after a few seconds, and the repairs
        improve on it); its mapping replaces the start when better.  None:
        repairs only.
    first_work_weight : float
        The first method's ``work_weight`` (``milp-highs`` and ``milp-cbc``;
        other first methods do not take one): it minimises C +
        ``first_work_weight`` x (total work) / m, the work priced as
        ``prices`` says, a pull toward mappings that do less work in all.
        On the Braun matrices the repairs balance the machines but cannot
        lower the total work much, so the
        basin the first phase ends in decides the result (u_i_lohi, 60 s,
        seeds 0 to 3: 1 of 4 runs within 0.05 % of the best known with
        weight 0, 3 of 4 with 0.1; all 12 matrices, seeds 0 to 2: 9 of 36
        runs above 0.05 % with weight 0, 6 with 0.1).  0: the makespan
        alone.
    repair_work_weight : float
        The repairs minimise the makespan + ``repair_work_weight`` x (total
        work) / m (in steps of 1 / :data:`WEIGHT_GRID`; the work priced as
        ``prices`` says), the makespan
        there being at least the other machines' largest finishing time, so
        a repair never raises the makespan and, where it cannot lower it,
        lowers the work; a repair is kept when it lowers that objective.
        Ours: after the first phase the machines are balanced to within a
        fraction of a per cent but do more work in all than a best-known
        mapping on as many machines allows (u_i_lolo, 60 s, seed 1: 0.035 %
        more than 16 x the best-known makespan); repairs on the makespan
        alone only balance them.  All 12 Braun matrices at 60 s, seeds 0
        to 2, work priced at 1 / m: 1 of 36 runs above 0.05 % of the best
        known with 0.5 (mean gap 0.0049 %), 6 of 36 with 0 (mean
        0.0188 %); with 1.0 u_i_hihi
        seed 0 ended at 0.110 % against 0.062 %.  Those seeds were the
        ones tuned on: seeds 3 and 4, never used while tuning, gave 6 of
        24 runs above 0.05 % (mean 0.031 %, largest 0.143 %, u_i_lohi
        seed 4); the stuck runs stop improving a few seconds after the
        first phase, in a mapping where CP-SAT repairs of 100 to 160 tasks
        over all 16 machines (30 to 40 s of them) found nothing better.
        0: the makespan alone throughout.
    prices : {"lp", "uniform"}
        What a unit of work costs on each machine in both work terms (the
        first phase's and the repairs'): ``"lp"`` (default) the LP
        relaxation's machine duals ``w`` (:func:`~epochbench.exact.mapping.lp_relaxation`,
        summing to 1), so the terms weigh sum_j w_j x (work on machine j);
        ``"uniform"`` 1 / m each, the total work / m.  Ours: any mapping
        ``a`` has makespan C >= sum_j w_j load_j = LP + sum_i (w[a_i]
        etc[i, a_i] - min_j w_j etc[i, j]), so a mapping near the best known
        uses assignments whose LP reduced costs add up to little more than
        the best known less the LP bound; the duals, not 1 / m, say which
        work is too much.  They differ most where machines differ (u_s_lohi:
        0.021 to 0.172).  A run stuck at 0.166 % with 1 / m (u_s_lohi seed
        3, its first phase at 0.54 %) ended at 0.018 % (first phase
        0.166 %).  All 12 Braun matrices, 60 s, seeds 3 to 6 (none used in
        tuning): 5 of 48 runs above 0.05 % of the best known, mean gap
        0.015 %, with ``"lp"``; 10 of 48, mean 0.028 %, with ``"uniform"``
        (seeds 0 to 2: none of 36, mean -0.0008 %, against 1 of 36).
        u_i_lohi, whose duals are nearly equal (0.052 to 0.079), still
        misses on 3 of those 4 seeds.  ``"lp"`` falls back to 1 / m when
        there is no LP (one machine, or no time left for it);
        ``info["prices"]`` says which was used.
    kernel_share : float
        Share of the time limit each kernel search may take (:func:`_kernel`;
        0: none).  Kernel searches start when the best mapping has not
        improved for :data:`KERNEL_IDLE` of the time limit, not before
        :data:`KERNEL_AT` of it.  The kernel grows as in kernel search
        [angelelli2010]: the first keeps the pairs whose LP reduced cost is
        at most :data:`KERNEL_SHARES` [0] x (best makespan - LP bound); a
        search that finds nothing better is followed by one on the next
        share, one that lowers the best makespan by the first share again
        (of the new, smaller gap); after the last share, none.  Ours: the
        small kernels are the ones that work.  In u_s_lohi a stuck mapping
        (0.067 % above the best known) and a better one (-0.016 %) differ
        in 16 tasks on 13 of the 16 machines, beyond any repair, yet every
        pair of the better one has a reduced cost of at most 0.028 % of the
        best known: 5 % of the stuck mapping's gap to the LP bound.  From
        seven stuck mappings (u_i_lohi and u_s_lohi, 0.053 % to 0.145 %
        above the best known), 10 s of CP-SAT on the kernel of share 0.05
        (700 to 800 of the 8,192 pairs) ended within 0.05 % of the best
        known from all seven (-0.014 % to 0.045 %; two proven optimal over
        the kernel in under 3 s), share 0.08 from two, share 0.03 (proven
        in under 5 s) from none; shares 1/6 and 1/3 (1,100 to 2,200 pairs,
        15 s, the former defaults) from none and one of five.  Within the
        60 s, all 12 Braun matrices: seeds 3 to 6, no run above 0.05 % of
        the best known (mean -0.016 %, largest 0.033 %), against 2 of 48
        (mean 0.011 %, largest 0.114 %) with shares 1/6, 1/3, 2/3 once each
        (20 s each); seeds 13 to 16, 1 of 48 (u_i_hihi seed 16, 0.051 %;
        mean -0.016 %).  78 of those 96 runs ended below the best-known
        value, on every one of the 12 matrices (by up to 0.067 %, u_c_lohi).
    related_share : float
        Odd-turn repairs take related machines in Shaw's sense [shaw1998]
        (:func:`_related`): the makespan machine, the least loaded one and
        others drawn with probability proportional to the number of tasks on
        either machine that have a cheap pair on the other (LP reduced cost at
        most ``related_share`` x (best makespan - LP bound),
        :func:`_relatedness`); 0: random machines instead (as when there is no
        LP).  Ours: a stuck mapping needs work passed along a chain of
        machines, each step a task to a machine where it costs little more;
        drawn at random, the machines of such a chain rarely meet.  In u_s_lohi
        runs of two seeds the makespan machine held the same 36 tasks, every
        one on its cheapest machine by the LP prices, at the same makespan
        (0.067 % above the best known; a third seed ended there too).  From
        the end states of six 60 s runs (0.03 % to 0.12 % above the best
        known), 20 s of repairs on related machines alone improved four
        (u_s_lohi 0.067 % -> 0.018 %; the two u_i_lohi states did not move),
        where HiGHS for 15 s from the same states (work weight 0 or 0.1)
        improved none.  All 12 Braun matrices at 60 s, with the kernel
        searches of that time (shares 1/6, 1/3, 2/3): seeds 9 to 12, 3 of 48
        runs above 0.05 % of the best known (mean 0.009 %, largest 0.081 %)
        against 4 (mean 0.012 %, largest 0.122 %) with random machines; seeds
        3 to 6, 2 of 48 (mean 0.011 %, largest 0.114 %) against 4 (mean
        0.014 %, largest 0.116 %).  Without the kernel searches
        (``kernel_share=0``), seeds 9 to 12 gave 2 misses (mean 0.002 %) but
        seeds 3 to 6 gave 5 (mean 0.013 %; u_i_lohi seeds 3 to 5 at 0.11 % to
        0.15 %, which the kernels reach), so both stay.
    tail_share : float
        The last share of the time limit in which the repairs weigh the
        makespan alone again, from the best mapping found (only with a
        positive ``repair_work_weight``).  Without it (0), 3 of 6 runs
        near the 0.05 % mark ended above it, against 1 of 6 with 0.25
        (u_i_lohi seed 2: 0.082 % against 0.033 %).
    reduce : int
        0 (default), or at least the number of machines: the first method
        works on the whole model, and its proven bound joins the bound.
        Else the machines per task in its model, a size reduction
        [fanjulpeyro2011] (:func:`_reduced`: the ``reduce`` machines of least
        LP-dual-weighted processing time, the LP solution's and the start's).
        On the Braun matrices, 5 machines per task gave HiGHS a better
        mapping after 18 s on 3 of 4 hard matrices, but the whole LNS at
        60 s was no better on average over 4 seeds than the default (and
        its bound is the LP's only); so it is an option, not the default.

    Returns
    -------
    Result
        The best mapping found, its makespan, ``bound`` the lower bound
        (combinatorial and LP), status ``optimal`` when they meet, else
        ``feasible``; ``info``: ``start``, ``first`` (the first method's
        ``value``, ``status``, ``bound`` (None for a reduced model),
        ``machines_per_task`` and ``work_weight``, None for a method that
        takes none), ``repair_work_weight`` (0.0: the makespan alone),
        ``prices`` (``"lp"`` or ``"uniform"``, as used),
        ``tail_from_repair`` (the repair the tail began with; absent when
        there was none), ``repairs``, ``improved``, ``long_hops``,
        ``proven_repairs`` (machine sets proven optimal),
        ``related_share`` (0.0 when the repairs drew random machines),
        ``kernels`` (one
        record per kernel search: ``share``, ``pairs``, ``ended_s``, its
        ``value`` (None when CP-SAT found none), ``proven`` over the
        kernel and ``improved``: whether it lowered the best makespan), ``skipped``
        (rounds whose every draw was such a set), ``lp_bound``.

    Notes
    -----
    Each round costs one descent, O(rounds (t m + t^2 / m)), the machines'
    relatedness, O(t m + m^2), and one CP-SAT call on about ``k t / m``
    tasks for ``k`` machines; the LP bound is one
    LP with t m + 1 columns (0.15 s at 512 x 16), solved first.

    References
    ----------
    .. [shaw1998] P. Shaw. Using Constraint Programming and Local Search Methods to Solve Vehicle
       Routing Problems. CP 1998, LNCS 1520, pp. 417-431. https://doi.org/10.1007/3-540-49481-2_30.
    .. [angelelli2010] E. Angelelli, R. Mansini, M. G. Speranza. Kernel search: a general heuristic for
       the multi-dimensional knapsack problem. Computers & Operations Research 37(11):2017-2026, 2010.
       https://doi.org/10.1016/j.cor.2010.02.002.
    """
    _check_lns(inst, first=first, repair_work_weight=repair_work_weight, kernel_share=kernel_share,
               related_share=related_share, prices=prices, tail_share=tail_share, machines=machines,
               max_machines=max_machines, repair_s=repair_s, first_share=first_share, reduce=reduce,
               first_work_weight=first_work_weight)
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit)
    t, m = inst.etc.shape
    k_min = max(2, min(int(machines), m))
    k_max = max(k_min, min(int(max_machines), m))
    a, origin = start_mapping(inst, hint, warm, START_SHARE * float(time_limit))
    lb = inst.lower_bound()
    relax = lp_relaxation(inst) if m > 1 and time_left(deadline) > 0 else None
    lp = relax.bound if relax is not None else None
    bound = max(lb, lp or 0.0)
    info = {"start": origin, "start_makespan": inst.value(a), "lp_bound": lp, "lower_bound": lb}
    price = relax.weights if prices == "lp" and relax is not None else None     # None: 1 / m each
    info["prices"] = "lp" if price is not None else "uniform"
    grid = decimal_grid(inst)
    if first and m > 1 and not meets(inst.value(a), bound, grid) and time_left(deadline) > 0:
        seconds = min(float(first_share) * float(time_limit), time_left(deadline))
        got, info["first"], pre_bound = _first_phase(inst, first, a, relax, reduce, seconds, threads, seed,
                                                     first_work_weight, price)
        if got is not None:
            a, info["start"] = got, f"{origin} + {first}"
        bound = max(bound, pre_bound or 0.0)
    best, best_value = a.copy(), inst.value(a)
    rng = np.random.default_rng(seed)
    repairs = improved = hops = stall = sweeps = skipped = kernel = 0
    kernels: list = []
    idle_from = time.perf_counter()
    kernel_at, kernel_idle = t0 + KERNEL_AT * float(time_limit), KERNEL_IDLE * float(time_limit)
    k = k_min
    sc = scaled(inst)
    proven: set = set()
    weights = _weights(sc, repair_work_weight, price) if m > 1 else None
    if k_min >= m:       # every repair is the whole instance: the makespan alone, which a proof then settles
        weights = None
    tail_at = deadline - float(tail_share) * float(time_limit)
    info["repair_work_weight"] = round(float(repair_work_weight) * WEIGHT_GRID) / WEIGHT_GRID if weights else 0.0
    rc = None                                                   # LP reduced costs, for related neighbourhoods
    if relax is not None and related_share > 0:
        rc = _reduced_costs(inst, relax)
    while m > 1 and not meets(best_value, bound, grid) and time_left(deadline) > 0:
        if weights is not None and time.perf_counter() >= tail_at:  # the tail: makespan alone, from the best
            weights, proven, a, k, stall, sweeps = None, set(), best.copy(), k_min, 0, 0
            info["tail_from_repair"] = repairs
        a = _descent(sc.etc, sc.ready, a)                       # short hops: moves and swaps
        fin = _finish(sc, a)
        rel = None if rc is None else _relatedness(a, rc <= related_share * max(best_value - relax.bound, 0.0))
        cols = _fresh_neighbourhood(a, fin, k, rng, repairs, proven, rel)
        repairs += 1
        if cols is None:                                        # every draw already proven: no repair
            new, skipped = None, skipped + 1
        else:
            step = float(repair_s) * k / k_min
            new, optimal = _repair(inst, sc, a, cols, min(deadline, time.perf_counter() + step), threads,
                                   int(rng.integers(2**31)), weights)
            if optimal and len(proven) < PROVEN_CAP:
                proven.add(_key(a, cols))
            if optimal and weights is None and sc.exact and len(cols) == m:
                bound = max(bound, inst.value(new))     # every task on every machine: the instance's optimum
        if new is not None and (_finish(sc, new)[cols].max() < fin[cols].max() if weights is None
                                else _merit(sc, new, weights) < _merit(sc, a, weights)):
            a, stall = new, 0
        else:
            stall += 1
        value = inst.value(a)
        if value < best_value:
            best, best_value, improved, k, sweeps = a.copy(), value, improved + 1, k_min, 0
            idle_from = time.perf_counter()
        now = time.perf_counter()
        if (relax is not None and kernel < len(KERNEL_SHARES) and kernel_share > 0 and now >= kernel_at
                and now - idle_from >= kernel_idle):                     # the best is stuck: a kernel search
            got, proved, size = _kernel(inst, sc, relax, best, KERNEL_SHARES[kernel],
                                        min(deadline, now + float(kernel_share) * float(time_limit)), threads,
                                        int(rng.integers(2**31)))
            got_value = inst.value(got) if got is not None else None
            better = got_value is not None and got_value < best_value
            kernels.append({"share": KERNEL_SHARES[kernel], "pairs": size, "ended_s": time.perf_counter() - t0,
                            "value": got_value, "proven": proved, "improved": better})
            if better:                                          # the new best's kernels, smallest first
                best, best_value, a, improved, kernel = got.copy(), got_value, got, improved + 1, 0
            else:                                               # a larger kernel next
                a, kernel = best.copy(), kernel + 1
            k, sweeps, stall, idle_from = k_min, 0, 0, time.perf_counter()
        if stall >= PATIENCE:
            stall = 0
            if k < k_max:                                       # a larger neighbourhood first
                k = min(k_max, k + 2)
            elif sweeps + 1 < SWEEPS:                           # sizes swept again from the smallest
                k, sweeps = k_min, sweeps + 1
            else:                                               # then a long hop from the best mapping
                a, k, sweeps, hops = _kick(best, m, rng), k_min, 0, hops + 1
    where = against(best_value, bound, "min")
    if where == "refuted":      # a solver's bound above a checked mapping proves nothing: the instance's own stays
        refuted(info, bound, best_value, "the LP relaxation or the first phase's solver")
        bound, lp, where = lb, None, against(best_value, lb, "min")
    status = "optimal" if where == "meets" and meets(best_value, bound, grid) else "feasible"
    info.update(repairs=repairs, improved=improved, long_hops=hops, proven_repairs=len(proven), kernels=kernels,
                related_share=float(related_share) if rc is not None else 0.0,
                skipped=skipped, machines=[k_min, k_max], repair_s=repair_s,
                bound_kind="solver" if lp is not None and lp > lb else "combinatorial")
    return Result(inst.kind, "lns", tuple(int(j) for j in best), best_value, status, time.perf_counter() - t0,
                  best_value if status == "optimal" else min(bound, best_value), info)


def _check_lns(inst: MappingInstance, *, hint=None, first="milp-highs", repair_work_weight=REPAIR_WORK_WEIGHT,
               kernel_share=KERNEL_SHARE, related_share=RELATED_SHARE, prices="lp", tail_share=TAIL_SHARE,
               machines=4, max_machines=10, repair_s=0.25, first_share=0.3, reduce=0,
               first_work_weight=FIRST_WORK_WEIGHT, **_) -> None:
    """The parameters of :func:`lns` checked on ``inst`` (its ``check_params``
    hook: before a run, nothing solved); ValueError naming the first bad one."""
    check_count("lns", "machines", machines, 2)                # a repair moves tasks between machines
    check_count("lns", "max_machines", max_machines, int(machines))
    check_positive("lns", "repair_s", repair_s)
    check_share("lns", "first_share", first_share)
    check_count("lns", "reduce", reduce, 0)
    check_positive("lns", "first_work_weight", first_work_weight, zero=True)   # it failed mid-run, named work_weight
    if not (math.isfinite(repair_work_weight) and repair_work_weight >= 0):
        raise ValueError(f"repair_work_weight must be a finite number >= 0, got {repair_work_weight!r}")
    if not 0 <= kernel_share <= 1:
        raise ValueError(f"kernel_share must be a share of the time limit in [0, 1], got {kernel_share!r}")
    if not (math.isfinite(related_share) and related_share >= 0):
        raise ValueError(f"related_share must be a finite number >= 0, got {related_share!r}")
    if prices not in PRICES:
        raise ValueError(f"prices must be one of {', '.join(PRICES)}, got {prices!r}")
    if not 0 <= tail_share <= 1:
        raise ValueError(f"tail_share must be a share of the time limit in [0, 1], got {tail_share!r}")
    if first is not None and first not in METHODS:     # '' or {} read as None before
        raise ValueError(f"first must be one of {', '.join(METHODS)} or None, got {first!r}")
    if hint is not None:
        check_hint(inst, hint)


@register("mapping", "lns", kind="exact")
def mapping_lns(inst, *, time_limit: float, threads: int = 1, **params) -> Result:
    """Large-neighbourhood search: local moves and CP-SAT repair of a few machines, with the LP bound
    (beyond the seeds; see exact.mapping_lns.lns)"""
    return lns(inst, time_limit=time_limit, threads=threads, **params)


forwards(mapping_lns, lns)
mapping_lns.warm_start = True        # takes warm=False (start from Min-Min only)
mapping_lns.check_params = _check_lns   # before a run (epochbench.methods)
mapping_lns.warm_up = warm_up_backends("cpsat", "milp-highs", "scipy", family="mapping")   # before the clock
