"""``epochbench experiment capannini-mkp``: [capannini2007] table 1, the greedy license
knapsack next to an exact solver.

[capannini2007] section 6 runs its MKP greedy and a branch & bound on the same job
streams (100 machines, 40 licenses, license ratio in [40-45], [45-50],
[50-55], [55-60] %) and reports per range the smallest, average and best
license usage and the mean time; the greedy lands "on average 3% distant"
at 3% of the time.  Here each run is one scheduling event: a farm state of
``farm-mkp`` with n jobs in the system, n uniform in [250, 400] (the paper's
epochs come from simulations, which issue 8 adds; a snapshot with a varying
queue stands in for them), solved by ``greedy-mkp``, the ``greedy-ratio``
baseline and CP-SAT (the exact method, time limit 10 s, 2 s with
``--quick``; 1 thread).  Events without a critical license (nothing to
decide) are counted and left out of the table.

Table per (license ratio, method): runs, Time (mean ms), Sml / Avg / Bst
license usage (share of the critical licenses' copies in use), the mean
profit gap to the exact optimum (to its bound where CP-SAT timed out:
``unproven`` counts them) and the time as a share of the exact method's.
``sml``, ``avg``, ``bst`` and ``gap`` are fractions (0.87 = 87 %), not
per cent, as are the paper's columns: [capannini2007] table 1 heads them
"(%)" but prints fractions (0.57 .. 1.00).

Paper columns (:data:`PAPER_TABLE1`, copied from [capannini2007] table 1):
``paper_method`` (``branch&bound`` next to our exact method, ``MKP`` next to
``greedy-mkp``), ``paper_time_ms``, ``paper_sml``, ``paper_avg``,
``paper_bst``; empty for ``greedy-ratio``, which the paper does not run.
The paper's times are from its own machine and branch & bound, ours from
CP-SAT on this one: compare the ratio of the two methods' times, not the
milliseconds.  The usage levels do not compare either: a snapshot of 250
to 400 jobs is always congested, so every method uses 0.88-0.96 of the
critical copies (``bst`` never 1.00, ``sml`` never near the paper's
0.54-0.64, measured with 3 seeds); the gap and the time share are what
this reproduces (the paper's "3 % distant" at "3 % of the time": ours
1.5-3.1 % at 0.02-1.2 % of the exact method's time).  The paper does not
say what the 3 % is a distance in; its table prints usage only, and the
mean of its four ranges' usage differences (0.05, 0.04, 0.02, 0.01) is
exactly 0.03, so it may be usage: read that way, ours differ by 0.047 to
0.072 (mean 0.054, a --quick run), the profit gap being the measure of
what the greedy loses that this table reports.  The
Eilon-surrogate greedy gains little over the plain ``greedy-ratio``
baseline here (equal at 40-45 %, slightly behind at 55-60 %).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from epochbench.instances.farm import TABLE1_RATIOS

from . import Experiment, Options, register

METHODS = ("cpsat", "greedy-mkp", "greedy-ratio")
EXACT = "cpsat"
N_RANGE = (250, 400)

# [capannini2007] table 1 ("Results obtained by running the algorithms branch&bound and MKP
# on the same job streams instances"), per license ratio: Time (ms), Sml, Avg, Bst for
# branch&bound, then for MKP.  Copied from the paper's table; its headers say "(%)" but
# the values are fractions, kept as printed.
PAPER_TABLE1 = {
    "40-45": {"branch&bound": (496.53, 0.57, 0.87, 1.00), "MKP": (11.23, 0.54, 0.82, 1.00)},
    "45-50": {"branch&bound": (353.51, 0.62, 0.88, 1.00), "MKP": (10.40, 0.59, 0.84, 1.00)},
    "50-55": {"branch&bound": (331.28, 0.64, 0.89, 1.00), "MKP": (10.42, 0.62, 0.87, 1.00)},
    "55-60": {"branch&bound": (556.96, 0.64, 0.88, 1.00), "MKP": (11.90, 0.63, 0.87, 1.00)},
}
PAPER_METHOD = {EXACT: "branch&bound", "greedy-mkp": "MKP"}   # our method -> the paper's column group
PAPER_COLUMNS = ("paper_time_ms", "paper_sml", "paper_avg", "paper_bst")


def paper_values(ratio: str, method: str) -> dict:
    """The [capannini2007] table 1 cells for our (ratio, method): ``paper_method``
    and :data:`PAPER_COLUMNS`; empty (None / NaN) where the paper has no row."""
    name = PAPER_METHOD.get(method)
    vals = PAPER_TABLE1.get(ratio, {}).get(name) if name else None
    if vals is None:
        return {"paper_method": None, **{c: np.nan for c in PAPER_COLUMNS}}
    return {"paper_method": name, **dict(zip(PAPER_COLUMNS, vals))}


def tasks(opts: Options) -> list[dict]:
    seeds = opts.seeds if opts.seeds is not None else (3 if opts.quick else 20)
    limit = 2.0 if opts.quick else 10.0
    return [{"ratio_lo": lo, "ratio_hi": hi, "seed": s, "time_limit": limit}
            for lo, hi in TABLE1_RATIOS for s in range(seeds)]


def run(task: dict) -> list[dict]:
    """One event: draw n, generate the farm knapsack, solve it with every
    method (a heuristic timed as the median of :data:`HEURISTIC_CALLS`
    calls, after an untimed warm-up call)."""
    from epochbench.instances.generators import generate
    from epochbench.instances.registry import solve

    rng = np.random.default_rng([task["seed"], round(100 * task["ratio_lo"])])
    n = int(rng.integers(N_RANGE[0], N_RANGE[1] + 1))
    (inst,) = generate("farm-mkp", n=n, ratio_lo=task["ratio_lo"], ratio_hi=task["ratio_hi"], count=1,
                       seed=task["seed"])
    base = {"ratio": f"{round(100 * task['ratio_lo'])}-{round(100 * task['ratio_hi'])}", "seed": task["seed"],
            "jobs": n, "items": inst.n, "critical": len(inst.meta["critical"])}
    if inst.n == 0:
        return [{**base, "method": m, "empty": True} for m in METHODS]
    rows = []
    for m in METHODS:
        exact = m == EXACT
        params = {"time_limit": task["time_limit"], "threads": 1} if exact else {}
        if not exact:
            solve(inst, m)  # warm-up: numba kernels load from cache on the first call
        r = solve(inst, m, **params)
        seconds = r.seconds if exact else _median_seconds(inst, m, r.seconds)
        rows.append({**base, "method": m, "empty": False, "value": r.value, "bound": r.bound,
                     "status": r.status, "usage": r.info["license_usage"], "ms": 1000 * seconds})
    return rows


#: timed calls of a heuristic per event, the median kept: one call on a
#: shared machine read 5-12 ms where the others took 0.2 ms
HEURISTIC_CALLS = 5


def _median_seconds(inst, method: str, first: float) -> float:
    """The median time of :data:`HEURISTIC_CALLS` calls of ``method`` on
    ``inst`` (``first`` is the time of one already made)."""
    from epochbench.instances.registry import solve
    times = [first] + [solve(inst, method).seconds for _ in range(HEURISTIC_CALLS - 1)]
    return float(np.median(times))


def table(df: pd.DataFrame) -> pd.DataFrame:
    """[capannini2007] table 1 per (license ratio, method), plus gap and time share,
    with the paper's values next to ours (``paper_*``, empty where the paper has
    no row).  ``sml`` / ``avg`` / ``bst`` (critical-license usage) and ``gap``
    are fractions, not per cent, like the paper's."""
    full = df[~df["empty"].astype(bool)].copy()
    ex = full[full["method"] == EXACT].set_index(["ratio", "seed"])
    ref = ex["bound"].where(ex["status"] != "optimal", ex["value"])
    full["ref"] = [ref.get((r, s), np.nan) for r, s in zip(full["ratio"], full["seed"])]
    full["gap"] = (full["ref"] - full["value"]) / full["ref"]
    ex_ms = ex["ms"].groupby(level="ratio").mean()
    out = []
    for (ratio, method), g in full.groupby(["ratio", "method"], sort=True):
        out.append({"ratio": ratio, "method": "exact (cpsat)" if method == EXACT else method, "runs": len(g),
                    "time_ms": g["ms"].mean(), "sml": g["usage"].min(), "avg": g["usage"].mean(),
                    "bst": g["usage"].max(), "gap": g["gap"].mean(),
                    "time_share": g["ms"].mean() / ex_ms[ratio],
                    "unproven": int((ex.loc[ratio, "status"] != "optimal").sum()),
                    **paper_values(ratio, method)})
    empty = df[df["empty"].astype(bool) & (df["method"] == EXACT)].groupby("ratio").size()
    res = pd.DataFrame(out)
    res["empty"] = res["ratio"].map(empty).fillna(0).astype(int)
    paper = ["paper_method", *PAPER_COLUMNS]          # added columns last: the earlier ones keep their places
    return res[[c for c in res.columns if c not in paper] + paper]


