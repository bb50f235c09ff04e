"""Hyper-Erlang of common order (instances/hypererlang.py, [zhang-comparative] section
2.1 after [jann1997]): three-moment fits, parameter recovery from a
sample, the fit to KTH, and ``generate workload --model hypererlang``."""
import json
import re

import numpy as np
import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.instances.data import data_root
from epochbench.instances.hypererlang import (KTH_PARAMS, HyperErlang, fit_moments, fit_sample, fit_trace, hypererlang,
                                   load_params, sample_stream, size_classes)
from epochbench.instances.workloads import offered_load, workload

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"


def moments(he):
    return [he.moment(k) for k in (1, 2, 3)]


def test_moments_of_a_hyper_erlang_by_hand():
    # Erlang(2, 0.5): mean 4, E[X^2] = 2*3/0.25 = 24, E[X^3] = 2*3*4/0.125 = 192
    he = HyperErlang(2, (1.0,), (0.5,))
    assert moments(he) == pytest.approx([4.0, 24.0, 192.0])
    mix = HyperErlang(1, (0.25, 0.75), (1.0, 0.1))     # 0.25 Exp(1) + 0.75 Exp(0.1)
    assert mix.mean == pytest.approx(0.25 + 7.5)
    assert mix.moment(2) == pytest.approx(2 * (0.25 + 0.75 * 100))


@pytest.mark.parametrize("he", [HyperErlang(2, (0.5, 0.5), (0.1, 1.0)), HyperErlang(3, (0.8, 0.2), (0.1, 1.0)),
                                HyperErlang(1, (0.1, 0.9), (0.001, 0.05))])
def test_exact_moments_give_back_the_parameters(he):
    # each of these has no smaller order that matches its three moments, so the fit is the distribution
    fit = fit_moments(*moments(he))
    assert fit.order == he.order and fit.matched == 3
    assert fit.probs == pytest.approx(he.probs, rel=1e-7)
    assert fit.rates == pytest.approx(he.rates, rel=1e-7)


def test_parameters_recovered_from_a_large_sample():
    # 10^6 draws, fixed seed.  Over seeds 0-4 the worst errors were 0.002 in the probabilities and 2 %
    # in the fast branch's rate (the third sample moment is the noisy one): 0.01 and 5 % leave room.
    he = HyperErlang(2, (0.5, 0.5), (0.1, 1.0))
    fit = fit_sample(he.sample(np.random.default_rng(0), 1_000_000))
    assert fit.order == 2 and fit.matched == 3
    assert np.abs(np.subtract(fit.probs, he.probs)).max() < 0.01
    assert fit.rates == pytest.approx(he.rates, rel=0.05)


def test_over_dispersive_data_get_a_hyperexponential():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.exponential(10.0, 50_000), rng.exponential(1000.0, 5_000)])
    fit = fit_sample(x)
    assert fit.order == 1 and fit.matched == 3
    assert moments(fit) == pytest.approx([np.mean(x), np.mean(x ** 2), np.mean(x ** 3)], rel=1e-9)


def test_fallbacks_keep_the_mean():
    const = fit_sample(np.full(10, 7.0))             # no variance: exponential with the mean, flagged
    assert const.mean == pytest.approx(7.0) and const.matched == 1
    few = fit_sample([3.0, 5.0])
    assert few.mean == pytest.approx(4.0) and few.matched == 1
    # a variable at the bound m1 m3 = m2^2 (two-point 1 / 1.0001) matches no order: one Erlang with its mean
    tight = fit_moments(1.0, 1.0 + 1e-4, (1.0 + 1e-4) ** 2, max_order=50)
    assert tight.mean == pytest.approx(1.0) and tight.matched < 3 and len(tight.probs) == 1
    with pytest.raises(ValueError, match="positive"):
        fit_moments(0.0, 1.0, 1.0)


def test_size_classes_are_power_of_two_bins():
    assert size_classes([1, 2, 3, 4, 5, 8, 9, 16, 17, 100]).tolist() == [0, 1, 2, 2, 3, 3, 4, 4, 5, 7]


