"""Mapping experiments ([vadhiyar-notes] ETC mapping):

``epochbench experiment braun``: every mapping method on the 12 Braun et al.
2001 ETC matrices (512 tasks x 16 machines): the greedy rules once, GA / SA /
tabu over several seeds (default 5; ``--seeds``), the exact models with a
time limit (30 s, 1 thread).  Gaps: to the LP bound (our LP relaxation,
rigorous through its duals; it equals REFERENCE.csv's HiGHS figure) and to
the best makespan known ([gogos2016], REFERENCE.csv).  ``--quick``
(93 s measured on a loaded 2-core machine; the full run took 19.5 min): 2
seeds, GA 100 generations, exact methods 1 s; the table's ``budget``
column says which.  Needs ``data_root()/braun``.

``epochbench experiment mapping-exact``: the exact models (CP-SAT, HiGHS,
CBC and the branch-and-price ``bnp``) on generated Braun-range instances of
32 x 4 and 64 x 8 (one per class, 12 classes, seed 1), 30 s each, 1
thread: how many are proven optimal (per method and by any) and how fast,
and every heuristic's gap to the proven optimum (to the best bound where
none is proven; ``unproven`` counts those).  ``--quick``: 32 x 4 only.

Both are timing experiments (one process at a time).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from . import Experiment, Options, register

GREEDY = ("olb", "uda", "mct", "minmin", "maxmin", "sufferage", "duplex")
META = ("ga", "sa", "tabu")
EXACT = ("cpsat", "milp-highs", "milp-cbc")
#: mapping-exact also runs the branch-and-price on the configuration LP (exact/mapping.py)
EXACT_GEN = EXACT + ("bnp",)
ORDER = GREEDY + META + EXACT
#: [braun2001]'s finding on these twelve matrices (its conclusions, not a
#: seed's: GA gave the best mappings, Min-Min came next, SA and tabu fell
#: behind Min-Min); the other methods here: no claim made
BRAUN_RANK = {"ga": "1 (best)", "minmin": "2", "sa": "behind Min-Min", "tabu": "behind Min-Min"}


def _budget(quick: bool) -> dict:
    return {"ga": {"max_iter": 100} if quick else {}, "exact_s": 1.0 if quick else 30.0}


@lru_cache(maxsize=16)
def _braun(name: str):
    from epochbench.instances.mapping import braun_family
    return braun_family(names=name)[0]


@lru_cache(maxsize=16)
def _lp(name: str) -> float:
    from epochbench.exact.mapping import lp_bound
    return lp_bound(_braun(name))


def braun_tasks(opts: Options) -> list[dict]:
    from epochbench.instances.mapping import BRAUN_NAMES
    seeds = opts.seeds if opts.seeds is not None else (2 if opts.quick else 5)
    out = []
    for name in BRAUN_NAMES:
        for m in ORDER:
            for s in (range(seeds) if m in META else [None]):
                out.append({"instance": name, "method": m, "seed": s, "quick": opts.quick})
    return out


def _solve(inst, method: str, seed, quick: bool):
    from epochbench.instances.registry import get, solve
    b = _budget(quick)
    if get("mapping", method).exact:
        return solve(inst, method, time_limit=b["exact_s"], threads=1)
    params = {"seed": seed} if method in META else {}
    params.update(b.get(method, {}))
    solve(MINI, method, **params)  # untimed warm-up: numba kernels load from their cache
    return solve(inst, method, **params)


def braun_run(task: dict) -> list[dict]:
    inst = _braun(task["instance"])
    r = _solve(inst, task["method"], task["seed"], task["quick"])
    ref = inst.meta.get("reference", {})
    lp = _lp(task["instance"])
    best = ref.get("best_known", np.nan)
    return [{"instance": inst.name, "method": task["method"], "seed": task["seed"], "makespan": r.value,
             "bound": r.bound, "status": r.status, "seconds": r.seconds, "lp_bound": lp,
             "lp_reference": ref.get("lp_bound", np.nan), "best_known": best,
             "gap_lp": (r.value - lp) / lp, "gap_best": (r.value - best) / best,
             "budget": _budget_label(task["method"], task["quick"])}]


def _budget_label(method: str, quick: bool) -> str:
    if method == "ga":
        return "100 gen." if quick else "1000 gen./150"
    if method in EXACT:
        return f"{_budget(quick)['exact_s']:g} s"
    if method in META:
        return "default"
    return "-"


def braun_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per method: mean gap to the LP bound and to the best known over the 12
    matrices (metaheuristics: mean over seeds, and the best seed per matrix),
    instances where the method beats Min-Min (empty when the rows hold no
    Min-Min run: a subset, ``--where method=ga``), mean seconds, the matrices an
    exact method proved optimal within its budget (``proven``; none of the
    heuristics proves anything: empty), our rank and Braun et al.'s rank."""
    per = df.groupby(["method", "instance"], sort=False)
    mean = per[["gap_lp", "gap_best", "seconds"]].mean()
    best = per[["gap_lp", "gap_best"]].min()
    mm = df[df["method"] == "minmin"].set_index("instance")["makespan"]
    rows = []
    for m in dict.fromkeys(df["method"]):
        g, b = mean.loc[m], best.loc[m]
        ms = df[df["method"] == m].groupby("instance")["makespan"].mean()
        rows.append({"method": m, "runs": int((df["method"] == m).sum()),
                     "seeds": int(df.loc[df["method"] == m, "seed"].nunique()) if m in META else 1,
                     "gap_lp_mean": g["gap_lp"].mean(), "gap_best_mean": g["gap_best"].mean(),
                     "gap_best_bestseed": b["gap_best"].mean(), "gap_best_max": g["gap_best"].max(),
                     "beats_minmin": int((ms < mm.reindex(ms.index) * (1 - 1e-12)).sum()) if len(mm)
                     else np.nan,                               # Min-Min not run (a subset): no count
                     "seconds_mean": g["seconds"].mean(),
                     "proven": int((df.loc[df["method"] == m, "status"] == "optimal").sum()) if m in EXACT
                     else np.nan,
                     "budget": df.loc[df["method"] == m, "budget"].iloc[0]})
    out = pd.DataFrame(rows).sort_values("gap_best_mean", kind="stable").reset_index(drop=True)
    out.insert(1, "rank", np.arange(1, len(out) + 1))
    out["braun_2001"] = out["method"].map(BRAUN_RANK).fillna("")
    return out


