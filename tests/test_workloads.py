"""Workload models of instances/workloads.py: statistics against the models'
analytic values (within sampling tolerance), the estimate models of [zhang-comparative]
§2.1, the K-resource extension of [leinberger1999] §3.1, load control, determinism by
seed and the SWF round trip.

Tolerances are about 5 standard deviations of the statistic over seeds
(measured over 40 seeds of 20,000 jobs when the tests were written)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from epochbench.cli import main
from epochbench.instances.data import data_root
from epochbench.instances.generators import GENERATORS, feitelson_size_pmf
from epochbench.instances.workloads import (LUBLIN_PARAMS, MODELS, RAJAEI_CLASSES, _lublin_weights, feitelson96, k_resources,
                                 lublin03, lublin_size_pmf, offered_load, omega_estimates, perfect_estimates,
                                 phi_estimates, rajaei, saturated, scale_arrivals, scale_runtimes, set_load,
                                 stream_stats,
                                 with_estimates, workload, write_workload)
from epochbench.instances.jobs import read_swf, read_table

N = 20_000
KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
CONTRACT = ["id", "submit", "runtime", "estimate", "procs", "duration"]


def pmf_moments(pmf):
    s = np.arange(1, len(pmf) + 1, dtype=float)
    mean = float(pmf @ s)
    return s, mean, math.sqrt(float(pmf @ s**2) - mean**2) / mean


def pow2_share(pmf):
    s = np.arange(1, len(pmf) + 1)
    return float(pmf[(s & (s - 1)) == 0].sum())


def cv(x):
    x = np.asarray(x, dtype=float)
    return x.std() / x.mean()


# ---- contract, determinism -----------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS)
def test_stream_follows_the_job_table_contract(model):
    s = workload(model=model, jobs=500, seed=2)
    df = s.jobs
    assert list(df.columns[:6]) == CONTRACT and len(df) == 500
    assert df["id"].is_unique and (np.diff(df["submit"]) >= 0).all()
    assert (df["estimate"] >= df["runtime"]).all() and (df["estimate"] >= 1).all()
    assert (df["duration"] == np.minimum(df["runtime"], df["estimate"])).all()
    assert (df["procs"] >= 1).all() and (df["procs"] <= s.capacity[0]).all()
    for col in ("submit", "runtime", "estimate"):            # whole seconds
        assert (df[col] == np.round(df[col])).all()


@pytest.mark.parametrize("model", MODELS)
def test_deterministic_by_seed(model):
    a, b = workload(model=model, jobs=800, seed=7), workload(model=model, jobs=800, seed=7)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    assert not a.jobs["runtime"].equals(workload(model=model, jobs=800, seed=8).jobs["runtime"])


def test_common_random_numbers_across_estimates_k_and_load():
    base = workload(model="feitelson96", jobs=1000, seed=3)
    phi = workload(model="feitelson96", jobs=1000, seed=3, estimates="phi")
    for col in ("submit", "runtime", "procs"):
        assert base.jobs[col].equals(phi.jobs[col])
    k4 = workload(model="feitelson96", jobs=1000, seed=3, k=4)
    assert (k4.jobs["size"].to_numpy() == base.jobs["procs"].to_numpy()).all()
    faster = workload(model="feitelson96", jobs=1000, seed=3, load_factor=2.0)
    assert faster.jobs["runtime"].equals(base.jobs["runtime"])
    np.testing.assert_allclose(faster.jobs["submit"], base.jobs["submit"] / 2, atol=1.0)


# ---- feitelson96 ([leinberger1999] section 3.1) -------------------------------------------------------
def test_feitelson96_sizes_and_runtimes_match_the_model():
    s = feitelson96(N, seed=11)
    st = stream_stats(s.jobs)
    pmf = feitelson_size_pmf(128)
    sizes, mean, size_cv = pmf_moments(pmf)
    assert st["size_mean"] == pytest.approx(mean, rel=0.2)             # repeats: sd 4.5 % over seeds
    assert st["size_cv"] == pytest.approx(size_cv, rel=0.1)
    assert st["pow2_share"] == pytest.approx(pow2_share(pmf), abs=0.025)
    assert st["serial_share"] == pytest.approx(pmf[0], abs=0.05)
    assert st["pow2_share"] > 0.85 and st["serial_share"] > 0.35        # small sizes and powers of two
    # hyperexponential, long branch (mean 7200 s) w.p. 0.1 + 0.8 log2(s)/7, short 300 s; +0.5 s for ceil
    p_long = 0.1 + 0.8 * np.log2(sizes) / 7
    m1 = pmf @ (p_long * 7200 + (1 - p_long) * 300) + 0.5
    m2 = pmf @ (p_long * 2 * 7200**2 + (1 - p_long) * 2 * 300**2)
    assert st["runtime_mean"] == pytest.approx(m1, rel=0.2)
    assert st["runtime_cv"] == pytest.approx(math.sqrt(m2 - m1**2) / m1, rel=0.1)
    # runtimes correlated with size: larger jobs run longer on average
    df = s.jobs
    assert df.loc[df.procs >= 16, "runtime"].mean() > 2 * df.loc[df.procs == 1, "runtime"].mean()


def test_feitelson96_repeated_runs():
    df = feitelson96(N, seed=12).jobs
    rep = df["prev_job"].to_numpy() >= 0
    # Zipf(2.5) on 1..100 runs: mean runs per job r, share of repeat submissions 1 - 1/r
    r = np.arange(1, 101.0)
    p = r**-2.5 / (r**-2.5).sum()
    assert rep.mean() == pytest.approx(1 - 1 / (p @ r), abs=0.03)
    prev = df.set_index("id").loc[df.loc[rep, "prev_job"]]
    assert (prev["procs"].to_numpy() == df.loc[rep, "procs"].to_numpy()).all()      # same job again
    assert (prev["runtime"].to_numpy() == df.loc[rep, "runtime"].to_numpy()).all()
    assert not feitelson96(2000, seed=12, repeats=False).jobs["prev_job"].ge(0).any()


def test_feitelson96_poisson_arrivals_at_the_offered_load():
    s = feitelson96(N, seed=13, load=0.55)
    assert offered_load(s.jobs, s.capacity) == pytest.approx(0.55, rel=1e-3)
    gaps = np.diff(s.jobs["submit"].to_numpy())
    assert cv(gaps) == pytest.approx(1.0, abs=0.05)                    # exponential gaps: CV 1
    assert stats.kstest(gaps / gaps.mean(), "expon").statistic < 0.02


# ---- lublin03 ----------------------------------------------------------------------------------
def lublin_runtime_moments(pmf, p):
    """E[runtime] and CV of floor(e**X), X the hyper-gamma truncated at 12, computed
    independently of the sampler: sum over m of m**k P(ln m <= X < ln(m + 1))."""
    m = np.arange(1, math.floor(math.exp(12)) + 1, dtype=float)
    edges = np.log(np.r_[m, min(m[-1] + 1, math.exp(12))])
    mom = {}
    for g in (stats.gamma(p["a1"], scale=p["b1"]), stats.gamma(p["a2"], scale=p["b2"])):
        mass = np.diff(g.cdf(edges))
        mom[g] = [mass.sum(), mass @ m, mass @ m**2]
    (z1, a1, b1), (z2, a2, b2) = mom.values()
    prob = np.clip(p["pa"] * np.arange(1, len(pmf) + 1) + p["pb"], 0, 1)
    z = prob * z1 + (1 - prob) * z2                   # redraws above 12 renormalise the mixture
    e1 = pmf @ ((prob * a1 + (1 - prob) * a2) / z)
    e2 = pmf @ ((prob * b1 + (1 - prob) * b2) / z)
    return e1, math.sqrt(e2 - e1**2) / e1


@pytest.mark.parametrize("kind", ["batch", "whole"])
def test_lublin03_sizes_and_runtimes_match_the_model(kind):
    df = lublin03(N, seed=21, job_types=kind).jobs
    st = stream_stats(df)
    p = LUBLIN_PARAMS[kind]
    pmf = lublin_size_pmf(128, kind)
    assert pmf.sum() == pytest.approx(1.0)
    _, mean, size_cv = pmf_moments(pmf)
    assert st["size_mean"] == pytest.approx(mean, rel=0.06)
    assert st["size_cv"] == pytest.approx(size_cv, rel=0.03)
    assert st["serial_share"] == pytest.approx(p["serial"], abs=0.015)
    assert st["pow2_share"] == pytest.approx(pow2_share(pmf), abs=0.01)
    counts = np.bincount(df["procs"], minlength=129)[1:]
    keep = pmf > 1e-3                                                   # other sizes pooled in one bin
    obs = np.r_[counts[keep], counts[~keep].sum()]
    assert stats.chisquare(obs, N * np.r_[pmf[keep], pmf[~keep].sum()]).pvalue > 1e-4
    m1, rcv = lublin_runtime_moments(pmf, p)
    assert st["runtime_mean"] == pytest.approx(m1, rel=0.05)
    assert st["runtime_cv"] == pytest.approx(rcv, rel=0.1)
    assert df["runtime"].max() <= math.exp(12)
    assert df.loc[df.procs >= 32, "runtime"].mean() > df.loc[df.procs == 1, "runtime"].mean()


def test_lublin03_daily_cycle_follows_the_bucket_weights():
    df = lublin03(N, seed=22, job_types="batch").jobs
    bucket = ((df["submit"].to_numpy() % 86400) // 1800).astype(int)
    w = _lublin_weights(LUBLIN_PARAMS["batch"])
    want = w.reshape(8, 6).sum(axis=1) / w.sum()                       # 3-hour blocks
    got = np.bincount(bucket // 6, minlength=8) / len(bucket)
    np.testing.assert_allclose(got, want, atol=0.02)
    assert got[4] > 3 * got[1]                                          # 12-15 h busier than 3-6 h


def test_lublin03_mixed_types_and_load():
    s = lublin03(N, seed=23)
    q = s.jobs["queue"].to_numpy()
    assert set(np.unique(q)) == {0, 1} and 0.1 < (q == 1).mean() < 0.9
    inter = s.jobs[q == 0]
    assert inter["procs"].max() <= round(2**5.5)                        # interactive UHi = 5.5 on 128 nodes
    loaded = lublin03(N, seed=23, load=0.6)
    assert offered_load(loaded.jobs, loaded.capacity) == pytest.approx(0.6, rel=0.03)
    double = lublin03(N, seed=23, load_factor=2.0)
    assert offered_load(double.jobs, double.capacity) == pytest.approx(2 * offered_load(s.jobs, s.capacity), rel=0.05)
    with pytest.raises(ValueError, match="need at least 33 nodes"):
        lublin03(100, processors=16, job_types="interactive")


def test_lublin_size_pmf_on_other_machine_sizes():
    for procs in (64, 100, 256):
        pmf = lublin_size_pmf(procs, "batch")
        assert len(pmf) == procs and pmf.sum() == pytest.approx(1.0)
        df = lublin03(5000, seed=1, processors=procs, job_types="batch").jobs
        assert df["procs"].max() <= procs
        assert stream_stats(df)["size_mean"] == pytest.approx(pmf_moments(pmf)[1], rel=0.1)


# ---- rajaei ([rajaei-dadfar]) ---------------------------------------------------------------------------
def test_rajaei_classes_and_runtime_ranges():
    s = rajaei(N, seed=31, split="estimates")   # the 80/20 split on the estimates (the default splits runtimes)
    df = s.jobs
    assert s.capacity.tolist() == [16]
    for name, lo, hi, share in RAJAEI_CLASSES:
        mine = df[df.job_class == name]
        assert len(mine) / N == pytest.approx(share, abs=0.02)
        assert mine["procs"].min() == lo and mine["procs"].max() == hi
    est, run = df["estimate"].to_numpy(), df["runtime"].to_numpy()
    long = est > 9 * 3600
    assert long.mean() == pytest.approx(0.2, abs=0.015)
    assert est.min() >= 90 and est.max() <= 12 * 3600
    assert run.min() >= 90 and (run <= est).all()
    ratio = run / est
    big = est >= 900                              # above the 90 s floor the ratio is uniform 0.1..1
    assert ratio[big].min() >= 0.1 - 1e-3 and ratio[big].max() <= 1.0
    assert ratio[big].mean() == pytest.approx(0.55, abs=0.01)
    st = stream_stats(df)
    assert st["size_mean"] == pytest.approx(0.3 * 3 + 0.4 * 8 + 0.3 * 13.5, rel=0.01)
    assert offered_load(df, s.capacity) == pytest.approx(0.7, rel=1e-3)
    with pytest.raises(ValueError, match="16 nodes"):
        workload(model="rajaei", processors=32)


# ---- estimate models ([zhang-comparative] section 2.1) -------------------------------------------------------
def test_phi_share_ending_exactly_at_the_estimate():
    df = rajaei(N, seed=41).jobs
    for phi in (0.0, 0.2, 0.5, 1.0):
        out = phi_estimates(df, phi, seed=5)
        exact = out["runtime"].to_numpy() == out["estimate"].to_numpy()
        assert exact.mean() == pytest.approx(phi, abs=0.015)
        assert (out["estimate"] >= out["runtime"]).all()
        if phi < 1:
            frac = (out["runtime"] / out["estimate"]).to_numpy()[~exact]
            assert stats.kstest(frac, "uniform").statistic < 0.02   # runtime / estimate uniform on (0, 1]
    assert out["runtime"].equals(df["runtime"]) and out["submit"].equals(df["submit"])


def test_omega_estimates_of_short_jobs_stay_within_the_model():
    """[zhang-comparative] §2.1: f uniform on [1, 1 + Omega].  Rounding up to
    whole seconds gave a 1 s job an estimate of 2 s at Omega 0.5 on every
    seed, a 3 s job 5 s (1.67); 5.6 % of a lublin03 stream lay above 1.5."""
    df = pd.DataFrame({"id": [1, 2, 3], "submit": [0.0, 1, 2], "runtime": [1.0, 3, 100], "estimate": [1.0, 3, 100],
                       "procs": [1, 1, 1]})
    for seed in range(10):
        out = omega_estimates(df, 0.5, seed=seed)
        f = (out["estimate"] / out["runtime"]).to_numpy()
        assert (f >= 1).all() and (f <= 1.5).all() and (out["estimate"] % 1 == 0).all(), (seed, f)


def test_omega_overestimation_factor_and_effect():
    df = rajaei(N, seed=42).jobs
    assert (omega_estimates(df, 0.0)["estimate"] == df["runtime"]).all()     # Omega = 0: perfect
    prev = None
    for omega in (0.5, 1.0, 3.0):
        out = omega_estimates(df, omega, seed=6)
        f = (out["estimate"] / out["runtime"]).to_numpy()
        assert f.min() >= 1 and f.max() <= 1 + omega + 1e-12
        assert f.mean() == pytest.approx(1 + omega / 2, rel=0.01)
        if prev is not None:                                 # same draws: a larger Omega never lowers an estimate
            assert (out["estimate"].to_numpy() >= prev).all()
        prev = out["estimate"].to_numpy()
    assert (perfect_estimates(df)["estimate"] == df["runtime"]).all()
    with pytest.raises(ValueError):
        omega_estimates(df, -1)
    with pytest.raises(ValueError):
        phi_estimates(df, 1.5)


@pytest.mark.skipif(not KTH.exists(), reason=f"KTH SWF trace missing at {KTH} (set EPOCHBENCH_DATA)")
def test_estimate_models_on_a_real_trace():
    w = read_swf(KTH)
    out = with_estimates(w.jobs, "phi", phi=0.2, seed=1)
    pos = out["runtime"].to_numpy() > 0
    exact = (out["runtime"] == out["estimate"]).to_numpy()[pos]
    assert exact.mean() == pytest.approx(0.2, abs=0.015)
    assert (out["req_time"] == out["estimate"]).all() and (out["duration"] == out["runtime"]).all()
    om = with_estimates(w.jobs, "omega", omega=2.0, seed=1)
    assert (om["estimate"] >= om["runtime"]).all()
    scaled = scale_arrivals(w.jobs, 2.0)
    assert offered_load(scaled, w.capacity) == pytest.approx(2 * offered_load(w.jobs, w.capacity), rel=1e-3)


# ---- K-resource extension ([leinberger1999] section 3.1) ---------------------------------------------------
@pytest.mark.parametrize("k", [2, 4, 8])
@pytest.mark.parametrize("dist", ["uniform", "exponential"])
def test_k_resources_scaled_by_job_size(k, dist):
    s = workload(model="feitelson96", jobs=4000, seed=51, k=k, dist=dist, repeats=False)   # a draw per row
    df = s.jobs                                                                           # (reruns repeat theirs)
    assert s.capacity.tolist() == [128] + [1000] * (k - 1)
    res = [f"res_{r}" for r in range(1, k)]
    assert [c for c in df.columns if c.startswith("res_")] == res
    demand = df[["procs", *res]].to_numpy()
    assert (demand >= 1).all() and (demand <= s.capacity).all()
    size = df["size"].to_numpy()
    # norm "max": the largest requirement is exactly the job's share size / P
    top = np.ceil(size[:, None] / 128 * s.capacity[None, :] - 1e-9)
    assert (demand == top).any(axis=1).all() and (demand <= top).all()
    assert (df["procs"] <= size).all()
    # uniform: E[r_k / max] = (K + 1) / (2K) per extra resource; exponential spreads more
    ratio = df[res].to_numpy() / top[:, 1:]
    big = size >= 32                              # ceil rounding negligible
    if dist == "uniform":
        assert ratio[big].mean() == pytest.approx((k + 1) / (2 * k), abs=0.03)
    else:
        assert ratio[big].mean() < (k + 1) / (2 * k) - 0.03
    assert offered_load(df, s.capacity) == pytest.approx(0.7, rel=1e-2)


def test_k_resources_on_any_stream_and_bad_input():
    df = rajaei(500, seed=1).jobs
    out, cap, meta = k_resources(df, 16, 3, dist="exponential", norm="mean", seed=2)
    assert cap.tolist() == [16, 1000, 1000] and meta["k"] == 3
    assert (out[["procs", "res_1", "res_2"]].to_numpy() <= cap).all()
    same, cap1, _ = k_resources(df, 16, 1)
    pd.testing.assert_frame_equal(same, df)
    with pytest.raises(ValueError, match="sizes must lie"):
        k_resources(df, 8, 2)
    with pytest.raises(ValueError, match="already has res_"):
        k_resources(out, 16, 2)


# ---- load control ------------------------------------------------------------------------------------
def test_load_control_scales_arrivals_or_runtimes():
    s = feitelson96(3000, seed=61)
    df, cap = s.jobs, s.capacity
    fast = scale_arrivals(df, 2.0)
    np.testing.assert_allclose(np.diff(fast["submit"]), np.diff(df["submit"]) / 2)
    assert offered_load(fast, cap) == pytest.approx(2 * offered_load(df, cap))
    longer = scale_runtimes(df, 1.5)
    assert (longer["runtime"] == 1.5 * df["runtime"]).all() and longer["submit"].equals(df["submit"])
    assert (longer["duration"] == 1.5 * df["duration"]).all()
    assert offered_load(longer, cap) == pytest.approx(1.5 * offered_load(df, cap))
    assert offered_load(set_load(df, cap, 0.9), cap) == pytest.approx(0.9)
    w = workload(model="rajaei", jobs=3000, seed=61, runtime_factor=1.4)
    base = workload(model="rajaei", jobs=3000, seed=61)
    assert w.jobs["submit"].equals(base.jobs["submit"])
    np.testing.assert_allclose(w.jobs["runtime"], np.ceil(base.jobs["runtime"] * 1.4 - 1e-9))
    with pytest.raises(ValueError):
        scale_arrivals(df, 0)


def test_saturated_alternates_overload_and_underload():
    s = feitelson96(6000, seed=62, processors=256)
    df, cap = s.jobs, s.capacity
    out = saturated(df, cap, high=1.5, low=0.5, period=1000)
    assert out["id"].equals(df["id"]) and out["runtime"].equals(df["runtime"])
    assert (np.diff(out["submit"]) >= 0).all() and (out["submit"] == np.round(out["submit"])).all()
    t, work = out["submit"].to_numpy(), (out["procs"] * out["duration"]).to_numpy() / cap[0]
    for b in range(6):  # each block's own load: its work over the gaps up to its jobs (whole seconds aside)
        span = t[(b + 1) * 1000 - 1] - t[max(b * 1000 - 1, 0)]
        assert work[b * 1000:(b + 1) * 1000].sum() / span == pytest.approx(1.5 if b % 2 == 0 else 0.5, rel=0.01)
    assert saturated(df, cap, high=1.5, low=0.5, period=1000).equals(out)
    for bad in (dict(high=0), dict(low=-1), dict(period=0)):
        with pytest.raises(ValueError):
            saturated(df, cap, **bad)


def test_saturated_targets_each_blocks_bottleneck_resource_with_several_resources():
    """The load of a block is its busiest resource's (offered_load), not
    the sum of each job's largest share: with K = 3 that gave 0.99 / 0.50
    for 1.4 / 0.7."""
    import epochbench as eb
    from epochbench.instances.streams import offered_load
    s = eb.generate("workload", jobs=4000, seed=2, k=3)
    out = saturated(s.jobs, s.capacity, high=1.4, low=0.7, period=1000)
    t = out["submit"].to_numpy()
    cap = np.asarray(s.capacity, dtype=float)
    demand = out[["procs", "res_1", "res_2"]].to_numpy(dtype=float) * out["duration"].to_numpy()[:, None]
    for b in range(4):   # each block's bottleneck work over the gaps up to its jobs (whole seconds aside)
        span = t[(b + 1) * 1000 - 1] - t[max(b * 1000 - 1, 0)]
        load = (demand[b * 1000:(b + 1) * 1000].sum(axis=0) / cap).max() / span
        assert load == pytest.approx(1.4 if b % 2 == 0 else 0.7, rel=0.02)
        assert offered_load(out.iloc[b * 1000:(b + 1) * 1000], s.capacity) == pytest.approx(load, rel=0.01)


# ---- files and CLI ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(model="feitelson96", k=4, dist="exponential", estimates="phi"),
                                dict(model="lublin03"), dict(model="rajaei", estimates="omega", omega=2.0)])
def test_swf_round_trip(tmp_path, kw):
    s = workload(jobs=700, seed=4, **kw)
    path = write_workload(tmp_path / "w.swf", jobs=700, seed=4, **kw)
    w = read_swf(path)
    assert w.capacity.tolist() == s.capacity.tolist()
    pd.testing.assert_frame_equal(w.jobs[list(s.jobs.columns)], s.jobs, check_dtype=False)
    csv = write_workload(tmp_path / "w.csv", jobs=700, seed=4, **kw)
    pd.testing.assert_frame_equal(read_table(csv).jobs[list(s.jobs.columns)], s.jobs, check_dtype=False)


def test_cli_generate_workload(tmp_path, capsys):
    assert "workload" in GENERATORS
    code = main(["generate", "workload", "--model", "feitelson96", "--out", str(tmp_path), "--jobs", "300",
                 "--seed", "5", "--k", "2", "--dist", "uniform", "--estimates", "omega", "--omega", "1.5",
                 "--load-factor", "1.2"])
    out = capsys.readouterr().out
    path = tmp_path / "feitelson96-K2-uniform-omega1.5-n300-s0005-load_factor1.2.swf"
    assert code == 0 and f"wrote workload to {path}" in out
    w = read_swf(path)
    want = workload(model="feitelson96", jobs=300, seed=5, k=2, estimates="omega", omega=1.5, load_factor=1.2)
    pd.testing.assert_frame_equal(w.jobs[list(want.jobs.columns)], want.jobs, check_dtype=False)
    assert main(["generate", "workload", "--model", "rajaei", "--processors", "8", "--out", str(tmp_path)]) == 2
    assert "16 nodes" in capsys.readouterr().err


def test_a_folder_gets_a_file_named_after_every_option_not_at_its_default(tmp_path, capsys):
    """Only model, K, estimates, jobs and seed named the file: a second
    stream at another load or machine size was refused as 'already exists'."""
    from epochbench.cli import main
    for extra in ([], ["--load", "0.9"], ["--processors", "64", "--load-factor", "1.5"], ["--load", "0.7"]):
        assert main(["generate", "workload", "--out", str(tmp_path / "w"), "--jobs", "30", *extra]) == 0
    assert sorted(p.name for p in (tmp_path / "w").glob("*.swf")) == [
        "feitelson96-n30-s0000-load0.7.swf", "feitelson96-n30-s0000-load0.9.swf",
        "feitelson96-n30-s0000-load_factor1.5-processors64.swf", "feitelson96-n30-s0000.swf"]
    assert main(["generate", "workload", "--out", str(tmp_path / "w"), "--jobs", "30", "--load", "0.9"]) == 2
    assert "already exists" in capsys.readouterr().err                  # the same options: still never overwritten
    from epochbench.instances.workloads import _default_name
    base = {"model": "feitelson96", "jobs": 30, "seed": 0}
    names = [_default_name(base, given) for given in ({"load": 0.9}, {"load": 0.9000001}, {"processors": 10**6},
                                                       {"processors": 10**6 + 1}, {"repeats": 0}, {"repeats": False})]
    assert len(set(names)) == 5 and names[4] == names[5]             # values in full; a switch by its truth
    omega = [_default_name({**base, "estimates": "omega", "omega": w}) for w in (1.5, 1.5000001, 2.0)]
    assert omega == ["feitelson96-omega1.5-n30-s0000.swf", "feitelson96-omega1.5000001-n30-s0000.swf",
                     "feitelson96-omega2-n30-s0000.swf"]
    assert _default_name(base, {"fit": "/tmp/\udcff.swf"}).startswith("feitelson96-n30-s0000-fit")  # any bytes


def test_a_rerun_asks_the_resources_of_its_first_run():
    """feitelson96's repeat count submits the same job again (same size and
    runtime); with K > 1 each run drew its own requirements (a size-32 job
    asked 5 processors, then 2)."""
    from epochbench.instances.workloads import workload
    s = workload(model="feitelson96", jobs=600, seed=0, k=3)
    j = s.jobs
    reruns = j[j["prev_job"] != -1]
    assert len(reruns) > 100
    first = j.set_index("id")
    cols = ["procs", "res_1", "res_2", "size", "runtime"]
    assert (first.loc[reruns["prev_job"], cols].to_numpy() == reruns[cols].to_numpy()).all()
    plain = workload(model="feitelson96", jobs=600, seed=0, k=3, repeats=False).jobs
    assert (plain["prev_job"] == -1).all()


def test_the_leinberger_experiment_runs_jobs_without_repeats(monkeypatch):
    """[leinberger1999] section 3.1 used "the job size and runtime
    characteristics" of the Feitelson model, not its repeat count."""
    import epochbench.instances.workloads as wmod
    from epochbench.experiments import leinberger
    seen = []
    real = wmod.workload
    monkeypatch.setattr(wmod, "workload", lambda **kw: seen.append(kw) or real(**{**kw, "jobs": 60}))
    monkeypatch.setattr(leinberger, "ARMS", {"ff-easy": ("ff-easy", None)})
    leinberger.run({"k": 2, "dist": "uniform", "queue": 8, "seed": 0, "jobs": 60})
    assert seen and seen[0].get("repeats") is False


