"""``epochbench experiment capannini``: [capannini2007] figures 3-8, convergent
scheduling against EDF, EASY and flexible backfilling on a farm.

Full version ([capannini2007] section 6): 150 machines, 20 licenses, 1500 jobs,
mean inter-arrival times Ta = 4, 6, 8, 10, 12, 16, 20, 20 repetitions (each
a fresh stream, :func:`epochbench.sim.farm.generate_stream`), the eight policies of
:data:`epochbench.sim.farm_policies.POLICIES`.  In the first ``EXACT_SEEDS``
repetitions every CS run also solves every ``ORACLE_EVERY``-th epoch's
knapsack (CP-SAT) and matching (Hungarian) exactly and records the
per-epoch gaps; ``cs-ni-np-exact`` (CP-SAT knapsack,
Hungarian matching in every epoch) gives the end-to-end effect of exact
steps (first ``EXACT_SEEDS`` repetitions).  Figure 8 (scalability): the time
of one scheduling pass of cs-i-p, cs-ni-p and EDF on a farm state with n jobs
(half the machines busy, :func:`epochbench.instances.farm.generate_farm`).

Sensitivity arms (:data:`VARIANTS`, first ``VARIANT_SEEDS`` repetitions): cs-i-p with the
deadline heuristic's f-bar exactly as printed (``literal_fbar``, see
:func:`epochbench.instances.farm.deadline_delta`) and with the anti-aging weight AA at
a tenth and at zero (footnote 1 sets 0.02 per time unit; at the ages of an
overloaded farm that outweighs the deadline term: eq. (1) sums one Max-sized
share per machine a job may run on, 22 to 33 at most on the generated farms'
states, where anti-aging times age reaches about 96).

What to expect against the paper (measured at full size, 3 seeds): EDF has
fewer late jobs than every CS version up to Ta = 12 (Ta = 4: cs-i-p 69.1 %,
EDF 50.2 %; Ta = 8: 49.9 %, 16.4 %), the preemptive CS versions win only
at Ta = 20 (a quick run: the non-preemptive ones still trail EDF there,
6.2 % against 2.7 %).  The paper's figure 4 has CS ahead.  Almost all of the
difference is AA: deadline jobs under CS wait about 4,800 time units at Ta
= 4, so AA x age is near 96, and CS orders jobs by age like EASY and BF-rm
(late 63.8 % and 61.3 % at Ta = 8).  With AA = 0 (the ``aging=0`` arm) cs-i-p
has 50.6 % and 16.9 % late at Ta = 4 and 8, level with EDF, and fewer from
Ta = 12 on (1.5 % against 6.0 %).  (cs-i-p and its aging=0 arm measured
again, seeds 0-2, after IMFS took the paper's longest path tree; before,
69.8 % and 51.6 % at Ta = 4 and 8, the arm 51.4 %, 18.0 % and 1.7 %.  And
earlier, after preemptive CS passes ran at every ending with nothing
queued; before that, cs-i-p had 51.8 % at Ta = 8 and the arm 17.7 %.)  The paper does not say in which unit
AA's age is counted, nor how deadlines and licence requests are drawn
beyond "Deadline [25 - 150]" and "License needed by a job 20%" (ours:
slack over the estimate, each licence with probability 0.2; see
:mod:`epochbench.instances.farm`), so the rest cannot be settled from its
text.  CS gives the jobs without a deadline a lower slowdown than EDF at
every Ta (5.3 against 10.4 at Ta = 4).

A time limit can cut an exact step short: the table's ``unproven steps``
counts the steps whose solution was used unproven or replaced by the
heuristic's for want of one (over the repetitions; 0 for the heuristics),
``mkp left out`` the oracle epochs whose gap is not in ``mkp gap %``
(the oracle proved only a bound, or nothing).

``EPOCHBENCH_NO_EXACT=1`` in the environment leaves out the exact arm and
the per-epoch oracles (for a machine without the solvers).

``--quick``: 30 machines, 6 licenses, 150 jobs, Ta = 4, 10, 20 scaled by
150 / 30 to keep the load per machine, 1 repetition, scalability at n = 50,
150, 300 (well under 2 minutes on 2 cores).  Rows: one per run (``kind`` =
``run``) and one per timed pass (``kind`` = ``scale``).
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd

from . import Experiment, Options, register

TA = (4, 6, 8, 10, 12, 16, 20)
POLICIES = ("cs-i-p", "cs-i-np", "cs-ni-p", "cs-ni-np", "edf", "easy", "bf-rm", "bf-unrm")
#: sensitivity arms, ``policy:constant=value`` (:class:`epochbench.instances.farm.Constants`): the deadline
#: heuristic's f-bar as printed in the seed, and the anti-aging weight AA at a tenth and at zero
VARIANTS = ("cs-i-p:literal_fbar=1", "cs-i-p:aging=0.002", "cs-i-p:aging=0")
EXACT = "cs-ni-np-exact"
ORACLE_EVERY = 100
EXACT_SEEDS = 2
VARIANT_SEEDS = 5
FULL = {"jobs": 1500, "machines": 150, "licenses": 20}
QUICK = {"jobs": 150, "machines": 30, "licenses": 6}
SCALE_N = (100, 250, 500, 1000, 1500)
SCALE_POLICIES = ("cs-i-p", "cs-ni-p", "edf")


def tasks(opts: Options) -> list[dict]:
    size = QUICK if opts.quick else FULL
    seeds = opts.seeds if opts.seeds is not None else (1 if opts.quick else 20)
    tas = (4, 10, 20) if opts.quick else TA
    limit = 0.5 if opts.quick else 2.0
    exact = not os.environ.get("EPOCHBENCH_NO_EXACT")
    out = []
    for s in range(seeds):
        oracle = exact and s < (1 if opts.quick else EXACT_SEEDS)  # exact arm and per-epoch gaps: first repetitions
        arms = POLICIES + (VARIANTS if s < VARIANT_SEEDS else ()) + ((EXACT,) if oracle else ())
        for ta in tas:
            for p in arms:
                out.append({"kind": "run", "ta": ta, "policy": p, "seed": s, **size, "time_limit": limit,
                            "oracle_every": 0 if not oracle else 10 if opts.quick else ORACLE_EVERY})
    for n in ((50, 150, 300) if opts.quick else SCALE_N):
        for p in SCALE_POLICIES:
            out.append({"kind": "scale", "n": n, "policy": p, "seed": 0, "machines": size["machines"],
                        "licenses": size["licenses"], "repeats": 2 if opts.quick else 5})
    return out


def variant_constants(spec: str):
    """``"cs-i-p:aging=0.002,literal_fbar=1"`` -> the version's footnote-1
    constants with those fields replaced."""
    from epochbench.instances.farm import Constants

    name, _, over = spec.partition(":")
    return Constants.parse(over, preemptive=name.endswith("-p"))


#: the policies that have run once in this process (:func:`_warm_up`)
_WARMED: set = set()


def _policy(task: dict):
    """A fresh farm policy for ``task``'s ``policy`` name."""
    from epochbench.sim.farm_policies import make_farm_policy
    name = task["policy"]
    if name == EXACT:
        return make_farm_policy("cs-ni-np", matcher="hungarian", knapsack="cpsat",
                                exact_time_limit=task["time_limit"])
    if ":" in name:
        return make_farm_policy(name.split(":")[0], constants=variant_constants(name))
    if name.startswith("cs-"):
        return make_farm_policy(name, oracle_every=task["oracle_every"], exact_time_limit=task["time_limit"])
    return make_farm_policy(name)


