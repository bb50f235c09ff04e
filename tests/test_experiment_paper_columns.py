"""The paper columns next to ours: ``capannini-mkp`` ([capannini2007] table 1),
``rajaei`` ([rajaei-dadfar] tables 5 and 6) and the explicit out-of-sweep cells of the
``zhang-gang`` ``rho@sld*`` columns.  The runs are cut-down quick-mode tasks."""
import math

import numpy as np
import pandas as pd
import pytest

from epochbench.experiments import Options
from epochbench.experiments import capannini_mkp as mkp
from epochbench.experiments import rajaei as rj
from epochbench.experiments import zhang_gang as zg


# ---- capannini-mkp: [capannini2007] table 1 ------------------------------------------------------------
@pytest.fixture(scope="module")
def mkp_table():
    quick = [t for t in mkp.tasks(Options(quick=True)) if t["seed"] == 0]    # one stream per license ratio
    assert len(quick) == 4
    rows = [r for t in quick for r in mkp.run({**t, "time_limit": 0.5, "jobs": 300})]
    return mkp.table(pd.DataFrame(rows))


def test_capannini_mkp_table_has_the_paper_columns(mkp_table):
    old = ["ratio", "method", "runs", "time_ms", "sml", "avg", "bst", "gap", "time_share", "unproven", "empty"]
    assert list(mkp_table.columns[:len(old)]) == old       # the existing columns keep their names and places
    assert {"paper_method", "paper_time_ms", "paper_sml", "paper_avg", "paper_bst"} <= set(mkp_table.columns)


def test_capannini_mkp_paper_values_are_table_1(mkp_table):
    t = mkp_table.set_index(["ratio", "method"])
    # [capannini2007] table 1: [40-45] branch&bound 496.53 / 0.57 / 0.87 / 1.00, MKP 11.23 / 0.54 / 0.82 / 1.00
    bb = t.loc[("40-45", "exact (cpsat)")]
    assert bb["paper_method"] == "branch&bound"
    assert (bb["paper_time_ms"], bb["paper_sml"], bb["paper_avg"], bb["paper_bst"]) == (496.53, 0.57, 0.87, 1.00)
    g = t.loc[("40-45", "greedy-mkp")]
    assert g["paper_method"] == "MKP"
    assert (g["paper_time_ms"], g["paper_sml"], g["paper_avg"], g["paper_bst"]) == (11.23, 0.54, 0.82, 1.00)
    # [55-60]: branch&bound 556.96 ms, Avg 0.88; MKP 11.90 ms, Avg 0.87
    assert t.loc[("55-60", "exact (cpsat)"), "paper_time_ms"] == 556.96
    assert t.loc[("55-60", "greedy-mkp"), ["paper_time_ms", "paper_avg"]].tolist() == [11.90, 0.87]
    assert t.loc[("45-50", "exact (cpsat)"), "paper_time_ms"] == 353.51
    assert t.loc[("50-55", "exact (cpsat)"), "paper_avg"] == 0.89
    # the paper has no greedy-ratio: its paper cells are empty
    ratio = mkp_table[mkp_table["method"] == "greedy-ratio"]
    assert len(ratio) == 4 and ratio[["paper_time_ms", "paper_avg"]].isna().all().all()
    # ours and the paper's usages are both fractions
    assert mkp_table[["sml", "avg", "bst", "paper_sml", "paper_avg", "paper_bst"]].max().max() <= 1.0


def _mkp_rows():
    """Hand-made rows of one ratio: seed 0 with three epochs (cpsat optimal
    at 10, cut at 9 with bound 12, optimal at 8; greedy-mkp 9, 8, 8), and
    seed 1, a stream that solved no knapsack."""
    rows = []
    for e, (status, value, bound, usage, ms, g_value, g_usage, g_ms) in enumerate(
            [("optimal", 10.0, 10.0, 0.9, 100.0, 9.0, 0.85, 1.0),
             ("timeout", 9.0, 12.0, 0.8, 200.0, 8.0, 0.7, 2.0),
             ("optimal", 8.0, 8.0, 0.6, 300.0, 8.0, 0.6, 3.0)]):
        base = {"ratio": "40-45", "seed": 0, "jobs": 10, "epoch": e, "items": 5, "critical": 2, "empty": False}
        rows.append({**base, "method": "cpsat", "value": value, "bound": bound, "status": status, "usage": usage,
                     "ms": ms})
        rows.append({**base, "method": "greedy-mkp", "value": g_value, "bound": None, "status": "feasible",
                     "usage": g_usage, "ms": g_ms})
    rows += [{"ratio": "40-45", "seed": 1, "jobs": 10, "epoch": 0, "items": 0, "critical": 0, "method": m,
              "empty": True} for m in ("cpsat", "greedy-mkp")]
    return pd.DataFrame(rows)


