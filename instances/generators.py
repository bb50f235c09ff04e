"""Instance generators and readers for the ``packing`` and ``epochs`` families.

=============  ========================================================  ============
name           what                                                      seed
=============  ========================================================  ============
leinberger     K-resource packing at one epoch; K-extended Feitelson      000 §3.1
               workload, background load from running jobs
los            one-resource packing on N processors, blocked head with    002 (LOS)
               a shadow-time reservation derived from the running jobs
los-example    the LOS worked example (N=10, t=25)                        002 table 2
fig1           the 6-job, 16 CPU / 32 GB example (UNC needs 2 epochs)     000 fig. 1
vbp            VPSolver vector-bin-packing files of ``data_root()/vbp``   data README
=============  ========================================================  ============

Every generator takes keyword-only parameters with defaults (listed in
:data:`GENERATOR_PARAMS`) and returns a list of instances.  Randomness flows
from ``numpy.random.default_rng(seed)``: instance ``i`` of a call uses the
``i``-th generator of ``rng.spawn(count)``, so it does not depend on ``count``.

Distribution choices ([leinberger1999] §3.1 names the model, not its numbers):

* Job size (processors) on a machine of P processors: [feitelson1996] model,
  a harmonic distribution of order 1.5 (P(s) ~ s**-1.5, s = 1..P), then a
  fraction ``p_pow2`` (default 0.75) of every size's mass is moved to the
  nearest power of two in log2 (capped at the largest power of two <= P).
  [leinberger1999] gives no numbers for Feitelson's hand-tuning; 0.75 is our choice,
  close to the [lublin2003] model, which puts 67 % of parallel
  batch jobs on powers of two.  With P = 128: 41 % of jobs are serial, 91 %
  powers of two (serial included), mean size 8.9.
* Runtime (Leinberger estimates): two-branch hyperexponential, means 300 s
  and 7200 s, the long branch taken with probability 0.1 + 0.8 log2(s)/log2(P):
  Feitelson's "weak correlation" of runtime with size.  Whole seconds, >= 1.
* K requirements ([leinberger1999] §3.1 item 2): K draws uniform on (0, 1] or
  exponential (mean 1), divided by their maximum (``norm="max"``, default:
  the largest requirement is exactly the job's share s/P, so nothing exceeds
  capacity) or by their mean (``norm="mean"``: the average share is s/P and
  requirements above capacity are capped at capacity and counted in
  ``meta["capped"]`` / ``meta["capped_running"]``); then
  ``ceil(share * capacity)`` units, at least 1.
* LOS estimates: log-uniform between 1 min and 24 h, whole seconds.
"""
from __future__ import annotations

import csv
import inspect
import math
import os
import re
import sys
from collections.abc import Hashable
from functools import lru_cache
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from .catalog import Catalog, modules_of, origin_of, plugin_call, plugins
from .checks import first_repeat, is_int as _is_int, is_number as _is_number, short as _short, split_names
from .core import MAX_NODES, InstanceError
from .data import absent, data_root
from .io import write_family
from .packing import EpochsInstance, PackingInstance, reservation_from_running

__all__ = ["data_root", "feitelson_size_pmf", "draw_sizes", "feitelson_runtimes", "k_requirements",
           "leinberger", "los", "los_example", "fig1", "load_vbp", "vbp_family", "GENERATORS",
           "GENERATOR_PARAMS", "Param", "generate", "resolved_params", "write_generated"]

DISTS = ("uniform", "exponential")
NORMS = ("max", "mean")
LOAD_RANGE = (0.3, 0.8)


# ---- workload model pieces ---------------------------------------------------------
def feitelson_size_pmf(processors: int, p_pow2: float = 0.75, order: float = 1.5) -> np.ndarray:
    """Probabilities of job sizes 1..processors (index s-1): harmonic of order
    ``order`` ([feitelson1996]), with a share ``p_pow2`` of each size's mass moved
    to the nearest power of two (log2 scale, at most the largest one <= P)."""
    s = np.arange(1, processors + 1)
    h = s.astype(float) ** -order
    h /= h.sum()
    top = 1 << (int(processors).bit_length() - 1)
    nearest = np.minimum(np.exp2(np.round(np.log2(s))), top).astype(np.int64)
    pmf = (1 - p_pow2) * h + p_pow2 * np.bincount(nearest - 1, weights=h, minlength=processors)
    return pmf / pmf.sum()


def draw_sizes(rng: np.random.Generator, pmf: np.ndarray, count: int, low: int = 1,
               high: int | None = None) -> np.ndarray:
    """``count`` sizes from ``pmf`` restricted to ``low..high`` (renormalised)."""
    high = len(pmf) if high is None else high
    p = pmf[low - 1:high]
    if high < low or p.sum() <= 0:
        raise ValueError(f"no job size in {low}..{high}")
    return rng.choice(np.arange(low, high + 1), size=count, p=p / p.sum()).astype(np.int64)


def feitelson_runtimes(rng: np.random.Generator, sizes, processors: int, short: float = 300.0,
                       long: float = 7200.0) -> np.ndarray:
    """Runtimes weakly correlated with size: hyperexponential, long branch with
    probability 0.1 + 0.8 log2(s)/log2(P); whole seconds, at least 1."""
    sizes = np.asarray(sizes, dtype=float)
    p_long = 0.1 + 0.8 * np.log2(sizes) / max(math.log2(processors), 1.0)
    mean = np.where(rng.random(sizes.shape) < p_long, long, short)
    return np.maximum(np.ceil(rng.exponential(mean)), 1.0)


