"""Job streams: the table every workload model returns, and load control.

:class:`Stream` is what :mod:`epochbench.instances.workloads` and
:mod:`epochbench.instances.hypererlang` generate; :func:`offered_load`,
:func:`scale_arrivals`, :func:`scale_runtimes` and :func:`set_load` apply to
any job table with the :mod:`epochbench.instances.jobs` columns (real traces
included).  Both model modules build on this one, which imports neither.

Offered load (our definition, used by ``load``): rho = max over resources k of
sum_j demand_jk x t_j / (capacity_k x span), with t_j the job's ``duration``
(else its runtime) and span = (last - first arrival) x n / (n - 1), the time n
arrivals take at the stream's mean rate: rho = lambda E[demand x t] / capacity.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from epochbench.instances.lazy import lazy_module

from .generators import _int

pd = lazy_module("pandas")   # loaded on first use: listing the generators does not import it

__all__ = ["Stream", "offered_load", "scale_arrivals", "scale_runtimes", "set_load"]


class Stream(NamedTuple):
    """A generated job stream: ``jobs`` (DataFrame, :mod:`epochbench.instances.jobs` columns),
    ``capacity`` (int64, K entries, entry 0 = processors), ``meta`` (dict)."""

    jobs: pd.DataFrame
    capacity: np.ndarray
    meta: dict


def _rng(seed) -> np.random.Generator:
    return np.random.default_rng(seed)


def _children(seed) -> list[np.random.Generator]:
    """Four independent generators: jobs, arrivals, K requirements, estimates."""
    if isinstance(seed, np.random.Generator):
        return seed.spawn(4)
    return np.random.default_rng(_int("seed", seed, 0)).spawn(4)


def _positive(name, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return v


def _frame(ids, submit, runtime, estimate, procs, **extra) -> pd.DataFrame:
    """A job table in (submit, id) order with ``duration`` = min(runtime, estimate)
    (the :mod:`epochbench.instances.jobs` rule with jobs killed at their estimate)."""
    runtime = np.asarray(runtime, dtype=np.float64)
    estimate = np.asarray(estimate, dtype=np.float64)
    df = pd.DataFrame({"id": np.asarray(ids, dtype=np.int64), "submit": np.asarray(submit, dtype=np.float64),
                       "runtime": runtime, "estimate": estimate,
                       "procs": np.asarray(procs, dtype=np.int64),
                       "duration": np.minimum(runtime, estimate), **extra})
    order = np.lexsort((df["id"].to_numpy(), df["submit"].to_numpy()))
    return df.take(order).reset_index(drop=True)


def _require(jobs: pd.DataFrame, *cols) -> None:
    missing = [c for c in cols if c not in jobs.columns]
    if missing:
        raise ValueError(f"job table lacks column(s) {missing}")


def _work_time(jobs: pd.DataFrame) -> np.ndarray:
    col = "duration" if "duration" in jobs.columns else "runtime"
    return jobs[col].to_numpy(dtype=np.float64)



def _demand_columns(jobs: pd.DataFrame, cap: np.ndarray) -> list[str]:
    """``procs`` and the ``res_*`` columns of ``jobs``, one per entry of the
    capacity ``cap`` (else a ValueError saying both counts)."""
    res = [c for c in jobs.columns if str(c).startswith("res_")]
    if len(res) + 1 != len(cap):
        raise ValueError(f"capacity has {len(cap)} entries but the stream has procs + {len(res)} resource columns")
    return ["procs", *res]


def offered_load(jobs: pd.DataFrame, capacity) -> float:
    """Offered load rho of a stream (module docstring): lambda E[demand x t] /
    capacity on the bottleneck resource.  NaN for fewer than 2 jobs or all
    arrivals at one time.  O(n K)."""
    _require(jobs, "submit", "procs")
    cap = np.atleast_1d(np.asarray(capacity, dtype=np.float64))
    n = len(jobs)
    if n < 2:
        return float("nan")
    submit = jobs["submit"].to_numpy(dtype=np.float64)
    with np.errstate(over="ignore"):          # times near the float limit: inf, refused by the stream's own checks
        span = (submit.max() - submit.min()) * n / (n - 1)
    if span <= 0:
        return float("nan")
    t = _work_time(jobs)
    demand = jobs[_demand_columns(jobs, cap)].to_numpy(dtype=np.float64)
    return float(((demand * t[:, None]).sum(axis=0) / cap).max() / span)


def scale_arrivals(jobs: pd.DataFrame, factor: float, *, name: str | None = None) -> pd.DataFrame:
    """Multiply the arrival rate by ``factor``: every gap to the first arrival
    is divided by it ([zhang-comparative] §2.1; [leinberger1999] §3.1's load control).  The same
    jobs in the same order; times are not rounded.  ValueError naming
    ``name`` (default: the factor) when the arrivals would reach past 2**53 s
    (:func:`arrivals_fit`).  O(n)."""
    factor = _positive("factor", factor)
    _require(jobs, "submit")
    out = jobs.copy()
    submit = out["submit"].to_numpy(dtype=np.float64)
    t0 = submit.min() if len(submit) else 0.0
    with np.errstate(over="ignore"):
        out["submit"] = t0 + (submit - t0) / factor
    arrivals_fit(out["submit"].to_numpy(), name or f"factor {factor:g}")
    return out


def arrivals_fit(submit: np.ndarray, said: str) -> None:
    """ValueError naming ``said`` (the option that set the arrival rate)
    when the arrival times ``submit`` reach past 2**53 s, where a float64
    no longer holds every whole second (a load of 1e-300 was refused by the
    job table's check of an internal column).  O(n)."""
    last = float(np.max(submit)) if len(submit) else 0.0
    if not abs(last) <= 2.0 ** 53:
        raise ValueError(f"{said}: spreads the {len(submit)} arrivals over {last - float(np.min(submit)):.3g} s, past "
                         "2**53 s, where a float64 no longer holds every whole second; give a larger one")


def scale_runtimes(jobs: pd.DataFrame, factor: float) -> pd.DataFrame:
    """Multiply runtimes, estimates (and ``duration``, ``req_time`` where
    present and positive) by ``factor`` ([zhang-comparative] §2.2: average execution time
    x 1.0 .. 1.8 at a fixed arrival process).  O(n)."""
    factor = _positive("factor", factor)
    _require(jobs, "runtime")
    out = jobs.copy()
    for col in ("runtime", "estimate", "duration", "req_time"):
        if col in out.columns:
            v = out[col].to_numpy(dtype=np.float64)
            out[col] = np.where(v > 0, v * factor, v) if col == "req_time" else v * factor
    return out


def set_load(jobs: pd.DataFrame, capacity, load: float) -> pd.DataFrame:
    """Rescale the arrival times so that :func:`offered_load` is ``load``
    (:func:`scale_arrivals` by load / current load).  O(n K)."""
    load = _positive("load", load)
    now = offered_load(jobs, capacity)
    if not math.isfinite(now):
        return jobs.copy()
    from epochbench.instances.arguments import arg
    return scale_arrivals(jobs, load / now, name=arg("load", load))



def _round_up(seconds: np.ndarray) -> np.ndarray:
    """``seconds`` rounded up to whole seconds, ignoring float noise of 1e-9
    above a whole second; a positive time stays positive (at least 1 s: the
    1e-9 allowance took a runtime of 1e-10 s, as ``runtime_factor`` 1e-10
    makes, to -0.0) and a zero is +0.0, never -0.0."""
    up = np.ceil(seconds - 1e-9)
    return np.where(seconds > 0, np.maximum(up, 1.0), up) + 0.0     # + 0.0 turns -0.0 into 0.0


def _round_times(jobs: pd.DataFrame) -> pd.DataFrame:
    """Whole seconds: submit rounded, runtime and estimate rounded up (so
    estimate >= runtime still holds; a positive runtime is at least 1 s,
    :func:`_round_up`), estimate >= 1; duration recomputed.  No time is -0.0."""
    out = jobs.copy()
    out["submit"] = np.round(out["submit"].to_numpy(dtype=np.float64)) + 0.0
    out["runtime"] = _round_up(out["runtime"].to_numpy(dtype=np.float64))
    out["estimate"] = np.maximum(_round_up(out["estimate"].to_numpy(dtype=np.float64)), 1.0)
    out["duration"] = np.minimum(out["runtime"].to_numpy(), out["estimate"].to_numpy())
    order = np.lexsort((out["id"].to_numpy(), out["submit"].to_numpy()))
    return out.take(order).reset_index(drop=True)