def test_reruns_of_any_table_end_and_repeated_ids_draw_per_row():
    """k_resources reads prev_job on any stream: a chain that loops (3 rows
    naming each other) hung, repeated ids raised pandas' InvalidIndexError;
    only an earlier row can be the run before."""
    base = {"submit": [0.0, 1, 2, 3], "runtime": [5.0] * 4, "estimate": [5.0] * 4, "procs": [4] * 4}
    loop = pd.DataFrame({"id": [1, 2, 3, 4], "prev_job": [3, 1, 2, -1], **base})     # 1 <- 2 <- 3 <- 1
    out = k_resources(loop, 16, 2, seed=1)[0]
    assert out.loc[1, ["procs", "res_1"]].tolist() == out.loc[0, ["procs", "res_1"]].tolist()   # 2 reruns 1
    assert out.loc[2, ["procs", "res_1"]].tolist() == out.loc[0, ["procs", "res_1"]].tolist()   # 3 reruns 2
    twice = pd.DataFrame({"id": [1, 1, 2, 3], "prev_job": [-1, 1, 1, 2], **base})
    assert len(k_resources(twice, 16, 2, seed=1)[0]) == 4


def test_cli_generate_names_the_sidecar_and_the_seeds_default(tmp_path, capsys):
    """The line named the SWF file alone though a sidecar was written beside
    it, and --seed's help gave no default ("default_rng" read as one)."""
    path = tmp_path / "r.swf"
    assert main(["generate", "workload", "--model", "rajaei", "--jobs", "50", "--out", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"wrote workload to {path} and its sidecar {path}.extra.csv" in out
    with pytest.raises(SystemExit):
        main(["generate", "leinberger", "--help"])
    assert "seed of numpy.random.default_rng (default 0)" in " ".join(capsys.readouterr().out.split())


# -- rules a one-token change broke unseen (mutation review, round 5) --
def test_scale_runtimes_keeps_an_unknown_requested_time():
    """SWF's -1 (unknown) in req_time stays -1; a known one is scaled."""
    jobs = pd.DataFrame({"runtime": [10.0, 20.0], "estimate": [10.0, 40.0], "req_time": [-1.0, 40.0]})
    out = scale_runtimes(jobs, 2.0)
    assert out["req_time"].tolist() == [-1.0, 80.0]
    assert out["runtime"].tolist() == [20.0, 40.0] and out["estimate"].tolist() == [20.0, 80.0]


def test_round_times_ignores_float_noise_above_a_whole_second():
    """0.1 * 3 * 10 is 3.0000000000000004: a runtime of 3 s, not 4 s."""
    from epochbench.instances.streams import _frame, _round_times
    noisy = 0.1 * 3 * 10
    assert noisy > 3.0
    df = _round_times(_frame([1, 2], [0.0, 1.0], [noisy, 2.5], [noisy, 2.5], [1, 1]))
    assert df["runtime"].tolist() == [3.0, 3.0] and df["estimate"].tolist() == [3.0, 3.0]
    assert df["duration"].tolist() == [3.0, 3.0]


def test_lublin_mixed_ties_put_interactive_first():
    """m_lublin99.c: a batch and an interactive job arriving in the same
    second are taken interactive (queue 0) first, so it gets the lower id."""
    df = lublin03(n=2000, seed=1).jobs
    s, q = df["submit"].to_numpy(), df["queue"].to_numpy()
    tie = (s[1:] == s[:-1]) & (q[1:] != q[:-1])
    assert tie.any()
    assert (q[:-1][tie] == 0).all() and (q[1:][tie] == 1).all()