def k_requirements(rng: np.random.Generator, sizes, processors: int, capacity, dist: str = "uniform",
                   norm: str = "max") -> tuple[np.ndarray, np.ndarray]:
    """[leinberger1999] §3.1 item 2: K draws per job (uniform (0,1] or exponential mean 1),
    normalised by their max or mean, scaled by size/processors, in resource units
    ``ceil(share * capacity)`` (>= 1).  Returns ``(demand, capped)``: values above
    capacity are set to capacity and ``capped[j]`` counts them (only with "mean").

    The paper's draws are continuous; whole units make ties: with 128
    processors and 1,000 units a resource, a job's largest share is held
    by two resources or more for 0.3 % of jobs at K = 2, 8.3 % at K = 4
    and 22.8 % at K = 8 (44 % of the serial jobs, whose processor share is
    1/128 whatever their draw).  BL takes the lowest-indexed of tied
    resources (:func:`~epochbench.heuristics._greedy.lowest_score`), so at
    K = 8 its gain over FF moves with the order of the extra resources
    (3,000 jobs at load 0.98, the seven extra resources reversed: 19.4 ->
    14.3 %, 11.4 -> 19.0 %, 29.8 -> 22.1 % for seeds 1 to 3; FF and BB
    unchanged); a finer ``capacity`` (10**6 units) removes the ties and
    that dependence.

    A draw equal to its job's normaliser (the largest, with "max"; every
    draw at K = 1) asks exactly ``ceil(size * capacity / processors)``,
    in integers, whatever the capacity; the others are the ceiling of a
    float product, exact to the unit below 2**53 units."""
    _choice("dist", dist, DISTS)
    _choice("norm", norm, NORMS)
    cap = np.asarray(capacity, dtype=np.int64)
    shape = (len(sizes), len(cap))
    r = 1.0 - rng.random(shape) if dist == "uniform" else rng.exponential(1.0, shape)
    scale = r.max(axis=1, keepdims=True) if norm == "max" else r.mean(axis=1, keepdims=True)
    size = np.asarray(sizes, dtype=float)
    share = r / scale * (size / processors)[:, None]
    # taken down by 2**-50 of itself, more than the product's few roundings: float error must not round
    # up a whole amount (7 / 100 * 100 = 7.000000000000001 asked for 8 units, a job of 7 processors for
    # 8 on a machine of 100).  It was 1e-12 of itself, a whole unit and more from 10**12 units on: a
    # quarter of 2**62 units asked for 1,152,921 units too few
    raw = np.maximum(np.ceil(share * cap * (1 - 2.0 ** -50)), 1).astype(np.int64)
    whole = _whole_shares(size, processors, cap)
    if whole is not None:
        raw = np.where(r == scale, whole, raw)
    return np.minimum(raw, cap), (raw > cap).sum(axis=1)


