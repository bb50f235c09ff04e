"""Job-stream (workload) models, estimate models and load control.

Every model returns a :class:`Stream`: a job table with the columns of the
:mod:`epochbench.instances.jobs` contract (``id, submit, runtime, estimate, procs, duration``;
for K > 1 resources also ``res_1 .. res_{K-1}``) in (submit, id) order, the
machine ``capacity`` (K entries, entry 0 = processors) and ``meta`` (model,
parameters, measured offered load).  ``simulate(stream.jobs, stream.capacity,
policy)`` runs it as it is; ``epochbench generate workload`` writes it as SWF
(columns SWF has no field for go to the ``.extra.csv`` sidecar of
:func:`epochbench.instances.jobs.write_swf`).  Times are whole seconds.  Everything is
deterministic by ``seed``: the jobs, the arrivals, the K requirements and the
estimates come from four independent children of
``numpy.random.default_rng(seed)``, so changing the load, K or the estimate
model leaves the rest of the stream unchanged (common random numbers; one
exception: lublin03 with mixed job types takes the first n arrivals of two
processes, and which ones those are can change with the arrival rate).

=============  ===============================================================  ==============
model          what                                                             source
=============  ===============================================================  ==============
feitelson96    sizes favouring small jobs and powers of two, runtimes weakly     [leinberger1999] §3.1
               correlated with size, repeated runs, Poisson arrivals
lublin03       two-stage-uniform log2 sizes, hyper-gamma log runtimes            Lublin &
               correlated with size, gamma inter-arrivals with a daily cycle     Feitelson 2003
rajaei         16 nodes, 30/40/30 % small/medium/large, runtimes 90 s .. 12 h,   [rajaei-dadfar]
               each 10-100 % of its estimate, Poisson arrivals                   "Implementation
                                                                                 issues"
=============  ===============================================================  ==============

Applicable to any stream (real traces included): :func:`k_resources` (the
K-resource extension of [leinberger1999] §3.1), the estimate models
:func:`omega_estimates`, :func:`phi_estimates` ([zhang-comparative] §2.1) and
:func:`perfect_estimates`, and load control :func:`scale_arrivals`,
:func:`scale_runtimes`, :func:`offered_load`, :func:`set_load` ([zhang-comparative] §2.1:
"multiplying the interarrival rate and the service time each by a separate
multiplicative factor") and :func:`saturated` (alternating overload and
underload phases: a queue of thousands of jobs that builds up and drains).  :func:`workload` chains them; it is the generator
``workload`` of ``epochbench generate``.

Offered load (used by ``load``) is defined in :mod:`epochbench.instances.streams`,
with :class:`Stream` and the load control these models share with
:mod:`epochbench.instances.hypererlang`.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np

from epochbench.instances.arguments import arg, args
from epochbench.instances.lazy import lazy_module

from .generators import (DISTS, NORMS, _bool, _choice, _fraction, _int, _real, draw_sizes, feitelson_runtimes,
                         feitelson_size_pmf, k_requirements, register_generator)
from .streams import (Stream, _children, _demand_columns, _frame, _positive, _require, _rng, _round_times,
                      _work_time, arrivals_fit, offered_load, scale_arrivals, scale_runtimes, set_load)
from .hypererlang import hypererlang

pd = lazy_module("pandas")   # loaded on first use: listing the generators does not import it

__all__ = ["Stream", "MODELS", "ESTIMATES", "DEFAULT_LOAD", "LUBLIN_PARAMS", "feitelson96", "lublin03",
           "lublin_size_pmf", "rajaei", "k_resources", "omega_estimates", "phi_estimates",
           "perfect_estimates", "with_estimates", "scale_arrivals", "scale_runtimes", "offered_load",
           "set_load", "saturated", "poisson_arrivals", "zipf_runs", "workload", "write_workload", "stream_stats"]

DEFAULT_LOAD = 0.7          # offered load of the Poisson models when none is given (our choice)
MODELS = ("feitelson96", "lublin03", "rajaei", "hypererlang")
OWN_ARRIVALS = ("lublin03", "hypererlang")   # models with their own arrival process (load optional)
ESTIMATES = ("model", "perfect", "omega", "phi")
LUBLIN_TYPES = ("mixed", "batch", "interactive", "whole")
HOUR = 3600.0


# ---- arrivals and load control ----------------------------------------------------------
def poisson_arrivals(rng: np.random.Generator, n: int, mean_gap: float = 1.0) -> np.ndarray:
    """``n`` arrival times of a Poisson process of rate 1/``mean_gap``, the
    first at 0 ([leinberger1999] §3.1: "the arrival characteristic is generally
    believed to be Poisson distributed").  O(n)."""
    gaps = rng.exponential(1.0, max(n - 1, 0))
    return np.concatenate(([0.0], np.cumsum(gaps)))[:n] * float(mean_gap)


def saturated(jobs: pd.DataFrame, capacity, *, high: float = 1.4, low: float = 0.7,
              period: int = 20000) -> pd.DataFrame:
    """Alternate overload and underload: the arrivals of consecutive blocks of
    ``period`` jobs are rescaled so that each block's own offered load
    (:func:`offered_load`: bottleneck resource, over the block's span) is ``high``, then
    ``low``, then ``high`` again, ...  A ``high`` > 1 block leaves a backlog
    of about (1 - 1 / high) x ``period`` jobs, which the next ``low`` block
    drains (for ``low`` < 1): long stretches of a saturated machine with
    thousands of jobs queued, the load under which every early end makes
    conservative backfilling compress a long queue.  Inside a block the gaps
    keep their proportions, so this applies to any stream (a daily cycle
    keeps its shape but is stretched or squeezed with its block: its period
    is no longer a day); the jobs and their order are unchanged and times are whole
    seconds again (:func:`_round_times`).  Deterministic, O(n K)."""
    high, low = _positive("high", high), _positive("low", low)
    period = _int("period", period, 1)
    _require(jobs, "submit", "procs")
    cap = np.atleast_1d(np.asarray(capacity, dtype=np.float64))
    _demand_columns(jobs, cap)
    n = len(jobs)
    if n < 2:
        return jobs.copy()
    work = jobs[_demand_columns(jobs, cap)].to_numpy(dtype=np.float64) * _work_time(jobs)[:, None] / cap  # n x K
    submit = jobs["submit"].to_numpy(dtype=np.float64)
    gaps = np.diff(submit, prepend=submit[0])
    block = np.arange(n) // period
    blocks = block[-1] + 1
    span = np.bincount(block, gaps, blocks)
    # a block's bottleneck: the resource with the most work in the block (not each job's largest share)
    bottleneck = np.max([np.bincount(block, w, blocks) for w in work.T], axis=0)
    target = bottleneck / np.where(np.arange(blocks) % 2 == 0, high, low)
    # a block whose arrivals all fall at one time gets even gaps
    even = span[block] <= 0
    gaps = np.where(even, 1.0, gaps)
    span = np.bincount(block, gaps, blocks)
    out = jobs.copy()
    out["submit"] = submit[0] + np.cumsum(gaps * (target / span)[block])
    return _round_times(out)


# ---- feitelson96 ([leinberger1999] section 3.1) ---------------------------------------------------
def zipf_runs(rng: np.random.Generator, count: int, exponent: float = 2.5, max_runs: int = 100) -> np.ndarray:
    """Number of runs of each job: generalized Zipf, P(r) ~ r**-exponent on
    1..max_runs ([feitelson1996]'s repeated executions; exponent 2.5 is our
    reading of that paper: mean 1.80 runs at the defaults, sum r P(r)).  O(count)."""
    r = np.arange(1, max_runs + 1, dtype=np.float64)
    p = r ** -float(exponent)
    return rng.choice(np.arange(1, max_runs + 1), size=count, p=p / p.sum()).astype(np.int64)


def feitelson96(n: int = 1000, *, seed=0, processors: int = 128, load: float = DEFAULT_LOAD,
                p_pow2: float = 0.75, repeats: bool = True, zipf: float = 2.5, max_runs: int = 100) -> Stream:
    """[feitelson1996] job stream as used by [leinberger1999] §3.1, on ``processors`` nodes.

    Distinct jobs get a size from :func:`~epochbench.instances.generators.feitelson_size_pmf`
    (harmonic of order 1.5, a share ``p_pow2`` of each size's mass moved to the
    nearest power of two: "favouring small sizes and powers of two"), a runtime
    from :func:`~epochbench.instances.generators.feitelson_runtimes` (hyperexponential,
    means 300 s / 7200 s, long branch with probability 0.1 + 0.8 log2(s) /
    log2(P): "weakly correlated to the size") and, with ``repeats``, a number of
    runs from :func:`zipf_runs` (the model's "repeat count": the same job
    submitted again).  The runs of a job are consecutive submissions with
    identical size and runtime; SWF field 17 (``prev_job``) names the previous
    run.  Every submission arrives by Poisson arrivals (not the model's closed-loop
    resubmission; [leinberger1999] §3.1 used "the job size and runtime
    characteristics" only, which ``repeats=False`` gives); the rate is set so that
    :func:`offered_load` is ``load``.  The first ``n`` runs form the stream.
    Estimates are exact (estimate = runtime); see :func:`with_estimates`.

    Parameter sources: [leinberger1999] names the model, not its numbers; the size and
    runtime constants are those of :mod:`epochbench.instances.generators` (module
    docstring), the Zipf exponent 2.5 and the 100-run cap are our reading of
    [feitelson1996], not checked against the original code (not available
    here).  Cost O(n + P).
    """
    n, processors = _int("n", n, 1), _int("processors", processors, 1)
    p_pow2 = _fraction("p_pow2", _real("p_pow2", p_pow2))
    repeats, zipf = _bool("repeats", repeats), _positive("zipf", zipf)
    rng_jobs, rng_arr, *_ = _children(seed)
    pmf = feitelson_size_pmf(processors, p_pow2)
    sizes = draw_sizes(rng_jobs, pmf, n)
    runtimes = feitelson_runtimes(rng_jobs, sizes, processors)
    runs = zipf_runs(rng_jobs, n, zipf, _int("max_runs", max_runs, 1)) if repeats else np.ones(n, np.int64)
    job = np.repeat(np.arange(n), runs)[:n]
    first = np.r_[True, job[1:] != job[:-1]]
    ids = np.arange(1, n + 1)
    df = _frame(ids, poisson_arrivals(rng_arr, n), runtimes[job], runtimes[job], sizes[job],
                prev_job=np.where(first, -1, ids - 1))
    cap = np.array([processors], dtype=np.int64)
    df = _round_times(set_load(df, cap, load))
    meta = dict(model="feitelson96", params=dict(n=n, processors=processors, load=float(load),
                                                  p_pow2=float(p_pow2), repeats=bool(repeats), zipf=float(zipf),
                                                  max_runs=int(max_runs)),
                distinct_jobs=int(job[-1] + 1))
    return Stream(df, cap, meta)


# ---- lublin03 ([lublin2003]) ------------------------------------------------------
#: Default parameters of the Lublin-Feitelson model (U. Lublin, D. G. Feitelson,
#: "The workload on parallel supercomputers: modeling the characteristics of
#: rigid jobs", JPDC 63(11), 2003), as in the authors' generator m_lublin99.c
#: of the Parallel Workloads Archive, for a machine of 128 nodes.  serial /
#: pow2: probabilities of a serial job and of a power-of-two parallel job;
#: ulow, umed, uhi, uprob: the two-stage uniform on log2(size); a1, b1, a2, b2:
#: the two gammas (shape, scale) of ln(runtime), the first taken with
#: probability pa x size + pb (clipped to [0, 1]); aarr x arar, barr: gamma of
#: ln(inter-arrival time) in seconds at rush hours; anum, bnum: gamma giving the
#: share of arrivals in each half-hour bucket of the day (daily cycle).
LUBLIN_PARAMS = {
    "batch": dict(serial=0.2927, pow2=0.6686, ulow=1.2, umed=5.0, uhi=7.0, uprob=0.875,
                  a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
                  aarr=6.0415, barr=0.8531, anum=6.1271, bnum=5.2740, arar=1.0519),
    "interactive": dict(serial=0.1541, pow2=0.625, ulow=1.0, umed=3.0, uhi=5.5, uprob=0.705,
                        a1=3.8351, b1=0.6605, a2=7.073, b2=0.6856, pa=-0.0118, pb=0.9156,
                        aarr=6.5510, barr=0.6621, anum=8.9186, bnum=3.6680, arar=0.9797),
    "whole": dict(serial=0.244, pow2=0.576, ulow=0.8, umed=4.5, uhi=7.0, uprob=0.86,
                  a1=4.2, b1=0.94, a2=312.0, b2=0.03, pa=-0.0054, pb=0.78,
                  aarr=10.2303, barr=0.4871, anum=8.1737, bnum=3.9631, arar=1.0225),
}
#: SWF field 15 (queue): 1 batch, 0 interactive, as m_lublin99.c writes them; -1 (unknown) for the
#: typeless parameter set, where m_lublin99.c writes 0
LUBLIN_TYPE_CODE = {"interactive": 0, "batch": 1, "whole": -1}
_BUCKETS, _BUCKET_S, _CYCLIC_START = 48, 1800.0, 11
_MAX_LOG_RUNTIME, _MAX_LOG_GAP = 12.0, 13.0


def _lublin_shape(job_type: str, processors: int) -> dict:
    """Parameters for ``processors`` nodes: uhi and umed move with log2(P) - 7
    (the generator's advice: UHi = log2 of the system size, UMed at a fixed
    distance below it); ulow stays."""
    p = dict(LUBLIN_PARAMS[job_type])
    shift = math.log2(processors) - 7.0
    p["uhi"] += shift
    p["umed"] += shift
    if p["umed"] <= p["ulow"]:
        least = {k: _lublin_least(k) for k in ("batch", "whole")}
        raise ValueError(f"lublin03's {job_type} jobs need at least {_lublin_least(job_type)} nodes "
                         f"(processors={processors} puts UMed={p['umed']:.2f} at or below ULow={p['ulow']}); "
                         f"job_types 'batch' and 'whole' run from {least['batch']} and {least['whole']}")
    return p


def _lublin_least(job_type: str) -> int:
    """The fewest processors for which :func:`_lublin_shape` keeps UMed above ULow."""
    p = LUBLIN_PARAMS[job_type]
    return math.floor(2.0 ** (7.0 + p["ulow"] - p["umed"])) + 1


def _lublin_sizes(rng, p: dict, count: int, processors: int) -> np.ndarray:
    """Serial with probability ``serial``; else log2(size) from the two-stage
    uniform, rounded to an integer for a power-of-two job (probability
    ``pow2``; capped at the largest power of two <= P); size = round(2**par)."""
    u = rng.random(count)
    first = rng.random(count) <= p["uprob"]
    lo = np.where(first, p["ulow"], p["umed"])
    hi = np.where(first, p["umed"], p["uhi"])
    par = lo + rng.random(count) * (hi - lo)
    pow2 = u <= p["serial"] + p["pow2"]
    par = np.where(pow2, np.minimum(np.floor(par + 0.5), math.floor(math.log2(processors))), par)
    size = np.floor(np.exp2(par) + 0.5).astype(np.int64)
    return np.where(u <= p["serial"], 1, np.clip(size, 1, processors))


def lublin_size_pmf(processors: int = 128, job_type: str = "batch") -> np.ndarray:
    """Exact probabilities of sizes 1..processors under :func:`lublin03`'s size
    model (index s-1), by integrating the two-stage uniform.  O(P)."""
    _choice("job_type", job_type, tuple(LUBLIN_PARAMS))
    p = _lublin_shape(job_type, processors)

    def cdf(x):       # P(par <= x) of the two-stage uniform
        x = np.asarray(x, dtype=np.float64)
        a = np.clip((x - p["ulow"]) / (p["umed"] - p["ulow"]), 0, 1)
        b = np.clip((x - p["umed"]) / (p["uhi"] - p["umed"]), 0, 1)
        return p["uprob"] * a + (1 - p["uprob"]) * b

    s = np.arange(1, processors + 1, dtype=np.float64)
    other = np.clip(cdf(np.log2(s + 0.5)) - cdf(np.log2(np.maximum(s - 0.5, 1e-300))), 0, None)
    other[-1] += 1 - cdf(np.log2(processors + 0.5))
    pmf = (1 - p["serial"] - p["pow2"]) * other
    top = math.floor(math.log2(processors))
    for m in range(0, top + 1):
        mass = cdf(m + 0.5) - cdf(m - 0.5) if m < top else 1 - cdf(m - 0.5)
        pmf[(1 << m) - 1] += p["pow2"] * mass
    pmf[0] += p["serial"]
    return pmf


def _lublin_log_runtimes(rng, p: dict, sizes: np.ndarray) -> np.ndarray:
    """ln(runtime): hyper-gamma, first gamma with probability pa x size + pb
    (clipped to [0, 1]); draws above 12 (e**12 s, 1.9 days) are redrawn, branch
    included, as m_lublin99.c does."""
    prob = np.clip(p["pa"] * sizes + p["pb"], 0.0, 1.0)
    out = np.empty(len(sizes))
    todo = np.arange(len(sizes))
    while todo.size:
        first = rng.random(todo.size) <= prob[todo]
        g = np.where(first, rng.gamma(p["a1"], p["b1"], todo.size), rng.gamma(p["a2"], p["b2"], todo.size))
        out[todo] = g
        todo = todo[g > _MAX_LOG_RUNTIME]
    return out


def _lublin_gap_points(rng, p: dict, count: int) -> np.ndarray:
    """Inter-arrival 'points' of one job type: exp(g) / 1800 with g ~
    gamma(aarr x arar, barr) (redrawn above 13), one bucket of the mean day
    worth one point."""
    g = rng.gamma(p["aarr"] * p["arar"], p["barr"], count)
    bad = g > _MAX_LOG_GAP
    while bad.any():
        g[bad] = rng.gamma(p["aarr"] * p["arar"], p["barr"], int(bad.sum()))
        bad = g > _MAX_LOG_GAP
    return np.exp(g) / _BUCKET_S


def _lublin_weights(p: dict) -> np.ndarray:
    """Relative arrival intensity of the 48 half-hour buckets (mean 1): bucket
    (i - 1) mod 48 gets gammacdf(i + 0.5) - gammacdf(i - 0.5) of gamma(anum,
    bnum), i = 11 .. 58 (the generator's day shifted to start at bucket 11;
    its gamma is in bucket units, so the peak falls in the early afternoon)."""
    from scipy.special import gammainc           # lazy: SciPy only for the Lublin model
    i = np.arange(_CYCLIC_START, _BUCKETS + _CYCLIC_START, dtype=np.float64)
    w = np.empty(_BUCKETS)
    w[(i.astype(int) - 1) % _BUCKETS] = (gammainc(p["anum"], (i + 0.5) / p["bnum"])
                                         - gammainc(p["anum"], (i - 0.5) / p["bnum"]))
    return w / w.mean()


#: buckets of the day-by-day clock of :func:`_warp`; a longer stream takes whole days at once
_WARP_BUCKETS = 1 << 23


def _warp(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Seconds from midnight at which the cumulative ``points`` are spent when
    bucket b of each day costs weights[b mod 48] points (linear inside a
    bucket): the generator's arrival clock, vectorised.  Over up to
    :data:`_WARP_BUCKETS` buckets it adds the weights of every day in turn
    (as the generator does); a longer stream (a low load: 1,000 jobs at
    load 1e-6 span 31 million days, 11 GiB of buckets) spends whole days
    first, day = points // the day's weight, which differs from the sum day
    by day by float rounding only.  O(n log n)."""
    day_points, per_day = weights.sum(), len(weights)
    days = int(points.max(initial=0.0) // day_points) + 2
    if days * per_day <= _WARP_BUCKETS:
        cw = np.concatenate(([0.0], np.cumsum(np.tile(weights, days))))
        b = np.clip(np.searchsorted(cw, points, side="right") - 1, 0, days * per_day - 1)
        return _BUCKET_S * (b + (points - cw[b]) / weights[b % per_day])
    cw = np.concatenate(([0.0], np.cumsum(weights)))
    day = np.floor(points / day_points)
    rest = points - day * day_points
    b = np.clip(np.searchsorted(cw, rest, side="right") - 1, 0, per_day - 1)
    return _BUCKET_S * (day * per_day + b + (rest - cw[b]) / weights[b])


def lublin03(n: int = 1000, *, seed=0, processors: int = 128, job_types: str = "mixed",
             load_factor: float = 1.0, load: float | None = None) -> Stream:
    """[lublin2003] job stream on ``processors`` nodes.

    * Sizes: serial with probability ``serial``; else log2(size) from a
      two-stage uniform (ulow, umed) w.p. ``uprob`` else (umed, uhi), rounded
      to an integer for power-of-two jobs (probability ``pow2``); size =
      round(2**x) (:func:`lublin_size_pmf` gives the exact pmf).
    * Runtimes: ln(runtime) hyper-gamma, the first gamma taken with
      probability pa x size + pb: larger jobs run longer; runtime =
      floor(e**x) s, x <= 12.
    * Arrivals: ln(inter-arrival) gamma at rush hours, spread over the day by
      the half-hour weights of :func:`_lublin_weights` (daily cycle); the
      simulation starts at midnight.  ``job_types="mixed"`` (the generator's
      default) runs a batch and an interactive process side by side and takes
      the first ``n`` arrivals (SWF field 15 ``queue``: 1 batch, 0
      interactive, as m_lublin99.c); "batch" / "interactive" use one of them;
      "whole" the typeless parameter set (queue -1).
    * Load: ``load_factor`` multiplies the arrival rate inside the model
      (points per job divided by it), which keeps the daily cycle; ``load``
      (if given) first sets :func:`offered_load` to it the same way
      (:func:`_lublin_rate`: to 1e-4 where a rate reaches it; the first
      ``n`` arrivals of the two processes change with the rate, and the
      load jumps where they do, most on short streams: the nearest side
      then; ``meta["rate_factor"]`` is the factor, ``meta["offered_load"]``
      the load reached).

    Parameters (:data:`LUBLIN_PARAMS`) are the defaults of the authors'
    generator, which are the paper's fitted values; for other machine sizes
    UHi and UMed shift with log2(P) - 7.  Differences to the C generator: its
    per-job truncation of arrival times to whole seconds is applied once to
    the final times here, and numpy's gamma sampler replaces Jain's.
    Estimates are exact (the model has none).  Cost O(n log n).
    """
    n, processors = _int("n", n, 1), _int("processors", processors, 2)
    _choice("job_types", job_types, LUBLIN_TYPES)
    factor = _positive("load_factor", load_factor)
    rng_jobs, rng_arr, *_ = _children(seed)
    kinds = ("batch", "interactive") if job_types == "mixed" else (job_types,)
    code = np.array([LUBLIN_TYPE_CODE[k] for k in kinds])
    # n candidate jobs per type, each with fixed attributes (common random numbers across
    # rate factors); the stream is the first n arrivals of the merged processes
    points, weights, sizes, runtime = [], [], [], []
    for k, rj, ra in zip(kinds, rng_jobs.spawn(len(kinds)), rng_arr.spawn(len(kinds))):
        p = _lublin_shape(k, processors)
        points.append(np.cumsum(_lublin_gap_points(ra, p, n)))
        weights.append(_lublin_weights(p))
        s = _lublin_sizes(rj, p, n, processors)
        sizes.append(s)
        runtime.append(np.floor(np.exp(_lublin_log_runtimes(rj, p, s))))
    kind = np.repeat(np.arange(len(kinds)), n)
    sizes, runtime = np.concatenate(sizes), np.concatenate(runtime)
    cap = np.array([processors], dtype=np.int64)

    def frame(f):
        t = np.floor(np.concatenate([_warp(pt / f, w) for pt, w in zip(points, weights)]))
        pick = np.lexsort((code[kind], t))[:n]       # ties: interactive first, as m_lublin99.c
        return _frame(np.arange(1, n + 1), t[pick], runtime[pick], runtime[pick], sizes[pick],
                      queue=code[kind[pick]])

    base = 1.0 if load is None else _lublin_rate(lambda f: offered_load(frame(f), cap), _positive("load", load))
    df = frame(base * factor)
    meta = dict(model="lublin03", params=dict(n=n, processors=processors, job_types=job_types,
                                               load_factor=factor, load=None if load is None else float(load)),
                rate_factor=base * factor)
    return Stream(df, cap, meta)


def _lublin_rate(rho, target: float, tol: float = 1e-4) -> float:
    """The rate factor ``f`` whose stream's offered load ``rho(f)`` is
    nearest ``target``: a fixed point first (the span is about linear in
    1 / f), then bisection in log f between a factor below and one above the
    target.  ``rho`` jumps where the first ``n`` arrivals of the two
    processes change (which jobs, hence their work), so the target may lie
    in a jump: the nearest side is kept.  The fixed point alone stopped on
    such jumps 4 to 43 % off (load 3.0, seed 4: 2.671; 50 jobs at 0.8:
    0.453).  Cost O(iterations x n log n), at most 64 streams."""
    seen: list[tuple[float, float]] = []

    def at(f):
        r = rho(f)
        if math.isfinite(r):
            seen.append((f, r))
        return r

    def best():
        return min(seen, key=lambda fr: abs(fr[1] / target - 1)) if seen else (1.0, math.nan)

    f = 1.0
    for _ in range(12):
        r = at(f)
        if not math.isfinite(r) or r <= 0 or abs(r / target - 1) < tol:
            return best()[0]
        f *= target / r
    lo = max((fr for fr in seen if fr[1] < target), key=lambda fr: fr[0], default=None)
    hi = min((fr for fr in seen if fr[1] > target), key=lambda fr: fr[0], default=None)
    for _ in range(8):                       # a bracket: more rate raises the load, less lowers it
        if lo is not None and hi is not None:
            break
        g = (hi or lo)[0] * (0.5 if lo is None else 2.0)
        r = at(g)
        if not math.isfinite(r):
            return best()[0]
        lo, hi = (lo, (g, r)) if r > target else ((g, r), hi)
    if lo is None or hi is None:
        return best()[0]
    a, b = lo[0], hi[0]
    for _ in range(40):
        if abs(best()[1] / target - 1) < tol or b / a < 1 + 1e-12:
            break
        m = math.sqrt(a * b)
        r = at(m)
        if not math.isfinite(r):
            break
        a, b = (m, b) if r < target else (a, m)
    return best()[0]


# ---- rajaei ([rajaei-dadfar], "Implementation issues") ----------------------------------------------
RAJAEI_CLASSES = (("small", 1, 5, 0.3), ("medium", 6, 10, 0.4), ("large", 11, 16, 0.3))
RAJAEI_NODES = 16


RAJAEI_SPLITS = ("runtimes", "estimates")


def rajaei(n: int = 1000, *, seed=0, load: float = DEFAULT_LOAD, min_runtime: float = 90.0,
           split: str = "runtimes") -> Stream:
    """Rajaei & Dadfar's generator ([rajaei-dadfar], "Implementation issues") on 16 nodes.

    1. 30 % small jobs (1-5 nodes), 40 % medium (6-10), 30 % large (11-16),
       uniform inside a class (``job_class`` column);
    2. ``split="runtimes"`` (default, the seed's words: "80 % of jobs with
       simulated runtime between 90 seconds and 9 hours, 20 % ... between 9
       hours and 12 hours"): 80 % of the runtimes uniform in 90 s .. 9 h,
       20 % uniform in 9 h .. 12 h (whole seconds, at least ``min_runtime``);
    3. "a simulated runtime may be anywhere between 10 % to 100 % of the
       estimated runtime": the estimate is the runtime divided by a uniform
       draw in 10 % .. 100 % (rounded up, so estimates reach 120 h).

    ``split="estimates"`` is epochbench's earlier reading: the 80/20 split
    drawn for the estimates (90 s .. 12 h), the runtime uniform in 10 % ..
    100 % of the estimate, raised to the 90 s minimum.

    [rajaei-dadfar] gives no arrival process: Poisson arrivals at :func:`offered_load`
    ``load`` (our choice).  [rajaei-dadfar] tables 6 and 8 use perfect estimates:
    :func:`perfect_estimates`.  Cost O(n).
    """
    n = _int("n", n, 1)
    min_runtime = _positive("min_runtime", min_runtime)
    _choice("split", split, RAJAEI_SPLITS)
    rng_jobs, rng_arr, *_ = _children(seed)
    cls = rng_jobs.choice(len(RAJAEI_CLASSES), size=n, p=[c[3] for c in RAJAEI_CLASSES])
    lo = np.array([c[1] for c in RAJAEI_CLASSES])[cls]
    hi = np.array([c[2] for c in RAJAEI_CLASSES])[cls]
    procs = rng_jobs.integers(lo, hi + 1)
    long = rng_jobs.random(n) < 0.2
    drawn = np.round(np.where(long, rng_jobs.uniform(9 * HOUR, 12 * HOUR, n), rng_jobs.uniform(90.0, 9 * HOUR, n)))
    share = rng_jobs.uniform(0.1, 1.0, n)
    if split == "runtimes":
        runtime = np.maximum(drawn, min_runtime)
        estimate = np.ceil(runtime / share)
    else:
        estimate = drawn
        runtime = np.minimum(np.maximum(np.ceil(share * estimate), min_runtime), estimate)
    names = np.array([c[0] for c in RAJAEI_CLASSES])
    df = _frame(np.arange(1, n + 1), poisson_arrivals(rng_arr, n), runtime, estimate, procs, job_class=names[cls])
    cap = np.array([RAJAEI_NODES], dtype=np.int64)
    df = _round_times(set_load(df, cap, load))
    return Stream(df, cap, dict(model="rajaei", params=dict(n=n, load=float(load), min_runtime=min_runtime,
                                                              split=split)))


# ---- K-resource extension ([leinberger1999] section 3.1 items 1-2) -------------------------------------
def k_resources(jobs: pd.DataFrame, processors: int, k: int, *, dist: str = "uniform", norm: str = "max",
                capacity: int = 1000, seed=0) -> Stream:
    """K resource requirements per job from its size ([leinberger1999] §3.1 items 1-2),
    for any stream.

    :func:`~epochbench.instances.generators.k_requirements` draws K numbers per job
    (uniform (0, 1] or exponential), normalises them by their max (or mean)
    and scales them by the job's share size / ``processors``; resource 0 stays
    processors (capacity ``processors``, so ``procs`` becomes
    ceil(share_0 x P): at most ``size`` with ``norm="max"``, possibly more
    with ``"mean"``, whose shares can exceed size / P), resources 1..K-1 are ``res_1 .. res_{K-1}``
    with ``capacity`` units each.  The original size is kept in column
    ``size``.  A rerun of a job (``prev_job``: the id of the run before, as
    :func:`feitelson96` with ``repeats`` writes) asks what its first run asks
    (:func:`_first_runs`): it is the same job submitted again.  K = 1
    returns the stream unchanged.  Cost O(n K).
    """
    k, processors = _int("k", k, 1), _int("processors", processors, 1)
    capacity = _int("capacity", capacity, 1)
    _choice("dist", dist, DISTS)
    _choice("norm", norm, NORMS)
    _require(jobs, "procs")
    if any(str(c).startswith("res_") for c in jobs.columns):
        raise ValueError("job table already has res_ columns")
    cap = np.array([processors] + [capacity] * (k - 1), dtype=np.int64)
    if k == 1:
        return Stream(jobs.copy(), cap, {})
    sizes = jobs["procs"].to_numpy(dtype=np.int64)
    if sizes.size and (sizes.min() < 1 or sizes.max() > processors):
        raise ValueError(f"job sizes must lie in 1..{processors}, got {sizes.min()}..{sizes.max()}")
    demand, capped = k_requirements(_rng(seed), sizes, processors, cap, dist, norm)
    first = _first_runs(jobs)
    demand, capped = demand[first], capped[first]
    out = jobs.copy()
    pos = out.columns.get_loc("procs")
    out["procs"] = demand[:, 0]
    out.insert(pos, "size", sizes)
    at = list(out.columns).index("duration") + 1 if "duration" in out.columns else len(out.columns)
    # the k - 1 columns at once: one insert each fragmented the frame, and pandas warned on each past 100
    # (about 1,800 lines of PerformanceWarning at k = 1,000)
    res = pd.DataFrame(demand[:, 1:], columns=[f"res_{r}" for r in range(1, k)], index=out.index)
    out = pd.concat([out.iloc[:, :at], res, out.iloc[:, at:]], axis=1)
    return Stream(out, cap, dict(k=k, dist=dist, norm=norm, capacity=capacity, capped=int(capped.sum())))


def _first_runs(jobs: pd.DataFrame) -> np.ndarray:
    """For each row, the row of the first run of its job: itself, or for a
    rerun (``prev_job`` >= 0, the id of an earlier row: the run before it)
    the first run of that chain.  A ``prev_job`` naming no earlier row (an
    id not in the table, a later row, the row itself) starts a chain, so
    chains end; a table whose ids repeat has no chains (each row draws its
    own).  Pointer jumping: O(n log(longest chain))."""
    n = len(jobs)
    rows = np.arange(n)
    if "prev_job" not in jobs.columns or "id" not in jobs.columns or not n:
        return rows
    ids = pd.Index(jobs["id"].to_numpy())
    if not ids.is_unique:
        return rows
    before = ids.get_indexer(jobs["prev_job"].to_numpy())
    root = np.where((before >= 0) & (before < rows), before, rows)
    while True:
        nxt = root[root]
        if np.array_equal(nxt, root):
            return root
        root = nxt


# ---- estimate models ([zhang-comparative] section 2.1) ------------------------------------------------
def _new_estimates(jobs: pd.DataFrame, factor: np.ndarray, top: float = math.inf) -> pd.DataFrame:
    """estimate = runtime x factor; rounded up to whole seconds where factor > 1
    (so estimate >= runtime, and factor 1 gives exactly the runtime), but
    never above runtime x ``top`` (the model's largest factor) where a whole
    second lies in [runtime, runtime x top]: rounding up took a 1 s job's
    estimate to 2 s under Omega 0.5, whose factors lie in [1, 1.5]; at least
    1 s (the :mod:`epochbench.instances.jobs` rule); ``duration`` and ``req_time`` follow."""
    out = jobs.copy()
    run = out["runtime"].to_numpy(dtype=np.float64)
    if run.size and run.min() < 0:
        raise ValueError("runtime must be >= 0 (unknown runtimes cannot get a model estimate)")
    est = run * factor
    est = np.maximum(np.where(factor > 1, np.ceil(est - 1e-9 * est), est), 1.0)
    if math.isfinite(top):
        most = np.floor(run * top * (1 + 1e-12))          # the largest whole second within the model's range
        est = np.where(most >= run, np.minimum(est, np.maximum(most, 1.0)), est)
    est = np.maximum(est, run)
    out["estimate"] = est
    if "duration" in out.columns:
        out["duration"] = np.minimum(run, est)
    if "req_time" in out.columns:
        out["req_time"] = est
    return out


def omega_estimates(jobs: pd.DataFrame, omega: float, *, seed=0) -> pd.DataFrame:
    """[zhang-comparative] §2.1 Omega model: estimate = runtime x f, f uniform on
    [1, 1 + omega]; omega = 0 is perfect knowledge.  The runtime is the
    dedicated execution time.  Where f > 1 estimates are whole seconds,
    rounded up but kept within [runtime, runtime x (1 + omega)] where a
    whole second lies there (:func:`_new_estimates`).  A new table; O(n)."""
    omega = float(omega)
    if not (omega >= 0 and math.isfinite(omega)):
        raise ValueError(f"omega must be >= 0, got {omega!r}")
    _require(jobs, "runtime")
    u = _rng(seed).random(len(jobs))
    return _new_estimates(jobs, 1.0 + omega * u, top=1.0 + omega)


def phi_estimates(jobs: pd.DataFrame, phi: float, *, seed=0) -> pd.DataFrame:
    """[zhang-comparative] §2.1 Phi model: with y uniform on [0, 1), the overestimation
    factor is 1 if y < phi (a share phi of jobs ends exactly at its estimate:
    killed at the limit), else (1 - phi) / (1 - y), so that runtime /
    estimate is uniform on (0, 1] for the others.  phi = 1 is perfect
    knowledge.  Estimates are whole seconds, rounded up
    (:func:`_new_estimates`), as a trace's requested times are: on jobs of
    a few seconds that bends the ratio's distribution (lublin03's
    interactive jobs, 44 % of them at most 10 s: 4.3 % of the jobs, not 8 %,
    end in [0.9, 1) of their estimate at phi = 0.2; feitelson96's, 2.4 %
    of them at most 10 s, bend it less: 7.7 % and 7.9 % on two seeds of
    100,000 jobs).  A new table; O(n)."""
    phi = float(phi)
    if not 0.0 <= phi <= 1.0:
        raise ValueError(f"phi must lie in [0, 1], got {phi!r}")
    _require(jobs, "runtime")
    y = _rng(seed).random(len(jobs))
    return _new_estimates(jobs, np.where(y < phi, 1.0, (1.0 - phi) / (1.0 - y)))


def perfect_estimates(jobs: pd.DataFrame) -> pd.DataFrame:
    """estimate = runtime (at least 1 s): [zhang-comparative]'s Omega = 0 / Phi = 1,
    [rajaei-dadfar] tables 6 and 8.  A new table; O(n)."""
    _require(jobs, "runtime")
    return _new_estimates(jobs, np.ones(len(jobs)))


def with_estimates(jobs: pd.DataFrame, model: str, *, omega: float = 1.0, phi: float = 0.2,
                   seed=0) -> pd.DataFrame:
    """Apply estimate model ``model`` ("model" keeps the stream's own,
    "perfect", "omega", "phi") to any job table."""
    _choice("estimates", model, ESTIMATES)
    if model == "model":
        return jobs.copy()
    if model == "perfect":
        return perfect_estimates(jobs)
    if model == "omega":
        return omega_estimates(jobs, omega, seed=seed)
    return phi_estimates(jobs, phi, seed=seed)


# ---- the generator ------------------------------------------------------------------------
#: options that shape some streams only: name -> (default, applies(model, k, estimates), to what)
_ONLY = {"p_pow2": (0.75, lambda m, k, e: m == "feitelson96", "model feitelson96"),
         "repeats": (True, lambda m, k, e: m == "feitelson96", "model feitelson96"),
         "job_types": ("mixed", lambda m, k, e: m == "lublin03", "model lublin03"),
         "omega": (1.0, lambda m, k, e: e == "omega", "estimates omega"),
         "phi": (0.2, lambda m, k, e: e == "phi", "estimates phi"),
         "dist": ("uniform", lambda m, k, e: k > 1, "k > 1"),
         "norm": ("max", lambda m, k, e: k > 1, "k > 1"),
         "capacity": (1000, lambda m, k, e: k > 1, "k > 1")}


def _check_applies(model: str, k: int, estimates: str, given: dict) -> None:
    """An option set to other than its default where it shapes nothing
    (``--job-types`` with feitelson96, ``--phi`` without ``--estimates phi``,
    ...) is refused in one line, rather than ignored and recorded in the
    stream's header as if it had been used."""
    for name, value in given.items():
        default, applies, where = _ONLY[name]
        if value != default and not applies(model, k, estimates):
            raise ValueError(f"{name} = {value!r} applies to {where} only (this stream: model {model}, k {k}, "
                             f"estimates {estimates})")


def workload(*, model: str = "feitelson96", jobs: int = 1000, seed: int = 0, processors: int | None = None,
             k: int = 1, dist: str = "uniform", norm: str = "max", capacity: int = 1000,
             load: float | None = None, load_factor: float = 1.0, runtime_factor: float = 1.0,
             estimates: str = "model", omega: float = 1.0, phi: float = 0.2, p_pow2: float = 0.75,
             repeats: bool = True, job_types: str = "mixed", fit: str | None = None,
             he_params: str | None = None, he_out: str | None = None) -> Stream:
    """A job stream of ``model`` (feitelson96, lublin03, rajaei, hypererlang), then K
    resources, load control and an estimate model.

    Steps, in order: the model with ``jobs`` jobs on ``processors`` nodes
    (default 128; rajaei: 16 only); with ``k`` > 1, :func:`k_resources`
    (``dist``, ``norm``, ``capacity`` units per extra resource); arrivals
    set to the offered load ``load`` (:func:`offered_load`) on the bottleneck resource (default
    0.7 for the Poisson models; lublin03: the model's own arrival process
    unless ``load`` is given); arrival rate x ``load_factor``; runtimes and
    estimates x ``runtime_factor`` (:func:`scale_runtimes`, arrivals fixed,
    [zhang-comparative] §2.2); then ``estimates`` (model / perfect / omega / phi,
    [zhang-comparative] §2.1).  lublin03 applies ``load`` and ``load_factor`` inside its
    daily cycle for K = 1 (and ``load_factor`` for K > 1 without ``load``);
    otherwise they rescale the time axis (:func:`scale_arrivals`).  Times are whole seconds.  ``p_pow2`` and ``repeats`` are
    feitelson96's, ``job_types`` lublin03's.  hypererlang ([zhang-comparative] §2.1,
    :mod:`epochbench.instances.hypererlang`) is fitted to the trace ``fit``, read from
    ``he_params`` (a JSON file or string as :func:`~epochbench.instances.hypererlang.fit_trace`
    returns) or, with neither, the built-in fit to KTH SP2; ``he_out`` writes
    the parameters used to that file.  It keeps
    its fitted arrival rates unless ``load`` is given, and its machine is the
    trace's unless ``processors`` is.  ``meta["params"]`` records the values
    used: ``meta["params"]["load"]`` is the load set (0.7 where defaulted), None only where
    the model kept its own arrivals; for hypererlang ``fit_source`` names
    the trace the parameters were fitted to (the built-in KTH SP2 fit where
    neither ``fit`` nor ``he_params`` is given).  Cost O(n log n + n K).
    """
    _choice("model", model, MODELS)
    _choice("estimates", estimates, ESTIMATES)
    n = _int("jobs", jobs, 1)
    rngs = _children(seed)
    k = _int("k", k, 1)
    lf, rf = _positive("load_factor", load_factor), _positive("runtime_factor", runtime_factor)
    target = DEFAULT_LOAD if load is None else _positive("load", load)
    # K > 1 changes the demand: the offered load is then set on the final stream (bottleneck resource)
    reload = k > 1 and (model not in OWN_ARRIVALS or load is not None)
    _check_he_options(model, fit, he_params, he_out)
    _check_applies(model, k, estimates, dict(p_pow2=p_pow2, repeats=repeats, job_types=job_types, omega=omega,
                                             phi=phi, dist=dist, norm=norm, capacity=capacity))
    if model == "rajaei":
        if processors not in (None, RAJAEI_NODES):
            raise ValueError(f"rajaei is defined on {RAJAEI_NODES} nodes ([rajaei-dadfar]), got processors={processors}")
        base = rajaei(n, seed=seed, load=target)
    elif model == "feitelson96":
        base = feitelson96(n, seed=seed, processors=128 if processors is None else processors,
                           load=target, p_pow2=p_pow2, repeats=repeats)
    elif model == "hypererlang":
        base = hypererlang(n, seed=seed, fit=fit, params=he_params, processors=processors,
                           load=None if reload else load)
        if he_out:
            _write_new(he_out, json.dumps(base.meta["fit"], indent=1))
    else:
        inside = not reload                 # lublin03: rate factors inside the daily cycle where possible
        base = lublin03(n, seed=seed, processors=128 if processors is None else processors,
                        job_types=job_types, load_factor=lf if inside else 1.0, load=load if inside else None)
    df, cap = base.jobs, base.capacity
    extra = {}
    if k > 1:
        df, cap, extra = k_resources(df, int(cap[0]), k, dist=dist, norm=norm, capacity=capacity, seed=rngs[2])
        if reload:
            df = set_load(df, cap, target)
    if lf != 1.0 and (model != "lublin03" or reload):
        df = scale_arrivals(df, lf, name=arg("load_factor", load_factor))
    if rf != 1.0:
        df = scale_runtimes(df, rf)
    df = with_estimates(df, estimates, omega=omega, phi=phi, seed=rngs[3])
    df = _round_times(df)
    asked = {"load": load, "load_factor": None if lf == 1.0 else load_factor}
    # lublin03 rates its arrivals in its own model, not through scale_arrivals
    arrivals_fit(df["submit"].to_numpy(), args(**{k: v for k, v in asked.items() if v is not None}))
    if n > 1 and not df["submit"].max() > df["submit"].min():
        raise ValueError(f"every one of the {n} arrivals falls at time {df['submit'].iloc[0]:g} once times are "
                         f"whole seconds ({args(**{k: v for k, v in asked.items() if v is not None})}): the "
                         "offered load is undefined; ask a lower load or more jobs")
    meta = dict(base.meta)
    meta.update(generator="workload", seed=int(seed),           # a numpy seed: meta must stay JSON
                params=dict(model=model, jobs=int(n), seed=int(seed), processors=int(cap[0]), k=int(k), dist=dist,
                            norm=norm, capacity=int(capacity), load=_load_used(model, load, target),
                            load_factor=lf,
                            runtime_factor=rf, estimates=estimates, omega=float(omega), phi=float(phi),
                            p_pow2=float(p_pow2), repeats=bool(repeats), job_types=job_types),
                model_params=base.meta.get("params", {}), offered_load=offered_load(df, cap), **extra)
    if model == "hypererlang":
        meta["params"].update(fit=fit, he_params=he_params, fit_source=base.meta["fit"].get("source"))
    return Stream(df, cap, meta)


def _load_used(model: str, load, target: float) -> float | None:
    """The offered load the stream was set to, as its parameters record it:
    ``load``, else :data:`DEFAULT_LOAD` for the Poisson models (it was
    recorded as None, as if no load had been set); None only where the model
    kept its own arrivals (lublin03, hypererlang without ``load``)."""
    return None if load is None and model in OWN_ARRIVALS else target


#: the parameters :func:`_default_name` always spells (the others only where not at their default)
_NAMED = ("model", "k", "dist", "estimates", "omega", "phi", "jobs", "seed")


def _default_name(params: dict, given: dict | None = None) -> str:
    """``<model>[-K<k>-<dist>][-<estimates>]-n<jobs>-s<seed>[-<option><value>...].swf``
    from the stream's ``params``; each other option in ``given`` (the call's
    own) that is not at its default follows as ``-<option><value>`` in
    name order, so that two streams of other loads or machine sizes get
    other names (a value that is not a plain word or number is written as
    8 hex digits of its hash)."""
    p = params
    k = f"-K{p['k']}-{p['dist']}" if p.get("k", 1) > 1 else ""
    est = "" if p.get("estimates", "model") == "model" else f"-{p['estimates']}"
    if p.get("estimates") == "omega":
        est += _name_value(p["omega"], None)
    elif p.get("estimates") == "phi":
        est += _name_value(p["phi"], None)
    defaults = workload.__kwdefaults__
    rest = "".join(f"-{name}{_name_value(value, defaults[name])}" for name, value in sorted((given or {}).items())
                   if name not in _NAMED and name in defaults and value != defaults[name])
    return f"{p.get('model', 'feitelson96')}{k}{est}-n{p.get('jobs', 1000)}-s{int(p.get('seed', 0)):04d}{rest}.swf"


def _name_value(value, default) -> str:
    """An option's value as a file name carries it: in full (``repr`` of a
    float, without a trailing ``.0``: 0.9000001 is not 0.9), a switch as
    yes / no whatever its type."""
    if isinstance(value, (bool, np.bool_)) or isinstance(default, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        text = repr(float(value))                    # the shortest text that reads back as the same float
        return text[:-2] if text.endswith(".0") else text
    text = str(value)
    if re.fullmatch(r"[A-Za-z0-9.+-]{1,32}", text):
        return text
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:8]   # a path of any bytes


#: the file names :func:`write_workload` writes a file to (anything else: a folder)
WORKLOAD_SUFFIXES = (".swf", ".swf.gz", ".csv", ".parquet", ".pq")


def write_workload(out, **params) -> Path:
    """Write :func:`workload` (``params``) to ``out``: a file ending in .swf,
    .swf.gz, .csv or .parquet, else a folder (created) that gets
    ``<model>[-K<k>-<dist>][-<estimates>]-n<jobs>-s<seed>[-<option><value>...].swf``
    (:func:`_default_name`: every other option not at its default; a new
    name with another suffix of letters, ``x.txt``, or a compressed table,
    ``x.swf.bz2``, is refused: it reads as a file, and became a folder).  SWF carries
    extra columns in its ``.extra.csv`` sidecar (:func:`epochbench.instances.jobs.write_swf`).
    Returns the path written."""
    # Lazy import: the dependency rule is instances <- sim (sim imports instances);
    # importing sim.jobs at module level here would make instances depend on sim.
    from epochbench.instances.jobs import SIDECAR_SUFFIX, check_new_workload, make_workload, save_workload

    he_out = params.pop("he_out", None)
    out = Path(out)
    name = out.name.lower()
    file = name.endswith(WORKLOAD_SUFFIXES)
    if file:
        check_new_workload(out)
    elif (re.fullmatch(r"\.[a-z]{1,8}", out.suffix.lower()) or re.search(r"\.(swf|csv|parquet|pq)\.", name)) \
            and not out.is_dir():
        raise ValueError(f"out: {out} names a {out.suffix} file, which a workload is not written as; give a file "
                         f"ending in {', '.join(WORKLOAD_SUFFIXES[:4])}, or a folder (without such a suffix)")
    _check_he_options(params.get("model", workload.__kwdefaults__["model"]), params.get("fit"),
                      params.get("he_params"), he_out)   # before the stream is written
    if he_out and file and Path(he_out).resolve() == out.resolve():
        raise ValueError(f"he_out: {he_out} is the stream's own file; name another")
    stream = workload(**params)
    if not file:
        out.mkdir(parents=True, exist_ok=True)
        out = out / _default_name(stream.meta["params"], params)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
    note = "generator parameters " + json.dumps(stream.meta["params"], sort_keys=True)
    fit_dropped = (stream.meta.get("fit") or {}).get("dropped") if params.get("fit") else None
    if fit_dropped:                                  # the jobs of the fitted trace its reader dropped
        note += "; fitted to the trace without the jobs its reader dropped: " + json.dumps(fit_dropped)
    header = {"Version": "2.2", "Computer": f"epochbench workload model {stream.meta['model']}", "Note": note}
    resources = ("procs", *(str(c)[4:] for c in stream.jobs.columns if str(c).startswith("res_")))
    w = make_workload(stream.jobs, stream.capacity, resources=resources, source=f"workload {stream.meta['model']}",
                      meta={"header": header, "generator": stream.meta})
    written = save_workload(w, out)
    if he_out:                                       # after the stream: a refused stream leaves no file
        try:
            Path(he_out).parent.mkdir(parents=True, exist_ok=True)     # as the stream's own folder is
            _write_new(he_out, json.dumps(stream.meta["fit"], indent=1))
        except (OSError, ValueError) as exc:         # nor does a failed parameters' file: the stream goes
            for f in (written, written.with_name(written.name + SIDECAR_SUFFIX)):
                f.unlink(missing_ok=True)
            if isinstance(exc, ValueError):
                raise
            raise ValueError(f"he_out: cannot write {he_out} ({exc.strerror or exc}: {exc.filename})") from None
    return written


#: the ``--out`` help of ``epochbench generate workload``
write_workload.out_help = ("a file ending in .swf, .swf.gz, .csv or .parquet, else a folder (created) that "
                           "gets one named after the parameters; a new name with another file suffix (x.txt, "
                           "x.csv.bz2) is refused")


def _check_he_options(model, fit, he_params, he_out) -> None:
    """The hyper-Erlang options go with model hypererlang only; ``he_out`` is a new file."""
    if model != "hypererlang" and (fit, he_params, he_out) != (None, None, None):
        raise ValueError(f"fit, he_params and he_out apply to model hypererlang only, not {model!r}")
    _check_he_out(he_out)


def _check_he_out(path) -> None:
    """ValueError when the parameters' file ``path`` (if any) exists, or
    is empty (it was ignored: no file and status 0)."""
    if path is not None and not str(path).strip():
        raise ValueError("he_out: an empty path; name a new file for the fitted parameters")
    if path and Path(path).exists():
        raise ValueError(f"he_out: {path} already exists; write the parameters to a new file "
                         "(nothing is overwritten)")


def _write_new(path, text: str) -> None:
    """``text`` to a new file ``path``, atomically; ValueError when it exists."""
    from .files import write_text
    _check_he_out(path)
    write_text(path, text)


def stream_stats(jobs: pd.DataFrame) -> dict:
    """Summary figures of a job table: mean and coefficient of variation
    (population std / mean) of ``procs`` and ``runtime``, shares of serial and
    power-of-two sizes (1 counted as 2**0), mean estimate / runtime, share of
    jobs with runtime == estimate.  O(n)."""
    procs = jobs["procs"].to_numpy(dtype=np.float64)
    run = jobs["runtime"].to_numpy(dtype=np.float64)
    est = jobs["estimate"].to_numpy(dtype=np.float64)
    p = procs.astype(np.int64)
    pos = run > 0
    return {"jobs": int(len(jobs)), "size_mean": float(procs.mean()), "size_cv": float(procs.std() / procs.mean()),
            "runtime_mean": float(run.mean()), "runtime_cv": float(run.std() / run.mean()),
            "serial_share": float((p == 1).mean()), "pow2_share": float(((p & (p - 1)) == 0).mean()),
            "overestimate_mean": float((est[pos] / run[pos]).mean()) if pos.any() else float("nan"),
            "exact_share": float((est == run).mean())}


register_generator(
    "workload", workload, write=write_workload,
    choices={"model": MODELS, "estimates": ESTIMATES, "job_types": LUBLIN_TYPES, "dist": DISTS, "norm": NORMS},
    none_types={"processors": int, "load": float, "fit": str, "he_params": str, "he_out": str},
    help={
        "model": "workload model: feitelson96 ([leinberger1999] §3.1), lublin03 ([lublin2003]), "
                 "rajaei ([rajaei-dadfar]), hypererlang ([zhang-comparative] §2.1; --fit, --he-params, default: fit to KTH SP2)",
        "fit": "hypererlang: fit the model to this trace (SWF, CSV or Parquet)",
        "he_params": "hypererlang: fitted parameters, a JSON file or string (as written by --he-out)",
        "he_out": "hypererlang: write the parameters used to this JSON file",
        "jobs": "number of jobs",
        "seed": "seed of numpy.random.default_rng",
        "processors": "machine size in nodes (default 128; rajaei: 16)",
        "k": "number of resources K (1 = processors only; [leinberger1999] §3.1 uses 2, 4, 8)",
        "dist": "distribution of a job's K requirements ([leinberger1999] §3.1)",
        "norm": "normalise the K draws by their max or mean",
        "capacity": "units per extra resource (K > 1)",
        "load": "offered load (default 0.7; lublin03 and hypererlang: the model's own arrivals)",
        "load_factor": "multiply the arrival rate by this factor",
        "runtime_factor": "multiply runtimes and estimates by this factor",
        "estimates": "estimate model: the model's own, perfect, omega or phi ([zhang-comparative] §2.1)",
        "omega": "Omega: estimate = runtime x U[1, 1 + omega]",
        "phi": "Phi: share of jobs ending exactly at their estimate",
        "p_pow2": "feitelson96: share of sizes moved to a power of two",
        "repeats": "feitelson96: repeated runs of the same job",
        "job_types": "lublin03: mixed (batch + interactive), batch, interactive or whole (typeless)",
    })

