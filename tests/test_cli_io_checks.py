"""Output files and options of ``simulate``, ``calibrate`` and ``generate
workload``: nothing overwritten, nothing ignored, one-line errors naming the
real cause (a missing sidecar, a path that cannot be written, ...)."""
import json

import pandas as pd
import pytest

import epochbench as eb
from epochbench.cli import main
from epochbench.instances.core import InfeasibleSolution, InstanceError
from epochbench.instances.files import OutputError, write_text
from epochbench.instances.jobs import load_workload
from test_cli_simulate import SWF  # a tiny stream on 16 nodes


@pytest.fixture
def swf(tmp_path):
    f = tmp_path / "tiny.swf"
    f.write_text(SWF)
    return f


def _error(capsys, argv) -> str:
    """Run the command; it must fail with exit status 2 and one line on stderr."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    return err


def test_simulate_out_keeps_the_files_of_an_earlier_run(swf, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "jobs.csv").write_text("precious\n")
    assert main(["simulate", "--workload", str(swf), "--policy", "easy", "--out", str(out), "--quiet"]) == 0
    kept = sorted(p.name for p in out.glob("jobs-*.csv"))
    assert len(kept) == 1 and (out / kept[0]).read_text() == "precious\n"
    assert "kept as" in capsys.readouterr().err
    first = json.loads((out / "report.json").read_text())
    assert main(["simulate", "--workload", str(swf), "--policy", "conservative", "--out", str(out),
                 "--quiet"]) == 0
    reports = sorted(out.glob("report-*.json"))
    assert len(reports) == 1 and json.loads(reports[0].read_text()) == first
    assert len(list(out.glob("jobs-*.csv"))) == 2
    assert json.loads((out / "report.json").read_text())["policy"] == "conservative"
    # the user's own file is "unrecorded"; the simulation's are kept under its report's stamp
    assert [p.name.startswith("jobs-unrecorded-") for p in sorted(out.glob("jobs-*.csv"))].count(True) == 1
    assert not reports[0].name.startswith("report-unrecorded-")


def test_a_users_epoch_gaps_beside_a_run_without_them_is_kept_as_unrecorded(swf, tmp_path):
    """A run that wrote no epoch gaps, then a user's own ``epoch_gaps.csv``
    put beside its files: a second run kept that file under the first run's
    stamp, as if the run had written it.  It is ``unrecorded`` now; the
    run's own two files keep its stamp."""
    out = tmp_path / "run"
    assert main(["simulate", "--workload", str(swf), "--policy", "easy", "--out", str(out), "--quiet"]) == 0
    (out / "epoch_gaps.csv").write_text("mine\n")
    assert main(["simulate", "--workload", str(swf), "--policy", "easy", "--out", str(out), "--quiet"]) == 0
    mine = list(out.glob("epoch_gaps-*.csv"))
    assert len(mine) == 1 and mine[0].name.startswith("epoch_gaps-unrecorded-") and mine[0].read_text() == "mine\n"
    stamps = {p.name.split("-", 1)[1].rsplit(".", 1)[0] for p in (*out.glob("jobs-*.csv"), *out.glob("report-*.json"))}
    assert len(stamps) == 1 and not stamps.pop().startswith("unrecorded")


@pytest.mark.parametrize("how", ["same path", "symbolic link"])
def test_simulate_refuses_a_workload_that_is_one_of_its_outputs(how, tmp_path, capsys):
    """``--workload dd/jobs.csv --out dd`` moved the workload aside as an
    earlier run's table, and the next run read this run's output."""
    out = tmp_path / "dd"
    out.mkdir()
    jobs = out / "jobs.csv"
    jobs.write_text("id,submit,runtime,procs,estimate\n1,0,10,4,10\n2,5,10,4,10\n")
    given = jobs
    if how == "symbolic link":
        given = tmp_path / "w.csv"
        given.symlink_to(jobs)
    err = _error(capsys, ["simulate", "--workload", str(given), "--policy", "easy", "--out", str(out)])
    assert err.startswith(f"epochbench simulate: error: --workload {given}: is the file this run writes as "
                          f"jobs.csv (--out {out})"), err
    assert sorted(p.name for p in out.iterdir()) == ["jobs.csv"]
    assert jobs.read_text().endswith("2,5,10,4,10\n")


def test_score_refuses_a_reference_file_that_is_one_of_its_outputs(tmp_path, capsys):
    fam = tmp_path / "fam"
    assert main(["generate", "leinberger", "--n", "6", "--count", "1", "--out", str(fam)]) == 0
    ref = fam / "scores.csv"                     # where score writes by default
    ref.write_text("instance,optimum\nx,1\n")
    capsys.readouterr()
    err = _error(capsys, ["score", str(fam), "--methods", "ff", "--reference", str(ref)])
    assert f"--reference {ref}: is the file this run writes as scores.csv (the default {fam / 'scores'})" in err
    assert ref.read_text() == "instance,optimum\nx,1\n" and not list(fam.glob("scores*.run.json"))
    other = tmp_path / "o.csv"
    other.write_text("instance,optimum\nx,1\n")
    err = _error(capsys, ["score", str(fam), "--methods", "ff", "--reference", str(other),
                          "--reference", str(ref.with_name("none.csv")), "--out", str(tmp_path / "o")])
    assert f"--reference {other}: is the file this run writes as o.csv (--out {tmp_path / 'o'})" in err


