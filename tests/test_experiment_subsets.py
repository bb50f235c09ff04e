"""Tables and figures of a subset of an experiment's tasks (``--tasks``,
``--where``): rows of one kind only, or without the method another row is
compared with.  Each case is a row set the experiment's own ``run`` writes
for such a subset (a review of the tables on degenerate rows found each one
failing or dropping a group)."""
import matplotlib
import numpy as np
import pandas as pd

from epochbench.experiments import load_experiments

matplotlib.use("Agg")
EXPERIMENTS = load_experiments()


def _scale_row(n, ms):
    # a fig. 8 task's row (capannini's run for kind "scale": the task and the pass time)
    return {"kind": "scale", "n": n, "policy": "edf", "seed": 0, "machines": 30, "licenses": 6, "repeats": 2,
            "ms": ms}


def test_capannini_with_the_pass_times_alone(tmp_path):
    """``--where kind=scale``: the table holds the fig. 8 rows and the figure
    draws its panel (both raised KeyError 'ta')."""
    df = pd.DataFrame([_scale_row(50, 0.3), _scale_row(50, 0.5), _scale_row(100, 0.9)])
    exp = EXPERIMENTS["capannini"]
    t = exp.table(df)
    assert list(t["ta"]) == ["n=50", "n=100"] and list(t["sched ms"]) == [0.4, 0.9]
    assert {"late %", "unproven steps", "mkp left out"} <= set(t.columns)
    exp.plot(df, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 0


def _gang_row(config, discrete):
    metrics = ("utilization", "capacity_loss", "wait_mean", "wait_std", "bsld_mean", "bsld_std", "response_mean",
               "small_wait_mean", "large_wait_mean", "small_bsld_mean", "large_bsld_mean", "makespan")
    return {"stream": "lublin03", "config": config, "policy": "bgs", "mpl": 5, "overhead": 0.0, "discrete": discrete,
            "point": 0.6, "seed": 0, "jobs": 2000, "nodes": 320, "offered_load": 0.3, **{k: 0.5 for k in metrics},
            "capacity_loss_switch": 0.0, "capacity_loss_migration": 0.0, "migrations": 0, "migrated_tasks": 0,
            "gap_schedule": 0.1, "gap_fill": 0.0, "gap_epochs": 60, "gap_unproven": 0, "gap_optimal_share": 0.5,
            "sim_seconds": 1.0, "passes": 5}


def test_zhang_gang_with_discrete_configurations_alone(tmp_path):
    """``--where discrete=True``: no continuous configuration, so no panel of
    figs. 15, 17, 20 (a figure of 0 columns raised ValueError); the figure of
    the discrete ones (fig. 21, ``-extra``) is still drawn."""
    df = pd.DataFrame([_gang_row("BGS-5 (d)", True)])
    exp = EXPERIMENTS["zhang-gang"]
    assert len(exp.table(df))
    exp.plot(df, tmp_path / "g.png")
    assert not (tmp_path / "g.png").exists() and (tmp_path / "g-extra.png").stat().st_size > 0


def _mapping_row(size, instance, method, kind, value, bound, status):
    return {"size": size, "instance": instance, "method": method, "kind": kind, "value": value, "bound": bound,
            "status": status, "seconds": 1.0, "class": "u_c_hihi"}


def test_mapping_exact_says_a_size_that_no_method_proved():
    """A size where every exact method ran out of time keeps its ``any
    exact`` row, proven 0 and no time (it was left out; with no proof at
    all, the ``conflicts`` column was missing too)."""
    rows = [_mapping_row("32x4", "a", "cpsat", "exact", 10.0, 10.0, "optimal"),
            _mapping_row("32x4", "a", "minmin", "heuristic", 11.0, None, "feasible"),
            _mapping_row("64x8", "b", "cpsat", "exact", 20.0, 18.0, "feasible"),
            _mapping_row("64x8", "b", "milp-highs", "exact", 20.5, 17.0, "feasible"),
            _mapping_row("64x8", "b", "minmin", "heuristic", 22.0, None, "feasible")]
    exp = EXPERIMENTS["mapping-exact"]
    t = exp.table(pd.DataFrame(rows)).set_index(["size", "method"])
    assert t.loc[("32x4", "any exact"), "proven"] == 1 and t.loc[("32x4", "any exact"), "median_s"] == 1.0
    none = t.loc[("64x8", "any exact")]
    assert none["proven"] == 0 and none["instances"] == 1 and np.isnan(none["median_s"]) and none["conflicts"] == 0
    alone = exp.table(pd.DataFrame(rows[2:])).set_index(["size", "method"])
    assert alone.loc[("64x8", "any exact"), "proven"] == 0 and "conflicts" in alone.columns


def test_braun_without_min_min_counts_no_wins_over_it():
    """Rows without a Min-Min run (``--where method=ga``): ``beats_minmin``
    is empty, not 0 for every method; with Min-Min it counts as before."""
    exp = EXPERIMENTS["braun"]

    def row(method, instance, makespan, seed=0):
        return {"method": method, "instance": instance, "seed": seed, "makespan": makespan, "gap_lp": 0.1,
                "gap_best": 0.05, "seconds": 0.5, "status": "feasible", "budget": "1 s"}

    rows = [row("ga", "u_c_hihi", 90.0), row("mct", "u_c_hihi", 120.0)]
    t = exp.table(pd.DataFrame(rows)).set_index("method")
    assert t["beats_minmin"].isna().all()
    t = exp.table(pd.DataFrame(rows + [row("minmin", "u_c_hihi", 100.0)])).set_index("method")
    assert (t.loc["ga", "beats_minmin"], t.loc["mct", "beats_minmin"], t.loc["minmin", "beats_minmin"]) == (1, 0, 0)
