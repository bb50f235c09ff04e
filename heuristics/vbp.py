"""Literature heuristics for vector bin packing, the ``epochs`` family
(beyond the seeds, labelled so): item-centric first fit decreasing under the
usual size measures, and the bin-centric heuristics of [panigrahy2011].

The seeds' own ``epochs`` heuristics apply a packing heuristic epoch after
epoch ([leinberger1999] fig. 1); these give the family a baseline at the
literature's level next to them.  Sizes are measured on demands normalised
by the capacity of each resource.
"""
from __future__ import annotations

import re

import numpy as np

from epochbench.instances.packing import EpochsInstance
from epochbench.instances.registry import register


def _normalised(inst: EpochsInstance) -> np.ndarray:
    cap = inst.capacity.astype(np.float64)
    return np.divide(inst.demand, cap, out=np.zeros(inst.demand.shape), where=cap > 0)


#: size measures of first fit decreasing, on normalised demands (rows)
SIZES = {"sum": lambda d: d.sum(axis=1), "max": lambda d: d.max(axis=1, initial=0.0),
         "l2": lambda d: np.sqrt((d * d).sum(axis=1))}


def first_fit_decreasing(inst: EpochsInstance, size: str = "sum") -> list[list[int]]:
    """First fit decreasing (item-centric), beyond the seeds: items by
    decreasing ``size`` of their normalised demand vector (``sum``, ``max``
    or ``l2``; ties by index), each into the first open bin with room on
    every resource, else a new bin ([panigrahy2011] section 3, FFD with the
    size functions it compares).

    Parameters
    ----------
    inst : EpochsInstance
        ``capacity`` (K) and the jobs' ``demand`` (n x K); every job fits alone.
    size : {"sum", "max", "l2"}, default "sum"
        The size measure of the decreasing order.

    Returns
    -------
    list of list of int
        The bins (epochs), each the jobs it runs (checked by ``check_epochs``).

    Notes
    -----
    Cost: O(n log n + n B K) for B bins.

    References
    ----------
    .. [panigrahy2011] R. Panigrahy, K. Talwar, L. Uyeda, U. Wieder. Heuristics for Vector Bin
       Packing. Microsoft Research technical report, 2011.
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    order = np.argsort(-SIZES[size](_normalised(inst)), kind="stable")
    free = np.empty((0, inst.k), dtype=np.int64)
    bins: list[list[int]] = []
    for j in order:
        fits = np.flatnonzero((inst.demand[j] <= free).all(axis=1)) if len(bins) else np.empty(0, int)
        if fits.size:
            b = int(fits[0])
            free[b] -= inst.demand[j]
            bins[b].append(int(j))
        else:
            free = np.vstack([free, inst.capacity - inst.demand[j]])
            bins.append([int(j)])
    return bins


def _first_best(values: np.ndarray, k: int) -> int:
    """Index of the first of the largest ``values``, where values within
    rounding of the largest count as equal.  Each value is one row's sum of
    ``k`` terms in [0, 1] (products or squares of normalised numbers), off by
    less than k**2 ulps of 1 from its exact value, so scores equal in exact
    arithmetic tie and go to the lowest index, as the docstrings promise
    (two exact scores that differ do so by at least 1 / C**2 for integer
    demands on capacities all C, 1e-12 at C = 1e6, far above that; with
    unequal capacities the least difference is 1 / lcm(C_r**2), which for
    large coprime capacities can fall below it, and two such scores then
    tie).  The
    rows are summed by numpy row by row, not by a BLAS matrix-vector
    product, whose kernels may round equal rows differently (by block and
    tail code paths, which differ between CPUs): the same picks on every
    machine.  Measured on the 180 VBP files of classes 1-9 (20 and 40
    items, 3 and 5 resources) and 280 leinberger instances: a BLAS product
    and an argmax had told exact ties apart by rounding, so that ``bc-dot``
    packed 46 of them otherwise (41 VBP files, 5 generated; one bin fewer
    on one) and ``bc-l2`` one; now every pick on them is the first of the
    best in rational arithmetic."""
    best = values.max()
    return int(np.argmax(values >= best - 2.0 * k * k * np.finfo(np.float64).eps))


def bin_centric(inst: EpochsInstance, score: str = "dot") -> list[list[int]]:
    """Bin-centric packing, beyond the seeds ([panigrahy2011] section 4):
    open one bin, repeatedly put into it the fitting item that scores best
    against the bin's remaining capacity r (normalised), until none fits;
    then open the next.  ``dot``: the largest dot product d . r (items that
    use what is left most); ``l2``: the smallest ||r - d|| (items that leave
    the most balanced remainder).  Ties by index.

    Parameters
    ----------
    inst : EpochsInstance
        ``capacity`` (K) and the jobs' ``demand`` (n x K); every job fits alone.
    score : {"dot", "l2"}, default "dot"
        The rule choosing the next item of the open bin.

    Returns
    -------
    list of list of int
        The bins (epochs), each the jobs it runs (checked by ``check_epochs``).

    Notes
    -----
    Cost: O(n^2 K).

    References
    ----------
    .. [panigrahy2011] R. Panigrahy, K. Talwar, L. Uyeda, U. Wieder. Heuristics for Vector Bin
       Packing. Microsoft Research technical report, 2011.
    """
    if score not in ("dot", "l2"):
        raise ValueError(f"score must be 'dot' or 'l2', got {score!r}")
    norm = _normalised(inst)
    cap = inst.capacity.astype(np.float64)
    left = np.ones(inst.n, dtype=bool)
    bins: list[list[int]] = []
    while left.any():
        free = inst.capacity.copy()
        current: list[int] = []
        while True:
            cand = np.flatnonzero(left & (inst.demand <= free).all(axis=1))
            if cand.size == 0:
                break
            r = np.divide(free, cap, out=np.zeros(inst.k), where=cap > 0)
            if score == "dot":
                pick = cand[_first_best((norm[cand] * r).sum(axis=1), inst.k)]
            else:
                pick = cand[_first_best(-((r - norm[cand]) ** 2).sum(axis=1), inst.k)]
            current.append(int(pick))
            left[pick] = False
            free = free - inst.demand[pick]
        bins.append(current)
    return bins


def _variant(func, option: str, value: str, title: str):
    """``func`` with ``option=value``, registered under its own name; its
    docstring is ``title`` plus ``func``'s sections."""
    def method(inst: EpochsInstance) -> list[list[int]]:
        return func(inst, **{option: value})
    doc = func.__doc__ or ""
    sections = doc[doc.index("    Parameters"):] if "    Parameters" in doc else ""
    sections = re.sub(rf"    {option} : .*\n(?:        .*\n)*", "", sections)   # fixed here
    method.__name__ = method.__qualname__ = f"{func.__name__}_{value}"
    method.__doc__ = f"{title} ([panigrahy2011]; beyond the seeds; ``{option}={value!r}``).\n\n{sections}"
    return method


for _size, _title in (("sum", "FFD by the sum of normalised demands"), ("max", "FFD by the largest normalised demand"),
                      ("l2", "FFD by the Euclidean norm of the normalised demands")):
    _f = register("epochs", f"ffd-{_size}")(_variant(first_fit_decreasing, "size", _size, _title))
    globals()[_f.__name__] = _f         # the name it carries: pickled by reference (a sweep's tasks)
for _score, _title in (("dot", "Bin-centric, dot product with the remaining capacity"),
                       ("l2", "Bin-centric, smallest distance to the remaining capacity")):
    _f = register("epochs", f"bc-{_score}")(_variant(bin_centric, "score", _score, _title))
    globals()[_f.__name__] = _f