def test_simulate_text_says_what_the_input_changed(tmp_path, capsys):
    """The machine size from the widest job, estimates set to the runtime and
    jobs killed at their estimate were in --json only."""
    f = tmp_path / "w.csv"
    f.write_text("id,submit,runtime,procs,estimate\n1,0,100,6,\n2,10,50,4,20\n3,20,30,2,30\n")
    assert main(["simulate", "--workload", str(f), "--policy", "easy"]) == 0
    out = capsys.readouterr().out
    assert "capacity from: largest_job" in out and "--nodes" in out
    assert "estimates changed: estimate_unknown_set_to_runtime 1" in out
    assert "killed at their estimate: 1 job(s)" in out
    assert main(["simulate", "--workload", str(f), "--policy", "easy", "--nodes", "8", "--no-kill"]) == 0
    out = capsys.readouterr().out
    assert "capacity from" not in out and "killed at" not in out


@pytest.mark.parametrize("flags, named", [
    (["--nodes", "5"], "--nodes"), (["--selector", "cpsat"], "--selector"), (["--param", "window=2"], "--param"),
    (["--no-kill"], "--no-kill"), (["--small-threshold", "8"], "--small-threshold")])
def test_simulate_farm_refuses_the_pool_options(capsys, flags, named):
    err = _error(capsys, ["simulate", "--machine", "farm", "--policy", "cs-i-p", "--farm-jobs", "5", *flags])
    assert named in err and "farm" in err


def test_simulate_min_candidates_needs_a_recorder(swf, capsys):
    err = _error(capsys, ["simulate", "--workload", str(swf), "--policy", "easy", "--min-candidates", "3"])
    assert "--record-epochs or --epoch-gaps" in err


def test_simulate_refuses_a_used_recording_folder_before_the_run(swf, tmp_path, capsys, monkeypatch):
    rec = tmp_path / "rec"
    assert main(["simulate", "--workload", str(swf), "--policy", "bb-easy", "--record-epochs", str(rec)]) == 0
    capsys.readouterr()
    ran = []
    import epochbench.sim as sim
    monkeypatch.setattr(sim, "simulate", lambda *a, **k: ran.append(1))
    err = _error(capsys, ["simulate", "--workload", str(swf), "--policy", "bb-easy", "--record-epochs", str(rec)])
    assert "already holds " in err and not ran  # refused before simulating, not after
    (rec / "manifest.json").unlink()             # step files alone, or a file for a folder: refused too
    err = _error(capsys, ["simulate", "--workload", str(swf), "--policy", "bb-easy", "--record-epochs", str(rec)])
    assert "already holds " in err and ".json" in err and not ran
    (tmp_path / "f").write_text("x")
    err = _error(capsys, ["simulate", "--workload", str(swf), "--policy", "bb-easy", "--record-epochs",
                          str(tmp_path / "f")])
    assert "is a file, not a folder" in err and not ran


def test_unknown_policy_options_are_one_line_value_errors(swf):
    with pytest.raises(ValueError, match=r"policy 'easy' \(pool\): unknown option 'foo'"):
        eb.simulate(str(swf), "easy", foo=1)
    with pytest.raises(ValueError, match="lend= applies to policy multi-queue only"):
        eb.simulate(str(swf), "easy", lend=True)
    with pytest.raises(ValueError, match=r"policy 'gs' \(gang\): unknown option 'foo'; it takes .*mpl"):
        eb.simulate(str(swf), "gs", foo=1)


def test_calibrate_takes_the_pool_policies_options(swf, tmp_path, capsys):
    assert main(["calibrate", str(swf), "--target", "1", "--policy", "multi-queue", "--lend",
                 "--partitions", "8,8", "--rtol", "0.5"]) in (0, 1)
    cal = json.loads(capsys.readouterr().out)
    assert cal["policy"] == "multi-queue" and cal["simulations"] >= 1
    err = _error(capsys, ["calibrate", str(swf), "--target", "1", "--lend"])
    assert "--lend applies to policy multi-queue only" in err


@pytest.mark.parametrize("name", ["out.txt", "out"])
def test_calibrate_refuses_an_unknown_suffix(swf, tmp_path, capsys, name):
    err = _error(capsys, ["calibrate", str(swf), "--target", "1", "--out", str(tmp_path / name)])
    assert "unknown workload format" in err
    assert not (tmp_path / name).exists()


def test_calibrate_and_generate_refuse_an_existing_sidecar(swf, tmp_path, capsys):
    side = tmp_path / "cal.swf.extra.csv"
    side.write_text("precious\n")
    err = _error(capsys, ["calibrate", str(swf), "--target", "1", "--out", str(tmp_path / "cal.swf")])
    assert "cal.swf.extra.csv: already exists" in err and side.read_text() == "precious\n"
    side = tmp_path / "wl.swf.extra.csv"
    side.write_text("precious\n")
    err = _error(capsys, ["generate", "workload", "--model", "feitelson96", "--k", "2", "--jobs", "20",
                          "--out", str(tmp_path / "wl.swf")])
    assert "wl.swf.extra.csv: already exists" in err and side.read_text() == "precious\n"
    assert not (tmp_path / "wl.swf").exists()