@pytest.mark.skipif(not KTH.exists(), reason=f"KTH trace absent at {KTH} (set EPOCHBENCH_DATA)")
def test_fit_to_kth_matches_the_traces_moments():
    from epochbench.instances.jobs import read_swf

    w = read_swf(KTH)
    jobs = w.jobs
    p = fit_trace(jobs, int(w.capacity[0]), source="KTH")
    assert p["processors"] == 100 and [c["cls"] for c in p["classes"]] == list(range(8))
    # the built-in default is this fit
    assert p["jobs"] == KTH_PARAMS["jobs"] and p["span"] == KTH_PARAMS["span"]
    for mine, built in zip(p["classes"], KTH_PARAMS["classes"]):
        assert mine["sizes"] == built["sizes"] and mine["probs"] == pytest.approx(built["probs"], rel=1e-12)
        for q in ("interarrival", "runtime"):
            assert mine[q]["order"] == built[q]["order"]
            assert mine[q]["probs"] == pytest.approx(built[q]["probs"], rel=1e-12)
            assert mine[q]["rates"] == pytest.approx(built[q]["rates"], rel=1e-12)
    # per class, the fit has the trace's first three moments of interarrival time and runtime (exactly,
    # up to rounding: the fit is closed form) -- [zhang-comparative] section 2.1 step 2
    for c in p["classes"]:
        assert c["interarrival"]["matched"] == 3 and c["runtime"]["matched"] == 3
        for q in ("interarrival", "runtime"):
            assert moments(HyperErlang.from_dict(c[q])) == pytest.approx(c["moments"][q], rel=1e-7)
    # the whole stream: 200,000 jobs.  Standard errors of the sample means are ~0.5 % (CV 2.4 / sqrt(2e5));
    # the class mix follows each class's fitted rate, which uses the span of that class's own arrivals and
    # so differs from the trace's counts by up to a few per cent (measured: runtime +0.4 %, size -1.5 %,
    # interarrival -0.9 %).  Hence 5 % on the means and 10 % on the runtime CV (a second-moment ratio).
    submit, run, procs, _ = sample_stream(p, 200_000, np.random.default_rng(0))
    trace_gap = np.diff(np.sort(jobs["submit"].to_numpy(dtype=float)))
    assert run.mean() == pytest.approx(jobs["runtime"].mean(), rel=0.05)
    assert run.std() / run.mean() == pytest.approx(jobs["runtime"].std() / jobs["runtime"].mean(), rel=0.10)
    assert procs.mean() == pytest.approx(jobs["procs"].mean(), rel=0.05)
    assert np.diff(submit).mean() == pytest.approx(trace_gap.mean(), rel=0.05)
    shares = pd.Series(size_classes(procs)).value_counts(normalize=True).sort_index()
    trace_shares = pd.Series(size_classes(jobs["procs"])).value_counts(normalize=True).sort_index()
    assert np.abs(shares.to_numpy() - trace_shares.to_numpy()).max() < 0.03


def small_params():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"submit": np.cumsum(rng.exponential(60.0, 400)), "runtime": rng.exponential(600.0, 400),
                       "procs": rng.integers(1, 33, 400)})
    return fit_trace(df, 32, source="synthetic")


def test_streams_are_deterministic_and_load_is_settable():
    p = small_params()
    a = hypererlang(500, seed=3, params=p)
    b = hypererlang(500, seed=3, params=json.dumps(p))
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    assert not a.jobs.equals(hypererlang(500, seed=4, params=p).jobs)
    assert a.jobs["submit"].iloc[0] == 0 and (np.diff(a.jobs["submit"]) >= 0).all()
    assert (a.jobs["runtime"] >= 1).all() and a.jobs["procs"].between(1, 32).all()
    loaded = workload(model="hypererlang", jobs=500, seed=3, he_params=json.dumps(p), load=0.8)
    assert offered_load(loaded.jobs, loaded.capacity) == pytest.approx(0.8, rel=0.02)
    assert (loaded.jobs["procs"] == a.jobs["procs"]).all()      # load moves the arrivals only


def test_bad_parameters_name_the_field(tmp_path):
    p = small_params()
    broken = json.loads(json.dumps(p))
    broken["classes"][0]["runtime"]["probs"] = [0.5, 0.2]
    with pytest.raises(ValueError, match=r"classes\[0\]\.runtime"):
        load_params(broken)
    with pytest.raises(ValueError, match="not both"):
        hypererlang(10, fit="x.swf", params=p)
    with pytest.raises(ValueError, match="hypererlang only"):
        workload(model="lublin03", jobs=10, fit="x.swf")
    with pytest.raises(ValueError, match="processors"):
        hypererlang(10, params=p, processors=8)
    missing = tmp_path / "none.json"
    with pytest.raises(ValueError, match="cannot read"):
        load_params(str(missing))
    for text in ("[1,2]", "null", '"x"', "5", "1.5"):            # read as a file name: "cannot read [1,2]: No such file"
        with pytest.raises(ValueError, match=r"is JSON but not an object \(the parameters fit_trace writes"):
            load_params(text)