KIND_LABEL = {"greedy": "greedy rule", "meta": "metaheuristic", "exact": "exact model"}


def _kind(method: str) -> str:
    """``exact``, ``meta`` or ``greedy``: the mark of ``method`` in the figures."""
    return "exact" if method in EXACT_GEN else "meta" if method in META else "greedy"


def braun_plot(df: pd.DataFrame, path) -> None:
    """Mean makespan gap to the best known (%, log) per method, best at the
    top, one point each (no bars on a log axis): the mean over the 12
    matrices; metaheuristics: the mean over seeds of each seed's mean, with
    one standard deviation over seeds.  Colour and marker per kind of
    method, the budget in the legend; one column wide."""
    from .plotting import COLUMN, PALETTE, figure, interval_note, legend, mean_err, points, proxy, save, style
    from .plotting import value_scale

    per_seed = (df.assign(seed=df["seed"].fillna(-1), gap=100 * df["gap_best"])
                .groupby(["method", "seed"], sort=False)["gap"].mean().reset_index())
    m = mean_err(per_seed, ["method"], ["gap"]).sort_values("gap", ascending=False, kind="stable")
    look = {"greedy": dict(color="0.45", marker="o"), "meta": dict(color=PALETTE[0], marker="s"),
            "exact": dict(color=PALETTE[1], marker="D")}
    y = np.arange(len(m))
    with style():
        # at least 2 inches: a subset of 2 methods (--tasks 0:2) left its axes no room, and
        # matplotlib warned that it laid nothing out
        fig, axes = figure(1, 1, width=COLUMN, height=max(2.0, 0.9 + 0.17 * len(m)))
        ax = axes[0][0]
        for kind in look:
            sel = (m["method"].map(_kind) == kind).to_numpy()
            if sel.any():
                g = m[sel]
                points(ax, g["gap"], y[sel], g["gap"] - g["gap_err"], g["gap"] + g["gap_err"], horizontal=True,
                       capsize=2, **look[kind])
        value_scale(ax, m["gap"], axis="x", label="mean makespan gap to best known (%, {scale})")
        ax.set_yticks(y, m["method"])
        ax.set_ylim(-0.6, len(m) - 0.4)
        ax.grid(False, axis="y")
        ax.set_ylabel("method")
        budgets = df.drop_duplicates("method").set_index("method")["budget"]
        ex = next((budgets[x] for x in EXACT if x in budgets), "")
        ga = budgets.get("ga", "")
        words = {"greedy": KIND_LABEL["greedy"], "meta": f"{KIND_LABEL['meta']} (GA {ga})" if ga else
                 KIND_LABEL["meta"], "exact": f"{KIND_LABEL['exact']} ({ex} limit)" if ex else KIND_LABEL["exact"]}
        handles = [proxy(words[k], ls="none", **look[k]) for k in look if (m["method"].map(_kind) == k).any()]
        reps = m.loc[m["method"].isin(META), "reps"]
        legend(fig, handles, ncol=1, title=f"metaheuristics: {interval_note(reps)}")
        save(fig, path, "[braun2001] ETC matrices (512 x 16): makespan gap per method")