@pytest.mark.parametrize("flags, named", [
    (["--model", "feitelson96", "--job-types", "batch"], "job_types"),
    (["--model", "lublin03", "--no-repeats"], "repeats"),
    (["--model", "lublin03", "--p-pow2", "0.5"], "p_pow2"),
    (["--phi", "0.3"], "phi"), (["--estimates", "phi", "--omega", "2"], "omega"),
    (["--dist", "exponential"], "dist"), (["--capacity", "10"], "capacity")])
def test_generate_workload_refuses_options_that_shape_nothing(tmp_path, capsys, flags, named):
    err = _error(capsys, ["generate", "workload", "--jobs", "20", "--out", str(tmp_path / "w.swf"), *flags])
    assert named in err and "only" in err
    assert not (tmp_path / "w.swf").exists()


def test_a_k_resource_swf_without_its_sidecar_names_it(tmp_path, capsys):
    assert main(["generate", "workload", "--k", "3", "--jobs", "20", "--out", str(tmp_path / "k3.swf")]) == 0
    lone = tmp_path / "lone.swf"
    lone.write_bytes((tmp_path / "k3.swf").read_bytes())
    with pytest.raises(InstanceError, match=r"lone\.swf\.extra\.csv, which is missing"):
        load_workload(lone)
    assert len(load_workload(tmp_path / "k3.swf").capacity) == 3
    (tmp_path / "part.swf").write_bytes(lone.read_bytes())
    text = (tmp_path / "k3.swf.extra.csv").read_text().splitlines()
    (tmp_path / "part.swf.extra.csv").write_text("\n".join(",".join(r.split(",")[:2]) for r in text) + "\n")
    with pytest.raises(InstanceError, match="part.swf.extra.csv has no column res_2"):
        load_workload(tmp_path / "part.swf")


def test_times_beyond_2_53_are_refused(tmp_path):
    f = tmp_path / "big.swf"
    f.write_text("1 0 0 5 1 -1 -1 1 5 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                 "2 100000000000000001 0 7 1 -1 -1 1 7 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    with pytest.raises(InstanceError,
                       match=r"column 'submit' has 1e\+17 at job 2 of the input \(id 2\) \(above 2\*\*53"):
        load_workload(f)


def test_a_bad_value_is_named_by_the_job_not_a_zero_based_row(tmp_path):
    """The job is counted from 1 and named by its id (the message said "row
    3" for the fourth job, on line 5 of the file: neither)."""
    f = tmp_path / "big.swf"
    f.write_text("; MaxProcs: 10\n" + "".join(f"{i} {i} -1 {rt} 2 -1 -1 2 {rt} -1 1 1 1 1 1 1 -1 -1\n"
                                              for i, rt in ((1, 100), (2, 50), (3, 20), (7, "1e300"))))
    with pytest.raises(InstanceError, match=r"column 'runtime' has 1e\+300 at job 4 of the input \(id 7\)"):
        load_workload(f)
    f.write_text("id,submit,runtime,procs\n1,0,5,1\n4,1,5,1.5\n")
    with pytest.raises(InstanceError, match=r"column 'procs' must hold integers, got 1.5 at job 2 of the input "
                                            r"\(id 4\)$"):
        load_workload(f.rename(tmp_path / "frac.csv"))


def test_an_unwritable_path_is_named_not_its_temporary_file(tmp_path):
    target = tmp_path / "nodir" / "x.json"
    with pytest.raises(OutputError, match=r"nodir/x\.json: cannot write") as info:
        write_text(target, "{}")
    assert ".tmp-" not in str(info.value)


def test_the_data_hint_only_when_the_default_folder_was_used(tmp_path, capsys, monkeypatch):
    err = _error(capsys, ["generate", "braun", "--root", str(tmp_path / "none"), "--out", str(tmp_path / "b")])
    assert "no Braun data folder" in err and "EPOCHBENCH_DATA" not in err
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path / "nodata"))
    err = _error(capsys, ["generate", "braun", "--out", str(tmp_path / "b")])
    assert "EPOCHBENCH_DATA" in err


def test_a_packing_heuristic_picking_outside_the_jobs_left_is_named():
    """By its registered name (a lambda's was ``<lambda>``)."""
    from epochbench.instances import registry
    state = registry.METHODS.snapshot()       # the catalog complete: these register after the derivation
    try:
        @eb.register("packing", "test-picks-outside")
        def picks_outside(inst):
            return [0, 3]

        @eb.register("packing", "test-picks-twice")
        def picks_twice(inst):
            return [0, 0]

        inst = eb.generate("vbp", n=20, d=3, classes=1, per_class=1)[0] if _vbp() else _epochs()
        with pytest.raises(InfeasibleSolution,
                           match=r"test-picks-outside's selection of the \d+ jobs left entry 1 is job 3"):
            eb.solve(inst, "test-picks-outside")
        with pytest.raises(InfeasibleSolution, match="test-picks-twice's selection of the .* starts job 0 twice"):
            eb.solve(inst, "test-picks-twice")

        @eb.register("packing", "test-picks-nothing")       # the method's failure, not a bad argument
        def picks_nothing(inst):                             # (a ValueError, which solve keeps for those)
            return []
        with pytest.raises(InfeasibleSolution, match=r"test-picks-nothing started nothing with \d+ jobs left"):
            eb.solve(inst, "test-picks-nothing")
    finally:
        registry.METHODS.restore(state)