def _warm_up(task: dict, scale: float) -> None:
    """Run the task's policy once on a stream of 30 jobs, untimed, the first
    time it runs in this process: its first plans load compiled kernels and
    solver modules (1.3-1.6 s, measured), which fig. 7's scheduling time
    must not count (the first run of each worker took it, and read slower
    than the others)."""
    if task["policy"] in _WARMED:
        return
    from epochbench.sim.farm import generate_stream, simulate_farm
    _WARMED.add(task["policy"])
    tiny = generate_stream(jobs=30, machines=task["machines"], licenses=task["licenses"],
                           interarrival=task["ta"] * scale, seed=[0, 0])
    simulate_farm(tiny, _policy(task))


def run(task: dict) -> list[dict]:
    """One simulation (``kind`` run) or the timing of one pass (``scale``)."""
    import time

    from epochbench.sim.farm import generate_stream, next_event_state, simulate_farm, snapshot
    from epochbench.sim.farm_policies import make_farm_policy

    if task["kind"] == "scale":
        from epochbench.instances.farm import generate_farm
        state = generate_farm(np.random.default_rng(task["seed"]), jobs=task["n"], machines=task["machines"],
                              licenses=task["licenses"], busy=0.5)
        pol = make_farm_policy(task["policy"])
        state = next_event_state(state, pol)  # the policy's own previous plan, as inside a run
        times = []
        for _ in range(task["repeats"] + 1):  # first call warms up (numba cache, imports)
            view = snapshot(state)
            pol.reset(view.stream)
            t0 = time.perf_counter()
            pol.plan(view)
            times.append(time.perf_counter() - t0)
        return [{**task, "ms": 1000 * float(np.median(times[1:]))}]
    scale = 150.0 / task["machines"]  # the paper's Ta is for 150 machines; keep the load per machine
    stream = generate_stream(jobs=task["jobs"], machines=task["machines"], licenses=task["licenses"],
                             interarrival=task["ta"] * scale, seed=[task["seed"], task["ta"]])
    _warm_up(task, scale)
    res = simulate_farm(stream, _policy(task))
    st = res.stats
    load = (res.series["queued"] + res.series["running"]).to_numpy()
    pick = np.linspace(0, len(load) - 1, 40).round().astype(int) if len(load) else []
    row = {**task, **res.metrics, "sim_seconds": res.seconds,
           "workload_series": " ".join(str(int(load[k])) for k in pick)}
    for key in ("mkp_gap", "match_gap", "match_card_gap"):
        g = np.asarray(st.get(key, []), dtype=float)
        row[f"{key}_mean"] = float(g.mean()) if g.size else np.nan
        row[f"{key}_max"] = float(g.max()) if g.size else np.nan
        row[f"{key}_n"] = int(g.size)
    row["knapsacks"] = st.get("knapsacks", 0)
    row["discarded"] = st.get("discarded", 0)
    for key in UNPROVEN_STEPS + ("mkp_oracle_unproven",):
        row[key] = int(st.get(key, 0))
    row["mkp_gap_vs_bound_n"] = len(st.get("mkp_gap_vs_bound", []))
    return [row]