def _whole_shares(size: np.ndarray, processors: int, cap: np.ndarray) -> np.ndarray | None:
    """``ceil(size * cap / processors)`` per job and resource in int64
    (``size`` a column of whole processor counts, at most ``processors``),
    without the product overflowing: ``(cap // P) * size + ceil((cap % P)
    * size / P)``.  None where a size is not such a count, or P is above
    2**31 (``(cap % P) * size`` could pass int64): the float product then
    stands."""
    if processors > 2**31 or not (np.all(size == np.floor(size)) and np.all((size >= 1) & (size <= processors))):
        return None
    s = size.astype(np.int64)[:, None]
    q, rem = np.divmod(cap, np.int64(processors))
    return np.maximum(q * s + (rem * s + processors - 1) // processors, 1)


def _fill(rng, target, draw, batch: int = 32, max_misses: int = 32):
    """Background load: draw running jobs (``draw(rng, m) -> (demand, capped)``)
    and keep each that fits under ``target`` on every resource, until
    ``max_misses`` draws in a row do not fit.  Returns (used, rows, capped)."""
    used = np.zeros(len(target), dtype=np.int64)
    rows, capped, misses = [], 0, 0
    while misses < max_misses:
        demand, cap_count = draw(rng, batch)
        for d, c in zip(demand, cap_count):
            if np.all(used + d <= target):
                used += d
                rows.append(d)
                capped += int(c)
                misses = 0
            else:
                misses += 1
                if misses >= max_misses:
                    break
    return used, np.asarray(rows, dtype=np.int64).reshape(-1, len(target)), capped


def _log_uniform(rng, lo: int, hi: int, count: int) -> np.ndarray:
    """``count`` log-uniform draws on [lo, hi] rounded to whole numbers
    (whole ``lo`` and ``hi``: they stay within)."""
    return np.round(np.exp(rng.uniform(math.log(lo), math.log(hi), count)))


# ---- parameter checks ----------------------------------------------------------------
def _int(name, value, lo):
    if not _is_int(value) or value < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {_short(value)}")
    return int(value)


def _bool(name, value) -> bool:
    """``value`` if it is a bool (Python or numpy): a string such as "no", or
    a number, would otherwise count as true or false by accident."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {_short(value)}")
    return bool(value)


def _choice(name, value, choices):
    """``value`` if it is one of ``choices``; an unhashable value (a list, a
    numpy array, whose ``==`` answers elementwise) never is."""
    if not isinstance(value, Hashable) or value not in choices:
        from .registry import did_you_mean
        hint = did_you_mean(value, [c for c in choices if isinstance(c, str)]) if isinstance(value, str) else ""
        raise ValueError(f"{name} must be one of {choices}, got {_short(value)}{hint}")
    return value


def _fraction(name, value, lo=0.0):
    """``value`` as a float in [lo, 1], None kept; a string or bool is refused,
    not converted by ``float()``."""
    if value is not None and not (_is_number(value) and lo <= value <= 1.0):
        raise ValueError(f"{name} must be a number in [{lo}, 1], got {_short(value)}")
    return None if value is None else float(value)


def _real(name, value) -> float:
    """``value`` as a float if it is a finite number (no string, no bool:
    ``float("5")`` and ``float(True)`` would pass silently)."""
    try:
        ok = _is_number(value) and math.isfinite(value)
    except OverflowError:                            # an int beyond every float
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a finite number, got {_short(value)}")
    return float(value)


def _capacity(capacity, k):
    """``k`` capacities from one integer or ``k`` integers, each within
    ``PARAM_BOUNDS["capacity"]``: ``int()`` would cut 1.5 to 1 and True to 1,
    and 2**70 overflows int64, so such entries are refused, not converted."""
    entries = [capacity] * k if np.isscalar(capacity) else capacity
    try:
        entries = list(entries)
    except TypeError:                                # None, a 0-d array
        entries = None
    if entries is None or len(entries) != k:
        raise ValueError(f"capacity must be a positive integer or {k} positive integers, got {_short(capacity)}")
    lo, hi = PARAM_BOUNDS["capacity"]
    bad = [c for c in entries if not (_is_int(c) and lo <= c <= hi)]
    if bad:
        where = "" if np.isscalar(capacity) else f" in {_short(capacity)}"
        raise ValueError(f"capacity must be integers in [{lo}, {hi:g}], got {_short(bad[0], 40)}{where}")
    return np.asarray([int(c) for c in entries], dtype=np.int64)


def _children(seed, count):
    return np.random.default_rng(seed).spawn(count)


# ---- leinberger ([leinberger1999] section 3.1) -------------------------------------------------
def leinberger(*, n: int = 64, k: int = 4, dist: str = "uniform", count: int = 10, seed: int = 0,
               capacity=1000, processors: int = 128, load: float | None = None, norm: str = "max",
               p_pow2: float = 0.75) -> list[PackingInstance]:
    """Packing instances of one scheduling epoch, [leinberger1999] §3.1 workload.

    A queue of ``n`` jobs (row order = queue order), each with K requirements
    from its Feitelson size (harmonic of order 1.5 on 1..P, a share
    ``p_pow2`` moved to powers of two) and a hyperexponential runtime estimate;
    ``used`` comes from running jobs of the same model kept while they fit under
    ``floor(load * capacity)`` on every resource (``load`` default: uniform
    0.3..0.8 per instance).  ``meta`` adds ``size`` (processors per queued job),
    ``meta["load"]``, ``running`` (count), ``capped``, ``capped_running``.
    Cost O(count * (n + running) * K).
    """
    n, k, count, seed = _int("n", n, 0), _int("k", k, 1), _int("count", count, 0), _int("seed", seed, 0)
    processors = _int("processors", processors, 1)
    _choice("dist", dist, DISTS)
    _choice("norm", norm, NORMS)
    load, p_pow2 = _fraction("load", load), _fraction("p_pow2", p_pow2)
    cap = _capacity(capacity, k)
    params = dict(n=n, k=k, dist=dist, count=count, seed=seed, capacity=np.asarray(capacity).tolist(),
                  processors=processors, load=load, norm=norm, p_pow2=p_pow2)
    pmf = feitelson_size_pmf(processors, p_pow2)

    def jobs(rng, m):
        sizes = draw_sizes(rng, pmf, m)
        return (sizes, *k_requirements(rng, sizes, processors, cap, dist, norm))

    out = []
    for i, rng in enumerate(_children(seed, count)):
        sizes, demand, capped = jobs(rng, n)
        estimate = feitelson_runtimes(rng, sizes, processors)
        frac = rng.uniform(*LOAD_RANGE) if load is None else load
        used, running, capped_run = _fill(rng, np.floor(frac * cap), lambda r, m: jobs(r, m)[1:])
        name = f"leinberger-K{k}-{dist}-n{n}-s{seed:04d}-{i:03d}"
        meta = dict(name=name, family="packing", generator="leinberger", params=dict(params), seed=seed,
                    index=i, processors=processors, size=sizes.tolist(), load=float(frac),
                    running=len(running), capped=int(capped.sum()), capped_running=capped_run)
        out.append(PackingInstance.build(cap, demand, used, estimate=estimate, meta=meta, source=name))
    return out


# ---- LOS ([vadhiyar-notes]) ------------------------------------------------------------------------
def los(*, n: int = 32, count: int = 10, seed: int = 0, machine: int = 320, load: float | None = None,
        p_block: float = 0.5, now: float = 0.0, p_pow2: float = 0.75, est_min: float = 60.0,
        est_max: float = 86400.0) -> list[PackingInstance]:
    """LOS epochs ([vadhiyar-notes], "Notations" and "Freedom from starvation").

    A machine of ``machine`` processors (K = 1) runs jobs (size, remaining
    time) filling up to ``floor(load * machine)``; ``n`` waiting jobs have
    Feitelson sizes on ``machine`` and log-uniform estimates in
    ``[est_min, est_max]`` s, rounded to whole seconds within it.  With probability ``p_block`` the head's size is
    redrawn above the free capacity, otherwise within it (when possible: some
    size there has mass; with ``p_pow2 = 1`` no size above the largest power
    of two up to ``machine`` has, and a head on such a free capacity is left
    as drawn).  A
    blocked head gets the reservation of
    :func:`~epochbench.instances.packing.reservation_from_running` at time ``now``; flags
    follow ``now + estimate > shadow``.  ``meta["running"]`` holds the running
    jobs' ``size`` and ``remaining`` so the reservation can be rederived.
    An epoch whose head fits has no reservation: it is algorithm 1's, where
    the head is one job among the others (a scheduler that starts a fitting
    head first, as the notes' starvation-free LOS does, would pose the
    epoch of the jobs after it).
    """
    n, count, machine = _int("n", n, 1), _int("count", count, 0), _int("machine", machine, 1)
    seed = _int("seed", seed, 0)
    load, p_block, p_pow2 = _fraction("load", load), _fraction("p_block", p_block), _fraction("p_pow2", p_pow2)
    now, est_min, est_max = _real("now", now), _real("est_min", est_min), _real("est_max", est_max)
    if not 0 < est_min <= est_max:
        raise ValueError(f"need 0 < est_min <= est_max, got {est_min!r}, {est_max!r}")
    lo, hi = math.ceil(est_min), math.floor(est_max)        # estimates are whole seconds, within the range
    if not 1 <= lo <= hi:
        raise ValueError(f"est_min..est_max must hold a whole number of seconds >= 1 (estimates are whole "
                         f"seconds), got {est_min!r}, {est_max!r}")
    params = dict(n=n, count=count, seed=seed, machine=machine, load=load, p_block=p_block,
                  now=now, p_pow2=p_pow2, est_min=est_min, est_max=est_max)
    pmf = feitelson_size_pmf(machine, p_pow2)
    cap = np.array([machine], dtype=np.int64)
    out = []
    for i, rng in enumerate(_children(seed, count)):
        sizes = draw_sizes(rng, pmf, n)
        estimate = _log_uniform(rng, lo, hi, n)
        frac = rng.uniform(*LOAD_RANGE) if load is None else load
        used, running, _ = _fill(rng, np.floor([frac * machine]),
                                 lambda r, m: (draw_sizes(r, pmf, m)[:, None], np.zeros(m, int)))
        remaining = np.ceil((1.0 - rng.random(len(running))) * _log_uniform(rng, lo, hi, len(running)))
        free = int(machine - used[0])
        want_block = rng.random() < p_block
        if want_block and pmf[free:].sum() > 0:             # some size above free has mass
            sizes[0] = draw_sizes(rng, pmf, 1, low=free + 1)[0]
        elif not want_block and pmf[:free].sum() > 0:
            sizes[0] = draw_sizes(rng, pmf, 1, high=free)[0]
        name = f"los-N{machine}-n{n}-s{seed:04d}-{i:03d}"
        meta = dict(name=name, family="packing", generator="los", params=dict(params), seed=seed, index=i,
                    load=float(frac), now=float(now), head_blocked=bool(sizes[0] > free),
                    running={"size": running[:, 0].tolist(), "remaining": remaining.tolist()})
        out.append(_los_instance(cap, used, sizes[:, None], estimate, meta, reserve=sizes[0] > free))
    return out


def _los_instance(cap, used, demand, estimate, meta, reserve):
    kw = {}
    if reserve:
        run = meta["running"]
        shadow, extra = reservation_from_running(cap, used, demand[0], np.asarray(run["size"]).reshape(-1, 1),
                                                 run["remaining"], meta["now"])
        kw = dict(shadow=shadow, extra=extra, now=meta["now"])
    return PackingInstance.build(cap, demand, used, estimate=estimate, meta=meta, source=meta["name"], **kw)


def los_example(*, reservation: bool = False) -> PackingInstance:
    """[vadhiyar-notes] LOS worked example: N = 10, t = 25, one running job (size 5,
    rem 3), waiting (size, time) (7,4), (3,5), (1,6), (2,4), (2,2).  With
    ``reservation`` the blocked head gets shadow 28 and extra 3.  Either way
    the best start set uses all 5 free processors (utilization 0.5); LOS
    without reservation starts jobs 2 and 4 (indices 1 and 3, figure 1),
    with it jobs 2 and 5 (indices 1 and 4: jobs 2 and 4 would both run past
    the shadow on 5 processors, where 3 are extra)."""
    reservation = _bool("reservation", reservation)
    name = "los-example-reservation" if reservation else "los-example"
    reference = ({"LOS selected with the reservation ([vadhiyar-notes] algorithm 2)": [1, 4]} if reservation
                 else {"LOS selected ([vadhiyar-notes] fig. 1)": [1, 3]})
    meta = dict(name=name, family="packing", generator="los-example", params={"reservation": reservation},
                seed=None, now=25.0, head_blocked=True, running={"size": [5], "remaining": [3.0]},
                optimum=0.5, reference=reference)
    return _los_instance(np.array([10]), np.array([5]), np.array([[7], [3], [1], [2], [2]]),
                         np.array([4.0, 5, 6, 4, 2]), meta, reserve=reservation)


# ---- [leinberger1999] figure 1 ---------------------------------------------------------------------
def fig1() -> EpochsInstance:
    """[leinberger1999] figure 1: 16 CPUs / 32 GB, six jobs; UNC needs 2 epochs
    ({0, 2, 4}, {1, 3, 5}), FCFS 4, FCFS/FF 3."""
    meta = dict(name="leinberger-fig1", family="epochs", generator="fig1", params={}, seed=None,
                optimum=2, reference={"FCFS": 4, "FCFS/FF": 3, "UNC": 2})
    return EpochsInstance.build([16, 32], [[8, 4], [4, 2], [7, 16], [11, 20], [1, 12], [1, 10]],
                                meta, source="[leinberger1999] figure 1")


# ---- VPSolver vector bin packing files ----------------------------------------------------
SUMMARY_CSV = "Panigrahy_summary_known.csv"
_VBP_NAME = re.compile(r"class(\d+)_(\d+)_(\d+)_(\d+)$")


#: most jobs a file may expand to (multiplicities summed): refused before allocating
MAX_FILE_ITEMS = 10**7
_INT64 = 2**63


def _ints(tokens, count, where, what):
    """``count`` integer tokens within int64, else :class:`InstanceError` naming ``where``."""
    if len(tokens) != count:
        raise InstanceError(f"{where}: expected {what}, got {len(tokens)} number(s)")
    bad = next((t for t in tokens if not re.fullmatch(r"[+-]?\d{1,19}", t)), None)
    if bad is not None:
        raise InstanceError(f"{where}: {bad[:40]!r} is not an integer" + (" within int64" if re.fullmatch(
            r"[+-]?\d+", bad) else ""))
    vals = [int(t) for t in tokens]
    if any(not -_INT64 <= v < _INT64 for v in vals):
        raise InstanceError(f"{where}: a number beyond the int64 range")
    return vals


def _parse_vbp(text: str, src: str) -> tuple[list[int], np.ndarray]:
    """VPSolver format: d; d capacities; item-type count m; m lines of d sizes
    and a multiplicity.  Blank lines are skipped; every error names the line."""
    lines = iter([(no, ln.split()) for no, ln in enumerate(text.splitlines(), 1) if ln.strip()])

    def take(what):
        try:
            return next(lines)
        except StopIteration:
            raise InstanceError(f"{src}: file ends before {what}") from None

    no, tok = take("line 1 (d, the number of resources)")
    (d,) = _ints(tok, 1, f"{src}: line {no} (d)", "1 number (the number of resources d)")
    if d < 1:
        raise InstanceError(f"{src}: line {no} (d): d must be >= 1, got {d}")
    no, tok = take(f"the {d} capacities")
    cap = _ints(tok, d, f"{src}: line {no} (capacities)", f"{d} capacities")
    if min(cap) < 0:
        raise InstanceError(f"{src}: line {no} (capacities): negative capacity {min(cap)}")
    head, tok = take("the item-type count")
    (m,) = _ints(tok, 1, f"{src}: line {head} (item count)", "1 number (the item-type count)")
    if m < 0:
        raise InstanceError(f"{src}: line {head} (item count): negative count {m}")
    rows = []
    for i in range(1, m + 1):
        try:
            no, tok = next(lines)
        except StopIteration:
            raise InstanceError(f"{src}: file ends after {i - 1} of the {m} item lines announced "
                                f"at line {head}") from None
        where = f"{src}: line {no} (item {i} of {m})"
        vals = _ints(tok, d + 1, where, f"{d} sizes and a multiplicity")
        if min(vals[:d]) < 0:
            raise InstanceError(f"{where}: negative size {min(vals[:d])}")
        if vals[d] < 0:
            raise InstanceError(f"{where}: negative multiplicity {vals[d]}")
        rows.append(vals)
        if sum(r[d] for r in rows) > MAX_FILE_ITEMS:
            raise InstanceError(f"{where}: multiplicity {vals[d]} takes the file past {MAX_FILE_ITEMS} items")
    extra = next(lines, None)
    if extra is not None:
        raise InstanceError(f"{src}: line {extra[0]}: unexpected content after the {m} item lines")
    arr = np.asarray(rows, dtype=np.int64).reshape(m, d + 1)
    return cap, np.repeat(arr[:, :d], arr[:, d], axis=0)


#: the data set whose reference values ``Panigrahy_summary_known.csv`` holds
VBP_DATASET = "panigrahy-vbp"
#: items per file beyond the nominal n of the name, per class, in that data
#: set (class 9 files hold n + 1 items)
_VBP_EXTRA_ITEMS = {9: 1}


@lru_cache(maxsize=8)
def _summary(path: str) -> dict[str, dict | None]:
    """instance_name -> {lower_bound, optimum (None for -1), best_known} of the
    tab-separated Panigrahy summary; a name listed twice maps to None (the
    table cannot tell which row is meant)."""
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        missing = {"instance_name", "LB", "OPT"} - set(reader.fieldnames or ())
        if missing:
            raise InstanceError(f"{path}: missing column(s) {sorted(missing)}")
        table: dict[str, dict | None] = {}
        for row in reader:
            try:
                lb, opt = int(row["LB"]), int(row["OPT"])
                best = int(row["best_overall"]) if row.get("best_overall") not in (None, "") else -1
            except (TypeError, ValueError):
                raise InstanceError(f"{path}: line {reader.line_num}: LB / OPT / best_overall must be "
                                    f"integers, got {row}") from None
            name = row["instance_name"]
            entry = {"lower_bound": lb, "optimum": None if opt == -1 else opt,
                     "best_known": None if best == -1 else best}
            table[name] = None if name in table else entry
    return table


def _known_values(path: Path, capacity, demand) -> dict:
    """Reference values of ``path`` from the Panigrahy summary, only where the
    file is identified as that data set's instance: named ``classC_n_d_i``
    inside a folder ``classC`` whose parent holds the summary, listed once
    there, with d resources and n items (class 9: n + 1) as its name says,
    and a volume bound no larger than the table's optimum and best value.
    Otherwise ``{"optimum": None}``: a file stem alone never matches (two
    public VBP sets reuse the same stems for different data).  Cost O(n d)."""
    none = {"optimum": None}
    m = _VBP_NAME.match(path.stem)
    csv_path = path.parent.parent / SUMMARY_CSV
    if not m or not csv_path.is_file():
        return none
    cls, n, d, _ = map(int, m.groups())
    if path.parent.name != f"class{cls}":
        return none
    row = _summary(str(csv_path.resolve())).get(path.stem)
    demand = np.asarray(demand)
    if row is None or len(capacity) != d or len(demand) != n + _VBP_EXTRA_ITEMS.get(cls, 0):
        return none
    cap = np.asarray(capacity, dtype=float)
    if np.any(cap <= 0):
        return none
    volume = int(np.ceil((demand.sum(axis=0) / cap).max() - 1e-9)) if len(demand) else 0
    if any(v is not None and volume > v for v in (row["optimum"], row["best_known"])):
        return none
    return {**row, "dataset": VBP_DATASET, "ref_source": SUMMARY_CSV}


def load_vbp(path) -> EpochsInstance:
    """One VPSolver ``.vbp`` file as an epochs instance (multiplicities expanded
    into separate jobs).  ``meta``: name = file stem; class, nominal n and
    index parsed from names ``classC_n_d_i``; ``optimum`` (None where
    unknown), ``lower_bound``, ``best_known``, ``dataset`` and ``ref_source``
    from ``Panigrahy_summary_known.csv`` only where :func:`_known_values`
    identifies the file as that data set's (``root/classC/classC_n_d_i.vbp``
    with the summary in ``root``, matching d and n).  Raises
    :class:`InstanceError` naming file and line."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise InstanceError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read ({exc})") from None
    cap, demand = _parse_vbp(text, str(path))
    meta = dict(name=path.stem, family="epochs", generator="vbp",
                params={"file": f"{path.parent.name}/{path.name}"}, seed=None)
    m = _VBP_NAME.match(path.stem)
    if m:
        meta.update(zip(("class", "n_nominal", "d", "index"), map(int, m.groups())))
    meta.update(_known_values(path, cap, demand))
    return EpochsInstance.build(cap, demand, meta, source=str(path))