def test_cli_fits_a_trace_and_replays_the_parameters(tmp_path):
    trace = tmp_path / "t.csv"
    rng = np.random.default_rng(2)
    pd.DataFrame({"id": np.arange(1, 301), "submit": np.cumsum(rng.exponential(30.0, 300)).round(),
                  "runtime": np.ceil(rng.exponential(300.0, 300)), "procs": rng.integers(1, 17, 300)}
                 ).to_csv(trace, index=False)
    params = tmp_path / "he.json"
    assert main(["generate", "workload", "--model", "hypererlang", "--fit", str(trace), "--he-out", str(params),
                 "--jobs", "200", "--seed", "7", "--out", str(tmp_path / "a.csv")]) == 0
    assert json.loads(params.read_text())["model"] == "hypererlang"
    assert main(["generate", "workload", "--model", "hypererlang", "--he-params", str(params),
                 "--jobs", "200", "--seed", "7", "--out", str(tmp_path / "b.csv")]) == 0
    from epochbench.instances.jobs import load_workload
    a, b = load_workload(tmp_path / "a.csv").jobs, load_workload(tmp_path / "b.csv").jobs
    assert len(a) == 200 and a[["submit", "runtime", "procs"]].equals(b[["submit", "runtime", "procs"]])


def test_the_jobs_a_fit_trace_loses_on_reading_are_said_and_recorded(tmp_path, capsys):
    """The model was fitted to the jobs the reader kept (2 of 6 too wide
    for the trace's machine) without a word on stderr, in the header or in
    --he-out."""
    lines = ["; MaxProcs: 4"] + [f"{i} {i} -1 100 {p} -1 -1 {p} 100 -1 1 1 1 1 1 1 -1 -1"
                                 for i, p in enumerate((6, 6, 4, 4, 2, 2), start=1)]
    (tmp_path / "t.swf").write_text("\n".join(lines) + "\n")
    out, params = tmp_path / "w.swf", tmp_path / "he.json"
    assert main(["generate", "workload", "--model", "hypererlang", "--fit", str(tmp_path / "t.swf"), "--jobs", "20",
                 "--out", str(out), "--he-out", str(params)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fitted to 4 of its jobs; its reader dropped too_many_processors 2" in err
    assert json.loads(params.read_text())["dropped"] == {"too_many_processors": 2}
    assert 'reader dropped: {"too_many_processors": 2}' in out.read_text()
    assert main(["generate", "workload", "--model", "hypererlang", "--he-params", str(params), "--jobs", "20",
                 "--out", str(tmp_path / "again.swf")]) == 0          # the parameters, drops recorded, read back
    assert capsys.readouterr().err == "" and "dropped" not in (tmp_path / "again.swf").read_text()


def test_he_out_never_overwrites_and_a_refused_stream_writes_nothing(tmp_path, capsys):
    def gen(out, he_out):
        return main(["generate", "workload", "--model", "hypererlang", "--jobs", "20", "--out", str(out),
                     "--he-out", str(he_out)])
    taken = tmp_path / "taken.swf"
    taken.write_text("mine")
    assert gen(tmp_path / "a.swf", taken) == 2                    # an existing parameters' file
    assert taken.read_text() == "mine" and not (tmp_path / "a.swf").exists()
    assert gen(taken, tmp_path / "p.json") == 2                   # an existing stream: no parameters written
    assert not (tmp_path / "p.json").exists()
    assert gen(tmp_path / "b.swf", tmp_path / "b.swf") == 2       # the stream's own file
    assert not (tmp_path / "b.swf").exists()
    err = capsys.readouterr().err.splitlines()
    assert [("already exists" in e, "own file" in e) for e in err] == [(True, False), (True, False), (False, True)]
    assert gen(tmp_path / "c.swf", tmp_path / "c.json") == 0
    assert json.loads((tmp_path / "c.json").read_text())["model"] == "hypererlang"


def test_zhang_experiments_have_a_hyper_erlang_arm():
    from epochbench.experiments import Options, load_experiments
    from epochbench.experiments import zhang_estimates as ze
    from epochbench.experiments import zhang_queues as zq

    exps = load_experiments()
    assert "zhang-queues-he" in exps and "zhang-estimates-he" in exps
    assert {t["workload"] for t in zq.tasks_he(Options(quick=True))} == {"hypererlang"}
    assert all("workload" not in t for t in zq.tasks(Options(quick=True)))      # the lublin03 arm unchanged
    row = zq.run({**zq.tasks_he(Options(quick=True))[0], "jobs": 150, "runtime_factor": 1.0})[0]
    assert row["workload"] == "hypererlang" and row["nodes"] == 100
    assert row["offered_load"] == pytest.approx(0.55, rel=0.02) and 0 < row["utilization"] <= 1
    erow = ze.run({**ze.tasks_he(Options(quick=True))[0], "jobs": 150})[0]
    assert erow["workload"] == "hypererlang" and erow["policy"] == "conservative"


def test_default_model_is_the_built_in_kth_fit():
    s = workload(model="hypererlang", jobs=3000, seed=1)
    assert s.capacity.tolist() == [100] and s.meta["fit"]["source"].startswith("KTH-SP2")
    # the classes' shares follow their fitted arrival rates; sizes come from each class's own sizes
    assert s.jobs["procs"].between(1, 100).all()
    assert set(size_classes(s.jobs["procs"])) <= {c["cls"] for c in KTH_PARAMS["classes"]}
    for c in KTH_PARAMS["classes"]:
        he = HyperErlang.from_dict(c["runtime"])
        assert he.order == 1 and he.matched == 3 and he.cv > 1          # over-dispersive, as [zhang-comparative] says


def test_he_out_with_another_model_is_refused_before_the_stream_is_written(tmp_path, capsys):
    """It wrote the stream, then failed with ``error: fit`` (a KeyError)."""
    from epochbench.instances.workloads import write_workload
    capsys.readouterr()
    assert main(["generate", "workload", "--model", "feitelson96", "--jobs", "20", "--out", str(tmp_path / "w.swf"),
                 "--he-out", str(tmp_path / "p.json")]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "fit, he_params and he_out apply to model hypererlang only, not 'feitelson96'")
    with pytest.raises(ValueError, match="apply to model hypererlang only, not 'rajaei'"):
        write_workload(tmp_path / "r.swf", model="rajaei", jobs=20, he_out=str(tmp_path / "r.json"))
    with pytest.raises(ValueError, match="not 'feitelson96'"):                 # the default model
        write_workload(tmp_path / "d.swf", jobs=20, he_out=str(tmp_path / "d.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_parameters_file_that_cannot_be_written_leaves_no_stream_and_an_empty_one_is_refused(tmp_path, capsys):
    """``--he-out nodir/he.json`` wrote the stream, then failed (a rerun
    with a good path was refused: the stream 'already exists'); an empty
    ``--he-out`` was ignored.  Its folder is created, as the stream's is."""
    def gen(out, he_out):
        return main(["generate", "workload", "--model", "hypererlang", "--jobs", "20", "--out", str(out),
                     "--he-out", str(he_out)])
    (tmp_path / "afile").write_text("x")
    capsys.readouterr()
    assert gen(tmp_path / "a.swf", tmp_path / "afile" / "he.json") == 2
    assert "he_out: cannot write" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    assert gen(tmp_path / "b.swf", "") == 2
    assert capsys.readouterr().err.strip().endswith("he_out: an empty path; name a new file for the fitted parameters")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    assert gen(tmp_path / "c.swf", tmp_path / "new" / "he.json") == 0
    assert json.loads((tmp_path / "new" / "he.json").read_text())["model"] == "hypererlang"


def test_a_three_moment_fit_reproduces_the_third_moment_near_cv2_one_over_n():
    """Just above CV**2 = 1 / n, sigma**2 = mu_2 - mu_1**2 lost its digits:
    a fit of order 90 said matched = 3 with a third moment of 8.76 for the
    data's 1.17; such an order is skipped for the next."""
    import math
    m = (1.0, 1.0111113033862669, 1.1744190852509961)
    f = fit_moments(*m)
    got = [sum(p * math.prod(range(f.order, f.order + k)) / r ** k for p, r in zip(f.probs, f.rates))
           for k in (1, 2, 3)]
    assert f.matched == 3 and all(abs(g / x - 1) < 1e-3 for g, x in zip(got, m)), (f, got)


# -- rules a one-token change broke unseen (mutation review, round 5) --
def _he(probs, rates):
    return {"order": 1, "probs": list(probs), "rates": list(rates)}


def _two_classes(sizes_a=(1,), processors=4):
    """Class 0's interarrival mean is about 1001 s (a one-in-a-million gap of
    1e9 s), but its gaps are 1 s in practice; class 1's gaps are 1 s."""
    run = _he([1.0], [0.01])
    return {"processors": processors, "classes": [
        {"cls": 0, "sizes": list(sizes_a), "probs": [1.0 / len(sizes_a)] * len(sizes_a),
         "interarrival": _he([1e-6, 1 - 1e-6], [1e-9, 1.0]), "runtime": run},
        {"cls": 1, "sizes": [2], "probs": [1.0], "interarrival": _he([1.0], [1.0]), "runtime": run}]}


def test_sample_stream_draws_more_when_a_class_runs_out():
    """Class 0 draws about 18 arrivals for its nominal share 0.001, all spent
    by t = 18 while the 1000th arrival comes at about 500: it ran out, so
    every class draws twice as many until none does; the stream then holds
    both classes about equally (both arrive once a second)."""
    submit, runtime, procs, cls = sample_stream(_two_classes(), 1000, np.random.default_rng(7))
    assert len(submit) == 1000 and np.all(np.diff(submit) >= 0)
    assert 0.35 < np.mean(cls == 0) < 0.65


def test_load_params_refuses_sizes_beyond_the_machine():
    with pytest.raises(ValueError, match=r"classes\[0\]: 'sizes' must lie in 1\.\.4"):
        load_params(_two_classes(sizes_a=(1, 8), processors=4))


def test_fit_trace_keeps_zero_runtimes_and_gives_a_lone_job_the_span():
    """Only runtime < 0 (unknown) is left out: a job of 0 s is a job.  A
    class with one job has the trace's span as its gap."""
    jobs = pd.DataFrame({"submit": [0.0, 100.0, 250.0, 400.0, 1000.0], "runtime": [0.0, 10.0, 20.0, -1.0, 30.0],
                         "procs": [1, 1, 1, 1, 64]})
    fit = fit_trace(jobs, 64)
    assert fit["jobs"] == 4 and fit["span"] == 1000.0
    by_cls = {c["cls"]: c for c in fit["classes"]}
    assert by_cls[0]["jobs"] == 3 and by_cls[0]["moments"]["runtime"][0] == 10.0
    assert by_cls[6]["jobs"] == 1 and by_cls[6]["moments"]["interarrival"][0] == 1000.0


def test_fit_moments_fallback_says_whether_it_matches_the_cv():
    """m1 m3 = m2**2 (no hyper-Erlang fits): one Erlang of order round(1 / CV**2)
    = 2; its CV matches the data's within 1 % only when CV**2 is 0.5."""
    exact = fit_moments(1.0, 1.5, 1.5 ** 2)
    assert (exact.order, exact.matched) == (2, 2)
    off = fit_moments(1.0, 1.45, 1.45 ** 2)            # CV 0.671 against Erlang(2)'s 0.707: 5 % off
    assert (off.order, off.matched) == (2, 1) and off.mean == pytest.approx(1.0)


@pytest.mark.parametrize("change,needle", [(lambda c: c.pop("cls"), "field 'cls' missing"),
                                           (lambda c: c.update(cls=True), "'cls' (the class number"),
                                           (lambda c: c.update(cls=1.5), "'cls' (the class number"),
                                           (lambda c: c.update(sizes=[1.5, 2.7][:len(c["sizes"])]),
                                            "(whole numbers of processors)")])
def test_load_params_names_a_class_number_or_size_that_is_no_integer(change, needle):
    """A review: without ``cls`` every ``generate`` ended in a bare
    ``KeyError: 'cls'`` (the command printed ``error: cls``); sizes of 1.5
    and 2.7 processors were cut to 1 and 2."""
    params = _two_classes(processors=4)
    change(params["classes"][0])
    with pytest.raises(ValueError, match=re.escape(needle)):
        load_params(params)
    for bad in (4.7, True, "4", 0):
        with pytest.raises(ValueError, match="field 'processors' missing or not a whole number >= 1"):
            load_params({**_two_classes(processors=4), "processors": bad})
    fit = _two_classes(processors=4)
    fit["classes"][0].update(cls=np.int64(0), sizes=[np.int64(1), 2.0], probs=[0.5, 0.5])   # whole numbers
    assert load_params(fit) is fit