def test_capannini_mkp_table_by_hand():
    """Gaps against CP-SAT's optimum, or its bound where it was cut (the
    gap of a cut epoch is to the bound); Sml / Avg / Bst are the least,
    mean and largest usage; the unproven epochs and the streams that
    solved nothing are counted; times are shares of CP-SAT's."""
    t = mkp.table(_mkp_rows()).set_index("method")
    ex, g = t.loc["exact (cpsat)"], t.loc["greedy-mkp"]
    assert ex["gap"] == pytest.approx((0 + 3 / 12 + 0) / 3)
    assert g["gap"] == pytest.approx((1 / 10 + 4 / 12 + 0) / 3)
    assert (g["sml"], g["avg"], g["bst"]) == pytest.approx((0.6, (0.85 + 0.7 + 0.6) / 3, 0.85))
    assert (ex["sml"], ex["bst"]) == pytest.approx((0.6, 0.9))
    assert ex["unproven"] == g["unproven"] == 1
    assert ex["empty"] == g["empty"] == 1 and ex["runs"] == g["runs"] == 3
    assert g["time_share"] == pytest.approx(2.0 / 200.0) and ex["time_ms"] == pytest.approx(200.0)


def test_capannini_mkp_table_keeps_a_ratio_whose_streams_solved_nothing():
    """A ratio whose every stream solved no knapsack keeps its rows (runs 0,
    no figures, its streams counted in ``empty``) beside a ratio with
    figures; a run where no stream solved one is a table of such rows (it
    was a KeyError on the missing ``bound`` column, and the ratio of empty
    streams was left out)."""
    empty = [{"ratio": "45-50", "seed": s, "jobs": 10, "epoch": 0, "items": 0, "critical": 0, "method": m,
              "empty": True} for s in (0, 1) for m in mkp.METHODS]
    t = mkp.table(pd.concat([_mkp_rows(), pd.DataFrame(empty)], ignore_index=True)).set_index(["ratio", "method"])
    assert t.loc[("40-45", "greedy-mkp"), "runs"] == 3 and t.loc[("40-45", "greedy-mkp"), "empty"] == 1
    names = ["exact (cpsat)" if m == mkp.EXACT else m for m in mkp.METHODS]
    for name in names:
        row = t.loc[("45-50", name)]
        assert row["runs"] == 0 and row["empty"] == 2 and row["unproven"] == 0
        assert row[["time_ms", "sml", "avg", "bst", "gap", "time_share"]].isna().all()
    alone = mkp.table(pd.DataFrame(empty)).set_index(["ratio", "method"])
    assert sorted(alone.index) == sorted(("45-50", n) for n in names)
    assert (alone["runs"] == 0).all() and (alone["empty"] == 2).all()
    assert list(alone.reset_index().columns) == list(mkp.table(_mkp_rows()).columns)


def test_capannini_mkp_epochs_are_the_middles_of_the_run(monkeypatch):
    """The run of the task's license ratio range under the recording cs-i-p
    (incremental, preemptive); of its 10 knapsacks, 2 epochs are the middles
    of the two halves (2 and 7); a run that solved none gives none, and
    ``run`` marks the stream empty; a heuristic's time is in ms."""
    from epochbench.sim import farm
    seen = {}

    def fake_stream(**kw):
        seen["stream"] = kw
        return "stream"

    def fake_sim(stream, pol):
        seen["policy"] = pol
        pol.knapsacks = list(range(seen.get("count", 10)))

    monkeypatch.setattr(farm, "generate_stream", fake_stream)
    monkeypatch.setattr(farm, "simulate_farm", fake_sim)
    task = {"jobs": 50, "seed": 3, "ratio_lo": 0.40, "ratio_hi": 0.45, "epochs": 2, "time_limit": 0.5}
    assert mkp.epochs_of(task) == [2, 7]
    assert seen["stream"]["ratio"] == (0.40, 0.45) and seen["stream"]["jobs"] == 50
    assert seen["policy"].incremental and seen["policy"].preemptive
    seen["count"] = 0
    assert mkp.epochs_of(task) == []
    rows = mkp.run(task)
    assert len(rows) == len(mkp.METHODS) and all(r["empty"] for r in rows)


