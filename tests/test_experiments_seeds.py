"""Experiments zhang-queues, zhang-estimates ([zhang-comparative] figs. 5-7) and rajaei
([rajaei-dadfar] tables 5-6): task lists, one tiny run each, the summary tables."""
import math

import numpy as np
import pandas as pd
import pytest

from epochbench.experiments import Options, load_experiments
from epochbench.experiments import rajaei as rj
from epochbench.experiments import zhang_estimates as ze
from epochbench.experiments import zhang_queues as zq

TINY = 150          # jobs per stream in these tests
VOLATILE = {"sim_seconds"}


def _stable(rows):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def _sane(row):
    assert 0 < row["utilization"] <= 1
    assert row["wait_mean"] >= 0
    if "capacity_loss" in row:
        assert 0 <= row["capacity_loss"] < 1
    if "bsld_mean" in row:
        assert row["bsld_mean"] >= 1


def test_registered_with_seed_sizes():
    exps = load_experiments()
    for name in ("zhang-queues", "zhang-estimates", "rajaei"):
        assert name in exps
    full = Options()
    assert len(zq.tasks(full)) == 2 * 9 * 4 * 3            # estimates x factors x policies x seeds
    assert {t["jobs"] for t in zq.tasks(full)} == {10_000}
    assert len(ze.tasks(full)) == len(ze.SETTINGS) * 9 * 5
    assert len(rj.tasks(full)) == len(rj.LOADS) * 3 * 5
    quick = Options(quick=True, seeds=2)
    assert {t["seed"] for t in zq.tasks(quick)} == {0, 1}
    assert sorted({t["runtime_factor"] for t in zq.tasks(quick)}) == list(zq.QUICK_FACTORS)
    assert {t["policy"] for t in zq.tasks(quick)} == set(zq.POLICIES)


def test_zhang_queues_rows_table_plot(tmp_path):
    tasks = [{"policy": p, "estimates": zq.estimate_label(m, v), "est_model": m, "est_value": v,
              "runtime_factor": 1.8, "seed": 3, "jobs": TINY}
             for m, v in zq.ESTIMATES for p in zq.POLICIES]
    rows = [r for t in tasks for r in zq.run(t)]
    assert len(rows) == 8
    for r in rows:
        _sane(r)
        assert r["jobs"] == TINY and r["nodes"] == zq.NODES
        assert r["offered_load"] == pytest.approx(0.55 * 1.8, rel=0.05)
    # deterministic by seed; another seed gives another stream
    assert _stable(zq.run(tasks[0])) == _stable(rows[:1])
    other = zq.run({**tasks[0], "seed": 4})[0]
    assert other["wait_mean"] != rows[0]["wait_mean"] or other["utilization"] != rows[0]["utilization"]
    df = pd.DataFrame(rows)
    t = zq.table(df)
    assert list(t.columns) == ["estimates", "factor", "policy", "runs", "offered", "util", "kappa", "wait_s",
                               "bsld", "wait_vs_fcfs"]
    assert len(t) == 8 and (t["runs"] == 1).all()
    assert (t.loc[t["policy"] == "fcfs-bf", "wait_vs_fcfs"] == 1).all()
    sat = zq.saturation(df)
    assert len(sat) == 8 and sat["max_util"].between(0, 1).all()
    zq.plot(df, tmp_path / "zq.png")
    assert (tmp_path / "zq.png").stat().st_size > 0


