"""``zhang-gang``: slowdown, wait and capacity loss against utilization for
backfilling (BF), gang scheduling (GS-2/3/5), backfilling gang scheduling
(BGS-2/3/5) and migration (MGS-5, MBGS-5) at context-switch overheads 0, 1,
2 and 5 % of the time slice ([zhang-comparative] section 6, figures 15-21 and 25).

Setup as [zhang-comparative] section 6.3: a machine of 320 nodes, FCFS priority, time
slice T = 200 s, the Phi model of overestimation with Phi = 0.2, continuous
scheduling; MGS/MBGS with MPL 5, migration cost 10 s (5 % of the slice) and
Q = 64 tasks migrated per slice (figure 25).  BF is conservative backfilling
on the whole machine (:mod:`epochbench.sim.policies`, fast path; reservations
compressed on early ends, as in ``zhang-estimates``; ``zhang-queues``'s
``fcfs-bf`` plans afresh at every event, which differs under Phi = 0.2: see
:mod:`.zhang_estimates`); the gang policies run
in :func:`epochbench.sim.gang.simulate_gang` (all four steps, figure 11 line 3).

Streams: :func:`.zhang_queues.zhang_stream` (lublin03 on 320 nodes, offered
load 0.55 x runtime factor; see that module for the workload choice), the
same streams as ``zhang-queues`` and ``zhang-estimates``.  The runtime
factors run from 0.4 (offered load 0.22) to 1.8 (0.99): [zhang-comparative] uses 1.0
.. 1.8 only, but on this stream every policy has a bounded slowdown above 20
at load 0.55 already (a daily arrival cycle and many short jobs), so the
lower loads are needed to find where a policy crosses a slowdown of 20.
Figure 21 adds discrete scheduling (BF stays continuous; BGS-1 = BF with
discrete scheduling) at overhead 0.

``zhang-gang-kth``: the same sweep on the KTH SP2 trace (100 nodes, its first
10,000 jobs with their own user estimates), the load set by scaling the
arrival times (:func:`epochbench.instances.workloads.set_load`) to offered loads 0.3 ..
0.95.  One stream only, so ``--seeds`` other than 1 is refused there.  ``zhang-gang-he``:
the same sweep as ``zhang-gang`` on the hyper-Erlang model of common order
fitted to KTH ([zhang-comparative] section 2.1, :mod:`epochbench.instances.hypererlang`;
100 nodes), the paper's own kind of workload, next to ``lublin03``.

Rows: one per (stream, policy, MPL, overhead, discrete, load point, seed)
with :func:`epochbench.sim.gang.summarize_gang` (capacity loss eq. 3; eq. 2 for BF,
the same thing at MPL 1).  :func:`table` gives per configuration the
utilization at which the mean bounded slowdown crosses 20 ([zhang-comparative] section
6.3: about 0.67 GS-5, 0.76 BF, 0.82 BGS-2, 0.87 BGS-5), 50 and 100 (linear
interpolation between load points), the highest utilization reached and
slowdown / wait at the lowest and highest load.  :func:`claims` checks seed
004's orderings point by point.

The columns ``rho@sld20``, ``rho@sld50`` and ``rho@sld100`` hold
utilizations (fractions, e.g. 0.76), not loads or slowdowns: the measured
utilization at which the configuration's mean bounded slowdown first reaches
20 / 50 / 100 along increasing load.  Two values fall outside the sweep and
are written as signed infinities: ``inf`` when the slowdown never reaches
the threshold, even at the highest load point (the crossing lies above every
utilization reached), and ``-inf`` when the slowdown is already above the
threshold at the lowest load point (the crossing lies below the lowest
utilization run; these cells were empty, NaN, before).  A cell is NaN only
when the configuration has no load point at all.  ``sld20_from`` and
``sld20_to`` are the utilizations of the two load points between which the
slowdown crosses 20 (:func:`crossing_bracket`): a quick run has three load
points, so its ``rho@sld20`` is a straight line across a wide bracket (GS-5
in one: 0.33, between 0.33 and 0.64).

What to expect against the paper.  Its thresholds (0.67 GS-5, 0.76 BF,
0.82 BGS-2, 0.87 BGS-5) come from a hyper-Erlang fit to ASCI Blue-Pacific
(median runtime 680 s); lublin03 has a median of about 24 s, a daily
arrival cycle and most jobs under a minute, so every policy crosses 20 at
a far lower utilization (measured with 10,000 jobs, 15 load points, 2
seeds: GS-5 0.27, BF 0.24, BGS-2 0.38, BGS-5 0.50, MBGS-5 0.54) and MBGS-5
beats BGS-5 at only 43 % of the points (short jobs dominate the mean
slowdown; measured at the 10 s cost; a cost of 0 changed nothing then,
before CollapseMatrix-2 compared its options per unit of cost, which
changed the runs at cost 0 only).  The orderings BGS-5 >
BGS-2 > GS-5 hold.  On the paper's kind of workload (``zhang-gang-he``,
5,000 jobs, one seed) GS-5 crosses at 0.69 and MBGS-5 beats BGS-5 at every
point, as the paper says.  Compare absolute thresholds on the ``-he`` arm.
These figures were measured before CompactMatrix and CollapseMatrix-2 let
jobs move either way between two rows equally full, as the paper's loop
does (:func:`epochbench.sim.gang_matrix._row_pairs`): on lublin03 that
changed 0 to 15 jobs' starts of a run, on a 1,500-job hyper-Erlang stream
at load 0.85 (MPL 5) 910 under GS (mean wait 1,222 -> 854 s) and 711 under
BGS (407 -> 458 s), as a review measured.  They were also measured before a
BGS / MBGS job still running at its predicted end kept its row's
processors (:meth:`epochbench.sim.gang_backfill.RowBackfill.hold`): on the
quick ``zhang-gang-he`` run that moved the mean bounded slowdown of 38 of
48 BGS / MBGS rows (median change 0, from -29 % to +51 %); of the claims,
``bgs<bf sld`` went from 1 to 0.67 at 5 % overhead (MPL 2, 3, 5) and from
0.67 to 1 at overhead 0 (MPL 3).

Per-epoch gaps (issue: the gang steps are packing decisions too): every
gang run at overhead 0 records its row-filling steps
(:class:`epochbench.sim.record.GangRecorder`: Schedule and FillMatrix, one ``packing``
instance per row, value = cells filled) on an even sample of about
:data:`GAP_EPOCHS` steps and scores the policy's choice against CP-SAT with
a short time limit (:data:`GAP_TIME_LIMIT`, one thread).  Columns
``gap_schedule`` / ``gap_fill``: mean relative gap over the sampled steps
whose reference is a proven optimum (CP-SAT proved it, or the choice meets
CP-SAT's bound); ``gap_epochs``: steps scored, ``gap_unproven``: those whose
reference is only a bound (left out of the means; ``gap_vs`` in the table
says what the means are against).  A Schedule row is scored given what the
step put into the other rows (per-row knapsacks, see GangRecorder; BGS rows
carry their reservations).  GS and MGS never backfill: a row whose free
cells only later jobs could fill scores a gap of 100 % there.

``--quick``: 2,000 jobs, factors 0.6 / 1.2 / 1.8 (KTH: loads 0.4 / 0.7 /
0.9), every configuration, 1 seed: 93 runs, about 1 minute on 2 cores
(51 s with one worker, 36 runs scoring 60 steps each at 0.5 s, measured).
Full: 10,000 jobs, 8 load points, 1 seed (``--seeds`` for more): 248 runs of
0.4-15 s, about 6.5 minutes (KTH: 5.5) with 2 worker processes on 2 cores
(measured on a shared machine, before the per-epoch scoring; that adds 96
runs x 300 steps, most of them solved by CP-SAT in milliseconds).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import Experiment, Options, register
from .zhang_queues import zhang_stream

SLICE = 200.0                    # [zhang-comparative] figures 11-12: time slice 200 s
PHI = 0.2                        # [zhang-comparative] section 6.2: Phi model, Phi = 0.2
OVERHEADS = (0.0, 0.01, 0.02, 0.05)
MPLS = (2, 3, 5)
MIGRATION = dict(migration_cost=10.0, migration_limit=64)   # [zhang-comparative] figure 25
FACTORS = (0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8)
QUICK_FACTORS = (0.6, 1.2, 1.8)
KTH_LOADS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
QUICK_KTH_LOADS = (0.4, 0.7, 0.9)
JOBS, QUICK_JOBS = 10_000, 2_000
THRESHOLDS = (20.0, 50.0, 100.0)
GAP_EPOCHS, QUICK_GAP_EPOCHS = 300, 60          # row-filling steps scored per gang run (overhead 0)
GAP_TIME_LIMIT, QUICK_GAP_TIME_LIMIT = 2.0, 0.5  # CP-SAT seconds per step
STEPS_PER_JOB = 10                               # about how many decidable row steps a job brings (measured:
                                                 # 9-11 on lublin03 at MPL 5), to spread the sample
METRICS = ("utilization", "capacity_loss", "wait_mean", "wait_std", "bsld_mean", "bsld_std", "response_mean",
           "small_wait_mean", "large_wait_mean", "small_bsld_mean", "large_bsld_mean", "makespan")


def label(policy: str, mpl: int | None, discrete: bool = False) -> str:
    """``BF``, ``GS-5``, ``BGS-2``, ``MBGS-5``; ``(d)`` for discrete scheduling."""
    name = "BF" if policy == "bf" else f"{policy.upper()}-{mpl}"
    return name + (" (d)" if discrete else "")


def configs(quick: bool) -> list[dict]:
    """Every (policy, mpl, overhead, discrete) of the sweep (module docstring)."""
    out = [dict(policy="bf", mpl=1, overhead=0.0, discrete=False)]
    for c in OVERHEADS:
        for pol in ("gs", "bgs"):
            out += [dict(policy=pol, mpl=m, overhead=c, discrete=False) for m in MPLS]
    out += [dict(policy=p, mpl=5, overhead=0.0, discrete=False) for p in ("mgs", "mbgs")]
    out += [dict(policy="bgs", mpl=m, overhead=0.0, discrete=True) for m in (1, 2, 5)]
    out += [dict(policy="gs", mpl=5, overhead=0.0, discrete=True)]
    return out


def _tasks(opts: Options, stream: str) -> list[dict]:
    if stream == "kth":
        if opts.seeds not in (None, 1):          # ignored before, and recorded in run.json as if it held
            raise ValueError("--seeds: zhang-gang-kth replays the one KTH trace, one run per point; "
                             "leave --seeds out")
        seeds, points = 1, (QUICK_KTH_LOADS if opts.quick else KTH_LOADS)
    else:
        seeds = opts.seeds if opts.seeds is not None else 1
        points = QUICK_FACTORS if opts.quick else FACTORS
    jobs = QUICK_JOBS if opts.quick else JOBS
    cfgs = configs(opts.quick)
    # heaviest first (high load, migration and MPL 5), so that the process pool ends evenly
    weight = {"mbgs": 4, "mgs": 4, "bgs": 3, "gs": 2, "bf": 0}
    cfgs = sorted(cfgs, key=lambda c: -(weight[c["policy"]] + c["mpl"] / 5))
    gaps = {"gap_epochs": QUICK_GAP_EPOCHS if opts.quick else GAP_EPOCHS,
            "gap_time_limit": QUICK_GAP_TIME_LIMIT if opts.quick else GAP_TIME_LIMIT}
    return [{"stream": stream, **c, "point": p, "seed": s, "jobs": jobs,
             **(gaps if c["policy"] != "bf" and c["overhead"] == 0 else {})}
            for p in sorted(points, reverse=True) for c in cfgs for s in range(seeds)]


def tasks(opts: Options) -> list[dict]:
    return _tasks(opts, "lublin03")


def tasks_kth(opts: Options) -> list[dict]:
    return _tasks(opts, "kth")


def tasks_he(opts: Options) -> list[dict]:
    """:func:`tasks` of the hyper-Erlang arm (``zhang-gang-he``)."""
    return _tasks(opts, "hypererlang")


def make_stream(stream: str, jobs: int, point: float, seed: int):
    """(workload, offered load): lublin03 at runtime factor ``point`` (Phi =
    0.2 estimates), or the first ``jobs`` KTH jobs at offered load ``point``."""
    if stream == "kth":
        from epochbench.instances.data import data_root
        from epochbench.instances.workloads import offered_load, set_load
        from epochbench.instances.jobs import make_workload, read_swf

        path = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
        if not path.exists():
            raise FileNotFoundError(f"KTH trace absent at {path} (set EPOCHBENCH_DATA)")
        w = read_swf(path)
        j = set_load(w.jobs.head(jobs), w.capacity, point)
        wl = make_workload(j[["id", "submit", "runtime", "estimate", "procs"]], w.capacity, source="KTH")
        return wl, offered_load(wl.jobs, wl.capacity)
    st, wl = zhang_stream(jobs, seed, point, "phi", PHI, workload_model=stream)
    return wl, st.meta["offered_load"]


def epoch_gaps(instances, time_limit: float) -> dict:
    """Score recorded gang steps: the policy's choice (``recorded``) against
    CP-SAT (``time_limit`` s, one thread) on each instance; the mean gap per
    step kind over the steps whose reference is a proven optimum, and the
    counts (module docstring)."""
    from epochbench.scoring import recorded_gap

    by = {"schedule": [], "fill": []}
    unproven = 0
    for inst in instances:
        g_i = recorded_gap(inst, time_limit=time_limit)
        if g_i is None:
            unproven += 1
            continue
        by[inst.meta["step"]].append(g_i)
    mean = {k: float(np.mean(v)) if v else float("nan") for k, v in by.items()}
    return {"gap_schedule": mean["schedule"], "gap_fill": mean["fill"], "gap_epochs": len(instances),
            "gap_unproven": unproven,
            "gap_optimal_share": float(np.mean([x <= 1e-9 for v in by.values() for x in v]))
            if any(by.values()) else float("nan")}


def run(task: dict) -> list[dict]:
    """One stream under one configuration: one tidy row."""
    from epochbench.sim.pool import simulate_pool as simulate
    from epochbench.sim.gang import simulate_gang, summarize_gang
    from epochbench.sim.metrics import summarize
    from epochbench.sim.record import GangRecorder

    wl, offered = make_stream(task["stream"], task["jobs"], task["point"], task["seed"])
    pol = task["policy"]
    extra = {}
    if pol == "bf":
        res = simulate(wl.jobs, wl.capacity, "conservative")
        m = summarize(res.jobs, wl)
    else:
        kw = dict(mpl=task["mpl"], slice=SLICE, switch_overhead=task["overhead"], discrete=task["discrete"])
        if pol in ("mgs", "mbgs"):
            kw.update(MIGRATION)
        rec = None
        if task.get("gap_epochs"):
            every = max(1, STEPS_PER_JOB * task["jobs"] // task["gap_epochs"])
            rec = GangRecorder(every=every, limit=task["gap_epochs"])
        res = simulate_gang(wl.jobs, wl.capacity, pol, recorder=rec, **kw)
        m = summarize_gang(res, wl)
        extra = {"capacity_loss_switch": m["capacity_loss_switch"],
                 "capacity_loss_migration": m["capacity_loss_migration"],
                 "migrations": m["migrations"], "migrated_tasks": m["migrated_tasks"]}
        if rec is not None:
            extra.update(epoch_gaps(rec.instances, task["gap_time_limit"]))
    return [{"stream": task["stream"], "config": label(pol, task["mpl"], task["discrete"]), "policy": pol,
             "mpl": task["mpl"], "overhead": task["overhead"], "discrete": task["discrete"],
             "point": task["point"], "seed": task["seed"], "jobs": task["jobs"], "nodes": int(wl.capacity[0]),
             "offered_load": offered, **{k: m[k] for k in METRICS}, **extra, "sim_seconds": res.seconds,
             "passes": res.passes}]


# ---- summaries ----------------------------------------------------------------------------
def _curves(df: pd.DataFrame) -> pd.DataFrame:
    """Means over seeds per (stream, config, overhead, point)."""
    cols = ["offered_load", "utilization", "bsld_mean", "wait_mean", "capacity_loss", "bsld_std", "wait_std",
            "small_bsld_mean", "large_bsld_mean", "small_wait_mean", "large_wait_mean"]
    return df.groupby(["stream", "config", "policy", "mpl", "overhead", "discrete", "point"],
                      sort=False)[cols].mean().reset_index()


def utilization_at(util, value, threshold: float) -> float:
    """Utilization where ``value`` (along increasing load) first reaches
    ``threshold``, by linear interpolation between load points; -inf if it is
    above the threshold at the lowest load (the crossing is below the sweep),
    inf if it never reaches it (above the sweep), NaN with no points."""
    u, v = np.asarray(util, dtype=float), np.asarray(value, dtype=float)
    if len(v) == 0:
        return float("nan")
    if v[0] > threshold:
        return float("-inf")
    for k in range(1, len(v)):
        if v[k] >= threshold:
            f = (threshold - v[k - 1]) / (v[k] - v[k - 1]) if v[k] != v[k - 1] else 1.0
            return float(u[k - 1] + f * (u[k] - u[k - 1]))
    return float("inf")


def crossing_bracket(util, value, threshold: float) -> tuple[float, float]:
    """The utilizations of the two load points between which ``value``
    first reaches ``threshold`` (what :func:`utilization_at` interpolates
    across): a wide bracket says the interpolated value means little.
    (-inf, lowest) when the value is above the threshold at the lowest load,
    (highest, inf) when it never reaches it, NaNs with no points."""
    u, v = np.asarray(util, dtype=float), np.asarray(value, dtype=float)
    if len(v) == 0:
        return float("nan"), float("nan")
    if v[0] > threshold:
        return float("-inf"), float(u[0])
    for k in range(1, len(v)):
        if v[k] >= threshold:
            return float(u[k - 1]), float(u[k])
    return float(u[-1]), float("inf")


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (stream, config, overhead): utilization at mean bounded slowdown
    20 / 50 / 100 (``rho@sld20`` ...: utilizations; -inf: above the threshold at
    the lowest load already; inf: never reached), the
    highest utilization reached, and slowdown, wait and capacity loss at the
    lowest and the highest load point; for the gang runs that scored their
    steps, the mean per-epoch gaps in per cent over all their load points
    (``gap_sched %``, ``gap_fill %``, against proven optima only), the
    steps scored and ``gap_vs`` (``optimum``, or how many steps had only a
    bound and were left out)."""
    rows = []
    gaps = _gaps(df)
    for key, g in _curves(df).groupby(["stream", "config", "overhead"], sort=False):
        g = g.sort_values("point")
        row = dict(zip(("stream", "config", "overhead"), key))
        for th in THRESHOLDS:
            row[f"rho@sld{th:g}"] = utilization_at(g["utilization"], g["bsld_mean"], th)
        row["sld20_from"], row["sld20_to"] = crossing_bracket(g["utilization"], g["bsld_mean"], 20.0)
        row["max_util"] = g["utilization"].max()
        lo, hi = g.iloc[0], g.iloc[-1]
        row.update(sld_lo=lo["bsld_mean"], sld_hi=hi["bsld_mean"], wait_lo=lo["wait_mean"], wait_hi=hi["wait_mean"],
                   kappa_lo=lo["capacity_loss"], kappa_hi=hi["capacity_loss"])
        if gaps is not None:
            row.update(gaps.get(key, {"gap_sched %": np.nan, "gap_fill %": np.nan, "epochs": 0,
                                      "gap_vs": "not scored"}))
        rows.append(row)
    out = pd.DataFrame(rows)
    order = {c: i for i, c in enumerate(["BF"] + [label(p, m) for p in ("gs", "bgs") for m in MPLS]
                                        + ["MGS-5", "MBGS-5"])}
    out["_o"] = out["config"].map(lambda c: order.get(c, 99))
    out = out.sort_values(["stream", "overhead", "_o", "config"], kind="stable").drop(columns="_o")
    return out.reset_index(drop=True)


