"""``zhang-queues``: average wait and capacity loss against utilization for the
FCFS, SJF, best-fit and worst-fit queue orders with backfilling ([zhang-comparative]
section 3, figure 5).

Setup as [zhang-comparative] sections 2.2-2.3: a machine of 320 nodes, streams of
10,000 jobs; a baseline stream at offered load 0.55 and 8 more with every
execution time (and estimate) multiplied by 1.1 .. 1.8 at fixed arrivals
(:func:`epochbench.instances.workloads.scale_runtimes` through ``runtime_factor``), so
the offered load runs from 0.55 to ~0.99 and the slower orders saturate.
Each stream is run under ``fcfs-bf``, ``sjf-bf``, ``bfit-bf`` and
``wfit-bf`` (:mod:`epochbench.sim.backfill`: the whole queue is booked in priority order
at every event, lower-priority jobs never delay higher ones; ``zhang-gang``'s BF
and ``zhang-estimates`` compress reservations instead, which differs under
Phi = 0.2: see :mod:`.zhang_estimates`); estimates
perfect (figure 5 a-b: Omega = 0) and Phi = 0.2 (figure 5 c-d).  Metrics
(:func:`epochbench.sim.metrics.summarize`): utilization (eq. 1), capacity loss kappa
(eq. 2), mean wait, mean bounded slowdown (Gamma = 10 s).

Workload choice: [zhang-comparative] fits a hyper-Erlang model to the ASCI Blue-Pacific
(LLNL) log; neither that log nor the fitted parameters are available.  We
use the [lublin2003] model (``lublin03``, mixed batch and
interactive jobs; the authors' parameters, fitted to several production
logs) on 320 nodes: like [zhang-comparative]'s workload it is a model fitted to real
traces, its sizes run from 1 to 320 with the power-of-two peaks up to 256
([zhang-comparative]: 1 to 256), and a seed gives an independent stream, so
``--seeds`` repetitions are real repetitions.  The KTH SP2 trace (one
stream of 100 nodes) would give a single sample per load.  Unlike seed
004's model, lublin03 has a daily arrival cycle: queues build up at rush
hours even at moderate mean load, so absolute waits are higher than a
stationary model's at the same utilization.

``zhang-queues-he``: the same sweep on [zhang-comparative]'s own kind of workload, the
hyper-Erlang model of common order (:mod:`epochbench.instances.hypererlang`, [zhang-comparative]
section 2.1), fitted to the KTH SP2 trace (the only trace here; LLNL's is
not: [zhang-comparative]'s own parameters are not published) and run on KTH's 100 nodes at the same offered loads (0.55 x factor,
the fitted arrival process rescaled).  Its arrivals are stationary renewal
processes per size class, so it shows the orders without a daily cycle.
The fit is built in (:data:`epochbench.instances.hypererlang.KTH_PARAMS`): the arm
needs no trace.

What to expect against the paper.  Figure 5's text has the four orders
comparable up to 75 % utilization; here BFit waits far longer from the
first load point on (a review's ``--quick`` run: 2.7 to 3.6 times FCFS's
mean wait at offered loads 0.55 to 0.72; perfect estimates at factor 1.0,
22,410 s against 8,366 s, bounded slowdown 950 against 224).  The cause is
the BFit order itself (:mod:`epochbench.sim.backfill`): recomputed at every
event, it ranks the jobs that do not fit by their smallest excess, so wide
jobs keep being passed over on lublin03's bursts.  The ``saturation``
table is the highest mean utilization each order reaches over the sweep,
not a saturation point: at ``--quick``'s top load (0.99 offered) FCFS
reached 0.867 and BFit 0.871, so the paper's "above 90 %" cannot show there.

With one resource, WFit never consults the estimates: a job that does not
fit now only blocks larger ones, so smallest-first while jobs fit is the
whole rule, and its perfect and Phi rows coincide.

Default 3 seeds (``--seeds``).  ``--quick``: 2,000 jobs, runtime factors
1.0 / 1.3 / 1.6 / 1.8, 1 seed.  Cost: one run is O(events x q m) compiled
work (q queued jobs, m profile breakpoints); the full sweep is 2 x 9 x 4 x 3
= 216 runs of 10,000 jobs, mean 7 s (WFit) to 38 s (BFit) per run, up to
~3 min for BFit near saturation (measured on 2 shared cores: 32 min in all
with ``--jobs 2``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import Experiment, Options, register

POLICIES = ("fcfs-bf", "sjf-bf", "bfit-bf", "wfit-bf")
NODES = 320                                  # [zhang-comparative] section 2.3
BASE_LOAD = 0.55                             # [zhang-comparative] section 2.2: the baseline workload
FACTORS = tuple(round(1.0 + 0.1 * i, 1) for i in range(9))   # x1.0 .. x1.8 ([zhang-comparative] section 2.2)
QUICK_FACTORS = (1.0, 1.3, 1.6, 1.8)
ESTIMATES = (("perfect", None), ("phi", 0.2))  # figure 5 a-b and c-d
JOBS, QUICK_JOBS = 10_000, 2_000
METRICS = ("utilization", "capacity_loss", "wait_mean", "wait_median", "wait_max", "wait_std", "bsld_mean",
           "bsld_std", "response_mean", "small_wait_mean", "large_wait_mean", "small_bsld_mean",
           "large_bsld_mean", "makespan", "out_of_order_share")


def estimate_label(model: str, value) -> str:
    """``perfect``, ``phi=0.2``, ``omega=1``: the ``estimates`` column."""
    return model if value is None else f"{model}={value:g}"


def zhang_stream(jobs: int, seed: int, factor: float, model: str = "perfect", value=None,
                 workload_model: str = "lublin03"):
    """The [zhang-comparative] section 2.2 stream of this module (docstring): lublin03 on
    320 nodes (or, ``workload_model="hypererlang"``, the hyper-Erlang fit to
    KTH on its 100 nodes) at offered load 0.55, runtimes x ``factor``, then
    estimate model ``model`` ("perfect", "omega" or "phi" with ``value``).
    Returns (:class:`~epochbench.instances.workloads.Stream`, :class:`~epochbench.instances.jobs.Workload`)."""
    from epochbench.instances.workloads import workload
    from epochbench.instances.jobs import make_workload

    kw = {} if model == "perfect" else {model: float(value)}
    if workload_model != "hypererlang":      # hypererlang: its fit's machine (KTH, 100 nodes)
        kw["processors"] = NODES
    stream = workload(model=workload_model, jobs=jobs, seed=seed, load=BASE_LOAD,
                      runtime_factor=factor, estimates=model, **kw)
    return stream, make_workload(stream.jobs, stream.capacity)


def simulate_row(wl, policy: str) -> dict:
    """Simulate ``policy`` on workload ``wl``; the metrics of :data:`METRICS`
    plus ``sim_seconds`` and ``passes``."""
    from epochbench.sim.pool import simulate_pool as simulate
    from epochbench.sim.metrics import summarize

    res = simulate(wl.jobs, wl.capacity, policy)
    m = summarize(res.jobs, wl)
    return {**{k: m[k] for k in METRICS}, "sim_seconds": res.seconds, "passes": res.passes,
            "engine": res.engine}


def tasks(opts: Options, workload_model: str = "lublin03") -> list[dict]:
    seeds = opts.seeds if opts.seeds is not None else (1 if opts.quick else 3)
    jobs = QUICK_JOBS if opts.quick else JOBS
    factors = QUICK_FACTORS if opts.quick else FACTORS
    # heaviest runs first (high factors), so that the process pool ends evenly
    arm = {} if workload_model == "lublin03" else {"workload": workload_model}
    return [{"policy": p, "estimates": estimate_label(m, v), "est_model": m, "est_value": v,
             "runtime_factor": f, "seed": s, "jobs": jobs, **arm}
            for f in sorted(factors, reverse=True) for m, v in ESTIMATES for p in POLICIES
            for s in range(seeds)]


def tasks_he(opts: Options) -> list[dict]:
    """:func:`tasks` of the hyper-Erlang arm (``zhang-queues-he``)."""
    return tasks(opts, "hypererlang")


def run(task: dict) -> list[dict]:
    """One stream under one policy: one tidy row."""
    arm = task.get("workload", "lublin03")
    stream, wl = zhang_stream(task["jobs"], task["seed"], task["runtime_factor"], task["est_model"],
                              task["est_value"], arm)
    return [{"policy": task["policy"], "estimates": task["estimates"], "runtime_factor": task["runtime_factor"],
             "seed": task["seed"], "jobs": task["jobs"], "nodes": int(wl.capacity[0]),
             **({} if arm == "lublin03" else {"workload": arm}),
             "offered_load": stream.meta["offered_load"], **simulate_row(wl, task["policy"])}]


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (estimates, runtime factor, policy), means over seeds: offered
    load, utilization, capacity loss, mean wait, mean bounded slowdown, and
    the wait relative to FCFS at the same point ([zhang-comparative] figure 5)."""
    keys = ["estimates", "runtime_factor", "policy"]
    g = df.groupby(keys, sort=False)
    out = g[["offered_load", "utilization", "capacity_loss", "wait_mean", "bsld_mean"]].mean()
    out.insert(0, "runs", g.size())
    out = out.reset_index()
    fcfs = out[out["policy"] == "fcfs-bf"].set_index(["estimates", "runtime_factor"])["wait_mean"]
    out["wait_vs_fcfs"] = [w / fcfs.get((e, f), np.nan)
                           for e, f, w in zip(out["estimates"], out["runtime_factor"], out["wait_mean"])]
    order = {p: i for i, p in enumerate(POLICIES)}
    out = out.sort_values(["estimates", "runtime_factor", "policy"],
                          key=lambda c: c.map(order) if c.name == "policy" else c, kind="stable")
    out = out.rename(columns={"runtime_factor": "factor", "offered_load": "offered", "utilization": "util",
                              "capacity_loss": "kappa", "wait_mean": "wait_s", "bsld_mean": "bsld"})
    return out.reset_index(drop=True)


