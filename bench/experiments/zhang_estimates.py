"""``zhang-estimates``: average bounded slowdown and wait against utilization
under backfilling for several degrees of overestimation, Omega model and Phi
model ([zhang-comparative] section 4, figures 6 and 7).

Same streams as ``zhang-queues`` (:func:`.zhang_queues.zhang_stream`:
lublin03 on 320 nodes, 10,000 jobs, offered load 0.55 x runtime factor 1.0
.. 1.8; see that module for the workload choice), each with the estimates
of [zhang-comparative] section 2.1: perfect (Omega = 0, which is Phi = 1), Omega model
(estimate = runtime x U[1, 1 + Omega]) for Omega in :data:`OMEGAS`, Phi model
(a share Phi of the jobs ends exactly at its estimate, runtime / estimate
uniform on (0, 1] for the others) for Phi in :data:`PHIS`.  The text of seed
004 names only Omega = 3 and Phi = 0.2 (figure 8) and the perfect case, all
run here; the other values are our choice, spread from mild to heavy
overestimation.  The
estimates change only what the scheduler believes; the jobs and their
execution times are the same for every setting (common random numbers).

Policy: conservative backfilling in FCFS order ([zhang-comparative] sections 1 and 4:
"a job selected out of order completes before the jobs that are ahead of it
in the priority queue are scheduled to start"; reservations compressed on
early terminations), the compiled fast path of :mod:`epochbench.sim.policies`.
``zhang-gang``'s BF is the same policy; ``zhang-queues`` runs ``fcfs-bf``,
which plans the queue afresh at every event instead of compressing the
reservations (the paper's "for that particular schedule" can be read
either way): with exact estimates the two are the same, with Phi = 0.2
they differ (a 400-job stream at factor 1.8: mean bounded slowdown 17.4
here, 69.7 under fcfs-bf), so figure 5(c)'s FCFS curve and these are not
one rule.

Table per (model, value, runtime factor): means over seeds of offered load,
utilization (eq. 1), mean wait, mean bounded slowdown (Gamma = 10 s), and the
wait and slowdown relative to perfect estimates at the same factor (seed
004: overestimation barely matters; up to rho = 0.90 it lowers the slowdown
by ~20 %).  The perfect runs appear in both blocks (Omega = 0, Phi = 1).

``zhang-estimates-he``: the same on the hyper-Erlang model fitted to KTH SP2
(100 nodes; :func:`.zhang_queues.zhang_stream` with ``workload_model=
"hypererlang"``, [zhang-comparative] section 2.1's kind of workload).

What to expect against the paper (measured, 10,000 jobs, 3 seeds).  Seed
004 says, figure by figure: Omega lowers the slowdown by about 20 % up to
rho = 0.90 (fig. 6a) and changes the wait negligibly up to 0.85 (fig. 6b);
Phi has very little impact, more accurate estimates helping the wait a
little (fig. 7).  On lublin03 every load of the sweep is what the paper
calls very high (bounded slowdown 157 with perfect estimates at rho 0.54,
the paper's table 1 has 2.5 to 3.9 at 0.55): overestimation lowers the
wait by 5 to 46 % with Phi (rho 0.54 to 0.83) and by 10 to 22 % with
Omega (rho 0.54), noisy from seed to seed.  On the hyper-Erlang arm, the paper's regime (slowdown 4.4
at 0.54), Phi changes the wait by 1 to 3 % at 0.54 and the slowdown gain
is 10 to 25 % up to 0.75, as the paper says; but the wait still falls by
12 to 35 % with Omega at 0.65 to 0.76, and Phi's sign is the opposite of
fig. 7's.  The paper gives no numbers for those curves nor its
backfilling's handling of early ends (ours compresses in queue order,
never later), so the rest cannot be settled from its text.

Default 5 seeds (``--seeds``); ``--quick``: 5,000 jobs, factors 1.0 / 1.3 /
1.6 / 1.8, 1 seed.  Cost: 10 settings x 9 factors x seeds runs of well under
a second each (fast path; generating the stream dominates).
"""
from __future__ import annotations