# ---- exact proofs on generated instances -----------------------------------------------------
SIZES = ((32, 4), (64, 8))


def exact_tasks(opts: Options) -> list[dict]:
    from epochbench.instances.mapping import BRAUN_NAMES
    sizes = SIZES[:1] if opts.quick else SIZES
    seeds = opts.seeds if opts.seeds is not None else 1
    return [{"tasks": t, "machines": m, "cls": name, "seed": s, "time_limit": 30.0}
            for t, m in sizes for name in BRAUN_NAMES for s in range(1, seeds + 1)]


def exact_run(task: dict) -> list[dict]:
    """One generated instance (class ``cls``): every exact method with the
    time limit, every heuristic (metaheuristics seed 0, default budgets)."""
    from epochbench.instances.mapping import braun_range
    from epochbench.instances.registry import get, solve
    c, th, mh = task["cls"][2], task["cls"][4:6], task["cls"][6:8]
    (inst,) = braun_range(tasks=task["tasks"], machines=task["machines"], task_het=th, machine_het=mh,
                          consistency=c, seed=task["seed"])
    rows = []
    for m in EXACT_GEN + GREEDY + META:
        exact = get("mapping", m).exact
        if not exact:
            solve(MINI, m)  # warm-up
        r = solve(inst, m, **({"time_limit": task["time_limit"], "threads": 1} if exact else {}))
        rows.append({"size": f"{task['tasks']}x{task['machines']}", "class": task["cls"][2:8],
                     "instance": inst.name, "method": m, "kind": "exact" if exact else "heuristic",
                     "value": r.value, "bound": r.bound, "status": r.status, "seconds": r.seconds})
    return rows