def saturation(df: pd.DataFrame) -> pd.DataFrame:
    """Highest mean utilization each policy reaches over the sweep, per
    estimate model ([zhang-comparative]: SJF and WFit saturate near 85 %, BFit and FCFS
    above 90 %): a maximum over the load points run, not a saturation
    point, so it reads below the paper's figures where the sweep stops
    short of saturating an order."""
    m = df.groupby(["estimates", "policy", "runtime_factor"])["utilization"].mean()
    return m.groupby(["estimates", "policy"]).max().rename("max_util").reset_index()


def plot(df: pd.DataFrame, path) -> None:
    """[zhang-comparative] figure 5: mean wait (h) and capacity loss (%)
    against the utilization reached (points joined in the order of
    increasing load), one row per estimate setting; colour and marker per
    queue order, mean over seeds with one standard deviation of the y value
    (band, or error bars where the utilization falls back); kappa = 1 - rho
    for reference.  One legend."""
    from .plotting import PAGE, curve, figure, interval_note, legend, mean_err, plain_ticks, proxy, save, style
    from .plotting import styles

    ests = list(dict.fromkeys(df["estimates"]))
    m = mean_err(df, ["estimates", "policy", "runtime_factor"], ["utilization", "wait_mean", "capacity_loss"])
    pols = [p for p in POLICIES if p in set(m["policy"])]
    look = styles(pols)
    lo = max(0.0, float(np.floor(10 * m["utilization"].min()) / 10)) if len(m) else 0.5
    with style():
        fig, axes = figure(len(ests), 2, width=PAGE, panel=2.3, sharex=True)
        for row, est in enumerate(ests):
            a, b = axes[row]
            for pol in pols:
                sub = m[(m["estimates"] == est) & (m["policy"] == pol)].sort_values("runtime_factor")
                if sub.empty:
                    continue
                curve(a, sub["utilization"], sub["wait_mean"] / 3600, sub["wait_mean_err"] / 3600, sort=False,
                      label=pol, **look[pol])
                curve(b, sub["utilization"], 100 * sub["capacity_loss"], 100 * sub["capacity_loss_err"],
                      sort=False, **look[pol])
            u = np.linspace(lo, 1.0, 11)
            b.plot(u, 100 * (1 - u), color="0.3", ls="--", lw=0.8)
            a.set_ylabel("mean wait (h)")
            b.set_ylabel("capacity loss kappa (%)")
            a.set_title(f"mean wait, estimates {est}")
            b.set_title(f"capacity loss, estimates {est}")
            for ax in (a, b):
                ax.set_xlabel("utilization rho (fraction)")
                ax.tick_params(labelbottom=True)
                plain_ticks(ax)
                plain_ticks(ax, "x")
        handles = [proxy(p, ls="-", **look[p]) for p in pols] + [proxy("kappa = 1 - rho", color="0.3", ls="--",
                                                                       lw=0.8)]
        legend(fig, handles, title=f"queue order with backfilling; {interval_note(m['reps'])}")
        arm = df["workload"].iloc[0] if "workload" in df else "lublin03"
        save(fig, path, f"[zhang-comparative] fig. 5: queue orders with backfilling ({arm}, "
                        f"{int(df['nodes'].iloc[0])} nodes)")


register(Experiment("zhang-queues", "[zhang-comparative] fig. 5: wait and capacity loss vs utilization, FCFS/SJF/BFit/WFit "
                                    "with backfilling", tasks, run, table, plot,
                    extra={"saturation": saturation}))
register(Experiment("zhang-queues-he", "zhang-queues on the hyper-Erlang model fitted to KTH SP2 ([zhang-comparative] "
                                       "section 2.1; 100 nodes)", tasks_he, run, table, plot,
                    extra={"saturation": saturation}))