def _gaps(df: pd.DataFrame) -> dict | None:
    """(stream, config, overhead) -> the gap columns of :func:`table`, or
    None when no run scored its steps."""
    if "gap_epochs" not in df or not df["gap_epochs"].notna().any():
        return None
    out = {}
    for key, g in df[df["gap_epochs"].notna()].groupby(["stream", "config", "overhead"], sort=False):
        n, left = int(g["gap_epochs"].sum()), int(g["gap_unproven"].sum())
        out[key] = {"gap_sched %": round(100 * g["gap_schedule"].mean(), 2),
                    "gap_fill %": round(100 * g["gap_fill"].mean(), 2), "epochs": n,
                    "gap_vs": "optimum" if left == 0 else f"optimum {n - left}, bound {left} (left out)"}
    return out


def claims(df: pd.DataFrame) -> pd.DataFrame:
    """[zhang-comparative]'s orderings, point by point (continuous scheduling): for each
    stream, overhead and MPL, the share of load points where BGS-m has a
    strictly lower mean slowdown / wait than GS-m (over the ``points`` where
    both ran) and than BF (over the ``points bf`` where BF ran too: a run
    without BF had every share empty, BGS against GS included), and where the
    slowdown falls with the MPL (BGS-5 <= BGS-3 <= BGS-2, ties counting).
    Points where BGS-m and GS-m are equal (``bgs=gs sld``, ``bgs=gs wait``)
    are neither: where GS-m never blocks a job, backfilling has nothing to do
    and the two runs are the same job for job (GS-5 at low load), which the
    strict share alone read as BGS losing."""
    c = _curves(df)
    c = c[~c["discrete"]]
    rows = []
    for (stream, over), g in c.groupby(["stream", "overhead"]):
        bf = c[(c["stream"] == stream) & (c["config"] == "BF")].set_index("point")
        by = {cfg: x.set_index("point") for cfg, x in g.groupby("config")}
        for m in MPLS:
            b, s = by.get(f"BGS-{m}"), by.get(f"GS-{m}")
            if b is None or s is None:
                continue
            pts = b.index.intersection(s.index)          # BGS against GS wherever both ran
            fb = pts.intersection(bf.index)              # against BF where it ran too ("points bf")
            rows.append({"stream": stream, "overhead": over, "mpl": m, "points": len(pts),
                         "bgs<gs sld": float((b.loc[pts, "bsld_mean"] < s.loc[pts, "bsld_mean"]).mean()),
                         "bgs<gs wait": float((b.loc[pts, "wait_mean"] < s.loc[pts, "wait_mean"]).mean()),
                         "bgs<bf sld": float((b.loc[fb, "bsld_mean"] < bf.loc[fb, "bsld_mean"]).mean()),
                         "bgs<bf wait": float((b.loc[fb, "wait_mean"] < bf.loc[fb, "wait_mean"]).mean()),
                         "gs<bf sld": float((s.loc[fb, "bsld_mean"] < bf.loc[fb, "bsld_mean"]).mean()),
                         "bgs=gs sld": float((b.loc[pts, "bsld_mean"] == s.loc[pts, "bsld_mean"]).mean()),
                         "bgs=gs wait": float((b.loc[pts, "wait_mean"] == s.loc[pts, "wait_mean"]).mean()),
                         "points bf": len(fb)})
        if all(f"BGS-{m}" in by for m in MPLS):
            b2, b3, b5 = (by[f"BGS-{m}"]["bsld_mean"] for m in MPLS)
            pts = b2.index.intersection(b3.index).intersection(b5.index)
            rows.append({"stream": stream, "overhead": over, "mpl": "2>3>5", "points": len(pts),
                         "monotone sld": float(((b5[pts] <= b3[pts]) & (b3[pts] <= b2[pts])).mean())})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)      # a subset without GS and BGS: no rows, its header