def _int_set(value, name):
    """The integers of ``value`` (one, a list, or a string "1,2 9") as a set,
    None kept.  Items must be integers or integer strings: ``int()`` would
    cut 1.5 to 1 and read True as 1, picking files nobody asked for."""
    if value is None:
        return None
    items = split_names(value, name) if isinstance(value, str) else value
    try:
        items = [items] if np.isscalar(items) else list(items)
    except TypeError:
        items = [None]
    bad = [v for v in items if not (_is_int(v) or isinstance(v, str) and re.fullmatch(r"\s*[+-]?\d+\s*", v))]
    if bad:
        raise ValueError(f"{name} must be integers, got {_short(value)}")
    ints = [int(v) for v in items]
    twice = first_repeat(ints)
    if twice is not None:                  # merged without a word, as a name given twice is not
        raise ValueError(f"{name}: {twice} given twice")
    return set(ints)


def vbp_family(*, n: int | None = None, d: int | None = None, classes=None,
               root: str | None = None, per_class: int | None = None) -> list[EpochsInstance]:
    """The ``classC_n_d_i.vbp`` files under ``root`` (default: ``vbp`` in the data folder)
    filtered by nominal ``n``, ``d`` and ``classes`` (ints, a list, or "1,2,9"),
    sorted by (class, n, d, i); with ``per_class``, only the files whose i is below it.
    A missing folder, or one where nothing matches, is an :class:`InstanceError`."""
    base = Path(root) if root else data_root() / "vbp"
    if not base.is_dir():
        raise InstanceError(absent(base, "no VBP data folder"))
    want = {"class": _int_set(classes, "classes"), "n": _int_set(n, "n"), "d": _int_set(d, "d")}
    per_class = None if per_class is None else _int("per_class", per_class, 1)
    found = []
    for f in base.glob("class*/*.vbp"):
        m = _VBP_NAME.match(f.stem)
        if m:
            found.append((tuple(map(int, m.groups())), f))
    picked = sorted((key, f) for key, f in found
                    if all(s is None or key[j] in s for j, s in enumerate(want.values()))
                    and (per_class is None or key[3] < per_class))
    if not picked:
        have = {k: sorted({key[j] for key, _ in found}) for j, k in enumerate(want)}
        raise InstanceError(f"{base}: no classC_n_d_i.vbp file for {want}; available: {have}")
    return [load_vbp(f) for _, f in picked]


