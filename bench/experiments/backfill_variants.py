"""``backfill-variants``: [vadhiyar-notes]'s backfilling variants (:mod:`epochbench.sim.variants`)
against EASY and conservative backfilling.

Streams: the KTH SP2 trace (``data_root()/swf/KTH-SP2-1996-2.1-cln.swf.gz``,
100 nodes, its first ``jobs`` jobs with their own arrivals and user
estimates) and a [lublin2003] stream (``lublin03``, 128 nodes,
offered load 0.85, Phi = 0.2 estimates as in [zhang-comparative]).  Policies (one
setting each, :data:`POLICIES`): ``easy``, ``conservative``, ``easy-sjf``,
``easy-xfactor``, ``slack-bf`` (slack 0.5 x estimate), ``threshold-bf``
(expected slowdown 2) and ``multi-queue`` (two queues split at one hour of
estimate, equal partitions, lending on: both streams hold jobs as wide as
the machine, which no partition could run without it).

Metrics (:func:`epochbench.sim.metrics.summarize`): mean wait, mean bounded slowdown
(tau = 10 s), utilization.  Per-epoch gap: every selection step of the
policies that have one (the EASY family and multi-queue: the queue step with
the most candidates) is recorded as a packing instance with the policy's
choice (:class:`epochbench.sim.record.EpochRecorder`); an even sample of at most
``max_epochs`` steps is scored: the choice (``recorded``) against CP-SAT
(``time_limit`` s, one thread), objective the step's utilization.  Only
steps whose reference is a proven optimum enter the gap; the others are
counted in ``unproven``.  ``conservative``, ``slack-bf`` and
``threshold-bf`` have no packing step (their constraint is a whole plan of
reservations): no gap.

Default: 5,000 jobs, 3 Lublin seeds, up to 200 epochs per run at 2 s.
``--quick``: 800 jobs, 1 seed, 30 epochs at 0.5 s.  Cost: the slack
policies re-plan the queue per candidate (O(q^2 m) per pass, Python), the
rest O(q + r log r) per pass; CP-SAT dominates the EASY-family runs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import Experiment, Options, register, save_figure

#: label -> (policy name, options)
POLICIES = {
    "easy": ("easy", {}),
    "conservative": ("conservative", {}),
    "easy-sjf": ("easy-sjf", {}),
    "easy-xfactor": ("easy-xfactor", {}),
    "slack-bf": ("slack-bf", {"slack_factor": 0.5}),
    "threshold-bf": ("threshold-bf", {"slowdown_threshold": 2.0}),
    "multi-queue": ("multi-queue", {"queue_bounds": [3600.0], "lend": True}),
}
STREAMS = ("kth", "lublin03")
LUBLIN_NODES, LUBLIN_LOAD, PHI = 128, 0.85, 0.2
JOBS, QUICK_JOBS = 5000, 800


def tasks(opts: Options) -> list[dict]:
    """One task per (stream, seed, policy); KTH is one trace: seed 0 only."""
    seeds = opts.seeds if opts.seeds is not None else (1 if opts.quick else 3)
    common = {"jobs": QUICK_JOBS if opts.quick else JOBS, "max_epochs": 30 if opts.quick else 200,
              "time_limit": 0.5 if opts.quick else 2.0}
    return [{"stream": st, "seed": s, "policy": p, **common}
            for st in STREAMS for s in (range(1) if st == "kth" else range(seeds)) for p in POLICIES]


def make_stream(stream: str, jobs: int, seed: int):
    """The workload of ``stream`` (module docstring) and its offered load."""
    from epochbench.instances.workloads import offered_load, workload
    from epochbench.instances.jobs import make_workload, read_swf

    if stream == "kth":
        from epochbench.instances.data import data_root
        path = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
        if not path.exists():
            raise FileNotFoundError(f"KTH trace absent at {path} (set EPOCHBENCH_DATA)")
        w = read_swf(path)
        wl = make_workload(w.jobs.head(jobs)[["id", "submit", "runtime", "estimate", "procs"]], w.capacity,
                           source="KTH")
    elif stream == "lublin03":
        st = workload(model="lublin03", jobs=jobs, seed=seed, processors=LUBLIN_NODES, load=LUBLIN_LOAD,
                      estimates="phi", phi=PHI)
        wl = make_workload(st.jobs, st.capacity)
    else:
        raise ValueError(f"stream: one of {', '.join(STREAMS)}, got {stream!r}")
    return wl, float(offered_load(wl.jobs, wl.capacity))


def epoch_gaps(instances, max_epochs: int, time_limit: float) -> dict:
    """Score an even sample of at most ``max_epochs`` recorded steps:
    ``recorded`` against CP-SAT; gaps over proven optima only."""
    from epochbench.scoring import recorded_gap

    if not instances:
        return {"epochs": 0, "unproven": 0, "gap_mean": np.nan, "gap_p90": np.nan, "optimal_share": np.nan}
    pick = np.unique(np.linspace(0, len(instances) - 1, min(max_epochs, len(instances))).round().astype(int))
    gaps, unproven = [], 0
    for i in pick:
        g_i = recorded_gap(instances[i], time_limit=time_limit)
        if g_i is None:
            unproven += 1
            continue
        gaps.append(g_i)
    g = np.asarray(gaps, dtype=float)
    return {"epochs": int(g.size), "unproven": unproven,
            "gap_mean": float(g.mean()) if g.size else np.nan,
            "gap_p90": float(np.quantile(g, 0.9)) if g.size else np.nan,
            "optimal_share": float(np.mean(g <= 1e-9)) if g.size else np.nan}


def run(task: dict) -> list[dict]:
    """One stream under one policy: one tidy row."""
    from epochbench.sim.pool import simulate_pool as simulate
    from epochbench.sim.metrics import summarize
    from epochbench.sim.policies import make
    from epochbench.sim.record import EpochRecorder

    wl, offered = make_stream(task["stream"], task["jobs"], task["seed"])
    name, kw = POLICIES[task["policy"]]
    pol = make(name, **kw)
    rec = EpochRecorder(pol) if pol.has_selector else None
    res = simulate(wl.jobs, wl.capacity, pol, on_pass=rec, engine="generic")
    m = summarize(res.jobs, wl)
    g = epoch_gaps(rec.instances if rec else [], task["max_epochs"], task["time_limit"])
    return [{**task, "nodes": int(wl.capacity[0]), "offered_load": offered, "wait": m["wait_mean"],
             "bsld": m["bsld_mean"], "utilization": m["utilization"], "passes": res.passes,
             "recorded": len(rec.instances) if rec else 0, "sim_seconds": res.seconds, **g}]


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (stream, policy), means over seeds: wait (s), bounded slowdown,
    utilization, per-epoch gap (mean and 90th percentile, %), share of
    scored epochs where the policy was optimal (%), epochs scored, unproven."""
    g = df.groupby(["stream", "policy"], sort=False)
    out = g.agg(runs=("seed", "size"), offered=("offered_load", "mean"), wait_s=("wait", "mean"),
                bsld=("bsld", "mean"), util=("utilization", "mean"), gap_mean=("gap_mean", "mean"),
                gap_p90=("gap_p90", "mean"), optimal=("optimal_share", "mean"), epochs=("epochs", "sum"),
                unproven=("unproven", "sum")).reset_index()
    for c in ("gap_mean", "gap_p90", "optimal"):
        out[c] = (100 * out[c]).round(2)
    for c in ("offered", "util"):
        out[c] = out[c].round(3)
    out["wait_s"] = out["wait_s"].round(0)
    out["bsld"] = out["bsld"].round(2)
    return out.rename(columns={"gap_mean": "gap_mean %", "gap_p90": "gap_p90 %", "optimal": "optimal %"})


