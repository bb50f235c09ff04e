"""License knapsack heuristics ([capannini2007] section 4.2, Clustering & Pre-Matching).

* :func:`critical_licenses` -- ``rho_l > 1`` ([capannini2007] 4.1, Licenses);
* :func:`license_clusters` -- jobs sharing critical licenses, the connected
  components of the license hypergraph (licenses are nodes, jobs hyperedges);
* :func:`greedy_mkp` (``greedy-mkp``) -- the paper's greedy: Eilon's
  surrogate turns the MKP into a 0-1 knapsack with weight ``a-bar_i =
  sum_{l in L_c} a[i, l] / b_l``; jobs are taken in decreasing ``c_i /
  a-bar_i`` order while they fit, and after every discard the critical
  licenses and hence the weights and the order of the jobs still pending are
  recomputed (a license may stop being critical);
* :func:`greedy_ratio` (``greedy-ratio``) -- the baseline: decreasing profit
  per aggregate weight ``c_i / sum_l a[i, l] / b_l`` over all licenses, no
  re-weighting.

Both return the selected jobs in pick order.  The greedy works on the whole
instance; it takes the same decisions as one run per cluster, since a job's
weight, order among its cluster and fit depend on its own cluster's licenses
only (tests check this).
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.core import Result
from epochbench.instances.knapsack import KnapsackInstance
from epochbench.instances.lazy import njit
from epochbench.instances.registry import register


def critical_licenses(inst: KnapsackInstance) -> np.ndarray:
    """Boolean mask of the licenses with ``rho_l > 1``: more requested than
    copies ([capannini2007] 4.1, Licenses).  O(n L)."""
    return inst.rho() > 1.0


def license_clusters(inst: KnapsackInstance, critical: np.ndarray | None = None) -> list[np.ndarray]:
    """Jobs asking for critical licenses, grouped so that jobs sharing a
    critical license (directly or through a chain) are in one cluster and each
    job in exactly one ([capannini2007] 4.2): connected components of the hypergraph
    whose nodes are the critical licenses and whose arcs are the jobs.
    Clusters as ascending index arrays, ordered by their first job; jobs asking
    for no critical license belong to none.  O(n L)."""
    crit = critical_licenses(inst) if critical is None else np.asarray(critical, dtype=bool)
    uses = inst.weights[:, crit] > 0
    jobs = np.nonzero(uses.any(axis=1))[0]
    if jobs.size == 0:
        return []
    n_lic = int(crit.sum())
    rows, cols = np.nonzero(uses[jobs])
    from scipy.sparse import csr_matrix          # lazy: SciPy only when used
    from scipy.sparse.csgraph import connected_components
    # bipartite graph: licenses 0..n_lic-1, jobs n_lic..; components of it
    graph = csr_matrix((np.ones(rows.size), (cols, n_lic + rows)), shape=(n_lic + jobs.size,) * 2)
    _, label = connected_components(graph, directed=False)
    lab = label[n_lic:]
    out = [jobs[lab == c] for c in np.unique(lab)]
    return sorted(out, key=lambda c: int(c[0]))


@njit(cache=True)
def _surrogate(a, b, crit, i):
    s = 0.0
    for r in range(a.shape[1]):
        if crit[r] and a[i, r] > 0:
            s += a[i, r] / b[r] if b[r] > 0 else np.inf
    return s


@njit(cache=True)
def _order(a, b, c, crit, pending):
    """Pending jobs by decreasing c / a-bar (a-bar = 0: first), ties by index."""
    key = np.empty(pending.size)
    for t in range(pending.size):
        s = _surrogate(a, b, crit, pending[t])
        key[t] = -np.inf if s == 0.0 else -c[pending[t]] / s
    return pending[np.argsort(key, kind="mergesort")]


@njit(cache=True)
def _greedy(a, b, c, crit, reweight):
    """Greedy over the surrogate order; with ``reweight``, after each discard
    the licenses whose remaining demand fits stop being critical and the
    pending jobs are re-ordered.  Returns (picked in order, discards, re-sorts).
    O(n L + F n (L + log n)) for F licenses turning non-critical."""
    n, nl = a.shape
    rem = b.copy()
    demand = np.zeros(nl, dtype=np.int64)
    for i in range(n):
        for r in range(nl):
            demand[r] += a[i, r]
    order = _order(a, b, c, crit, np.arange(n))
    picked = np.empty(n, dtype=np.int64)
    done = np.zeros(n, dtype=np.bool_)
    npick = 0
    discards = 0
    resorts = 0
    pos = 0
    while pos < order.size:
        i = order[pos]
        pos += 1
        done[i] = True
        fits = True
        for r in range(nl):
            if a[i, r] > rem[r]:
                fits = False
                break
        if fits:
            for r in range(nl):
                rem[r] -= a[i, r]
            picked[npick] = i
            npick += 1
            continue
        discards += 1
        flipped = False
        for r in range(nl):
            demand[r] -= a[i, r]
            if reweight and crit[r] and demand[r] <= b[r]:
                crit[r] = False
                flipped = True
        if flipped and pos < order.size:
            order = _order(a, b, c, crit, np.sort(order[pos:]))
            pos = 0
            resorts += 1
    return picked[:npick], discards, resorts


def _run(inst: KnapsackInstance, crit: np.ndarray, reweight: bool, method: str) -> Result:
    a = np.array(inst.weights, dtype=np.int64, order="C")  # writable C-order copies: numba compiles
    # another version for a read-only or a Fortran-order array (weights transposed from a file's layout)
    b = np.array(inst.capacity, dtype=np.int64)
    c = np.array(inst.profit, dtype=np.float64)
    picked, discards, resorts = _greedy(a, b, c, np.array(crit, dtype=np.bool_), reweight)
    sel = tuple(int(i) for i in picked)
    return Result(inst.kind, method, sel, inst.value(sel), "feasible", 0.0,
                  info={"critical": int(np.sum(crit)), "discarded": int(discards), "resorts": int(resorts)})


@register("knapsack", "greedy-mkp")
def greedy_mkp(inst: KnapsackInstance, reweight: bool = True) -> Result:
    """[capannini2007] 4.2 greedy MKP: Eilon surrogate over the critical licenses,
    decreasing c-bar / a-bar, weights and order recomputed after each discard.
    O(n L + F n (L + log n)), F <= L licenses that stop being critical.

    Parameters
    ----------
    inst : KnapsackInstance
        License copies ``capacity`` (L), the jobs' ``weights`` (n x L) and
        ``profit`` (n).
    reweight : bool, default True
        See above.

    Returns
    -------
    Result
        ``decision``: the indices of the jobs that get their licenses
        (checked by ``check_knapsack``); ``info``: ``critical`` licenses,
        jobs ``discarded``, ``resorts``.

    Notes
    -----
    Cost: O(n L + F n (L + log n)), F <= L licenses that stop being critical.

    References
    ----------
    .. [capannini2007] G. Capannini, R. Baraglia, D. Puppin, L. Ricci, M. Pasquali. A Job Scheduling
       Framework for Large Computing Farms. Proceedings of the ACM/IEEE Conference on Supercomputing
       (SC '07), Reno, 2007. https://doi.org/10.1145/1362622.1362686.
    """
    return _run(inst, critical_licenses(inst), bool(reweight), "greedy-mkp")


@register("knapsack", "greedy-ratio")
def greedy_ratio(inst: KnapsackInstance) -> Result:
    """Baseline: jobs by decreasing profit / sum_l a[i, l] / b_l (all
    licenses), each taken if it fits: the plain efficiency ratio of the
    greedy MKP heuristics ([chu1998] section 2; [capannini2007] section 4.2
    refines it with surrogate weights).  O(n L + n log n).

    Parameters
    ----------
    inst : KnapsackInstance
        License copies ``capacity`` (L), the jobs' ``weights`` (n x L) and
        ``profit`` (n).

    Returns
    -------
    Result
        ``decision``: the indices of the jobs that get their licenses
        (checked by ``check_knapsack``); ``info``: ``critical`` licenses,
        jobs ``discarded``, ``resorts``.

    Notes
    -----
    Cost: O(n L + n log n).

    References
    ----------
    .. [chu1998] P. C. Chu, J. E. Beasley. A Genetic Algorithm for the Multidimensional Knapsack
       Problem. Journal of Heuristics 4(1):63-86, 1998. https://doi.org/10.1023/A:1009642405419.
    .. [capannini2007] G. Capannini, R. Baraglia, D. Puppin, L. Ricci, M. Pasquali. A Job Scheduling
       Framework for Large Computing Farms. Proceedings of the ACM/IEEE Conference on Supercomputing
       (SC '07), Reno, 2007. https://doi.org/10.1145/1362622.1362686.
    """
    return _run(inst, np.ones(inst.k, dtype=bool), False, "greedy-ratio")


__all__ = ["critical_licenses", "license_clusters", "greedy_mkp", "greedy_ratio"]