def test_capannini_mkp_times_are_milliseconds(monkeypatch):
    """``ms`` is a thousand times the seconds the registry measured."""
    from epochbench.instances import registry
    from epochbench.instances.core import Result
    from epochbench.instances.generators import generate
    inst = generate("farm-mkp", count=1, seed=2, n=20)[0]
    monkeypatch.setattr(mkp, "epochs_of", lambda task: [inst])

    def fake_solve(i, m, **kw):
        return Result("knapsack", m, (), 0.0, "optimal" if m == "cpsat" else "feasible", 0.002,
                      0.0 if m == "cpsat" else None, {"license_usage": 0.5})

    monkeypatch.setattr(registry, "solve", fake_solve)
    rows = mkp.run({"jobs": 50, "seed": 0, "ratio_lo": 0.40, "ratio_hi": 0.45, "epochs": 1, "time_limit": 0.5})
    assert [r["ms"] for r in rows] == pytest.approx([2.0] * len(mkp.METHODS))


# ---- rajaei: [rajaei-dadfar] tables 5 and 6 --------------------------------------------------------------
@pytest.fixture(scope="module")
def rajaei_table():
    quick = [t for t in rj.tasks(Options(quick=True)) if t["seed"] == 0 and t["load"] in (0.3, 0.9)]
    assert len(quick) == 2 * len(rj.ESTIMATES)
    rows = [r for t in quick for r in rj.run({**t, "jobs": 150})]
    return rj.table(pd.DataFrame(rows))


def test_rajaei_table_has_the_paper_columns(rajaei_table):
    old = ["load", "estimates", "policy", "runs", "offered", "exec_s", "wait_s", "util_pct", "resp_max_s", "resp_s",
           "wait_std_s", "out_of_order", "util_vs_nonfcfs_pp"]
    assert list(rajaei_table.columns[:len(old)]) == old
    assert {"load_note", "paper_table", "paper_exec_s", "paper_wait_s", "paper_util_pct",
            "paper_resp_max_s"} <= set(rajaei_table.columns)


def test_rajaei_highest_response_is_the_longest_wait():
    """Seed 001 glosses it "the job that waited the most in the system",
    and every one of its values lies below the mean wait plus the mean
    execution time, which no largest end - submit can; the column held the
    largest end - submit, beside the paper's values."""
    rows = [vals for table in rj.PAPER_TABLES.values() for vals in table.values()]
    assert len(rows) == 5 and all(resp_max < wait + exec_ for exec_, wait, _, resp_max in rows)
    tasks = [{"load": 0.9, "estimates": "model", "seed": s, "jobs": 150} for s in (0, 1)]
    df = pd.DataFrame([r for t in tasks for r in rj.run(t)])
    t = rj.table(df).set_index("policy")
    by = df.groupby("policy")
    assert np.allclose(t["resp_max_s"], by["wait_max"].mean().loc[t.index])
    assert np.allclose(t["sojourn_max_s"], by["response_max"].mean().loc[t.index])
    assert (t["sojourn_max_s"] > t["resp_max_s"]).all()