# ---- registry ------------------------------------------------------------------------
def _fig1_family() -> list[EpochsInstance]:
    """[leinberger1999] figure 1 (one instance)."""
    return [fig1()]


def _los_example_family(*, reservation: bool = False) -> list[PackingInstance]:
    """[vadhiyar-notes] LOS worked example (one instance)."""
    return [los_example(reservation=reservation)]


def _plugin_generator(ep) -> None:
    """Entry point ``NAME = module:function`` of group ``epochbench.generators``."""
    func = ep.load()
    if GENERATORS.get(ep.name) is not func:
        register_generator(ep.name, func, origin=f"entry point {ep.value}")


#: every generator by name, completed on lookup: the modules of this package
#: (each family's module registers its generators), then plug-ins
CATALOG: Catalog[Callable[..., list]] = Catalog(
    "generator", [modules_of(__package__), plugins("epochbench.generators", _plugin_generator)])
for _name, _func in {"leinberger": leinberger, "los": los, "los-example": _los_example_family,
                     "vbp": vbp_family, "fig1": _fig1_family}.items():
    CATALOG.add(_name, _func)
#: the generators registered so far, by name (:func:`load_generators` completes it)
GENERATORS: dict[str, Callable[..., list]] = CATALOG._items
#: generators that write something other than a family folder (e.g. an SWF
#: workload): ``write(out, **params) -> Path``
WRITERS: dict[str, Callable[..., Path]] = {}