#: the columns of :func:`claims`
CLAIM_COLUMNS = ["stream", "overhead", "mpl", "points", "bgs<gs sld", "bgs<gs wait", "bgs<bf sld", "bgs<bf wait",
                 "gs<bf sld", "monotone sld", "bgs=gs sld", "bgs=gs wait", "points bf"]


# ---- figures ---------------------------------------------------------------------------------
#: colour, marker and line style per configuration: GS in reds and BGS in blues, MPL 2 / 3 / 5 told
#: apart by shade, marker and dash; migration and discrete scheduling in colours of their own
STYLE = {"BF": dict(color="k", marker="o", ls="-", lw=1.8),
         "GS-2": dict(color="#F4A582", marker="v", ls=":"), "GS-3": dict(color="#D6604D", marker="^", ls="--"),
         "GS-5": dict(color="#B2182B", marker="s", ls="-"),
         "BGS-2": dict(color="#92C5DE", marker="v", ls=":"), "BGS-3": dict(color="#4393C3", marker="^", ls="--"),
         "BGS-5": dict(color="#2166AC", marker="s", ls="-"),
         "MGS-5": dict(color="#E69F00", marker="D", ls="-."), "MBGS-5": dict(color="#009E73", marker="P", ls="-."),
         "BGS-1 (d)": dict(color="#CC79A7", marker="X", ls="--"),
         "BGS-2 (d)": dict(color="#882255", marker="<", ls="--"),
         "BGS-5 (d)": dict(color="#332288", marker=">", ls="--"),
         "GS-5 (d)": dict(color="#999933", marker="h", ls="--"),
         "BF small": dict(color="#888888", marker="o", ls="--", fillstyle="none"),
         "BF large": dict(color="#4D4D4D", marker="P", ls="-"),
         "BGS-5 small": dict(color="#56B4E9", marker="o", ls="--", fillstyle="none"),
         "BGS-5 large": dict(color="#08519C", marker="D", ls="-")}