import pandas as pd

from . import Experiment, Options, register
from .zhang_queues import FACTORS, JOBS, QUICK_FACTORS, estimate_label, simulate_row, zhang_stream

POLICY = "conservative"
OMEGAS = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)      # 3: the paper's figure 8
PHIS = (0.2, 0.4, 0.6, 0.8)
SETTINGS = (("perfect", None),) + tuple(("omega", o) for o in OMEGAS) + tuple(("phi", p) for p in PHIS)
QUICK_JOBS = 5_000


def tasks(opts: Options, workload_model: str = "lublin03") -> list[dict]:
    seeds = opts.seeds if opts.seeds is not None else (1 if opts.quick else 5)
    jobs = QUICK_JOBS if opts.quick else JOBS
    factors = QUICK_FACTORS if opts.quick else FACTORS
    arm = {} if workload_model == "lublin03" else {"workload": workload_model}
    return [{"est_model": m, "est_value": v, "runtime_factor": f, "seed": s, "jobs": jobs, **arm}
            for f in factors for m, v in SETTINGS for s in range(seeds)]


def tasks_he(opts: Options) -> list[dict]:
    """:func:`tasks` of the hyper-Erlang arm (``zhang-estimates-he``)."""
    return tasks(opts, "hypererlang")


def run(task: dict) -> list[dict]:
    """One stream with one estimate setting under conservative backfilling: one tidy row."""
    from epochbench.instances.workloads import stream_stats

    arm = task.get("workload", "lublin03")
    stream, wl = zhang_stream(task["jobs"], task["seed"], task["runtime_factor"], task["est_model"],
                              task["est_value"], arm)
    st = stream_stats(stream.jobs)
    return [{"policy": POLICY, "estimates": estimate_label(task["est_model"], task["est_value"]),
             "est_model": task["est_model"], "est_value": task["est_value"],
             "runtime_factor": task["runtime_factor"], "seed": task["seed"], "jobs": task["jobs"],
             "nodes": int(wl.capacity[0]), **({} if arm == "lublin03" else {"workload": arm}),
             "offered_load": stream.meta["offered_load"],
             "overestimate_mean": st["overestimate_mean"], "exact_share": st["exact_share"],
             **simulate_row(wl, POLICY)}]