def test_a_packing_heuristic_registered_late_serves_epochs_and_yields_to_its_own():
    from epochbench.instances import registry
    state = registry.METHODS.snapshot()
    try:
        @eb.register("packing", "test-late")
        def late(inst):
            return [0]
        assert registry.get("epochs", "test-late").func.__wrapped__ is late
        assert eb.solve(_epochs(), "test-late").value == 8          # one job per epoch

        @eb.register("epochs", "test-late")
        def late_bins(inst):
            return [[j, j + 1] for j in range(0, inst.n, 2)]
        assert registry.get("epochs", "test-late").func is late_bins
        assert eb.solve(_epochs(), "test-late").value == 4
    finally:
        registry.METHODS.restore(state)


def _vbp() -> bool:
    from epochbench.instances.data import data_root
    return (data_root() / "vbp").is_dir()


def _epochs():
    from epochbench.instances.packing import EpochsInstance
    return EpochsInstance.build([10, 10], [[3, 3]] * 8, source="eight")


def test_the_library_says_which_jobs_it_dropped(tmp_path):
    import pandas as pd

    from epochbench.sim.runner import report
    jobs = pd.DataFrame({"id": [1, 2, 3], "submit": [0, 1, 2], "runtime": [5, 5, 5], "procs": [9, 2, 2],
                         "estimate": [10, 10, 10]})
    for policy in ("easy", "gs"):
        res = eb.simulate((jobs, [8]), policy)
        assert res.dropped == {"too_many_processors": 1} and len(res.jobs) == 2
        assert report(res)["dropped"] == {"too_many_processors": 1}
    f = tmp_path / "t.swf"
    f.write_text(SWF)
    assert sum(eb.simulate(str(f), "easy").dropped.values()) == 2     # a negative runtime, a job of 32 on 16