def test_rajaei_paper_values_are_tables_5_and_6(rajaei_table):
    t = rajaei_table.set_index(["load", "estimates", "policy"])
    # table 5 (generated job mix) on the model rows, the same at every load
    for load in (0.3, 0.9):
        assert t.loc[(load, "model", "nonfcfs"), "paper_util_pct"] == 85.49
        assert t.loc[(load, "model", "easy"), "paper_util_pct"] == 87.48
        assert t.loc[(load, "model", "conservative"), "paper_util_pct"] == 87.09
    assert t.loc[(0.9, "model", "easy"), ["paper_exec_s", "paper_wait_s", "paper_resp_max_s"]].tolist() == \
        [301.37, 107.52, 284.88]
    assert (t.xs("model", level="estimates")["paper_table"] == 5).all()
    # table 6 (perfect estimate, runtime := estimate): aggressive 89.36 %, conservative 89.20 %; no Non-FCFS row
    est = "runtime=estimate"
    assert t.loc[(0.9, est, "easy"), "paper_util_pct"] == 89.36
    assert t.loc[(0.9, est, "conservative"), ["paper_exec_s", "paper_util_pct"]].tolist() == [765.75, 89.20]
    assert math.isnan(t.loc[(0.9, est, "nonfcfs"), "paper_util_pct"])
    assert t.loc[(0.9, est, "nonfcfs"), "paper_table"] == 6
    assert t.xs("perfect", level="estimates")["paper_util_pct"].isna().all()     # estimate := runtime: no table


def test_rajaei_load_note_says_what_load_is(rajaei_table):
    rt = rajaei_table[rajaei_table["estimates"] == "runtime=estimate"]
    assert (rt["offered"] > 2 * rt["load"]).all()           # the estimate change raises the offered load
    assert rt["load_note"].str.contains("before runtime:=estimate").all()
    assert rajaei_table.loc[rajaei_table["estimates"] != "runtime=estimate", "load_note"].eq(
        "offered load (= offered)").all()


# ---- zhang-gang: rho@sld columns -----------------------------------------------------------------------
def test_utilization_at_marks_both_ends_of_the_sweep():
    assert zg.utilization_at([0.2, 0.5, 0.8], [10.0, 30.0, 60.0], 20) == pytest.approx(0.35)
    assert zg.utilization_at([0.2, 0.5], [30.0, 60.0], 20) == -math.inf   # above it at the lowest load
    assert zg.utilization_at([0.2, 0.5], [1.0, 2.0], 20) == math.inf      # never reached
    assert math.isnan(zg.utilization_at([], [], 20))


def test_crossing_bracket_names_the_load_points_around_the_crossing():
    assert zg.crossing_bracket([0.2, 0.5, 0.8], [10.0, 30.0, 60.0], 20) == (0.2, 0.5)
    assert zg.crossing_bracket([0.2, 0.5], [30.0, 60.0], 20) == (-math.inf, 0.2)
    assert zg.crossing_bracket([0.2, 0.5], [1.0, 2.0], 20) == (0.5, math.inf)
    assert all(math.isnan(x) for x in zg.crossing_bracket([], [], 20))


def test_zhang_gang_table_writes_the_out_of_sweep_cells(tmp_path):
    base = {"stream": "lublin03", "policy": "bf", "mpl": 1, "overhead": 0.0, "discrete": False, "seed": 0}
    cols = {"offered_load": 0.5, "wait_mean": 1.0, "capacity_loss": 0.1, "bsld_std": 1.0, "wait_std": 1.0,
            "small_bsld_mean": 1.0, "large_bsld_mean": 1.0, "small_wait_mean": 1.0, "large_wait_mean": 1.0}
    curves = {"BF": [5.0, 30.0, 200.0], "GS-2": [60.0, 120.0, 300.0], "BGS-2": [1.0, 2.0, 3.0]}
    rows = [{**base, **cols, "config": c, "point": p, "utilization": u, "bsld_mean": s}
            for c, sl in curves.items() for p, u, s in zip((0.6, 1.2, 1.8), (0.3, 0.6, 0.9), sl)]
    t = zg.table(pd.DataFrame(rows)).set_index("config")
    assert t.loc["BF", "rho@sld20"] == pytest.approx(0.3 + 0.3 * 15 / 25)
    assert t.loc["BF", ["sld20_from", "sld20_to"]].tolist() == [0.3, 0.6]
    assert t.loc["GS-2", "rho@sld20"] == -np.inf and t.loc["GS-2", "rho@sld100"] == pytest.approx(0.5)
    assert t.loc["BGS-2", ["rho@sld20", "rho@sld50", "rho@sld100"]].tolist() == [np.inf] * 3
    t.to_csv(tmp_path / "t.csv")
    back = pd.read_csv(tmp_path / "t.csv", index_col=0)
    assert back.loc["GS-2", "rho@sld20"] == -np.inf and back.loc["BGS-2", "rho@sld20"] == np.inf