def plot(df: pd.DataFrame, path) -> None:
    """Left: critical-license usage per license ratio and method (point: mean,
    bar: smallest to best over the events, [capannini2007] Sml / Avg / Bst).
    Right: mean time per event on a log axis, as points (no bars on a log
    axis), bar: fastest to slowest event (a range stays positive on a log
    axis, where a confidence interval of few events would not).  One legend."""
    from .plotting import PAGE, dodge, figure, legend, points, save, style, styles, value_scale

    full = df[~df["empty"].astype(bool)].assign(pct=lambda d: 100 * d["usage"].astype(float))
    if full.empty:
        return
    ratios = sorted(full["ratio"].unique())
    methods = [m for m in METHODS if m in set(full["method"])]
    names = {m: "exact (cpsat)" if m == EXACT else m for m in methods}
    look = styles(names.values())
    with style():
        fig, axes = figure(1, 2, width=PAGE, height=2.6)
        ax_use, ax_ms = axes[0]
        x = np.arange(len(ratios))
        use = full.groupby(["ratio", "method"])["pct"].agg(["min", "mean", "max"])
        ms = full.groupby(["ratio", "method"])["ms"].agg(["min", "mean", "max", "size"])
        for j, m in enumerate(methods):
            xs = x + dodge(j, len(methods), 0.6)
            u = use.reindex([(r, m) for r in ratios])
            points(ax_use, xs, u["mean"], u["min"], u["max"], label=names[m], capsize=2, **look[names[m]])
            t = ms.reindex([(r, m) for r in ratios])
            points(ax_ms, xs, t["mean"], t["min"], t["max"], capsize=2, **look[names[m]])
        value_scale(ax_ms, full["ms"], label="time per event (ms, {scale})")
        for ax in (ax_use, ax_ms):
            ax.set_xticks(x, [f"{r} %" for r in ratios])
            ax.set_xlabel("license ratio")
            ax.grid(False, axis="x")
        ax_use.set_ylabel("critical-license usage (%)")
        n = int(ms["size"].max())
        legend(fig, title=f"point: mean over {n} events; bar: smallest to best usage (left), "
                          "fastest to slowest event (right)")
        save(fig, path, "[capannini2007] table 1: greedy MKP vs exact")


register(Experiment("capannini-mkp", "[capannini2007] table 1: greedy license knapsack vs CP-SAT per license ratio",
                    tasks, run, table, plot, timing=True))