#: what a figure label of :data:`STYLE` reads
NAMES = {"BF small": "BF small (<= 32 nodes)", "BF large": "BF large (> 32 nodes)",
         "BGS-5 small": "BGS-5 small (<= 32 nodes)", "BGS-5 large": "BGS-5 large (> 32 nodes)"}
#: the reference lines of the figures
SLD20 = dict(color="0.5", lw=0.8, ls=(0, (6, 2, 1, 2)))
KAPPA = dict(color="0.3", lw=0.8, ls="--")


def _line(ax, g, ycol, cfg, scale=1.0, **kw):
    """The curve of ``cfg`` (mean over seeds, band of one standard deviation
    where there are several) in ``g`` against the utilization reached,
    points in the order of increasing load."""
    from .plotting import curve

    g = g.sort_values("point")
    err = g[f"{ycol}_err"] / scale if f"{ycol}_err" in g else None
    curve(ax, g["utilization"], g[ycol] / scale, err, sort=False, ms=3.5, label=NAMES.get(cfg, cfg),
          **{**STYLE.get(cfg, {}), **kw})


def _means(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`_curves` with each metric's spread over seeds (``COL_err``) and ``reps``."""
    from .plotting import mean_err

    cols = ["offered_load", "utilization", "bsld_mean", "wait_mean", "capacity_loss", "bsld_std", "wait_std",
            "small_bsld_mean", "large_bsld_mean", "small_wait_mean", "large_wait_mean"]
    return mean_err(df, ["stream", "config", "policy", "mpl", "overhead", "discrete", "point"], cols)


def _finish(fig, axes, reps, refs: tuple = (), outer: bool = False) -> None:
    """Utilization x labels, plain ticks and the one legend of a gang figure
    (with the reference lines ``refs``: "sld20", "kappa").  ``outer``: the
    axes are shared along rows and columns, so only the bottom row carries
    the x label and only the left column its y label and ticks."""
    from .plotting import interval_note, legend, plain_ticks, proxy

    for (r, k), ax in np.ndenumerate(axes):
        if not outer or r == axes.shape[0] - 1:
            ax.set_xlabel("utilization rho (fraction)")
        if outer and k > 0:
            ax.set_ylabel("")
        if not outer:
            ax.tick_params(labelbottom=True, labelleft=True)
        plain_ticks(ax)
        plain_ticks(ax, "x")
    seen: dict = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    handles = [proxy(lab, **STYLE.get(_key_of(lab), {})) for lab in seen]
    handles += [proxy("bounded slowdown 20", **SLD20)] if "sld20" in refs else []
    handles += [proxy("kappa = 1 - rho", **KAPPA)] if "kappa" in refs else []
    what = "configuration ((d): discrete scheduling)" if any("(d)" in lab for lab in seen) else "configuration"
    legend(fig, handles, title=f"{what}; {interval_note(reps)}")


def _key_of(label: str) -> str:
    """The :data:`STYLE` key of a figure label."""
    return next((k for k, v in NAMES.items() if v == label), label)


def plot(df: pd.DataFrame, path) -> None:
    """``NAME.png``: figures 15 (slowdown), 17 (wait) and 20 (capacity loss),
    one column per overhead (the rows share their y axis, labelled at the
    left, the columns their x axis, labelled at the bottom); ``NAME-extra.png``:
    figures 16/18 (standard deviations), 19 (small and large jobs), 21
    (continuous vs discrete) and 25 (GS, BGS, MGS, MBGS: slowdown, wait and
    capacity loss, as the paper's figure compares) at overhead 0.  Each
    figure one legend; mean over seeds with a band of one standard
    deviation where there are several; waits in hours; log axes only for
    positive values (slowdown and wait)."""
    from pathlib import Path

    from .plotting import PAGE, figure, save, style, value_scale

    c = _means(df)
    rows = (("bsld_mean", "mean bounded slowdown\n(ratio, {scale})", 1.0),
            ("wait_mean", "mean wait\n(h, {scale})", 3600.0),
            ("capacity_loss", "capacity loss\nkappa (%)", 0.01))
    for stream in dict.fromkeys(c["stream"]):
        cs = c[c["stream"] == stream]
        cont = cs[~cs["discrete"].astype(bool)]
        bf = cont[cont["config"] == "BF"]
        overs = sorted(set(cont["overhead"]))
        out = Path(path) if stream == c["stream"].iloc[0] else Path(path).with_name(f"{Path(path).stem}-{stream}.png")
        if overs:     # continuous configs run (only discrete ones, --where discrete=True: fig. 21 alone)
            with style():
                fig, axes = figure(3, len(overs), width=PAGE, panel=2.05, sharey="row", sharex=True)
                for k, over in enumerate(overs):
                    g = cont[(cont["overhead"] == over) & cont["policy"].isin(["gs", "bgs"])]
                    for r, (ycol, name, scale) in enumerate(rows):
                        ax = axes[r][k]
                        _line(ax, bf, ycol, "BF", scale)
                        for cfg in [x for x in STYLE if x in set(g["config"])]:
                            _line(ax, g[g["config"] == cfg], ycol, cfg, scale)
                        if r == 0:
                            ax.axhline(20, **SLD20)
                        ax.set_ylabel(name)
                        if r < 2:
                            value_scale(ax, cs[ycol] / scale, label=name)
                        else:
                            u = np.linspace(np.floor(10 * cont["utilization"].min()) / 10, 1.0, 11)
                            ax.plot(u, 100 * (1 - u), **KAPPA)
                            ax.set_ylim(0, max(1.3 * float(100 * cont[ycol].max()), 5.0))
                        ax.set_title(f"overhead {over:.0%}" if r == 0 else "")
                _finish(fig, axes, cs["reps"], ("sld20", "kappa"), outer=True)
                save(fig, out, "[zhang-comparative] figs. 15, 17, 20: slowdown, wait and capacity loss per "
                               f"context-switch overhead ({stream}, {int(df['nodes'].iloc[0])} nodes, T = {SLICE:g} s)")
        _extra(cs, Path(out).with_name(f"{Path(out).stem}-extra.png"), stream)


def _extra(cs: pd.DataFrame, path, stream: str) -> None:
    """Figures 16, 18, 19, 21 and 25 at overhead 0 (:func:`plot`)."""
    from .plotting import PAGE, figure, save, style, value_scale

    zero = cs[(cs["overhead"] == 0.0)]
    disc = zero["discrete"].astype(bool)
    cont = zero[~disc]
    with style():
        fig, axes = figure(3, 3, width=PAGE, height=8.4)
        panels = {}
        for ax, ycol, name, scale, title in ((axes[0][0], "bsld_std", "s.d. of bounded slowdown (ratio, {scale})", 1.0,
                                              "fig. 16: spread of slowdown"),
                                             (axes[0][1], "wait_std", "s.d. of wait (h, {scale})", 3600.0,
                                              "fig. 18: spread of wait")):
            sub = cont[cont["policy"].isin(["bf", "gs", "bgs"])]
            for cfg in [x for x in STYLE if x in set(sub["config"])]:
                _line(ax, sub[sub["config"] == cfg], ycol, cfg, scale)
            panels[ax] = (sub[ycol] / scale, name, title)
        for ax, metric, name, scale in ((axes[0][2], "bsld", "mean bounded slowdown (ratio, {scale})", 1.0),
                                        (axes[1][0], "wait", "mean wait (h, {scale})", 3600.0)):
            vals = []
            for cfg in ("BF", "BGS-5"):
                x = cont[cont["config"] == cfg]
                for size in ("small", "large"):
                    _line(ax, x, f"{size}_{metric}_mean", f"{cfg} {size}", scale)
                    vals.append(x[f"{size}_{metric}_mean"] / scale)
            what = "slowdown" if metric == "bsld" else "wait"
            panels[ax] = (pd.concat(vals) if vals else pd.Series(dtype=float), name,
                          f"fig. 19: {what} by job size")
        ax = axes[1][1]
        keep = [x for x in STYLE if x in ("BF", "GS-5", "BGS-2", "BGS-5") or x.endswith("(d)")]
        for cfg in [x for x in keep if x in set(zero["config"])]:
            _line(ax, zero[zero["config"] == cfg], "bsld_mean", cfg)
        ax.axhline(20, **SLD20)
        panels[ax] = (zero["bsld_mean"], "mean bounded slowdown (ratio, {scale})", "fig. 21: continuous vs discrete")
        migration = [cfg for cfg in ("GS-5", "BGS-5", "MGS-5", "MBGS-5") if cfg in set(cont["config"])]
        for ax, ycol, name, scale, what in ((axes[2][0], "bsld_mean", "mean bounded slowdown (ratio, {scale})", 1.0,
                                             "slowdown"),
                                            (axes[2][1], "wait_mean", "mean wait (h, {scale})", 3600.0, "wait"),
                                            (axes[2][2], "capacity_loss", "capacity loss kappa (%)", 0.01,
                                             "capacity loss")):
            for cfg in migration:                  # figure 25 compares all three ([zhang-comparative] 6.6)
                _line(ax, cont[cont["config"] == cfg], ycol, cfg, scale)
            sub = cont[cont["config"].isin(migration)]
            if ycol == "capacity_loss":
                ax.set_ylabel(name)
                ax.set_title(f"fig. 25: {what} (MPL 5)")
                if len(sub):
                    ax.set_ylim(0, max(1.3 * float(100 * sub[ycol].max()), 5.0))
            else:
                panels[ax] = (sub[ycol] / scale, name, f"fig. 25: {what} (MPL 5)")
        axes[1][2].set_axis_off()
        for ax, (vals, name, title) in panels.items():
            value_scale(ax, vals, label=name)
            ax.set_title(title)
        _finish(fig, axes, zero["reps"], ("sld20",))
        save(fig, path, f"[zhang-comparative] figs. 16, 18, 19, 21, 25 at overhead 0 ({stream})")


register(Experiment("zhang-gang", "[zhang-comparative] figs. 15-21, 25: BF, GS, BGS, MGS, MBGS vs utilization at "
                                  "context-switch overheads 0-5 % (lublin03, 320 nodes)", tasks, run, table, plot,
                    extra={"claims": claims}))
register(Experiment("zhang-gang-kth", "zhang-gang on the KTH SP2 trace (100 nodes, arrivals scaled)",
                    tasks_kth, run, table, plot, data=("swf/KTH-SP2-1996-2.1-cln.swf.gz",), extra={"claims": claims}))
register(Experiment("zhang-gang-he", "zhang-gang on the hyper-Erlang model fitted to KTH SP2 ([zhang-comparative] "
                                     "section 2.1; 100 nodes)", tasks_he, run, table, plot,
                    extra={"claims": claims}))