def test_zhang_estimates_rows_and_table(tmp_path):
    settings = [("perfect", None), ("omega", 2.0), ("phi", 0.2)]
    tasks = [{"est_model": m, "est_value": v, "runtime_factor": f, "seed": 1, "jobs": TINY}
             for f in (1.0, 1.5) for m, v in settings]
    rows = [r for t in tasks for r in ze.run(t)]
    for r in rows:
        _sane(r)
        assert r["policy"] == "conservative"
        if r["est_model"] == "perfect":
            assert r["overestimate_mean"] == 1 and r["exact_share"] == 1
        elif r["est_model"] == "omega":
            assert 1 < r["overestimate_mean"] <= 3
        else:
            assert r["overestimate_mean"] > 1
    # the estimates change only what the scheduler believes: same work, same offered load
    by_f = pd.DataFrame(rows).groupby("runtime_factor")["offered_load"].nunique()
    assert (by_f == 1).all()
    assert _stable(ze.run(tasks[1])) == _stable(rows[1:2])
    # [zhang-comparative]: FCFS with (conservative) backfilling and perfect estimates is fcfs-bf
    q = zq.run({"policy": "fcfs-bf", "estimates": "perfect", "est_model": "perfect", "est_value": None,
                "runtime_factor": 1.0, "seed": 1, "jobs": TINY})[0]
    assert q["wait_mean"] == pytest.approx(rows[0]["wait_mean"])
    assert q["utilization"] == pytest.approx(rows[0]["utilization"])
    df = pd.DataFrame(rows)
    t = ze.table(df)
    assert list(t.columns) == ["model", "value", "factor", "runs", "offered", "util", "wait_s", "bsld",
                               "wait_vs_perfect", "bsld_vs_perfect"]
    # perfect runs appear in both blocks: Omega = 0 and Phi = 1, each ratio 1
    assert len(t) == 2 * (len(settings) + 1)
    ref = t[((t["model"] == "omega") & (t["value"] == 0)) | ((t["model"] == "phi") & (t["value"] == 1))]
    assert len(ref) == 4 and np.allclose(ref["wait_vs_perfect"], 1) and np.allclose(ref["bsld_vs_perfect"], 1)
    ze.plot(df, tmp_path / "ze.png")
    assert (tmp_path / "ze.png").stat().st_size > 0


def test_rajaei_rows_and_table(tmp_path):
    tasks = [{"load": load, "estimates": e, "seed": 2, "jobs": TINY} for load in (0.6, 1.0) for e in rj.ESTIMATES]
    rows = [r for t in tasks for r in rj.run(t)]
    assert len(rows) == len(tasks) * 3
    assert [r["policy"] for r in rows[:3]] == list(rj.POLICIES)
    for r in rows:
        _sane(r)
        assert r["response_max"] >= r["exec_mean"] > 0
        assert 0 <= r["out_of_order_share"] <= 1
    df = pd.DataFrame(rows)
    # the three estimate settings: same jobs and arrivals; runtime=estimate runs longer
    ex = df[df["policy"] == "easy"].set_index(["load", "estimates"])["exec_mean"]
    assert ex[(0.6, "model")] == ex[(0.6, "perfect")] < ex[(0.6, "runtime=estimate")]
    off = df[df["policy"] == "easy"].set_index(["load", "estimates"])["offered_load"]
    assert off[(1.0, "model")] == pytest.approx(1.0, rel=0.02)
    assert off[(1.0, "runtime=estimate")] > off[(1.0, "model")]
    assert _stable(rj.run(tasks[0])) == _stable(rows[:3])
    t = rj.table(df)
    assert list(t.columns[:8]) == ["load", "estimates", "policy", "runs", "offered", "exec_s", "wait_s", "util_pct"]
    assert {"resp_max_s", "out_of_order", "util_vs_nonfcfs_pp"} <= set(t.columns)
    assert len(t) == len(tasks) * 3
    assert (t.loc[t["policy"] == "nonfcfs", "util_vs_nonfcfs_pp"] == 0).all()
    assert t["util_pct"].between(0, 100).all()
    rj.plot(df, tmp_path / "rj.png")
    assert (tmp_path / "rj.png").stat().st_size > 0


def test_rajaei_runtime_at_estimate_and_bad_setting():
    jobs = pd.DataFrame({"id": [1, 2], "submit": [0.0, 5.0], "runtime": [10.0, 30.0], "estimate": [40.0, 30.0],
                         "procs": [1, 2], "duration": [10.0, 30.0]})
    out = rj.runtime_at_estimate(jobs)
    assert out["runtime"].tolist() == [40.0, 30.0] and out["duration"].tolist() == [40.0, 30.0]
    assert jobs["runtime"].tolist() == [10.0, 30.0]          # input untouched
    with pytest.raises(ValueError, match="estimates"):
        rj.rajaei_stream(TINY, 0, 0.7, "exact")
    assert math.isfinite(rj.rajaei_stream(TINY, 0, 0.7, "model")[2])