class Param(NamedTuple):
    """One generator parameter, enough for an argparse option.

    ``bounds`` is ``(lo, hi)``, inclusive, for numbers (:data:`PARAM_BOUNDS`);
    ``name`` the parameter's name, for messages.
    """
    default: object
    type: type
    help: str
    choices: tuple | None = None
    bounds: tuple | None = None
    name: str = ""

    def check(self, value):
        """``value`` if it is of this parameter's type (a finite number for
        ``float``, an integer for ``int``, Python or numpy; a bool for
        ``bool``; a str or path for :data:`PATH_PARAMS`) within :attr:`bounds`, else ``ValueError`` naming the
        parameter."""
        if self.type is bool and value is not None:
            _bool(self.name, value)
        elif self.name in PATH_PARAMS and value is not None and not isinstance(value, (str, os.PathLike)):
            raise ValueError(f"{self.name} must be a folder path, got {_short(value)}")
        elif self.type in (int, float) and value is not None:
            if not _is_number(value):
                raise ValueError(f"{self.name} must be a number, got {_short(value)}")
            if self.type is int and not _is_int(value):
                raise ValueError(f"{self.name} must be an integer, got {value!r}")
            if not _is_int(value) and not math.isfinite(value):    # an int is finite (and may exceed a float)
                raise ValueError(f"{self.name} must be a finite number, got {value!r}")
            if self.bounds is not None and not self.bounds[0] <= value <= self.bounds[1]:
                raise ValueError(f"{self.name} must lie in [{_bound(self.bounds[0])}, {_bound(self.bounds[1])}], "
                                 f"got {value!r}")
        return value

    def parse(self, text: str):
        """argparse ``type`` of the option: convert ``text`` and :meth:`check` it;
        errors are ``argparse.ArgumentTypeError`` (one line, exit status 2)."""
        import argparse
        try:
            value = self.type(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"must be {'an integer' if self.type is int else 'a number'}"
                                             f", got {text!r}") from None
        try:
            return self.check(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None


_FRACTION = (0.0, 1.0)
_TINY = 1e-300
#: (lo, hi) of every numeric generator parameter by name, inclusive; wide
#: enough for every sensible use, narrow enough to refuse before allocating
#: (``--n 1000000000000``); :data:`GENERATOR_BOUNDS` overrides per generator
PARAM_BOUNDS = {
    "n": (0, 10**7), "k": (1, 10**4), "d": (1, 10**4), "count": (1, 10**6), "seed": (0, 2**63 - 1),
    "capacity": (1, 2**62), "processors": (1, 10**9), "machine": (1, 10**9), "machines": (0, 10**6),
    "licenses": (1, 10**4), "tasks": (1, 10**7), "jobs": (1, 10**8), "per_class": (1, 10**6),
    "file": (1, 10**3), "first": (1, 10**6), "max_value": (1, 2**40), "decimals": (-1, 12),
    "load": _FRACTION, "p_pow2": _FRACTION, "p_block": _FRACTION, "density": _FRACTION, "busy": _FRACTION,
    "need": _FRACTION, "ratio_lo": _FRACTION, "ratio_hi": _FRACTION, "tightness": (_TINY, 1.0),
    "phi": _FRACTION, "omega": (0.0, 1e6), "load_factor": (_TINY, 1e6), "runtime_factor": (_TINY, 1e6),
    "now": (0.0, 1e15), "est_min": (_TINY, 1e15), "est_max": (_TINY, 1e15),
}
#: generator -> {parameter: (lo, hi)} where it differs from :data:`PARAM_BOUNDS`
GENERATOR_BOUNDS = {"workload": {"load": (_TINY, 100.0),
                                  # a job stream's units: what its files and the simulator hold exactly
                                  # (2**62 passed here and the writer refused it)
                                  "capacity": (1, MAX_NODES)}}


def _bounds(generator: str, name: str):
    return GENERATOR_BOUNDS.get(generator, {}).get(name, PARAM_BOUNDS.get(name))


#: parameters that name a folder (a str or a path object)
PATH_PARAMS = frozenset({"root"})
_NONE_TYPES = {"load": float, "n": int, "d": int, "classes": str, "root": str, "per_class": int}
_CHOICES = {"dist": DISTS, "norm": NORMS}
_HELP = {
    "n": "number of jobs (items) per instance",
    "k": "number of resources K",
    "dist": "distribution of a job's K requirements ([leinberger1999] §3.1)",
    "count": "number of instances",
    "seed": "seed of numpy.random.default_rng",
    "capacity": "units per resource",
    "processors": "processors P of the size model",
    "load": "background load fraction (default: uniform 0.3..0.8 per instance)",
    "norm": "normalise the K draws by their max or mean",
    "p_pow2": "share of sizes rounded to a power of two",
    "machine": "machine size N (processors)",
    "p_block": "probability that the queue head does not fit",
    "now": "time of the scheduling epoch",
    "est_min": "shortest estimate (s)",
    "est_max": "longest estimate (s)",
    "d": "number of resources (vbp files)",
    "classes": "vbp classes, e.g. 1,2,9",
    "root": "the data set's folder (default: its folder in the data folder, $EPOCHBENCH_DATA or --data)",
    "reservation": "give the blocked head its reservation",
    "per_class": "vbp: only the first files of each class (i < per_class)",
}


#: a parameter's help where one generator means something else by it
_HELP_OF = {("vbp", "n"): "nominal item count in the file names (classC_n_d_i.vbp; the project's data: "
                          "20 or 40, the full Panigrahy sets up to 500)",
            ("leinberger", "n"): "queue length: jobs waiting at the epoch"}


def _params_of(func, generator: str = "") -> dict[str, Param]:
    out = {}
    for p in inspect.signature(func).parameters.values():
        if p.kind is inspect.Parameter.KEYWORD_ONLY:
            typ = _NONE_TYPES[p.name] if p.default is None else type(p.default)
            text = _HELP_OF.get((generator, p.name)) or _HELP.get(p.name, "")
            out[p.name] = Param(p.default, typ, text, _CHOICES.get(p.name), _bounds(generator, p.name), p.name)
    return out


GENERATOR_PARAMS: dict[str, dict[str, Param]] = {name: _params_of(f, name) for name, f in GENERATORS.items()}


def register_generator(name: str, func: Callable, *, help: dict | None = None, choices: dict | None = None,
                       none_types: dict | None = None, write: Callable | None = None,
                       origin: str | None = None) -> Callable:
    """Make ``func`` (keyword-only parameters with defaults) generator ``name``
    of ``epochbench generate``.  ``help`` / ``choices`` / ``none_types`` describe
    its parameters (``none_types``: the type of a parameter whose default is
    ``None``); ``write(out, **params)`` replaces the family-folder writer for
    generators whose output is not a family of instances.  ``origin``
    (default: ``builtin`` where epochbench's own modules register it, else
    ``module NAME``: :func:`~epochbench.instances.catalog.origin_of`) is
    what a clash of names says registered it."""
    origin = origin or origin_of(func, sys._getframe(1))
    spec = {}
    for p in inspect.signature(func).parameters.values():
        if p.kind is inspect.Parameter.KEYWORD_ONLY:
            typ = (none_types or {}).get(p.name) or (_NONE_TYPES.get(p.name) if p.default is None
                                                     else type(p.default))
            if typ is None:
                raise ValueError(f"generator {name!r}: give the type of parameter {p.name!r} in none_types")
            spec[p.name] = Param(p.default, typ, (help or {}).get(p.name) or _HELP.get(p.name, ""),
                                 (choices or {}).get(p.name) or _CHOICES.get(p.name),
                                 _bounds(name, p.name), p.name)
    # registered only once its parameters are known: a plug-in refused above left a generator without
    # them, and every `generate` raised KeyError (a review of plug-ins)
    CATALOG.add(name, func, origin=origin)           # a different function under a taken name raises
    GENERATOR_PARAMS[name] = spec
    if write is not None:
        WRITERS[name] = write
    return func


def load_generators() -> dict[str, Callable]:
    """Every generator (built-in modules of :mod:`epochbench.instances` and
    plug-ins imported on first call); returns :data:`GENERATORS`."""
    CATALOG.complete()
    return GENERATORS


def resolved_params(name: str, **params) -> dict:
    """Defaults of generator ``name`` updated with ``params`` (``None`` values
    mean "default"); unknown names raise ``ValueError`` listing the known ones."""
    load_generators()
    if name not in GENERATORS:
        from .registry import did_you_mean
        raise ValueError(f"unknown generator {name!r}{did_you_mean(name, sorted(GENERATORS))}; known: "
                         f"{', '.join(sorted(GENERATORS))}")
    spec = GENERATOR_PARAMS[name]
    unknown = sorted(set(params) - set(spec))
    if unknown:
        raise ValueError(f"generator {name!r} has no parameter {', '.join(unknown)}; "
                         f"it takes: {', '.join(spec) or 'none'}")
    given = {k: v for k, v in params.items() if v is not None}
    for k, v in given.items():
        if _checked_here(spec[k], v):
            spec[k].check(v)
    full = {**{k: p.default for k, p in spec.items()}, **given}
    _check_size(name, full)
    return full


#: numbers that generator holds for its parameters (its instances' arrays,
#: ``count`` of them: :func:`generate` returns them all): the product of the
#: parameters named, each plus the number after ``+``
SIZES = {"leinberger": ("count", "n", "k+1"), "mkp": ("count", "n", "k+1"), "los": ("count", "n"),
         "assign-random": ("count", "n", "machines"), "assign-farm": ("count", "n", "machines+licenses"),
         "farm-mkp": ("count", "n", "machines+licenses"), "braun-range": ("count", "tasks", "machines"),
         "workload": ("jobs", "k+5")}
#: the most numbers a generator call may hold (float64: 8 GB); each
#: parameter's own bound let ``leinberger(n=10**7, k=10**4)`` ask for 745 GiB
#: and fail with numpy's MemoryError, and ``count=10**5`` of 8 MB instances
#: fill the memory one instance after another
MAX_NUMBERS = 10**9


def _check_size(name: str, full: dict) -> None:
    """ValueError when generator ``name`` would hold more than
    :data:`MAX_NUMBERS` numbers for the parameters ``full`` (:data:`SIZES`;
    a parameter that is no whole number is left to the generator's check)."""
    factors = []
    for term in SIZES.get(name, ()):
        names = term.split("+")
        values = [full[n] for n in names if n in full]
        if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in values):
            return
        factors.append((term.replace("+", " + "), sum(int(v) for v in values)
                        + sum(int(n) for n in names if n.isdigit())))
    total = math.prod(v for _, v in factors)
    if total > MAX_NUMBERS:
        shown = " x ".join(f"({t})" if "+" in t else t for t, _ in factors)
        raise ValueError(f"generator {name!r}: {shown} = {total:.3g} numbers (about {8 * total / 2**30:,.0f} GiB), "
                         f"past the {MAX_NUMBERS:.0e} a call may hold; generate fewer or smaller instances")


