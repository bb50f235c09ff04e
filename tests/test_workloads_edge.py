"""Workload generators at the edges of their parameters."""
import pytest


def test_lublin03_reaches_its_load_where_a_rate_does():
    """The fixed point on the rate factor stopped on the load's jumps: load
    3.0 at seed 4 gave 2.671, 0.2 with 200 jobs 0.177; bisection finds the
    rate (within 1e-4), or the nearest side of a jump it cannot cross."""
    from epochbench.instances.workloads import offered_load, workload
    for load, seed, jobs in ((3.0, 4, 1000), (0.5, 5, 1000), (0.2, 4, 200)):
        s = workload(model="lublin03", jobs=jobs, seed=seed, load=load)
        assert abs(offered_load(s.jobs, s.capacity) / load - 1) < 1e-4, (load, seed, jobs)


def test_k_resources_never_ask_more_processors_than_the_size_for_float_error():
    """7 / 100 * 100 = 7.000000000000001 asked for 8 processors of a job of
    7 on a machine of 100 (63 jobs of 20,000)."""
    from epochbench.instances.workloads import workload
    s = workload(model="feitelson96", processors=100, k=2, capacity=300, jobs=5000, seed=9)
    assert (s.jobs["procs"] <= s.jobs["size"]).all()


def test_a_tiny_runtime_factor_writes_positive_runtimes_and_no_negative_zero(tmp_path, monkeypatch):
    """runtime_factor 1e-10 took lublin03's runtimes (>= 1 s) below the
    1e-9 float allowance of the rounding up: ceil(-9e-10) wrote runtimes
    and durations of -0.0 ("-0" in the CSV).  A positive runtime rounds up
    to at least 1 s, as "rounded up to whole seconds" says."""
    import numpy as np

    from epochbench.cli import main
    from epochbench.instances.workloads import workload
    s = workload(model="lublin03", jobs=200, seed=0, runtime_factor=1e-10)
    for col in ("submit", "runtime", "estimate", "duration"):
        v = s.jobs[col].to_numpy()
        assert not (np.signbit(v) & (v == 0)).any(), col
    assert (s.jobs["runtime"] == 1.0).all() and (s.jobs["duration"] == 1.0).all()
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path))
    out = tmp_path / "w.csv"
    assert main(["generate", "workload", "--model", "lublin03", "--jobs", "200", "--runtime-factor", "1e-10",
                 "--out", str(out)]) in (0, None)
    rows = out.read_text().splitlines()[2:]
    assert rows and not any("-0" in f for r in rows for f in r.split(","))


def test_no_written_job_table_says_negative_zero(tmp_path):
    """Every CSV, SWF and Parquet writer goes through one arrow column
    converter, which writes a float -0.0 as 0: a table whose times are
    fractions (no integer SWF columns) wrote "-0"."""
    import numpy as np

    from epochbench.instances.jobs import load_workload, make_workload, save_workload
    w = make_workload({"id": [1, 2], "submit": [-0.0, 0.5], "runtime": [-0.0, 2.5], "procs": [1, 1],
                       "estimate": [3.5, 4.0]}, 4)
    for name in ("t.csv", "t.swf", "t.parquet"):
        path = save_workload(w, tmp_path / name)
        if name != "t.parquet":
            body = [r for r in path.read_text().splitlines() if not r.startswith((";", "#"))]
            assert not any(f == "-0" for r in body for f in r.replace(",", " ").split()), name
        back = load_workload(path)
        for col in ("submit", "runtime"):
            v = np.asarray(back.table[col])
            assert not np.signbit(v[v == 0]).any(), (name, col)


def _note_params(path) -> dict:
    """The generator parameters that ``generate workload`` wrote to an SWF header's Note."""
    import json
    line = next(r for r in path.read_text().splitlines() if "generator parameters" in r)
    return json.loads(line.split("generator parameters ", 1)[1])


def test_the_header_records_the_load_and_fit_used_not_none(tmp_path, monkeypatch):
    """The Note recorded "load": null where the default load 0.7 set the
    arrivals (feitelson96, rajaei, K > 1), and "fit": null, "he_params":
    null alone where the built-in KTH SP2 fit made the stream.  null stays
    where no load was set (lublin03 and hypererlang keep their own
    arrivals)."""
    from epochbench.cli import main
    from epochbench.instances.workloads import DEFAULT_LOAD
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path))
    runs = {"f": ["--model", "feitelson96"], "r": ["--model", "rajaei"], "k": ["--k", "2"],
            "l": ["--model", "lublin03"], "l5": ["--model", "lublin03", "--load", "0.5"],
            "h": ["--model", "hypererlang"]}
    got = {}
    for name, argv in runs.items():
        out = tmp_path / f"{name}.swf"
        assert main(["generate", "workload", "--jobs", "30", *argv, "--out", str(out)]) in (0, None)
        got[name] = _note_params(tmp_path / f"{name}.swf")
    assert [got[n]["load"] for n in ("f", "r", "k", "l", "l5", "h")] == [DEFAULT_LOAD] * 3 + [None, 0.5, None]
    assert got["h"]["fit"] is None and got["h"]["he_params"] is None
    assert "KTH" in got["h"]["fit_source"]