def exact_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (size, method): proven count and time (exact methods); mean and
    max gap to the optimum (or best bound) for every method.  Per size, a
    row ``any exact``: instances proven by at least one exact method and
    the fastest proof's time (a size that none proved: ``proven`` 0, no
    time); ``conflicts`` counts instances where two
    proofs disagree on the optimum (relative 1e-6)."""
    ref = {}
    for inst, g in df.groupby("instance"):
        opt = g.loc[g["status"] == "optimal", "value"]
        ref[inst] = (float(opt.min()), True) if len(opt) else (float(g["bound"].dropna().max()), False)
    df = df.assign(ref=df["instance"].map(lambda i: ref[i][0]),
                   proven_ref=df["instance"].map(lambda i: ref[i][1]))
    df["gap"] = (df["value"] - df["ref"]) / df["ref"]
    rows = []
    for (size, m), g in df.groupby(["size", "method"], sort=False):
        ex = g["kind"].iloc[0] == "exact"
        rows.append({"size": size, "method": m, "instances": len(g),
                     "proven": int((g["status"] == "optimal").sum()) if ex else None,
                     "median_s": float(g["seconds"].median()), "max_s": float(g["seconds"].max()),
                     "mean_gap": g["gap"].mean(), "max_gap": g["gap"].max(),
                     "unproven": int((~g["proven_ref"]).sum())})
    proofs = df[(df["kind"] == "exact") & (df["status"] == "optimal")]
    for size in dict.fromkeys(df.loc[df["kind"] == "exact", "size"]):   # a size no method proved: proven 0
        per = proofs[proofs["size"] == size].groupby("instance")
        fastest = per["seconds"].min()
        spread = (per["value"].max() - per["value"].min()) / per["value"].min()
        rows.append({"size": size, "method": "any exact", "instances": int(df.loc[df["size"] == size,
                                                                                  "instance"].nunique()),
                     "proven": len(fastest), "median_s": float(fastest.median()) if len(fastest) else np.nan,
                     "max_s": float(fastest.max()) if len(fastest) else np.nan,
                     "conflicts": int((spread > 1e-6).sum())})
    return pd.DataFrame(rows)


def exact_plot(df: pd.DataFrame, path) -> None:
    """Left: every method's mean gap to the optimum (%, linear: the exact
    methods' zeros stay at zero), a point per size, bar: smallest to largest
    gap over the instances.  Right: the exact methods' median solve time
    (s, log), bar: fastest to slowest, with ``proven/instances`` written
    next to it.  Colour and marker per size; one legend."""
    from .plotting import PAGE, dodge, legend, mosaic, plain_ticks, points, save, style, styles, value_scale

    t = exact_table(df)
    t = t[t["method"] != "any exact"]
    ref = t.set_index(["size", "method"])
    gaps = df.assign(ref=df["instance"].map(_references(df)))
    gaps["gap"] = 100 * (gaps["value"] - gaps["ref"]) / gaps["ref"]
    rng = gaps.groupby(["size", "method"], sort=False)["gap"].agg(["min", "max"])
    sizes = list(dict.fromkeys(t["size"]))
    methods = list(dict.fromkeys(t["method"]))
    exact = [m for m in methods if m in EXACT_GEN]
    look = styles(sizes)
    with style():
        rest = max(len(methods) - len(exact), 1)
        fig, ax = mosaic([["gap", "time"], ["gap", "."]], width=PAGE, height=1.3 + 0.17 * len(methods),
                         width_ratios=[1.25, 1], height_ratios=[1.5 * len(exact) + 1.2, rest])
        a, b = ax["gap"], ax["time"]
        y = np.arange(len(methods))[::-1]
        ye = np.arange(len(exact))[::-1]
        for k, size in enumerate(sizes):
            off = -dodge(k, len(sizes), 0.55)          # the first size on top
            r = rng.reindex([(size, m) for m in methods])
            g = ref.reindex([(size, m) for m in methods])
            points(a, 100 * g["mean_gap"], y + off, r["min"], r["max"], horizontal=True, capsize=2,
                   label=size, **look[size])
            s = gaps[(gaps["size"] == size) & gaps["method"].isin(exact)].groupby("method")["seconds"]
            s = s.agg(["min", "median", "max"]).reindex(exact)
            points(b, s["median"], ye + off, s["min"], s["max"], horizontal=True, capsize=2, **look[size])
        for yy, m in zip(ye, exact):
            counts = [f"{int(ref.loc[(z, m), 'proven'])}/{int(ref.loc[(z, m), 'instances'])}" for z in sizes
                      if (z, m) in ref.index]
            b.text(0.99, yy, ", ".join(counts), ha="right", va="center", transform=b.get_yaxis_transform())
        a.set_yticks(y, methods)
        b.set_yticks(ye, exact)
        a.set_ylim(-0.6, len(methods) - 0.4)
        b.set_ylim(-0.6, len(exact) - 0.4)
        a.set_xlim(left=min(0.0, a.get_xlim()[0]))
        plain_ticks(a, "x")
        value_scale(b, gaps.loc[gaps["method"].isin(exact), "seconds"], axis="x",
                    label="median solve time (s, {scale})")
        b.set_xlim(right=b.get_xlim()[1] * 30)      # room for the proven counts at the right
        for ax in (a, b):
            ax.grid(False, axis="y")
            ax.set_ylabel("method")
        a.set_xlabel("mean gap to the optimum (%)")
        a.set_title("every method")
        b.set_title("exact methods (text: proven / instances)")
        legend(fig, title="instance size (tasks x machines), 12 classes each; "
                          "point: mean gap or median time, bar: range over the instances")
        save(fig, path, "generated Braun-range instances: gap to the proven optimum and proof times")


def _references(df: pd.DataFrame) -> dict:
    """instance -> the value the gaps of :func:`exact_table` are against
    (the best proven optimum, else the best bound)."""
    out = {}
    for inst, g in df.groupby("instance"):
        opt = g.loc[g["status"] == "optimal", "value"]
        out[inst] = float(opt.min()) if len(opt) else float(g["bound"].dropna().max())
    return out


def _mini():
    from epochbench.instances.mapping import MappingInstance
    return MappingInstance.build([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]], meta={"name": "warm-up"})


MINI = _mini()

def _braun_files() -> tuple[str, ...]:
    """The files the braun experiment reads: the 12 matrices and their reference values."""
    from epochbench.instances.mapping import BRAUN_NAMES, REFERENCE_CSV
    return (*(f"braun/{name}" for name in BRAUN_NAMES), f"braun/{REFERENCE_CSV}")


register(Experiment("braun", "[vadhiyar-notes] ETC mapping: every method on the 12 [braun2001] matrices",
                    braun_tasks, braun_run, braun_table, braun_plot, timing=True, data=_braun_files()))
register(Experiment("mapping-exact", "[vadhiyar-notes] ETC mapping: exact proofs on generated 32x4 / 64x8, heuristic gaps",
                    exact_tasks, exact_run, exact_table, exact_plot, timing=True))