def _checked_here(param: Param, value) -> bool:
    """Whether :func:`resolved_params` checks ``value`` itself: always for a
    bool or float parameter (none takes anything but a bool / a number) and
    a folder (:data:`PATH_PARAMS`), for
    an int parameter when ``value`` is a scalar, numpy's included (a list or
    string, such as vbp's ``n="20,40"`` or leinberger's capacity list, is
    the generator's to read and check)."""
    if param.type in (bool, float) or param.name in PATH_PARAMS:
        return True
    return param.type is int and np.isscalar(value) and not isinstance(value, str)


def generate(name: str, **params) -> list:
    """Instances of generator ``name`` (see :data:`GENERATORS`)."""
    full = resolved_params(name, **params)
    return _called(name, full)


def _called(name: str, full: dict):
    """``GENERATORS[name](**full)``; a plug-in's failure in one line naming it
    (:func:`~epochbench.instances.catalog.plugin_call`): it raised (a
    ``ValueError``, a refused value, is raised as it is, named), or, for a
    generator of a family of instances, returned anything but a list of
    them (``[1, 2]`` or None ended in an AttributeError or TypeError deep
    in the writer, and ``eb.generate`` returned it)."""
    func = GENERATORS[name]
    ok = None if name in WRITERS else _instances
    origin = CATALOG.origin(name)
    out = plugin_call(f"generator {name!r}", origin, lambda: func(**full), ok=ok, wanted="a list of instances")
    if ok is None:
        return out
    if origin != "builtin":
        _checked_instances(f"generator {name!r} ({origin})", out)
    return list(out)


