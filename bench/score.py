"""Scoring: run methods on instances, check every answer, measure the gap.

Gap convention (ARCHITECTURE.md): ``gap = |bound - value| / |bound|`` against
the best bound known for the instance.  Where a method proved optimality (or
the instance carries a reference optimum in ``meta["optimum"]``) that bound is
the optimum and the gap is exact (``gap_kind = "optimum"``); otherwise it is
the tightest proven bound of the exact methods, the gap is an upper bound on
the true gap and is labelled ``"unproven bound"``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from instances import Result, gap
from instances.registry import get, solve

COLUMNS = ["family", "instance", "method", "kind", "n", "k", "value", "bound", "gap", "gap_kind",
           "status", "seconds"]


class SolverDisagreement(RuntimeError):
    """Two methods proved different optima on one instance: a solver bug."""


@dataclass(frozen=True)
class Reference:
    bound: float | None
    kind: str  # "optimum", "unproven bound" or "no bound"


def reference(inst, results: list[Result], tol: float = 1e-6) -> Reference:
    """Best bound known for ``inst`` from ``results`` and the instance itself.

    Raises :class:`SolverDisagreement` if two proofs of optimality disagree.
    """
    proven = [r.value for r in results if r.status == "optimal"]
    known = inst.meta.get("optimum")
    if known is not None:
        proven.append(float(known))
    if proven:
        if max(proven) - min(proven) > tol * max(1.0, abs(max(proven))):
            detail = ", ".join(f"{r.method}={r.value:g}" for r in results if r.status == "optimal")
            raise SolverDisagreement(f"{inst.name}: proven optima disagree ({detail}; reference {known})")
        return Reference(proven[0], "optimum")
    bounds = [r.bound for r in results if r.bound is not None and not math.isnan(r.bound)]
    best_values = [r.value for r in results if r.status in ("optimal", "feasible")]
    if inst.sense == "max":
        bound = min(bounds) if bounds else None
        if bound is not None and best_values and max(best_values) >= bound - tol:
            return Reference(bound, "optimum")  # a solution meets the bound
    else:
        lb = float(inst.lower_bound()) if hasattr(inst, "lower_bound") else None
        bound = max([b for b in bounds] + ([lb] if lb is not None else []), default=None)
        if bound is not None and best_values and min(best_values) <= bound + tol:
            return Reference(bound, "optimum")
    return Reference(bound, "unproven bound" if bound is not None else "no bound")


def run_methods(inst, methods: list[str], *, time_limit: float = 10.0, threads: int = 1) -> list[Result]:
    """Every method on ``inst``, exact ones with the time limit and threads.

    Every decision passes the family's feasibility checker inside
    :func:`instances.registry.solve`; an infeasible one raises there."""
    out = []
    for name in methods:
        params = {"time_limit": time_limit, "threads": threads} if get(inst.kind, name).exact else {}
        out.append(solve(inst, name, **params))
    return out


def score_rows(inst, results: list[Result]) -> list[dict]:
    """Tidy rows (one per method) for one instance."""
    ref = reference(inst, results)
    rows = []
    for r in results:
        g = gap(r.value, ref.bound) if r.decision or r.status in ("optimal", "feasible") else math.nan
        rows.append({"family": inst.kind, "instance": inst.name, "method": r.method,
                     "kind": get(inst.kind, r.method).kind, "n": inst.n, "k": inst.k,
                     "value": r.value, "bound": ref.bound, "gap": g, "gap_kind": ref.kind,
                     "status": r.status, "seconds": r.seconds})
    return rows


def score(instances, methods: list[str], *, time_limit: float = 10.0, threads: int = 1,
          progress=None) -> pd.DataFrame:
    """Score ``methods`` on ``instances``: a tidy table with :data:`COLUMNS`."""
    rows = []
    for i, inst in enumerate(instances):
        rows.extend(score_rows(inst, run_methods(inst, methods, time_limit=time_limit, threads=threads)))
        if progress:
            progress(i + 1, inst)
    return pd.DataFrame(rows, columns=COLUMNS)


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Per (family, method): mean and max gap, share of instances at the bound,
    median seconds, and how many gaps are only upper bounds."""
    def agg(df):
        g = df["gap"].astype(float)
        return pd.Series({
            "instances": len(df),
            "mean_gap": g.mean(),
            "max_gap": g.max(),
            "at_bound": float((g <= 1e-9).mean()),
            "median_s": float(np.median(df["seconds"])),
            "unproven": int((df["gap_kind"] != "optimum").sum()),
        })
    keys = ["family", "method"]
    out = table.groupby(keys, sort=False)[["gap", "seconds", "gap_kind"]].apply(agg).reset_index()
    return out.astype({"instances": int, "unproven": int})


def percent(x) -> str:
    return "-" if pd.isna(x) else f"{100 * x:.2f}%"


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """Copy for printing: gaps in percent (2 decimals), shares in whole percent."""
    out = df.copy()
    for col in ("mean_gap", "max_gap"):
        if col in out:
            out[col] = out[col].map(percent)
    for col in ("at_bound", "optimal"):
        if col in out and pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].map(lambda x: f"{100 * x:.0f}%")
    return out


def format_table(df: pd.DataFrame) -> str:
    """Plain-text summary with gaps in percent and times in ms."""
    out = shown(df)
    if "median_s" in out:
        out["median_ms"] = out.pop("median_s").map(lambda x: f"{1000 * x:.3f}")
    return out.to_string(index=False)