def plot(df: pd.DataFrame, path) -> None:
    """Mean wait, mean bounded slowdown and mean per-epoch gap per policy,
    one bar per stream (one legend)."""
    import matplotlib.pyplot as plt

    mean = df.groupby(["stream", "policy"], sort=False)[["wait", "bsld", "gap_mean"]].mean()
    pols = [p for p in POLICIES if p in set(df["policy"])]
    streams = [s for s in STREAMS if s in set(df["stream"])]
    x = np.arange(len(pols))
    w = 0.8 / max(len(streams), 1)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    panels = (("wait", 1 / 3600, "mean wait (h)"), ("bsld", 1.0, "mean bounded slowdown (tau = 10 s, ratio)"),
              ("gap_mean", 100.0, "mean per-epoch gap to CP-SAT optimum (%)"))
    for ax, (col, scale, label) in zip(axes, panels):
        for k, st in enumerate(streams):
            vals = [mean[col].get((st, p), np.nan) * scale for p in pols]
            ax.bar(x + (k - (len(streams) - 1) / 2) * w, vals, w, label=st if ax is axes[0] else None)
        ax.set_xticks(x, pols, rotation=30, ha="right")
        ax.set_xlabel("policy")
        ax.set_ylabel(label)
    fig.legend(loc="upper left", title="stream")
    save_figure(fig, path, "[vadhiyar-notes] backfilling variants vs EASY and conservative "
                           "(gap: EASY family and multi-queue only)")


register(Experiment("backfill-variants", "[vadhiyar-notes] backfilling variants (scan order, slack, threshold, "
                                         "multiple queues) vs EASY and conservative on KTH and lublin03",
                    tasks, run, table, plot))