def test_zhang_gang_claims_of_a_bf_only_subset_is_an_empty_table_with_its_header(tmp_path, capsys):
    base = {"stream": "lublin03", "policy": "bf", "mpl": 1, "overhead": 0.0, "discrete": False, "seed": 0,
            "offered_load": 0.5, "wait_mean": 1.0, "capacity_loss": 0.1, "bsld_std": 1.0, "wait_std": 1.0,
            "small_bsld_mean": 1.0, "large_bsld_mean": 1.0, "small_wait_mean": 1.0, "large_wait_mean": 1.0}
    rows = [{**base, "config": "BF", "point": p, "utilization": u, "bsld_mean": s}
            for p, u, s in zip((0.6, 1.2), (0.3, 0.6), (5.0, 30.0))]
    c = zg.claims(pd.DataFrame(rows))
    assert len(c) == 0 and list(c.columns) == zg.CLAIM_COLUMNS
    c.to_csv(tmp_path / "claims.csv", index=False)
    assert list(pd.read_csv(tmp_path / "claims.csv").columns) == zg.CLAIM_COLUMNS   # "No columns to parse" before


def test_the_command_prints_an_extra_table_with_no_rows(tmp_path, capsys, monkeypatch):
    from epochbench.cli import main
    import epochbench.experiments as ex
    exp = ex.EXPERIMENTS["zhang-gang"]
    monkeypatch.setitem(exp.extra, "claims", lambda df: pd.DataFrame())     # a plug-in's table without columns

    def run(name, opts, **kw):                       # the run's files as a table without columns leaves them
        opts.out.mkdir(parents=True, exist_ok=True)
        (opts.out / f"{name}-claims.csv").write_text("\n")
        return pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [1]})

    monkeypatch.setattr(ex, "run_experiment", run)
    assert main(["experiment", "zhang-gang", "--quick", "--out", str(tmp_path / "o")]) == 0
    assert "(no rows for the tasks run)" in capsys.readouterr().out


def test_zhang_gang_claims_tell_a_tie_from_a_loss():
    """GS-5 never blocks at low load, so BGS-5 is the same run job for job;
    the strict share read 0.0, as if BGS-5 lost at every point."""
    base = {"stream": "lublin03", "overhead": 0.0, "discrete": False, "seed": 0, "offered_load": 0.5,
            "capacity_loss": 0.1, "bsld_std": 1.0, "wait_std": 1.0, "small_bsld_mean": 1.0, "large_bsld_mean": 1.0,
            "small_wait_mean": 1.0, "large_wait_mean": 1.0, "utilization": 0.5}
    rows = []
    for p, sld in zip((0.4, 0.6, 0.8), (1.26, 1.69, 3.31)):
        rows.append({**base, "config": "BF", "policy": "bf", "mpl": 1, "point": p, "bsld_mean": 2 * sld,
                     "wait_mean": 200.0})
        for cfg, pol in (("GS-5", "gs"), ("BGS-5", "bgs")):
            rows.append({**base, "config": cfg, "policy": pol, "mpl": 5, "point": p, "bsld_mean": sld,
                         "wait_mean": 100.0})
    c = zg.claims(pd.DataFrame(rows)).set_index("mpl").loc[5]
    assert c["bgs<gs sld"] == 0.0 and c["bgs=gs sld"] == 1.0 and c["bgs=gs wait"] == 1.0 and c["bgs<bf sld"] == 1.0