def _checked_instances(label: str, out) -> None:
    """:class:`~epochbench.instances.core.MethodFailed` naming the plug-in
    generator ``label`` unless each instance it made reads back as its
    family's file reader would read it (its family's ``from_dict`` of its
    ``to_dict``), has a name, and all are of one family: an instance made
    with the bare dataclass constructor (a demand of -5) was written, exit
    status 0, and refused by every command that read it; one without a name
    was said to be the user's error (exit status 2), the generator unnamed.
    O(size of the instances), for plug-ins only."""
    from .core import MethodFailed
    from .io import families
    kinds = sorted({str(inst.kind) for inst in out})
    if len(kinds) > 1:
        raise MethodFailed(f"{label}: it returned instances of {len(kinds)} families ({', '.join(kinds)}); a "
                           "family folder holds one")
    for i, inst in enumerate(out):
        name = getattr(inst, "meta", {}).get("name") if isinstance(getattr(inst, "meta", None), dict) else None
        if not isinstance(name, str) or not name.strip():
            raise MethodFailed(f"{label}: its instance {i} has no name (set meta['name'])")
        if inst.kind not in families():
            raise MethodFailed(f"{label}: its instance {name!r} is of kind {inst.kind!r}, which no family has")
        try:
            families()[inst.kind].from_dict(inst.to_dict(), source=name)
        except (ValueError, TypeError, KeyError) as exc:
            raise MethodFailed(f"{label}: its instance {name!r} is not one its family reads: "
                               f"{' '.join(str(exc).split())}") from exc


def _instances(out) -> bool:
    """Whether ``out`` is a list (or tuple) of instances."""
    return isinstance(out, (list, tuple)) and all(callable(getattr(x, "to_dict", None)) and hasattr(x, "kind")
                                                  for x in out)


def write_generated(name: str, out, **params) -> Path:
    """Generate and write ``out/NAME.json`` plus ``manifest.json`` (or what
    the generator's own writer writes)."""
    full = resolved_params(name, **params)
    if name in WRITERS:
        return Path(WRITERS[name](out, **full))
    data = None
    if "root" in full and full["root"] is None:      # a data set read from the data folder: which one
        from .data import data_root
        data = str(Path(data_root()).resolve())
    return write_family(out, _called(name, full), generator=name, params=full, data_folder=data)


def _bound(x) -> str:
    """A parameter's bound as a message shows it: ``1e+06`` (%g), or every
    digit where %g would round it (the seed's 2**63 - 1 read 9.22337e+18)."""
    text = f"{x:g}"
    return text if float(text) == x else str(x)