#: the policy's steps that a time limit cut short (:mod:`epochbench.sim.farm_policies`):
#: the exact arm's solution used unproven, or its fallback to the heuristic when it had none
UNPROVEN_STEPS = ("knapsack_unproven", "knapsack_fallback", "match_unproven", "match_fallback")


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (Ta, policy): means over the repetitions of the fig. 4-7 figures
    and the per-epoch gaps; then the fig. 8 pass times (ta = 'n=...')."""
    runs = df[df["kind"] == "run"]
    cols = {"late_share": "late %", "slowdown_mean": "slowdown", "machine_usage": "machine use %",
            "license_usage": "license use %", "sched_ms_mean": "sched ms", "workload_mean": "workload",
            "preemptions": "preempt", "mkp_gap_mean": "mkp gap %", "match_gap_mean": "match gap %",
            "match_card_gap_mean": "card gap %"}
    runs = runs.assign(**{"unproven steps": runs.reindex(columns=list(UNPROVEN_STEPS), fill_value=0).sum(axis=1),
                          "mkp left out": runs.reindex(columns=["mkp_oracle_unproven", "mkp_gap_vs_bound_n"],
                                                       fill_value=0).sum(axis=1)})
    if runs.empty:    # only fig. 8's pass times (``--where kind=scale``): the run columns are absent
        out = pd.DataFrame(columns=["ta", "policy", "runs", *cols.values(), "unproven steps", "mkp left out"])
    else:
        g = runs.groupby(["ta", "policy"], sort=True)
        out = g.agg(runs=("seed", "size"), **{v: (k, "mean") for k, v in cols.items()},
                    **{c: (c, "sum") for c in ("unproven steps", "mkp left out")}).reset_index()
    for c in ("late %", "machine use %", "license use %", "mkp gap %", "match gap %", "card gap %"):
        out[c] = 100 * out[c]
    out["ta"] = out["ta"].astype(str)
    sc = df[df["kind"] == "scale"]
    if len(sc):
        s = sc.groupby(["n", "policy"], sort=True)["ms"].median().reset_index()
        s = pd.DataFrame({"ta": "n=" + s["n"].astype(int).astype(str), "policy": s["policy"], "runs": 1,
                          "sched ms": s["ms"]})
        out = pd.concat([out, s], ignore_index=True)
    return out.round(3)


def _styles(runs: pd.DataFrame) -> dict:
    """Style per policy: each its own colour and marker; the main policies
    solid with filled markers, the sensitivity and exact arms dashed with
    open markers (their label says how many repetitions they have when
    fewer than the main ones)."""
    from .plotting import styles

    seeds = runs.groupby("policy", sort=False)["seed"].nunique()
    order = [p for p in POLICIES if p in seeds.index] + [p for p in seeds.index if p not in POLICIES]
    look = styles(order)
    full = seeds.max()
    out = {}
    for pol in order:
        arm = ":" in pol or pol.endswith("-exact")
        k = seeds[pol]
        out[pol] = dict(**look[pol], ls="--" if arm else "-", lw=1.0 if arm else 1.3,
                        fillstyle="none" if arm else "full",
                        label=pol if k == full else f"{pol} ({k} reps)")
    return out


def plot(df: pd.DataFrame, path) -> None:
    """Figures 3-8 on one page: the workload of cs-i-p through the run per Ta
    (fig. 3, lines labelled in place), late jobs, slowdown, machine usage
    and scheduling time per pass against Ta (figs. 4-7: mean over the
    repetitions with a band of one standard deviation), one pass against the jobs in
    the system (fig. 8, median of the timed repeats).  One legend."""
    from .plotting import PAGE, curve, figure, interval_note, legend, mean_err, plain_ticks, save, style
    from .plotting import value_scale

    runs = df[df["kind"] == "run"]
    sc = df[df["kind"] == "scale"]
    style_of = _styles(runs)
    cols = ("late_share", "slowdown_mean", "machine_usage", "sched_ms_mean")
    m = mean_err(runs, ["policy", "ta"], list(cols)) if len(runs) else None
    with style():
        fig, axes = figure(2, 3, width=PAGE, height=4.9)
        ax = axes.ravel()
        _workload_panel(ax[0], runs)
        panels = (("late_share", 100, "late jobs (%)", "fig. 4: late jobs"),
                  ("slowdown_mean", 1, "mean slowdown (ratio)", "fig. 5: slowdown (no deadline)"),
                  ("machine_usage", 100, "machine usage (%)", "fig. 6: machine usage"),
                  ("sched_ms_mean", 1, "mean time per pass (ms, {scale})", "fig. 7: scheduling time"))
        for a, (col, scale, ylabel, title) in zip(ax[1:5], panels):
            if m is not None:
                for pol, g in m.groupby("policy", sort=False):
                    curve(a, g["ta"], scale * g[col], scale * g[f"{col}_err"], **style_of[pol])
            a.set(title=title, xlabel="mean inter-arrival Ta (time units)",
                  ylabel=ylabel.replace("{scale}", "log"))
            plain_ticks(a)
        if m is not None and len(m):
            value_scale(ax[4], m["sched_ms_mean"], label=panels[-1][2])
        for pol, g in sc.groupby("policy", sort=False):
            med = g.groupby("n")["ms"].median()
            kw = style_of.get(pol, {"label": pol})
            curve(ax[5], med.index, med.values, **kw)
        ax[5].set(title="fig. 8: one pass vs jobs", xlabel="jobs in the system")
        if len(sc):
            value_scale(ax[5], sc["ms"], label="time of one pass (ms, {scale})")
        plain_ticks(ax[5], "x")
        reps = m["reps"] if m is not None else [1]
        legend(fig, title=f"policy (figs. 4-7: {interval_note(reps, 'repetitions')}; "
                          "dashed: sensitivity and exact arms)")
        save(fig, path, "[capannini2007]: convergent scheduling vs EDF / EASY / flexible backfilling")


def _workload_panel(ax, runs: pd.DataFrame) -> None:
    """Fig. 3: jobs in the system through the run of cs-i-p (first
    repetition), one line per Ta (dark to green) labelled at its peak."""
    import matplotlib.pyplot as plt

    from .plotting import plain_ticks

    sel = runs[(runs["policy"] == "cs-i-p") & (runs["seed"] == runs["seed"].min())] if len(runs) else None
    tas = sorted(sel["ta"].unique()) if sel is not None else []     # none: fig. 8's pass times alone
    cmap = plt.get_cmap("viridis")
    for i, (ta, g) in enumerate(sel.groupby("ta") if sel is not None else ()):
        ser = np.array([int(x) for x in str(g["workload_series"].iloc[0]).split()], dtype=float)
        if not ser.size:
            continue
        x = np.linspace(0, 100, len(ser))
        color = cmap(0.7 * i / max(len(tas) - 1, 1))
        ax.plot(x, ser, color=color, lw=1.2)
        k = int(np.argmax(ser))
        ax.annotate(f"Ta = {ta:g}", (x[k], ser[k]), xytext=(3, 2), textcoords="offset points", color=color,
                    ha="left" if x[k] < 70 else "right", va="bottom")
    ax.set(title="fig. 3: workload (cs-i-p)", xlabel="simulation progress (% of events)", ylabel="jobs in the system")
    ax.margins(y=0.15)
    plain_ticks(ax)


register(Experiment("capannini", "[capannini2007] figs. 3-8: CS (4 versions) vs EDF, EASY, BF-rm, BF-unrm on a farm",
                    tasks, run, table, plot, timing=True))