def test_migration_limit_minus_one_means_no_limit(swf, capsys):
    assert main(["simulate", "--workload", str(swf), "--policy", "mgs", "--migration-limit", "-1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["options"]["migration_limit"] is None
    with pytest.raises(SystemExit):
        main(["simulate", "--workload", str(swf), "--policy", "mgs", "--migration-limit", "-2"])
    assert "-1 for no limit" in capsys.readouterr().err


def test_calibrate_says_what_it_dropped_and_writes_only_a_stream_that_converged(tmp_path, capsys):
    swf = tmp_path / "waits.swf"                                  # the tiny stream with the log's waits (field 3)
    swf.write_text("\n".join(line[:8] + line[8:].replace("-1", " 7", 1) if not line.startswith(";") else line
                             for line in SWF.splitlines()) + "\n")
    out = tmp_path / "cal.swf"
    assert main(["calibrate", str(swf), "--target", "1", "--rtol", "0.5", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    cal = json.loads(captured.out)
    assert "dropped on reading: negative_runtime 1, too_many_processors 1" in captured.err
    assert cal["dropped"] == {"negative_runtime": 1, "too_many_processors": 1}
    w = load_workload(out)
    header = w.meta["header"]
    assert "dropped on reading: negative_runtime=1, too_many_processors=1" in header["Note"]
    assert "StartTime" not in header and "EndTime" not in header
    assert f"arrival rate x {cal['factor']!r} by epochbench calibrate" in header["Note"]
    assert (load_workload(swf).jobs["wait"] > 0).any() and (w.jobs["wait"] == -1).all()   # the log's own wait: gone
    never = tmp_path / "never.swf"
    assert main(["calibrate", str(swf), "--target", "1e-9", "--out", str(never)]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["converged"] is False and not never.exists()
    assert captured.err.count("\n") == 2 and "did not converge" in captured.err and "nothing written" in captured.err
    err = _error(capsys, ["calibrate", str(swf), "--target", "1", "--warmup", "0.9999"])
    assert "no measuring window" in err and "lower the warm-up share" in err
    err = _error(capsys, ["calibrate", str(swf), "--target", "1", "--out", str(swf / "x.swf")])
    assert "is a file, not a folder" in err


def test_sizes_past_the_memory_are_one_line(tmp_path, capsys, monkeypatch):
    """numpy refusing an allocation (a generator's sizes, each within its
    limits, multiplied past the machine) is one line with status 2, not a
    traceback."""
    from epochbench.instances import generators

    def huge(*args, **kwargs):
        import numpy as np
        return np.empty((10**7, 10**4, 10**3))
    monkeypatch.setattr(generators, "write_generated", huge)
    err = _error(capsys, ["generate", "braun-range", "--out", str(tmp_path / "x"), "--count", "1"])
    assert err.startswith("epochbench generate braun-range: error: not enough memory for the sizes asked for (Unable to allocate")


def test_an_instance_file_naming_a_field_twice_is_refused(tmp_path, capsys):
    """json keeps the last of two keys: the file's author meant one of them."""
    f = tmp_path / "dup.json"
    f.write_text('{"kind": "packing", "demand": [[1, 1]], "capacity": [2, 2], "capacity": [5, 5]}')
    err = _error(capsys, ["solve", str(f), "--method", "ff"])
    assert "field 'capacity' given twice in one object" in err


def test_instances_without_a_name_are_named_after_their_files(tmp_path, capsys):
    from epochbench.instances.io import load_instance
    for stem in ("a", "b"):
        (tmp_path / f"{stem}.json").write_text('{"kind": "packing", "demand": [[1, 1]], "capacity": [2, 2]}')
    assert load_instance(tmp_path / "a.json").name == "a"
    (tmp_path / "manifest.json").unlink(missing_ok=True)
    assert main(["score", str(tmp_path), "--methods", "ff", "--workers", "1"]) == 0
    assert set(pd.read_csv(tmp_path / "scores.csv")["instance"]) == {"a", "b"}


@pytest.mark.parametrize("argv", [["generate", "mkp", "--n", "5", "--k", "2", "--count", "1", "--out"],
                                  ["score", "fam", "--methods", "ff", "--out"],
                                  ["simulate", "--workload", "w.swf", "--policy", "easy", "--out"],
                                  ["calibrate", "w.swf", "--target", "2", "--out"],
                                  ["experiment", "rajaei", "--quick", "--out"],
                                  ["solve", ""]])
def test_an_empty_path_is_refused_not_read_as_the_current_folder(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main([*argv, ""] if argv[-1] == "--out" else argv)
    assert exit_.value.code == 2 and "an empty path; name a file or folder" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_a_calibrated_streams_header_marks_the_generators_load_as_before_calibration(tmp_path, capsys):
    from epochbench.instances.workloads import write_workload
    src = write_workload(tmp_path / "gen.swf", model="lublin03", jobs=300, seed=3, processors=64, load=0.7)
    out = tmp_path / "cal.swf"
    assert main(["calibrate", str(src), "--target", "2", "--rtol", "0.5", "--out", str(out)]) == 0
    factor = json.loads(capsys.readouterr().out)["factor"]
    notes = load_workload(out).meta["header"]["Note"].split("\n")
    params = [n for n in notes if "generator parameters" in n]
    assert params and all(n.startswith("before calibration: generator parameters") for n in params), notes
    assert any(n.startswith(f"arrival rate x {factor!r} ") for n in notes), notes
    again = tmp_path / "again.swf"                                 # calibrated twice: each factor said once, in order
    assert main(["calibrate", str(out), "--target", "3", "--rtol", "0.5", "--out", str(again)]) == 0
    notes2 = load_workload(again).meta["header"]["Note"].split("\n")
    assert sum(n.startswith("before calibration: arrival rate x") for n in notes2) == 1, notes2
    assert not any(n.startswith("before calibration: before calibration") for n in notes2), notes2


def test_a_calibration_says_its_options_and_the_factor_exactly(tmp_path, capsys):
    """The header note rounded the factor to 6 figures (the JSON has it
    exactly) and named no policy option; a CSV output kept the input's
    'epochbench: written from' line as if the calibrated stream were the
    one written from there (an audit)."""
    from epochbench.instances.jobs import read_table
    from epochbench.instances.workloads import write_workload
    src = write_workload(tmp_path / "gen.swf", model="lublin03", jobs=300, seed=3, processors=64, load=0.7)
    out = tmp_path / "cal.csv"
    assert main(["calibrate", str(src), "--target", "2", "--rtol", "0.5", "--policy", "multi-queue",
                 "--partitions", "32,32", "--lend", "--nodes", "64", "--out", str(out)]) == 0
    cal = json.loads(capsys.readouterr().out)
    assert cal["options"] == {"queue_bounds": [3600.0], "partitions": [32.0, 32.0], "lend": True}   # as run
    assert cal["capacity"] == [64]
    assert cal["kill_at_estimate"] is True
    w = read_table(out)
    notes = w.meta["header"]["Note"].split("\n")
    assert any(n.startswith(f"arrival rate x {cal['factor']!r} by epochbench calibrate (policy multi-queue, "
                            "--lend, --partitions 32,32, --queue-bounds 3600, mean queue") for n in notes), notes
    written = [n for n in notes if "epochbench: written from" in n]
    assert written and all(n.startswith("before calibration: epochbench: written from") for n in written), notes
    written_by = json.loads(out.read_text().split("\n")[0].split(" ", 2)[2])      # '# epochbench {...}'
    assert written_by["source"].endswith(f" x{cal['factor']!r}")


def test_calibrate_reads_the_stream_as_simulate_does(tmp_path, capsys):
    """--nodes and --no-kill were simulate's only: a stream calibrated for a
    machine of another size, or without the kill at the estimate, could not
    be asked for."""
    from epochbench.instances.jobs import make_workload, read_table, write_table
    from epochbench.instances.workloads import workload
    from epochbench.sim.calibrate import mean_queue_length
    from epochbench.sim.pool import simulate_pool
    s = workload(model="feitelson96", jobs=600, seed=4)
    jobs = s.jobs.drop(columns=["duration"])
    jobs["estimate"] = jobs["runtime"] * 0.5 + 1                # half the estimates short: the rule matters
    src = write_table(make_workload(jobs, s.capacity), tmp_path / "w.csv")
    out = tmp_path / "c.csv"
    assert main(["calibrate", str(src), "--target", "6", "--rtol", "0.1", "--no-kill", "--nodes", "96",
                 "--out", str(out)]) == 0
    cal = json.loads(capsys.readouterr().out)
    assert cal["kill_at_estimate"] is False and cal["capacity"] == [96]
    w = read_table(out)
    assert w.kill_at_estimate is False and w.capacity.tolist() == [96]
    assert "--no-kill, mean queue" in w.meta["header"]["Note"]
    q = mean_queue_length(simulate_pool(w.jobs, w.capacity, "easy").jobs)
    assert q == pytest.approx(6, rel=0.1)
    err = _error(capsys, ["calibrate", str(src), "--target", "6", "--no-kill", "--out", str(tmp_path / "c.swf")])
    assert "SWF keeps no kill rule, and --no-kill runs jobs past their estimate" in err
    with pytest.raises(SystemExit) as exit_:
        main(["calibrate", str(src), "--target", "6", "--nodes", "0"])
    assert exit_.value.code == 2 and "--nodes: must be an integer >= 1" in capsys.readouterr().err


@pytest.mark.parametrize("argv, flag", [
    (["score", "FAMILY", "--methods", "ff", "--methods", "bb"], "--methods"),
    (["solve", "FILE", "--method", "ff", "--method", "bb"], "--method"),
    (["solve", "FILE", "--meth", "ff", "--method", "bb"], "--method"),          # an abbreviation is the same option
    (["simulate", "--workload", "SWF", "--nodes", "8", "--nodes", "4"], "--nodes"),
    (["simulate", "--workload", "SWF", "--policy", "easy", "--epoch-gaps", "ff", "--epoch-gaps", "bl"],
     "--epoch-gaps"),
    (["generate", "leinberger", "--out", "OUT", "--n", "8", "--n=16"], "--n"),
    (["experiment", "leinberger", "--quick", "--name", "y", "--name", "z"], "--name"),
    (["bench", "--quick", "--name", "a", "--name", "b"], "--name"),
])
def test_a_single_value_option_given_twice_is_refused(tmp_path, capsys, monkeypatch, argv, flag):
    """argparse kept the last silently: ``--methods ff --methods bb`` scored
    bb alone, ``--nodes 8 --nodes 4`` ran on 4 and dropped a job, ``bench
    --name a --name b`` ran the whole suite into b."""
    monkeypatch.chdir(tmp_path)                     # results/ of a run that was not refused land here
    (tmp_path / "w.swf").write_text(SWF)
    inst = eb.generate("leinberger", n=4, k=1, count=1, seed=1)
    eb.save(inst, tmp_path / "fam")
    files = {"FAMILY": str(tmp_path / "fam"), "FILE": str(next((tmp_path / "fam").glob("l*.json"))),
             "SWF": str(tmp_path / "w.swf"), "OUT": str(tmp_path / "out")}
    with pytest.raises(SystemExit) as exit_:
        main([files.get(a, a) for a in argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"error: argument {flag}: given twice; give it once") and "\n" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, needle", [
    (["score", "FAMILY", "--methods", "ff,,bb"], "--methods: an empty item in 'ff,,bb' (two commas in a row, or"),
    (["score", "FAMILY", "--methods", "ff,"], "--methods: an empty item in 'ff,'"),
    (["score", "FAMILY", "--methods", "ff", ",", ",", "bb"], "--methods: an empty item in 'ff , , bb'"),
    (["simulate", "--workload", "SWF", "--policy", "easy", "--epoch-gaps", "ff,,bl"],
     "--epoch-gaps: an empty item"),
    (["generate", "braun", "--out", "OUT", "--names", "u_c_hihi.0,,u_c_lolo.0"], "names: an empty item"),
    (["generate", "vbp", "--out", "OUT", "--classes", "1,1"], "classes: 1 given twice"),
])
def test_an_empty_or_repeated_item_of_a_list_is_refused(tmp_path, capsys, monkeypatch, argv, needle):
    """``ff,,bb`` scored ff and bb without a word (the empty name, a typo,
    dropped); ``--classes 1,1`` was merged."""
    if "vbp" in argv and not _vbp():
        pytest.skip("the VBP files of the reference data are absent (EPOCHBENCH_DATA)")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.swf").write_text(SWF)
    eb.save(eb.generate("leinberger", n=4, k=1, count=1, seed=1), tmp_path / "fam")
    files = {"FAMILY": str(tmp_path / "fam"), "SWF": str(tmp_path / "w.swf"), "OUT": str(tmp_path / "out")}
    assert main([files.get(a, a) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="methods: an empty item"):
        eb.score(eb.generate("leinberger", n=4, k=1, count=1, seed=1), "ff,,bb")


def test_methods_split_over_words_as_they_were(tmp_path, capsys, monkeypatch):
    """``--methods ff, bl`` (the shell splits it) scored ff and bl; it was
    refused for a while as an empty name in 'ff,'."""
    monkeypatch.chdir(tmp_path)
    eb.save(eb.generate("leinberger", n=4, k=1, count=1, seed=1), tmp_path / "fam")
    assert main(["score", str(tmp_path / "fam"), "--methods", "ff,", "bl", "--workers", "1",
                 "--out", str(tmp_path / "o")]) == 0
    assert "bl" in capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    (["bench", "--quick", "--name", "a", "-k", "x", "--name", "a"], "--name: given twice ('a', 'a')"),
    (["bench", "--quick", "--results", "A", "--results", "B"], "--results: given twice"),
])
def test_bench_options_passed_on_to_pytest_twice_are_refused(tmp_path, capsys, monkeypatch, argv, needle):
    """pytest takes the last of ``--results A --results B`` silently; the
    suite's ``--name`` after a pytest argument was refused twice only when
    the two names differed."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err
    assert not (tmp_path / "results").exists() and not (tmp_path / "A").exists()


def test_text_in_a_numeric_column_is_named_by_its_job(tmp_path):
    """pandas said "at position 1", 0-based, where a fraction in the same
    column was named "job 2 of the input (id 4)"."""
    f = tmp_path / "t.csv"
    f.write_text("id,submit,runtime,procs\n1,0,10,2\n4,1,abc,2\n")
    with pytest.raises(InstanceError, match=r"t\.csv: column 'runtime' has 'abc', not a number, at job 2 of the "
                                            r"input \(id 4\)$"):
        load_workload(f)
    f.write_text("id,submit,runtime,procs\n1,0,10,2\nx,1,5,2\n")
    with pytest.raises(InstanceError, match=r"column 'id' has 'x', not a number, at job 2 of the input$"):
        load_workload(f)


def test_an_empty_cell_among_numbers_in_an_identity_column_is_unknown_as_among_names(tmp_path):
    """A ``user`` column of numbers with an empty cell was refused ("must
    hold integers"), while among names the same cell became -1: it is -1
    (SWF's unknown) both ways, said in one line; a fraction is still refused."""
    import warnings

    from epochbench.instances.core import InputNote
    f = tmp_path / "u.csv"
    f.write_text("id,submit,runtime,procs,user,group\n1,0,10,2,3,\n2,1,5,1,,\n3,2,5,1,3,4\n")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        w = load_workload(f, nodes=4)
    assert w.table["user"].tolist() == [3, -1, 3] and w.table["group"].tolist() == [-1, -1, 4]
    assert [str(x.message) for x in said if issubclass(x.category, InputNote)] == [
        f"{f}: column 'user' has 1 empty cell(s): -1 there, SWF's unknown",
        f"{f}: column 'group' has 2 empty cell(s): -1 there, SWF's unknown"]
    f.write_text("id,submit,runtime,procs,user\n1,0,10,2,3.5\n2,1,5,1,\n")
    with pytest.raises(InstanceError, match=r"column 'user' must hold integers, got 3.5 at job 1"):
        load_workload(f, nodes=4)


def test_names_in_an_swf_identity_column_are_numbered_as_swf_numbers_them(tmp_path, capsys):
    """A Slurm export's ``user`` and ``partition`` hold names: they were
    refused as "not a number".  They are numbered 1, 2, ... in order of first
    appearance (-1: empty), the names kept in ``meta["names"]``, said in one
    line; numbers written as text stay numbers, and text in other SWF fields
    is still refused."""
    import warnings

    from epochbench.instances.core import InputNote
    f = tmp_path / "slurm.csv"
    f.write_text("id,submit,runtime,procs,estimate,user,partition,group\n1,0,10,2,20,bob,batch,7\n"
                 "2,1,5,1,5,alice,,7\n3,2,7,3,10,bob,debug,8\n")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        w = load_workload(f, nodes=4)
    assert [str(x.message) for x in said if issubclass(x.category, InputNote)] == [
        f"{f}: column 'user' holds names: numbered 1 to 2 in order of first appearance, as SWF numbers them",
        f"{f}: column 'partition' holds names: numbered 1 to 2 in order of first appearance, as SWF numbers "
        "them, -1 where empty or -1"]
    assert w.table["user"].tolist() == [1, 2, 1] and w.table["partition"].tolist() == [1, -1, 2]
    assert w.table["group"].tolist() == [7, 7, 8] and w.table["user"].dtype.kind == "i"
    assert w.meta["names"] == {"user": ["bob", "alice"], "partition": ["batch", "debug"]}
    assert main(["simulate", "--workload", str(f), "--policy", "easy", "--nodes", "4"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"epochbench simulate: {f}: column 'user' holds names: numbered 1 to 2 in order of first "
                   "appearance, as SWF numbers them",
                   f"epochbench simulate: {f}: column 'partition' holds names: numbered 1 to 2 in order of "
                   "first appearance, as SWF numbers them, -1 where empty or -1"]
    f.write_text("id,submit,runtime,procs,status\n1,0,10,2,done\n")
    with pytest.raises(InstanceError, match=r"column 'status' has 'done', not a number, at job 1"):
        load_workload(f)


@pytest.mark.parametrize("values, numbers, names", [
    (pd.array(["batch", None, "debug", "debug"], dtype="string"), [1, -1, 2, 2], ["batch", "debug"]),  # pd.NA
    (pd.array(["batch", None, "debug", "-1"], dtype="string[pyarrow]"), [1, -1, 2, -1], ["batch", "debug"]),
    ([b"al", b"bo", b"al", b" "], [1, 2, 1, -1], ["al", "bo"]),                       # bytes: UTF-8, blank: -1
    ([5, "alice", "-1", -1], [1, 2, -1, -1], ["5", "alice"]),                       # beside names, a number is a name
    ([b"7", b"8", b"7", b"9"], [7, 8, 7, 9], None),                                 # numbers read as before
])                      # true / false are no numbers, a column of them refused whatever its dtype (test_sim_face.py)
def test_names_are_numbered_only_where_the_numbers_were_refused(values, numbers, names):
    import warnings

    from epochbench.instances.jobs import make_workload
    jobs = pd.DataFrame({"id": [1, 2, 3, 4], "submit": [0, 1, 2, 3], "runtime": [5] * 4, "procs": [1] * 4,
                         "queue": pd.Series(values, dtype=values.dtype if hasattr(values, "dtype") else object)})
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        w = make_workload(jobs, 4)
    assert w.table["queue"].tolist() == numbers and w.meta.get("names", {}).get("queue") == names
    notes = [x for x in said if "holds names" in str(x.message)]
    assert len(notes) == (names is not None) and all(x.filename == __file__ for x in notes)   # the caller's line


def test_a_note_is_said_once_by_a_command(tmp_path, capsys, monkeypatch):
    """Tasks of a sweep in the command's process that read the same file
    said its note once per task."""
    from epochbench import cli
    from epochbench.instances.core import note
    monkeypatch.setitem(cli.COMMANDS, "list", lambda args: [note("f.csv: a note") for _ in range(3)] and 0)
    assert main(["list"]) == 0
    assert capsys.readouterr().err == "epochbench list: f.csv: a note\n"


def test_a_note_is_one_line_under_a_filter_that_makes_warnings_errors(capsys, monkeypatch):
    """``python -W error`` turned a note into a traceback."""
    import warnings

    from epochbench import cli
    from epochbench.instances.core import note
    monkeypatch.setitem(cli.COMMANDS, "list", lambda args: note("f.csv: a note") or 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["list"]) == 0
    assert capsys.readouterr().err == "epochbench list: f.csv: a note\n"


def _queue_jobs(values):
    return pd.DataFrame({"id": [1, 2, 3, 4], "submit": [0, 1, 2, 3], "runtime": [5] * 4, "procs": [1] * 4,
                         "queue": pd.Series(values, dtype=object)})


def test_a_column_of_numbers_with_a_blank_is_not_numbered_and_the_blank_is_unknown():
    """Not read as names (7 and 8 stay 7 and 8); the blank is -1, SWF's
    unknown, as among names (it was refused: "has nan at job 2")."""
    from epochbench.instances.core import InputNote
    from epochbench.instances.jobs import make_workload
    for values in (["7", "", "8", "7"], [b"7", b"", b"8", b"7"]):
        with pytest.warns(InputNote, match=r"^memory: column 'queue' has 1 empty cell\(s\): -1 there, SWF's unknown$"):
            w = make_workload(_queue_jobs(values), 4)
        assert w.table["queue"].tolist() == [7, -1, 8, 7] and "names" not in w.meta


def test_names_numbered_add_to_the_names_meta_holds_and_none_add_no_key():
    import warnings

    from epochbench.instances.jobs import make_workload
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = make_workload(_queue_jobs(["a", "b", "a", "b"]), 4, meta={"names": {"user": ["bob"]}})
    assert w.meta["names"] == {"user": ["bob"], "queue": ["a", "b"]}
    assert "names" not in make_workload(_queue_jobs([1, 2, 1, 2]), 4).meta


def test_an_swf_value_with_an_underscore_is_named_by_its_line(tmp_path):
    """Python's float() reads "1_000", the readers do not: the bad line was
    not found and pandas' own message (no line) was all the user saw."""
    f = tmp_path / "u.swf"
    f.write_text("; MaxProcs: 10\n1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1\n"
                 "2 1 -1 1_000 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1\n")
    with pytest.raises(InstanceError, match=r"u\.swf, line 3: field 4 \(runtime\) is not a number: '1_000'$"):
        load_workload(f)


def test_a_gzip_swf_file_not_named_gz_is_read(tmp_path):
    """It was refused as "line 1: expected 18 fields, got 3"; gzip's magic
    bytes say what it is (no SWF text starts with them)."""
    import gzip
    text = "; MaxProcs: 10\n" + "".join(f"{i} {i} -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1\n" for i in range(1, 6))
    (tmp_path / "plain.swf").write_text(text)
    (tmp_path / "packed.swf").write_bytes(gzip.compress(text.encode()))
    a, b = load_workload(tmp_path / "plain.swf"), load_workload(tmp_path / "packed.swf")
    assert a.jobs.equals(b.jobs) and list(b.capacity) == [10]


@pytest.mark.parametrize("text, line", [("# hello\nid,submit,runtime,procs\n1,0,10,2\n", 1),
                                        ('# epochbench {"capacity": [4]}\n# again\nid,submit,runtime,procs\n'
                                         "1,0,10,2\n", 2),
                                        ('# epochbench {"capacity": [4]}\n\n# c\nid,submit,runtime,procs\n'
                                         "1,0,10,2\n", 3)])
def test_a_csv_comment_line_is_named_not_a_parser_error(tmp_path, text, line):
    """pandas read the comment as the header and said only "Expected 1
    fields in line 2, saw 5"."""
    f = tmp_path / "c.csv"
    f.write_text(text)
    with pytest.raises(InstanceError, match=rf"c\.csv, line {line}: a comment line .* starts with its header row"):
        load_workload(f)


def test_a_workload_named_like_a_dotfile_is_written_as_a_file(tmp_path, monkeypatch):
    """``--out .swf`` (pathlib gives that name no suffix) made a folder
    ``.swf`` to lock, then refused to write the workload there: ".swf:
    already exists" in an empty folder."""
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "workload", "--jobs", "20", "--out", ".swf"]) == 0
    assert (tmp_path / ".swf").is_file() and (tmp_path / ".swf").read_text().count("\n") > 20
