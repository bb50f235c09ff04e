"""Experiment capannini ([capannini2007] figs. 3-8): the task list of the full and
quick versions, one tiny run of each kind of arm (main policy with per-epoch
oracles, sensitivity arm, exact arm, baseline, fig. 8 pass), the summary
table and the figure."""
import numpy as np
import pandas as pd
import pytest

from epochbench.experiments import Options
from epochbench.experiments import capannini as cap

TINY = {"jobs": 60, "machines": 12, "licenses": 4}


def test_task_list_has_the_seed_grid(monkeypatch):
    monkeypatch.delenv("EPOCHBENCH_NO_EXACT", raising=False)
    full = cap.tasks(Options())
    runs = [t for t in full if t["kind"] == "run"]
    assert {t["ta"] for t in runs} == {4, 6, 8, 10, 12, 16, 20}
    assert {t["seed"] for t in runs} == set(range(20))
    assert {(t["jobs"], t["machines"], t["licenses"]) for t in runs} == {(1500, 150, 20)}
    per = pd.DataFrame(runs).groupby("policy")["seed"].nunique()
    assert all(per[p] == 20 for p in cap.POLICIES)
    assert all(per[v] == cap.VARIANT_SEEDS for v in cap.VARIANTS)
    assert per[cap.EXACT] == cap.EXACT_SEEDS
    # 20 x 7 x 8 main runs, the variant and exact arms, 5 x 3 fig. 8 passes
    assert len(full) == 20 * 7 * 8 + cap.VARIANT_SEEDS * 7 * 3 + cap.EXACT_SEEDS * 7 + 5 * 3
    oracle = {t["seed"] for t in runs if t["oracle_every"]}
    assert oracle == set(range(cap.EXACT_SEEDS))
    monkeypatch.setenv("EPOCHBENCH_NO_EXACT", "1")
    assert not [t for t in cap.tasks(Options()) if t["policy"] == cap.EXACT or t.get("oracle_every")]


def _task(policy, oracle_every=0):
    return {"kind": "run", "ta": 10, "policy": policy, "seed": 0, **TINY, "time_limit": 0.5,
            "oracle_every": oracle_every}


@pytest.fixture(scope="module")
def rows():
    out = []
    for pol, every in (("cs-i-p", 5), ("cs-ni-np", 5), ("edf", 0), ("cs-i-p:aging=0", 0), (cap.EXACT, 0)):
        out += cap.run(_task(pol, every))
    out += cap.run({"kind": "scale", "n": 40, "policy": "cs-i-p", "seed": 0, "machines": 12,
                    "licenses": 4, "repeats": 1})
    return out


def test_rows_are_sane(rows):
    runs = [r for r in rows if r["kind"] == "run"]
    for r in runs:
        assert 0 <= r["late_share"] <= 1
        assert r["slowdown_mean"] >= 1 - 1e-9
        assert 0 < r["machine_usage"] <= 1 + 1e-9
        assert 0 <= r["license_usage"] <= 1 + 1e-9
        assert len(r["workload_series"].split()) == 40
    by = {r["policy"]: r for r in runs}
    # the per-epoch oracles ran in the CS runs that asked for them: gaps are >= 0
    for pol in ("cs-i-p", "cs-ni-np"):
        assert by[pol]["match_gap_n"] > 0
        assert by[pol]["match_gap_mean"] >= -1e-9
    assert by["edf"]["match_gap_n"] == 0
    scale = [r for r in rows if r["kind"] == "scale"]
    assert len(scale) == 1 and scale[0]["ms"] > 0


def test_variant_constants_parse():
    c = cap.variant_constants("cs-i-p:aging=0,literal_fbar=1")
    assert c.aging == 0 and c.literal_fbar
    assert cap.variant_constants("cs-i-np:aging=0").aging == 0
    with pytest.raises(ValueError, match="no_such_constant"):
        cap.variant_constants("cs-i-p:no_such_constant=1")


def test_table_and_plot(rows, tmp_path):
    df = pd.DataFrame(rows)
    t = cap.table(df)
    runs = t[~t["ta"].str.startswith("n=")]
    assert set(runs["policy"]) == {"cs-i-p", "cs-ni-np", "edf", "cs-i-p:aging=0", cap.EXACT}
    assert (runs["runs"] == 1).all()
    edf = next(r for r in rows if r["kind"] == "run" and r["policy"] == "edf")
    assert np.isclose(runs.set_index("policy").loc["edf", "late %"], 100 * edf["late_share"], atol=1e-3)
    assert (t["ta"] == "n=40").sum() == 1
    cap.plot(df, tmp_path / "cap.png")
    assert (tmp_path / "cap.png").stat().st_size > 0


def test_each_policy_runs_once_untimed_before_its_first_timed_run(monkeypatch):
    """Fig. 7's scheduling time must not hold the first plans' loading (the
    first run of each worker read 1.3-1.6 s slower): the policy runs once on
    a small stream first, once per process."""
    from epochbench.experiments import Options
    from epochbench.sim import farm
    calls = []
    real = farm.simulate_farm
    monkeypatch.setattr(farm, "simulate_farm", lambda stream, pol: calls.append(len(stream.runtime)) or real(stream, pol))
    monkeypatch.setattr(cap, "_WARMED", set())
    task = next(t for t in cap.tasks(Options(quick=True, seeds=1)) if t["kind"] == "run" and t["policy"] == "edf")
    task = {**task, "jobs": 60}
    cap.run(task)
    cap.run(task)
    assert calls == [30, 60, 60]


def test_exact_steps_cut_short_are_counted_in_the_rows_and_the_table(monkeypatch):
    """A knapsack the time limit cut short (``feasible``) was used as if
    exact and nothing said so; one without a solution fell back to the
    greedy and the row did not say that either."""
    from dataclasses import replace
    from epochbench.instances import registry
    real, calls = registry.solve, {"n": 0, "match": 0}     # the steps' solves (registry.solve_step's)

    def cut_short(inst, method, **kw):          # every other exact knapsack: no solution; the rest unproven
        res = real(inst, method, **kw)
        if method == "hungarian" and kw.get("describe", True) is False and res.decision:
            calls["match"] += 1                  # every matching step: an exact answer it did not prove
            return replace(res, status="feasible", bound=None)
        if method != "cpsat" or inst.kind != "knapsack" or kw.get("describe", True):
            return res                           # the oracle's own solves (describe left on) are not steps
        calls["n"] += 1
        if calls["n"] % 2:
            return replace(res, status="timeout", decision=(), bound=None)
        return replace(res, status="feasible", bound=None)

    monkeypatch.setattr(registry, "solve", cut_short)
    monkeypatch.setattr(cap, "_WARMED", {cap.EXACT})          # no untimed warm-up run: count the row's steps only
    busy = {**_task(cap.EXACT), "ta": 1}                     # licences contended: knapsacks in most epochs
    (row,) = cap.run(busy)
    assert calls["n"] > 1 and row["knapsack_fallback"] == (calls["n"] + 1) // 2
    assert row["knapsack_unproven"] == calls["n"] // 2 and row["match_fallback"] == 0
    assert calls["match"] > 0 and row["match_unproven"] == calls["match"]     # a KeyError before
    monkeypatch.setattr(registry, "solve", real)
    rows = [row, *cap.run({**busy, "policy": "edf"})]
    t = cap.table(pd.DataFrame(rows)).set_index("policy")
    assert t.loc[cap.EXACT, "unproven steps"] == calls["n"] + calls["match"] and t.loc["edf", "unproven steps"] == 0
    assert "mkp left out" in t.columns