def test_zhang_gang_figure_25_shows_wait_and_capacity_loss_too(tmp_path, monkeypatch):
    """[zhang-comparative] 6.6: "Figure 25 compares loss of capacity, slowdown,
    and wait time for all four time-sharing strategies"; the panel drew the
    slowdown only."""
    from epochbench.experiments import plotting
    cfgs = [("bf", 1), ("gs", 5), ("bgs", 5), ("mgs", 5), ("mbgs", 5)]
    rows = [r for policy, mpl in cfgs for point in (1.0, 1.4)
            for r in zg.run({"stream": "lublin03", "policy": policy, "mpl": mpl, "overhead": 0.0, "discrete": False,
                             "point": point, "seed": 0, "jobs": 200})]
    figs = {}
    monkeypatch.setattr(plotting, "save", lambda fig, path, *a, **k: figs.__setitem__(str(path), fig))
    zg.plot(pd.DataFrame(rows), tmp_path / "zg.png")
    extra = next(f for p, f in figs.items() if p.endswith("-extra.png"))
    fig25 = {ax.get_title(): ax for ax in extra.axes if ax.get_title().startswith("fig. 25")}
    assert set(fig25) == {"fig. 25: slowdown (MPL 5)", "fig. 25: wait (MPL 5)", "fig. 25: capacity loss (MPL 5)"}
    for ax in fig25.values():
        assert {"MGS-5", "MBGS-5", "GS-5", "BGS-5"} <= {line.get_label() for line in ax.get_lines()}


def test_zhang_gang_claims_compare_bgs_with_gs_without_bf():
    """A run of BGS and GS alone (no BF task) had every share empty, BGS
    against GS included, though both ran at every point (a review)."""
    base = {"stream": "kth", "overhead": 0.0, "discrete": False, "seed": 0, "offered_load": 0.5,
            "capacity_loss": 0.1, "bsld_std": 1.0, "wait_std": 1.0, "small_bsld_mean": 1.0, "large_bsld_mean": 1.0,
            "small_wait_mean": 1.0, "large_wait_mean": 1.0, "utilization": 0.5}
    rows = []
    for p, (b, s) in zip((0.4, 0.6, 0.8), ((14.9, 112.0), (30.5, 394.0), (64.4, 1928.0))):
        rows += [{**base, "config": "BGS-2", "policy": "bgs", "mpl": 2, "point": p, "bsld_mean": b, "wait_mean": b},
                 {**base, "config": "GS-2", "policy": "gs", "mpl": 2, "point": p, "bsld_mean": s, "wait_mean": s}]
    c = zg.claims(pd.DataFrame(rows)).set_index("mpl").loc[2]
    assert c["points"] == 3 and c["bgs<gs sld"] == 1.0 and c["bgs<gs wait"] == 1.0
    assert c["points bf"] == 0 and pd.isna(c["bgs<bf sld"])


def test_oracle_table_pools_the_seeds_epochs():
    """With several seeds each gap figure was the unweighted mean of the
    per-seed figures, "gap_max" included (26 % for a max of 61 %)."""
    from epochbench.experiments.oracle import table
    common = {"k": 2, "policy": "bb-easy", "unproven": 0, "nothing_fits": 0, "wait": 10.0, "bsld": 2.0,
              "utilization": 0.5}
    rows = pd.DataFrame([
        {**common, "seed": 0, "epochs": 3, "gap_mean": 0.1, "gap_median": 0.1, "gap_p90": 0.18, "gap_max": 0.2,
         "optimal_share": 1 / 3, "gaps": "0 0.1 0.2"},
        {**common, "seed": 1, "epochs": 1, "gap_mean": 0.6, "gap_median": 0.6, "gap_p90": 0.6, "gap_max": 0.6,
         "optimal_share": 0.0, "gaps": "0.6"}])
    t = table(rows).iloc[0]
    assert t["epochs"] == 4 and t["gap_max %"] == 60.0 and t["gap_mean %"] == 22.5
    assert t["gap_median %"] == 15.0 and t["gap_p90 %"] == 48.0 and t["optimal_share %"] == 25.0
    one = table(rows.iloc[:1]).iloc[0]                 # one seed: its own figures, as before
    assert (one["gap_median %"], one["gap_p90 %"], one["gap_max %"]) == (10.0, 18.0, 20.0)


def test_a_legend_title_wider_than_its_figure_is_wrapped():
    """oracle's legend title was cut at both edges on a one-column figure."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from epochbench.experiments.plotting import COLUMN, PAGE, legend, proxy
    text = "box: quartiles of the epochs; n: epochs scored; opt.: share where the selector was optimal"
    for width, lines in ((COLUMN, 2), (PAGE, 1)):
        fig = plt.figure(figsize=(width, 2.8))
        leg = legend(fig, [proxy("median")], title=text)
        assert leg.get_title().get_text().count("\n") + 1 == lines
        plt.close(fig)
