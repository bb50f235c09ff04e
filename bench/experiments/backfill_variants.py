"""``backfill-variants``: [vadhiyar-notes]'s backfilling variants (:mod:`epochbench.sim.variants`)
against EASY and conservative backfilling.

Streams: the KTH SP2 trace (``data_root()/swf/KTH-SP2-1996-2.1-cln.swf.gz``,
100 nodes, its first ``jobs`` jobs with their own arrivals and user
estimates) and a [lublin2003] stream (``lublin03``, 128 nodes,
offered load 0.85, Phi = 0.2 estimates as in [zhang-comparative]).  Policies (one
setting each, :data:`POLICIES`): ``easy``, ``conservative``, ``easy-sjf``,
``easy-xfactor``, ``slack-bf`` (slack 0.5 x estimate), ``threshold-bf``
(expected slowdown 2) and ``multi-queue`` (two queues split at one hour of
estimate, equal partitions, lending on: both streams hold jobs wider than
one partition, which it could not run without lending).

Metrics (:func:`epochbench.sim.metrics.summarize`): mean wait, mean bounded slowdown
(tau = 10 s), utilization.  Per-epoch gap: every selection step of the
policies that have one (the EASY family and multi-queue: the queue step with
the most candidates) where a candidate fits is recorded as a packing
instance with the policy's choice (:class:`epochbench.sim.record.EpochRecorder`;
a step where none fits has no decision, which would count as optimal: the
rows' ``nothing_fits`` counts those); an even sample of at most
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

from . import Experiment, Options, register

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
             "recorded": len(rec.instances) if rec else 0, "nothing_fits": rec.nothing_fits if rec else 0,
             "sim_seconds": res.seconds, **g}]


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
    """Mean wait (h), mean bounded slowdown and mean per-epoch gap (%) per
    policy (rows shared by the three panels), one horizontal bar per stream
    (colour and hatch) on linear axes, error bars of one standard deviation
    over seeds where a stream has several; ``n/a`` where a policy has no packing
    step (no gap), ``0`` where a mean is exactly zero.  One legend."""
    from .plotting import PAGE, PALETTE, figure, interval_note, legend, mean_err, na_marks, plain_ticks, save
    from .plotting import style

    m = mean_err(df, ["stream", "policy"], ["wait", "bsld", "gap_mean"]).set_index(["stream", "policy"])
    pols = [p for p in POLICIES if p in set(df["policy"])]
    streams = [s for s in STREAMS if s in set(df["stream"])]
    y = np.arange(len(pols))[::-1]
    h = 0.8 / max(len(streams), 1)
    look = {st: dict(color=PALETTE[i], hatch=("", "///", "...")[i % 3]) for i, st in enumerate(streams)}
    panels = (("wait", 1 / 3600, "mean wait (h)"), ("bsld", 1.0, "mean bounded slowdown\n(ratio, tau = 10 s)"),
              ("gap_mean", 100.0, "mean per-epoch gap\nto CP-SAT (%)"))
    with style():
        fig, axes = figure(1, 3, width=PAGE, height=1.3 + 0.2 * len(pols) * max(len(streams), 1), sharey=True)
        for ax, (col, scale, label) in zip(axes[0], panels):
            for k, st in enumerate(streams):
                v = m.reindex([(st, p) for p in pols])
                yk = y - (k - (len(streams) - 1) / 2) * h
                err = v[f"{col}_err"] * scale
                ax.barh(yk, v[col] * scale, h, xerr=err if (err > 0).any() else None,
                        error_kw=dict(elinewidth=0.8, capsize=2), label=st, edgecolor="white", lw=0.5, **look[st])
                na_marks(ax, yk[(v[col] == 0).to_numpy()], 0.01, "0", horizontal=True)
            undefined = m[col].unstack("stream").reindex(pols).isna().all(axis=1).to_numpy()
            na_marks(ax, y[undefined], 0.01, horizontal=True)
            ax.set_yticks(y, pols)
            ax.grid(False, axis="y")
            ax.set_xlabel(label)
            plain_ticks(ax, "x")
        axes[0][0].set_ylabel("policy")
        reps = m["reps"].groupby(level="stream").max()
        single = [st for st in streams if reps[st] < 2]
        note = interval_note(m.loc[[st for st in streams if reps[st] > 1], "reps"]) if len(single) < len(streams) \
            else interval_note([1])
        if single and len(single) < len(streams):
            note += f" ({', '.join(single)}: one run)"
        legend(fig, title=f"stream; {note}; n/a: no packing step, no gap")
        save(fig, path, "[vadhiyar-notes] backfilling variants vs EASY and conservative")


register(Experiment("backfill-variants", "[vadhiyar-notes] backfilling variants (scan order, slack, threshold, "
                                         "multiple queues) vs EASY and conservative on KTH and lublin03",
                    tasks, run, table, plot, data=("swf/KTH-SP2-1996-2.1-cln.swf.gz",)))