def test_lublin03_at_a_very_low_load_needs_no_bucket_per_day():
    """The arrival clock laid out every half-hour bucket of every day: 1,000
    jobs at load 1e-6 span 31 million days, 11 GiB (a MemoryError, or the
    process killed); whole days are spent first on such a stream."""
    import resource
    from epochbench.instances.streams import offered_load
    from epochbench.instances.workloads import lublin03
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    s = lublin03(1000, load=1e-6, seed=1)
    assert abs(offered_load(s.jobs, s.capacity) / 1e-6 - 1) < 1e-3
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 1_000_000       # KiB: under 1 GiB more


def test_lublin03_clock_by_whole_days_agrees_with_the_day_by_day_sum(monkeypatch):
    import numpy as np
    import epochbench.instances.workloads as W
    rng = np.random.default_rng(0)
    w = W._lublin_weights(W._lublin_shape("batch", 128))
    points = np.cumsum(rng.exponential(5.0, 20_000))
    day_by_day = W._warp(points, w)
    monkeypatch.setattr(W, "_WARP_BUCKETS", 10)
    whole_days = W._warp(points, w)
    assert np.abs(whole_days - day_by_day).max() < 0.01 and (np.diff(whole_days) >= 0).all()


def test_saturated_refuses_a_capacity_that_does_not_match_the_resources():
    """A K = 4 stream with capacity [128] had every resource divided by 128
    (block loads 0.18 / 0.09 for 1.4 / 0.7); 3 entries a broadcast error."""
    import pytest
    from epochbench.instances.workloads import feitelson96, k_resources, saturated
    s = feitelson96(400, seed=1)
    jobs, cap, _ = k_resources(s.jobs, 128, 4, seed=3)
    for wrong in ([128], [128, 1000, 1000]):
        with pytest.raises(ValueError, match=f"capacity has {len(wrong)} entries but the stream has procs "
                                             r"\+ 3 resource columns"):
            saturated(jobs, wrong, period=100)
    saturated(jobs, cap, period=100)


@pytest.mark.parametrize("kw, message", [
    (dict(p_pow2=1.5), r"p_pow2 must be a number in \[0.0, 1\], got 1.5"),
    (dict(p_pow2=float("nan")), "p_pow2 must be a finite number, got nan"),
    (dict(p_pow2=None), "p_pow2 must be a finite number, got None"),
    (dict(repeats="no"), "repeats must be True or False, got 'no'"),
    (dict(zipf=0), "zipf must be a positive number, got 0"),
    (dict(zipf=-3.0), "zipf must be a positive number, got -3.0"),
])
def test_feitelson96_refuses_bad_parameters_in_one_line(kw, message):
    """From Python they went unchecked: numpy's "Probabilities are not
    non-negative", repeats="no" run as True (and recorded so), zipf=-3 two
    distinct jobs in 100."""
    from epochbench.instances.workloads import feitelson96, workload
    with pytest.raises(ValueError, match=f"^{message}$"):
        feitelson96(100, seed=1, **kw)
    if "zipf" not in kw:                        # workload() has no zipf
        with pytest.raises(ValueError, match=f"^{message}$"):
            workload(model="feitelson96", jobs=100, seed=1, **kw)


def test_lublin03_on_a_small_machine_says_how_many_nodes_each_job_type_needs():
    """UMed moves with log2(P) - 7 and ULow stays: interactive jobs need 33
    nodes, batch 10; the message said "UMed=1.00 below ULow=1.0" at 32 and
    named no way out."""
    from epochbench.instances.workloads import lublin03
    with pytest.raises(ValueError, match=r"^lublin03's interactive jobs need at least 33 nodes \(processors=32 puts "
                                         r"UMed=1.00 at or below ULow=1.0\); job_types 'batch' and 'whole' run "
                                         r"from 10 and 10$"):
        lublin03(100, processors=32)
    assert len(lublin03(100, processors=33).jobs) == len(lublin03(100, processors=10, job_types="batch").jobs) == 100
    with pytest.raises(ValueError, match="batch jobs need at least 10 nodes"):
        lublin03(100, processors=9, job_types="batch")


@pytest.mark.parametrize("kw", [dict(jobs=1000, load_factor=1e6), dict(jobs=100, load=1e4)])
def test_a_load_that_puts_every_arrival_at_one_time_is_refused(kw):
    """Rounded to whole seconds every arrival fell at 0: a stream with an
    undefined offered load (NaN in its header), without a word."""
    from epochbench.instances.workloads import workload
    with pytest.raises(ValueError, match=f"^every one of the {kw['jobs']} arrivals falls at time 0 once times are "
                                         r"whole seconds \(--load"):
        workload(**kw)
    assert workload(jobs=1000, load=50.0).meta["offered_load"] == pytest.approx(50.0, rel=1e-3)