def _blocks(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with ``model`` / ``value`` for the two figures: the perfect runs
    go into both (Omega = 0 and Phi = 1)."""
    perfect = df[df["est_model"] == "perfect"]
    parts = [df[df["est_model"] != "perfect"].assign(model=lambda d: d["est_model"],
                                                     value=lambda d: d["est_value"].astype(float))]
    parts.append(perfect.assign(model="omega", value=0.0))
    parts.append(perfect.assign(model="phi", value=1.0))
    return pd.concat(parts, ignore_index=True)


def table(df: pd.DataFrame) -> pd.DataFrame:
    """[zhang-comparative] figures 6 (Omega) and 7 (Phi) as numbers; see the module docstring."""
    b = _blocks(df)
    g = b.groupby(["model", "value", "runtime_factor"])
    out = g[["offered_load", "utilization", "wait_mean", "bsld_mean"]].mean()
    out.insert(0, "runs", g.size())
    out = out.reset_index()
    ref = out[((out["model"] == "omega") & (out["value"] == 0.0))].set_index("runtime_factor")
    out["wait_vs_perfect"] = out["wait_mean"] / out["runtime_factor"].map(ref["wait_mean"])
    out["bsld_vs_perfect"] = out["bsld_mean"] / out["runtime_factor"].map(ref["bsld_mean"])
    out = out.sort_values(["model", "runtime_factor", "value"], ascending=[False, True, True], kind="stable")
    out = out.rename(columns={"runtime_factor": "factor", "offered_load": "offered", "utilization": "util",
                              "wait_mean": "wait_s", "bsld_mean": "bsld"})
    return out.reset_index(drop=True)


def plot(df: pd.DataFrame, path) -> None:
    """[zhang-comparative] figures 6 (Omega, top row) and 7 (Phi, bottom
    row): mean bounded slowdown and mean wait (h) against the utilization
    reached (points joined in the order of increasing load), one line per
    overestimation setting: colours from light (mild) to dark (heavy) and a
    marker each, perfect estimates thick black; mean over seeds with one
    standard deviation of the y value.  One legend per row (its settings,
    and what the bands are)."""
    from .plotting import PAGE, curve, figure, interval_note, mean_err, plain_ticks, save, style

    b = _blocks(df)
    m = mean_err(b, ["model", "value", "runtime_factor"], ["utilization", "wait_mean", "bsld_mean"])
    names = {"omega": "Omega", "phi": "Phi"}
    note = interval_note(m["reps"]).replace(" over", "\nover").replace(": no", ":\nno")
    with style():
        fig, axes = figure(2, 2, width=PAGE, panel=2.4)
        for row, model in enumerate(("omega", "phi")):
            sub = m[m["model"] == model]
            look = _setting_styles(model, sorted(sub["value"].unique()))
            for value, s in sub.groupby("value"):
                s = s.sort_values("runtime_factor")
                st = look[value]
                curve(axes[row][0], s["utilization"], s["bsld_mean"], s["bsld_mean_err"], sort=False, **st)
                curve(axes[row][1], s["utilization"], s["wait_mean"] / 3600, s["wait_mean_err"] / 3600,
                      sort=False, **{**st, "label": None})
            fig_no = 6 if model == "omega" else 7
            axes[row][0].set_ylabel("mean bounded slowdown (ratio)")
            axes[row][1].set_ylabel("mean wait (h)")
            axes[row][0].set_title(f"fig. {fig_no}(a): slowdown, {names[model]} model")
            axes[row][1].set_title(f"fig. {fig_no}(b): wait, {names[model]} model")
            for ax in axes[row]:
                ax.set_xlabel("utilization rho (fraction)")
                plain_ticks(ax)
                plain_ticks(ax, "x")
            axes[row][1].legend(*axes[row][0].get_legend_handles_labels(), loc="center left",
                                bbox_to_anchor=(1.02, 0.5), title=f"{names[model]} model\n{note}")
        arm = df["workload"].iloc[0] if "workload" in df else "lublin03"
        save(fig, path, f"[zhang-comparative] figs. 6-7: overestimation under conservative backfilling ({arm}, "
                        f"{int(df['nodes'].iloc[0])} nodes)")


def _setting_styles(model: str, values) -> dict:
    """value -> line style of one overestimation setting: perfect (Omega =
    0, Phi = 1) thick black, the others a colour from light (mild
    overestimation) to dark (heavy) and a marker each."""
    import matplotlib.pyplot as plt

    from .plotting import MARKERS

    perfect = 0.0 if model == "omega" else 1.0
    others = [v for v in values if v != perfect]
    heavy = sorted(others, reverse=model == "phi")        # mild to heavy: Omega up, Phi down
    cmap = plt.get_cmap("plasma")
    name = "Omega" if model == "omega" else "Phi"
    out = {}
    for i, v in enumerate(heavy):
        out[v] = dict(color=cmap(0.75 - 0.65 * i / max(len(heavy) - 1, 1)), marker=MARKERS[1 + i % 11], lw=1.1,
                      label=f"{name} = {v:g}")
    if perfect in values:
        out[perfect] = dict(color="k", marker="o", lw=2.0, label=f"{name} = {perfect:g} (perfect)")
    return out


register(Experiment("zhang-estimates", "[zhang-comparative] figs. 6-7: slowdown and wait vs utilization for Omega and Phi "
                                       "overestimation (conservative backfilling)", tasks, run, table, plot))
register(Experiment("zhang-estimates-he", "zhang-estimates on the hyper-Erlang model fitted to KTH SP2 ([zhang-comparative] "
                                          "section 2.1; 100 nodes)", tasks_he, run, table, plot))
