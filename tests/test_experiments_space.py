"""The ``leinberger`` and ``oracle`` experiments on tiny configurations."""
import numpy as np
import pandas as pd

from epochbench.experiments import Options, load_experiments
from epochbench.experiments import leinberger, oracle


def test_experiments_are_registered_with_quick_plans():
    exps = load_experiments()
    assert {"leinberger", "oracle"} <= set(exps)
    quick = leinberger.tasks(Options(quick=True))
    full = leinberger.tasks(Options())
    assert len(quick) < len(full) and {t["k"] for t in full} == {2, 4, 8}
    assert {t["queue"] for t in full} == {64, 128, 256}


def test_leinberger_run_calibrates_and_compares_to_ff_easy():
    rows = leinberger.run({"k": 2, "dist": "exponential", "queue": 16, "seed": 1, "jobs": 250})
    df = pd.DataFrame(rows)
    assert list(df["policy"]) == list(leinberger.POLICIES)
    base = df.iloc[0]
    assert base["gain_response"] == 0 and base["gain_weighted"] == 0
    assert abs(base["mean_queue_ff_easy"] / 16 - 1) <= 0.1 or not base["calibrated"]
    assert (df["response"] > 0).all() and df["utilization"].between(0, 1).all()
    again = pd.DataFrame(leinberger.run({"k": 2, "dist": "exponential", "queue": 16, "seed": 1, "jobs": 250}))
    pd.testing.assert_frame_equal(df.drop(columns="sim_seconds"), again.drop(columns="sim_seconds"))
    t = leinberger.table(df.assign(task=0))
    assert {"response:bb-easy", "weighted:ff-cons"} <= set(t.columns)


def test_oracle_scores_recorded_steps_against_cpsat():
    rows = {p: oracle.run({"k": 2, "policy": p, "seed": 0, "jobs": 250, "time_limit": 0.5, "max_epochs": 20})[0]
            for p in ("ff-easy", "oracle")}
    ff, orc = rows["ff-easy"], rows["oracle"]
    assert 0 < ff["epochs"] <= 20 and ff["recorded"] >= ff["epochs"]
    assert ff["nothing_fits"] > 0 and ff["epochs"] + ff["unproven"] <= 20   # left out before the sample
    assert 0 <= ff["gap_mean"] <= ff["gap_max"] <= 1
    assert orc["gap_max"] == 0 and orc["optimal_share"] == 1  # CP-SAT against itself, proven
    gaps = np.array([float(x) for x in ff["gaps"].split()])
    assert len(gaps) == ff["epochs"] and np.isclose(gaps.mean(), ff["gap_mean"], rtol=1e-3)


def test_oracle_leaves_an_epoch_cpsat_did_not_solve_out_of_the_gaps(monkeypatch):
    """Under load CP-SAT found nothing in 0.5 s on one epoch: its gap was NaN
    and so was the run's mean (a CI run failed on it)."""
    from epochbench.instances import registry
    real, calls = registry.solve, []

    def flaky(inst, method, **kw):
        if method == "cpsat":
            calls.append(1)
            if len(calls) == 2:
                res = real(inst, method, **kw)
                return res.__class__(res.family, res.method, (), float("nan"), "timeout", res.seconds, None, {})
        return real(inst, method, **kw)

    monkeypatch.setattr(registry, "solve", flaky)
    row = oracle.run({"k": 2, "policy": "ff-easy", "seed": 0, "jobs": 250, "time_limit": 0.5, "max_epochs": 20})[0]
    assert row["recorded"] >= row["epochs"] + 1 > 1 and row["unproven"] >= 1
    assert 0 <= row["gap_mean"] <= row["gap_max"] <= 1


def test_oracle_leaves_epochs_scored_only_against_a_bound_out_of_its_gaps(monkeypatch):
    """Its docstring says such epochs count in ``unproven`` and not in the
    gaps nor ``epochs``; they were in both (a CP-SAT answer cut short with a
    bound 25 % above it gave the whole gap mean)."""
    import dataclasses

    import epochbench.instances.registry as registry
    real = registry.solve

    def cut_short(inst, method, **kw):
        r = real(inst, method, **kw)
        if method == "cpsat":
            r = dataclasses.replace(r, status="feasible", bound=float(r.value) * 1.25 + 1e-6)
        return r

    monkeypatch.setattr(registry, "solve", cut_short)
    r = oracle.run({"k": 1, "policy": "ff-easy", "seed": 0, "jobs": 120, "time_limit": 0.5, "max_epochs": 20})[0]
    decide = r["recorded"]            # the steps with a decision (nothing_fits: not recorded): the sample's
    sampled = len(range(0, decide, -(-decide // 20)))
    assert r["unproven"] > 0 and r["epochs"] + r["unproven"] == sampled
