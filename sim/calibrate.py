"""Calibrate the arrival rate of a job stream to a target mean queue length
([leinberger1999] §3.1, item 3: "a series of experiments were run using FCFS/FF-EASY
to determine an average arrival rate from a Poisson process which would
produce a desired average ready queue length", lengths 64, 128, 256).

The stream is fixed (same jobs, same unit inter-arrival draws: common random
numbers); only its arrival rate is multiplied by a factor f
(:func:`epochbench.instances.workloads.scale_arrivals`), so the mean queue length q(f)
is a near-monotone function of one variable.  :func:`calibrate_rate` brackets
the target by doubling or halving f, then narrows the bracket by regula falsi
on (log f, log q) with the Illinois modification (bisection in log f where q
is 0 or an interpolated point falls too close to an end), until q is within
``rtol`` of the target.

Mean queue length (:func:`mean_queue_length`): the time average of the number
of waiting jobs (submitted, not yet started) over a window, computed by
Little's law as the sum over jobs of the part of [submit, start) inside the
window, divided by the window's length.  The window runs from the arrival of
job floor(warmup x n) (default 10 %: the machine starts empty) to the arrival
of job ceil((1 - cooldown) x n) - 1 (default: the last arrival; the drain
after the last arrival, when no job arrives any more, is never counted).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from epochbench.instances.lazy import lazy_module
from epochbench.instances.workloads import scale_arrivals

from .pool import simulate_pool as simulate

pd = lazy_module("pandas")   # loaded on first use

__all__ = ["mean_queue_length", "queue_window", "Calibration", "calibrate_rate"]


def queue_window(submit, warmup: float = 0.1, cooldown: float = 0.0) -> tuple[float, float]:
    """(start, end) of the measuring window: the arrivals of jobs
    floor(warmup x n) and ceil((1 - cooldown) x n) - 1 in arrival order."""
    if not (0 <= warmup < 1 and 0 <= cooldown < 1 and warmup + cooldown < 1):
        raise ValueError(f"need 0 <= warmup, cooldown and warmup + cooldown < 1, got {warmup}, {cooldown}")
    s = np.sort(np.asarray(submit, dtype=np.float64))
    if s.size == 0:
        raise ValueError("empty job stream")
    first = int(math.floor(warmup * s.size))
    last = max(int(math.ceil((1 - cooldown) * s.size)) - 1, first)
    return float(s[first]), float(s[last])


def _check_window(submit, warmup: float, cooldown: float) -> None:
    """ValueError when the measuring window of :func:`queue_window` has no
    length (it has none at any arrival rate, which scales the gaps only)."""
    a, b = queue_window(submit, warmup, cooldown)
    if not b > a:
        n = len(submit)
        first = int(math.floor(warmup * n))
        last = max(int(math.ceil((1 - cooldown) * n)) - 1, first)
        why = ("lower the warm-up share" if last - first < 1 else "their arrivals are all at one time")
        raise ValueError(f"no measuring window: with warm-up {warmup:g} and cool-down {cooldown:g} the queue is "
                         f"measured from the arrival of job {first} to that of job {last} of {n}, a span of 0 s "
                         f"({why})")


def mean_queue_length(result: pd.DataFrame, warmup: float = 0.1, cooldown: float = 0.0) -> float:
    """Time-average number of waiting jobs in the window of :func:`queue_window`
    (Little's law: sum of each job's waiting time inside the window / window
    length).  ``result`` needs ``submit`` and ``start`` (a
    :class:`~epochbench.sim.engine.SimResult`'s ``jobs``); jobs never started wait to
    the end.  NaN when the window has length 0.  O(n log n)."""
    submit = result["submit"].to_numpy(dtype=np.float64)
    start = result["start"].to_numpy(dtype=np.float64)
    a, b = queue_window(submit, warmup, cooldown)
    if b <= a:
        return float("nan")
    start = np.where(np.isnan(start), np.inf, start)
    inside = np.clip(np.minimum(start, b) - np.maximum(submit, a), 0.0, None)
    return float(inside.sum() / (b - a))


@dataclass
class Calibration:
    """Result of :func:`calibrate_rate`.

    ``factor``: arrival-rate multiplier found; ``rate``: arrivals per second
    of the scaled stream, (n - 1) / (last - first arrival), and
    ``mean_interarrival`` = 1 / rate; ``mean_queue``: the mean queue length
    there; ``rel_error`` = mean_queue / target - 1; ``converged``: within
    ``rtol``; ``simulations`` run and ``seconds`` spent; ``history``: every
    (factor, mean_queue) tried, in order; ``note``: why it did not converge
    (empty when it did); ``jobs``: the scaled stream.
    """

    policy: str
    target: float
    factor: float
    rate: float
    mean_interarrival: float
    mean_queue: float
    rel_error: float
    converged: bool
    simulations: int
    seconds: float
    history: list = field(default_factory=list)
    note: str = ""
    jobs: pd.DataFrame | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "jobs"}


def _rate(jobs: pd.DataFrame) -> float:
    s = jobs["submit"].to_numpy(dtype=np.float64)
    span = s.max() - s.min() if len(s) > 1 else 0.0
    return float((len(s) - 1) / span) if span > 0 else float("inf")


def calibrate_rate(jobs: pd.DataFrame, capacity, target: float, policy: str = "easy", *, factor: float = 1.0,
                   rtol: float = 0.05, xtol: float = 1e-4, max_simulations: int = 40, warmup: float = 0.1,
                   cooldown: float = 0.0, **options) -> Calibration:
    """The arrival-rate factor f at which ``policy`` (any name
    :func:`~epochbench.sim.pool.simulate_pool` accepts; [leinberger1999] uses FF-EASY) has mean queue
    length ``target`` (within ``rtol``, relative) on ``jobs`` (a :mod:`epochbench.instances.jobs`
    table with ``duration``) on a machine of ``capacity``.  ``factor`` is the
    first guess; ``options`` go to :func:`~epochbench.sim.pool.simulate_pool`.

    For a fixed stream q(f) is piecewise smooth with jumps (one start moving
    past another changes the schedule after it); when the bracket narrows to
    a relative width ``xtol`` around a jump that skips the target band, the
    closest point found is returned with ``converged = False`` and a ``note``.

    Cost: one simulation per step: about log2 of the distance to the first
    guess for the bracket, then a few regula-falsi steps.  Raises
    ``ValueError`` when the target cannot be bracketed (e.g. a target above
    what ``n`` jobs can queue); returns the best point with ``converged =
    False`` when ``max_simulations`` run out or the bracket shrinks to a jump
    of q(f).
    """
    target = float(target)
    if not target > 0:
        raise ValueError(f"target mean queue length must be > 0, got {target!r}")
    if not factor > 0:
        raise ValueError(f"factor must be > 0, got {factor!r}")
    if len(jobs) < 2:
        raise ValueError("need at least 2 jobs to calibrate an arrival rate")
    _check_window(jobs["submit"], warmup, cooldown)
    t0 = time.perf_counter()
    history: list[tuple[float, float]] = []
    cache: dict[float, tuple[float, pd.DataFrame]] = {}

    def q(f: float) -> float:
        if f not in cache:
            if len(history) >= max_simulations:
                raise _OutOfRuns
            scaled = scale_arrivals(jobs, f)
            res = simulate(scaled, capacity, policy, **options)
            value = mean_queue_length(res.jobs, warmup, cooldown)
            cache[f] = (value, scaled)
            history.append((f, value))
        return cache[f][0]

    def close(v: float) -> bool:             # not abs(v / target - 1): 19 against 20 at 5 % read 0.0500...04
        return abs(v - target) <= rtol * target

    def done(converged: bool, note: str = "") -> Calibration:
        f, v = min(history, key=lambda fv: abs(fv[1] / target - 1.0) if math.isfinite(fv[1]) else math.inf)
        scaled = cache[f][1]
        rate = _rate(scaled)
        return Calibration(str(policy), target, f, rate, 1.0 / rate, v, v / target - 1.0, close(v),
                           len(history), time.perf_counter() - t0, list(history), "" if close(v) else note,
                           scaled)

    try:
        lo = hi = float(factor)
        v = q(lo)
        if close(v):
            return done(True)
        step = 2.0
        if v < target:                       # raise the rate until the queue is long enough
            while (vh := q(hi)) < target:
                if close(vh):
                    return done(True)
                lo, hi = hi, hi * step
                if hi > factor * 2.0 ** 30:
                    raise ValueError(f"{policy}: mean queue length {vh:.3g} < target {target:g} even with the "
                                     f"arrival rate x {hi / step:.3g}; the stream has too few jobs "
                                     f"({len(jobs)}) for this target")
        else:                                # lower the rate until the queue is short enough
            while (vl := q(lo)) > target:
                if close(vl):
                    return done(True)
                hi, lo = lo, lo / step
                if lo < factor * 2.0 ** -30:
                    raise ValueError(f"{policy}: mean queue length {vl:.3g} > target {target:g} at any rate")
        ql, qh = q(lo), q(hi)
        if not (math.isfinite(ql) and math.isfinite(qh)):
            raise ValueError(f"{policy}: no measuring window at arrival-rate factors {lo:.3g}..{hi:.3g} "
                             f"(all arrivals at one time?)")
        if close(ql) or close(qh):
            return done(True)
        # regula falsi on r(x) = log q - log target over x = log f, Illinois variant
        res = lambda v: math.log(v / target) if v > 0 else -math.inf  # noqa: E731
        rl, rh, last = res(ql), res(qh), 0
        while hi / lo > 1.0 + xtol:
            x0, x1 = math.log(lo), math.log(hi)
            x = x0 - rl * (x1 - x0) / (rh - rl) if math.isfinite(rl) else 0.5 * (x0 + x1)
            if not (x0 + 0.02 * (x1 - x0) < x < x1 - 0.02 * (x1 - x0)):
                x = 0.5 * (x0 + x1)
            f = math.exp(x)
            v = q(f)
            if close(v):
                return done(True)
            if v < target:
                lo, rl = f, res(v)
                if last == -1:
                    rh /= 2.0
                last = -1
            else:
                hi, rh = f, res(v)
                if last == 1 and math.isfinite(rl):
                    rl /= 2.0
                last = 1
        digits = min(17, max(4, 2 + math.ceil(-math.log10(rtol))))     # finer than rtol: "from 11.1 to 11.1" said nothing
        return done(False, f"q jumps from {q(lo):.{digits}g} to {q(hi):.{digits}g} (target {target:.{digits}g}, "
                           f"rtol {rtol:g}) between factors {lo:.6g} and {hi:.6g} (a start time moves and the "
                           f"schedule after it changes): no rate within rtol for this stream; best point returned")
    except _OutOfRuns:
        return done(False, f"max_simulations={max_simulations} reached; best point returned")


class _OutOfRuns(Exception):
    pass
