"""The simulator's one face: one policy registry keyed by (machine, name),
options declared once and read by the command line, one report and one
writer with the same keys on every machine."""
import json
import re
import subprocess
import sys

import pytest

from epochbench.cli import build_parser, main
from epochbench.instances.jobs import make_workload, write_swf
from epochbench.sim import registry
from epochbench.sim.runner import REPORT_KEYS


@pytest.fixture
def swf(tmp_path):
    jobs = {"id": range(1, 13), "submit": [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22],
            "runtime": [50, 30, 40, 10, 60, 5, 15, 25, 35, 45, 55, 65],
            "estimate": [60, 40, 40, 20, 90, 10, 20, 30, 40, 50, 60, 70],
            "procs": [8, 4, 2, 8, 6, 1, 3, 5, 7, 2, 4, 6]}
    path = tmp_path / "w.swf"
    write_swf(make_workload(jobs, [8]), path)
    return path


def test_every_machine_has_policies_and_keys_are_unique():
    specs = registry.policies()
    assert {s.machine for s in specs} == set(registry.MACHINES)
    keys = [(s.machine, s.name) for s in specs]
    assert len(keys) == len(set(keys))
    assert ("pool", "easy") in keys and ("farm", "easy") in keys                 # one name, two machines
    assert registry.machine_of("easy") == "pool" and registry.machine_of("mbgs") == "gang"
    assert registry.machine_of("cs-i-p") == "farm"
    assert all(s.rule for s in specs)


def test_registering_a_policy_twice_differently_is_refused():
    """Refused before any lookup loaded the built-ins too (this test alone
    in its process): the catalog had taken the lambda, and ``easy`` was
    the lambda for every later test of the process."""
    def mine(**kw):
        return None
    with pytest.raises(ValueError, match="already registered"):
        registry.register_policy("pool", "easy", mine)
    assert registry.get_policy("pool", "easy").make is not mine
    assert registry.POLICIES.origin(("pool", "easy")) == "builtin"


def test_cli_options_and_help_come_from_the_registry():
    parser = build_parser("simulate")
    sim = parser._subparsers._group_actions[0].choices["simulate"]
    dests = {a.dest for a in sim._actions}
    for machine in registry.MACHINES:
        assert {o.name for o in registry.machine_options(machine)} <= dests
    policy_help = next(a.help for a in sim._actions if a.dest == "policy")
    for spec in registry.policies():
        assert spec.name in policy_help


def test_list_policies_prints_every_policy_and_its_options(capsys):
    assert main(["list", "--policies"]) == 0
    out = capsys.readouterr().out
    for spec in registry.policies():
        assert f"  {spec.name} " in out
    assert "--slack-factor (slack-bf)" in out and "--mpl" in out and "--farm-jobs" in out


@pytest.mark.parametrize("argv", [["--policy", "easy"], ["--policy", "gs", "--mpl", "2"],
                                  ["--machine", "farm", "--policy", "edf", "--farm-jobs", "30"]])
def test_one_writer_same_report_keys_on_every_machine(tmp_path, swf, argv):
    out = tmp_path / "run"
    full = ["simulate", *([] if "farm" in argv else ["--workload", str(swf)]), *argv, "--out", str(out), "--quiet"]
    assert main(full) == 0
    report = json.loads((out / "report.json").read_text())
    assert tuple(report) == REPORT_KEYS
    header = (out / "jobs.csv").read_text().splitlines()[0].split(",")
    assert header[:2] == ["id", "submit"] and report["jobs"] == len((out / "jobs.csv").read_text().splitlines()) - 1


def test_an_option_of_another_policy_is_one_clear_error(swf, capsys):
    assert main(["simulate", "--workload", str(swf), "--policy", "easy", "--slack-factor", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--slack-factor applies to policy slack-bf only" in err


def test_calibrate_is_a_command(tmp_path, swf):
    proc = subprocess.run([sys.executable, "-m", "epochbench.cli", "calibrate", str(swf), "--target", "1",
                           "--out", str(tmp_path / "c.swf")], capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    cal = json.loads(proc.stdout)
    assert "factor" in cal and (tmp_path / "c.swf").exists()


@pytest.mark.parametrize("policy, machine, kw", [("easy", "pool", {}), ("gs", "gang", {"mpl": 2}),
                                                 ("edf", "farm", {"farm_jobs": 30})])
def test_every_machine_reports_progress_and_the_schedule_does_not_change(swf, policy, machine, kw):
    import epochbench as eb
    from epochbench.instances.jobs import load_workload
    wl = None if machine == "farm" else load_workload(swf)
    calls = []
    plain = eb.simulate(wl, policy, machine=machine, **kw)
    seen = eb.simulate(wl, policy, machine=machine, progress=lambda *a: calls.append(a), **kw)
    assert plain.jobs.equals(seen.jobs)
    counts = [c[0] for c in calls]
    assert calls and counts == sorted(counts) and counts[-1] == len(plain.jobs)
    assert all(len(c) in (2, 3) for c in calls)


def test_the_progress_line_is_throttled_and_has_an_eta(monkeypatch, capsys):
    from epochbench.cli_args import _Progress
    now = iter([0.0, 1.0, 2.5, 2.6, 3.5])
    p = _Progress(100, True)
    monkeypatch.setattr(p, "clock", lambda: next(now))
    p.t0, p.due = 0.0, 2.0
    for count in (10, 25, 30, 50, 100):
        p(count, 1000.0 * count)
    p.close()
    lines = [l for l in capsys.readouterr().err.split("\r") if l.strip()]
    assert len(lines) == 2                            # at 2.5 s and 3.5 s; before 2 s and within 0.5 s: none
    assert "30/100 jobs arrived (30%)" in lines[0] and "ETA 6 s" in lines[0]
    assert "100/100" in lines[-1] and "ETA" not in lines[-1]


def test_a_wait_before_the_first_progress_call_is_said_once_and_written_over(monkeypatch, capsys):
    """Nothing called the line QUIET_S seconds after it was made (the compiled
    loop loading: compiled on a first run, about a minute for conservative):
    one line says so; the first progress line writes over all of it, and
    close ends the line.  A call before then, or a line that is off, says
    nothing of a wait."""
    import time

    from epochbench.cli_args import _Progress
    monkeypatch.setattr(_Progress, "QUIET_S", 0.05)
    p = _Progress(100, True)
    time.sleep(0.3)
    p.due = 0.0
    p(50, 10.0)
    p.close()
    err = capsys.readouterr().err
    parts = err.split("\r")
    assert err.count(_Progress.WAITING.strip()) == 1 and parts[1].rstrip() == _Progress.WAITING.rstrip()
    assert "50/100 jobs arrived" in parts[2] and len(parts[2].rstrip("\n")) >= len(_Progress.WAITING)
    assert err.endswith("\n") and err.count("\n") == 1
    monkeypatch.setattr(_Progress, "QUIET_S", 0.2)
    quick = _Progress(100, True)
    quick(1, 0.0)                              # the simulation runs: before 2 s, nothing to show yet
    time.sleep(0.4)
    quick.close()
    off = _Progress(100, False)
    assert off.timer is None
    off.close()
    assert capsys.readouterr().err == ""


def test_the_farms_per_epoch_oracle_gaps_are_in_the_text_output(capsys):
    assert main(["simulate", "--machine", "farm", "--policy", "cs-i-p", "--farm-jobs", "40", "--interarrival", "4",
                 "--oracle-every", "5", "--quiet"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.strip().startswith("match_gap (per epoch)"))
    assert "epochs" in line and ("mean" in line or "0 epochs" in line)


def test_simulate_takes_a_users_jobs_and_capacity_pair():
    """``simulate((jobs, capacity))`` reads the jobs by the workload rules,
    as ``make_workload`` does (the README's job dict has no ``duration``)."""
    import epochbench as eb
    from epochbench.instances.jobs import make_workload
    jobs = {"id": range(1, 7), "submit": [0, 5, 9, 12, 20, 21], "runtime": [50, 30, 40, 10, 60, 5],
            "estimate": [60, 40, 40, 20, 90, 10], "procs": [32, 48, 16, 8, 64, 4]}
    want = eb.simulate(make_workload(jobs, [64]), "easy").summary()
    assert eb.simulate((jobs, [64]), "easy").summary() == want


def test_a_run_owns_its_arrays_and_its_jobs_frame():
    """Editing ``run.jobs`` changed the caller's own arrays, the run's
    summary and the next run; a user's column called ``duration`` skipped
    the workload rules (every job ran 1 s), and then was overwritten without
    a word: one unlike the derived one is refused, the derived one passes."""
    import numpy as np
    import pandas as pd

    import epochbench as eb
    jobs = {"id": np.arange(1, 7), "submit": np.array([0, 5, 9, 12, 20, 21.]),
            "runtime": np.array([50, 30, 40, 10, 60, 5.]), "estimate": np.array([60, 40, 40, 20, 90, 10.]),
            "procs": np.array([32, 48, 16, 8, 64, 4])}
    run = eb.simulate((jobs, 64), "easy")
    want = run.summary()["wait_mean"]
    run.jobs.loc[0, "submit"] = 7.0
    run.jobs.loc[0, "start"] = 1e6
    assert jobs["submit"][0] == 0.0 and run.summary()["wait_mean"] == want
    assert eb.simulate((jobs, 64), "easy").summary()["wait_mean"] == want
    own = pd.DataFrame(jobs).assign(duration=1.0)
    with pytest.raises(ValueError, match=r"column 'duration' is derived, never read: min\(runtime, estimate\), jobs "
                                         r"killed at their estimate; yours differs at job id 1 \(1.0, derived 50.0\)"):
        eb.simulate((own, 64), "easy")
    own["duration"] = np.minimum(own["runtime"], own["estimate"])
    assert eb.simulate((own, 64), "easy").summary()["wait_mean"] == want


@pytest.mark.parametrize("column, value, says", [
    ("submit", "dates", "column 'submit' holds dates"), ("runtime", "durations", "column 'runtime' holds durations"),
    ("procs", "bools", "column 'procs' holds true / false")])
def test_dates_durations_and_booleans_are_no_numbers_of_a_job_table(column, value, says):
    """A datetime submit column was read as microseconds (wait 0, utilization 5.7e-06)."""
    import pandas as pd

    import epochbench as eb
    df = pd.DataFrame({"id": range(1, 4), "submit": [0.0, 5.0, 9.0], "runtime": [50.0, 30.0, 40.0],
                       "estimate": [60.0, 40.0, 40.0], "procs": [32, 48, 16]})
    df[column] = {"dates": pd.to_datetime(df["submit"], unit="s"), "durations": pd.to_timedelta(df["runtime"], unit="s"),
                  "bools": True}[value]
    with pytest.raises(ValueError, match=says):
        eb.simulate((df, 64), "easy")


@pytest.mark.parametrize("column, value, says", [
    ("submit", "dates", "column 'submit' holds dates"), ("runtime", "durations", "column 'runtime' holds durations"),
    ("estimate", "durations", "column 'estimate' holds durations")])
def test_dates_and_durations_of_a_parquet_workload_are_no_numbers(tmp_path, column, value, says):
    """The Parquet reader gave such columns as Python objects, read as
    microseconds: a 5 s gap between submits became 5,000,000 s, without a
    word.  A date column the simulator does not read is no harm."""
    import pandas as pd

    import epochbench as eb
    df = pd.DataFrame({"id": range(1, 4), "submit": [0.0, 5.0, 6.0], "runtime": [10.0, 10.0, 5.0],
                       "estimate": [20.0, 20.0, 5.0], "procs": [4, 8, 2]})
    ok = df.assign(when=pd.to_datetime(df["submit"], unit="s"))
    ok.to_parquet(tmp_path / "ok.parquet")
    assert eb.simulate(str(tmp_path / "ok.parquet"), "easy", nodes=8).summary()["jobs"] == 3
    df[column] = (pd.to_datetime(df[column], unit="s") if value == "dates"
                  else pd.to_timedelta(df[column], unit="s"))
    df.to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=says):
        eb.simulate(str(tmp_path / "bad.parquet"), "easy", nodes=8)


def test_a_negative_small_job_threshold_is_refused():
    import numpy as np

    import epochbench as eb
    jobs = {"id": np.arange(1, 4), "submit": np.array([0, 5, 9.]), "runtime": np.array([50, 30, 40.]),
            "procs": np.array([32, 48, 16])}
    run = eb.simulate((jobs, 64), "easy")
    assert run.summary(small_threshold=16)["small_jobs"] == 1
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="small_threshold: processors, an integer >= 0"):
            run.summary(small_threshold=bad)


EMPTY = {"id": [], "submit": [], "runtime": [], "procs": [], "estimate": []}


@pytest.mark.parametrize("machine, policy", [("pool", "easy"), ("pool", "conservative"), ("gang", "gs")])
def test_an_empty_workload_in_memory_is_refused_as_an_empty_file_is(tmp_path, machine, policy):
    """A job table of zero jobs gave a result whose every metric was NaN; an
    empty file was refused in one line."""
    import epochbench as eb
    from epochbench.instances.core import InstanceError
    path = tmp_path / "empty.csv"
    path.write_text("id,submit,runtime,procs,estimate\n")
    with pytest.raises(InstanceError, match=r": no runnable jobs: an empty workload has no metrics$"):
        eb.simulate(str(path), policy, machine=machine)
    for given in (make_workload(EMPTY, [4]), (EMPTY, [4])):
        with pytest.raises(InstanceError, match=r"^memory: no runnable jobs: an empty workload has no metrics$"):
            eb.simulate(given, policy, machine=machine)
    too_wide = {"id": [1], "submit": [0.0], "runtime": [5.0], "procs": [9], "estimate": [5.0]}   # every job dropped
    with pytest.raises(InstanceError, match=r"^memory: no runnable jobs \(too_many_processors 1 dropped\)"):
        eb.simulate((too_wide, [4]), policy, machine=machine)


@pytest.mark.parametrize("kind", ["list", "large_list", "fixed_size_list"])
def test_a_parquet_column_of_lists_is_refused_naming_its_file(tmp_path, kind):
    """Lists of one length became a 2-D column, refused without the file's
    name; so were Arrow's large and fixed-size lists."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import epochbench as eb
    item = {"list": pa.list_(pa.int64()), "large_list": pa.large_list(pa.int64()),
            "fixed_size_list": pa.list_(pa.int64(), 2)}[kind]
    pq.write_table(pa.table({"id": [1, 2], "submit": [0, 5], "runtime": pa.array([[1, 2], [3, 4]], type=item),
                             "estimate": [20, 20], "procs": [4, 8]}), tmp_path / "lists.parquet")
    with pytest.raises(ValueError, match=r"lists.parquet: column 'runtime' has \[1, 2\], not a number, at job 1"):
        eb.simulate(str(tmp_path / "lists.parquet"), "easy", nodes=8)


def test_an_arrow_date_column_of_a_parquet_workload_is_no_number(tmp_path):
    """A ``date32`` submit column (days, no time of day) is refused as a
    date, as pandas' datetime columns are."""
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    import epochbench as eb
    day = datetime.date(2020, 1, 1)
    pq.write_table(pa.table({"id": [1, 2], "submit": pa.array([day, day], type=pa.date32()), "runtime": [10, 10],
                             "estimate": [20, 20], "procs": [4, 8]}), tmp_path / "d.parquet")
    with pytest.raises(ValueError, match="column 'submit' holds dates"):
        eb.simulate(str(tmp_path / "d.parquet"), "easy", nodes=8)


@pytest.mark.parametrize("policy", ["easy", "gs"])
def test_deadlines_and_licenses_of_a_workload_are_said_not_read(tmp_path, capsys, policy):
    """A workload's ``deadline`` and ``licenses`` columns (the job table's
    contract) change no run of the pool or gang machine: a deadline of 5 s
    on a job that ended at 10 passed without a word.  The report's
    ``unused`` counts the jobs that give them, and the text says so."""
    import json

    from epochbench.cli import main
    path = tmp_path / "dl.csv"
    path.write_text("id,submit,runtime,procs,estimate,deadline,licenses\n1,0,10,4,20,5,a\n2,0,10,8,20,,\n"
                    "3,1,10,8,20,30,\n")
    assert main(["simulate", "--workload", str(path), "--policy", policy, "--nodes", "8", "--out",
                 str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "not read: deadline (given on 2 job(s)), licenses (given on 1 job(s))" in out
    assert json.loads((tmp_path / "o" / "report.json").read_text())["unused"] == {"deadline": 2, "licenses": 1}
    plain = tmp_path / "plain.csv"          # the columns there, with no job giving them
    plain.write_text("id,submit,runtime,procs,estimate,deadline,licenses\n1,0,10,4,20,,\n")
    assert main(["simulate", "--workload", str(plain), "--policy", policy, "--nodes", "8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unused"] == {}


@pytest.mark.parametrize("how", ["csv", "parquet", "frame"])
def test_true_false_beside_an_empty_cell_is_no_number(tmp_path, how):
    """True / False with an empty cell (None) in the same column is no
    boolean column, and was read as 1 / 0: an estimate of True killed a
    50 s job after 1 s, exit 0 (a review; a column of booleans alone was
    refused)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    import epochbench as eb
    from epochbench.instances.jobs import load_workload
    cols = {"id": [1, 2, 3], "submit": [0.0, 5.0, 9.0], "runtime": [50.0, 30.0, 40.0],
            "estimate": [True, None, True], "procs": [32, 48, 16]}
    says = r"column 'estimate' holds true / false, not numbers \(True at job 1 of the input \(id 1\)\)"
    if how == "csv":
        path = tmp_path / "w.csv"
        path.write_text("id,submit,runtime,estimate,procs\n1,0,50,True,32\n2,5,30,,48\n3,9,40,True,16\n")
        with pytest.raises(ValueError, match=says):
            load_workload(path)
    elif how == "parquet":
        path = tmp_path / "w.parquet"
        pq.write_table(pa.table({**cols, "estimate": pa.array(cols["estimate"])}), path)
        with pytest.raises(ValueError, match=says):
            load_workload(path)
    else:
        with pytest.raises(ValueError, match=says):
            eb.simulate((pd.DataFrame(cols), 64), "easy")
        # an SWF field's column of Python booleans (object dtype) is refused as a boolean column is
        frame = pd.DataFrame({**cols, "estimate": [60.0, 40.0, 40.0], "queue": pd.Series([True, False, True],
                                                                                         dtype=object)})
        with pytest.raises(ValueError, match=r"column 'queue' holds true / false, not numbers"):
            eb.simulate((frame, 64), "easy")


def test_a_csv_tag_with_an_empty_object_is_the_tag_line(tmp_path):
    """``# epochbench {}`` was taken for the header (skipped only when its
    object held something): a parser error about line 2."""
    from epochbench.instances.jobs import load_workload
    path = tmp_path / "e.csv"
    path.write_text("# epochbench {}\nid,submit,runtime,procs\n1,0,50,32\n")
    w = load_workload(path)
    assert len(w.jobs) == 1 and list(w.capacity) == [32]


_SWF_JOBS = ("1 0 -1 100 8 -1 -1 8 120 -1 1 1 1 1 1 -1 -1 -1\n"
             "2 1 -1 100 8 -1 -1 8 120 -1 1 1 1 1 1 -1 -1 -1\n")


@pytest.mark.parametrize("resources, capacity, says", [
    ("procs mem", "64 abc", r"header field EpochbenchCapacity gives mem 'abc', not a whole number in 1\.\.\d+"),
    ("procs mem", "64 100.5", r"header field EpochbenchCapacity gives mem '100\.5', not a whole number"),
    ("procs mem", "64 0", r"header field EpochbenchCapacity gives mem '0', not a whole number"),
    ("procs mem", "64", r"header field EpochbenchCapacity has 1 value\(s\) for the 2 resources of "
                        r"EpochbenchResources \(procs mem\)"),
    ("procs mem", "64 100 7", r"header field EpochbenchCapacity has 3 value\(s\) for the 2 resources"),
    ("procs mem mem", "64 100 100", r"header field EpochbenchResources \(procs mem mem\) names 'mem' twice"),
    ("mem procs", "100 64", r"header field EpochbenchResources \(mem procs\) does not start with procs"),
    ("procs mem", "32 100", r"header fields MaxProcs \(64\) and EpochbenchCapacity \(procs 32\) disagree"),
    (None, "64 100", r"header field EpochbenchCapacity without EpochbenchResources"),
    ("mem", None, r"header field EpochbenchResources \(mem\) does not start with procs"),        # without a capacity
    ("procs mem mem", None, r"header field EpochbenchResources \(procs mem mem\) names 'mem' twice"),
])
def test_a_malformed_capacity_header_of_an_swf_file_is_refused_by_name(tmp_path, resources, capacity, says):
    """A value that is no number was an int() error naming neither file nor
    field; a count that differs or a name twice was ignored, and the
    largest job's amount (50) became the capacity of mem declared 100, exit
    0 (a review)."""
    from epochbench.instances.jobs import load_workload
    path = tmp_path / "r.swf"
    head = "; MaxProcs: 64\n" + (f"; EpochbenchResources: {resources}\n" if resources else "")
    path.write_text(head + (f"; EpochbenchCapacity: {capacity}\n" if capacity else "") + _SWF_JOBS)
    (tmp_path / "r.swf.extra.csv").write_text("id,res_mem\n1,50\n2,50\n")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: {says}"):
        load_workload(path)


def test_an_swf_capacity_header_gives_each_declared_resource_its_capacity(tmp_path):
    """A resource the sidecar adds without declaring it takes the largest
    job's amount, the declared ones theirs (any mismatch sent every
    resource to the largest job); without MaxProcs the header's processors."""
    from epochbench.instances.jobs import load_workload
    path = tmp_path / "r.swf"
    path.write_text("; EpochbenchResources: procs mem\n; EpochbenchCapacity: 64 100\n" + _SWF_JOBS)
    (tmp_path / "r.swf.extra.csv").write_text("id,res_mem,res_gpu\n1,50,3\n2,50,2\n")
    w = load_workload(path)
    assert list(w.capacity) == [64, 100, 3] and w.meta["capacity_from"] == "EpochbenchCapacity; largest_job for gpu"
    path.write_text("; MaxNodes: 32\n; EpochbenchResources: procs mem\n; EpochbenchCapacity: 64 100\n" + _SWF_JOBS)
    with pytest.raises(ValueError, match=r"header fields MaxNodes \(32\) and EpochbenchCapacity \(procs 64\) "
                                         r"disagree on the machine's processors \((--nodes|nodes=) sets them\)"):
        load_workload(path)


def test_a_load_that_spreads_arrivals_past_float_precision_is_named(tmp_path):
    """``--load 1e-300`` passed its range check, then was refused by the job
    table's check of the submit column (8.17e+301), never naming the load."""
    import epochbench as eb
    for model in ("feitelson96", "lublin03"):      # lublin03 rates its arrivals in its own model: it returned 1e302
        with pytest.raises(ValueError, match=r"^load=1e-300: spreads the 20 arrivals over .* s, past 2\*\*53 s"):
            eb.generate("workload", model=model, jobs=20, seed=1, load=1e-300)
    with pytest.raises(ValueError, match=r"^load_factor=1e-300: spreads the 20 arrivals"):
        eb.generate("workload", model="lublin03", jobs=20, seed=1, load_factor=1e-300)
    assert main(["generate", "workload", "--out", str(tmp_path / "g.swf"), "--jobs", "20", "--load", "1e-9"]) == 0
    with pytest.raises(ValueError, match=r"^time_limit: must be a positive finite number, got 1000"):   # not an
        eb.solve(eb.generate("leinberger", n=4, k=1, count=1)[0], "cpsat", time_limit=10**400)     # OverflowError


def test_a_csv_tag_naming_a_resource_twice_is_refused_and_a_capacity_source_that_is_no_text_is_not_said(tmp_path):
    """A resource named twice was read as two (capacity [64, 30, 30] from
    one res_mem column) and refused later as "capacity has K = 3 entries";
    a capacity_from of 5 was printed as where the capacity came from (it is
    dropped: metadata; a file epochbench wrote with None there still reads)."""
    from epochbench.instances.jobs import load_workload, make_workload, save_workload
    path = tmp_path / "m.csv"
    path.write_text('# epochbench {"capacity": [64, 30, 30], "resources": ["procs", "mem", "mem"]}\n'
                    "id,submit,runtime,procs,res_mem\n1,0,5,2,3\n")
    with pytest.raises(ValueError, match=r"resources \['procs', 'mem', 'mem'\] name 'mem' twice"):
        load_workload(path)
    path.write_text('# epochbench {"capacity": [64], "meta": {"capacity_from": 5}}\nid,submit,runtime,procs\n1,0,5,2\n')
    assert load_workload(path).meta["capacity_from"] == "metadata"
    jobs = {"id": [1], "submit": [0.0], "runtime": [5.0], "procs": [2]}
    for suffix in (".csv", ".parquet"):
        saved = save_workload(make_workload(jobs, 4, meta={"capacity_from": None}), tmp_path / f"a{suffix}")
        assert load_workload(saved).meta["capacity_from"] == "metadata"


@pytest.mark.parametrize("column", ["res_", "res_ "])
def test_a_resource_column_without_a_name_is_refused(tmp_path, column):
    """A column ``res_`` was read as a resource named '' and ran (a review)."""
    from epochbench.instances.jobs import load_workload, make_workload
    path = tmp_path / "w.csv"
    path.write_text(f"id,submit,runtime,procs,{column}\n1,0,10,2,1\n2,1,5,1,0\n")
    with pytest.raises(ValueError, match=r"w\.csv: a resource's name must be text that is not blank, got '\s?'"):
        load_workload(path)
    jobs = {"id": [1], "submit": [0.0], "runtime": [5.0], "procs": [2], "res_mem": [1]}
    with pytest.raises(ValueError, match=r"a resource's name must be text that is not blank, got None"):
        make_workload(jobs, [4, 2], resources=["procs", None])


def test_resources_named_outside_ascii_come_back_from_an_swf_file_and_header_values_show_as_written(tmp_path):
    """``gpu₂`` was written into the SWF header as ``gpu?``, so a file
    epochbench wrote was refused on reading ("a sidecar of another
    stream?"); a header value was shown as its Latin-1 reading
    (``'12Ã©'``).  A header in Latin-1 (``m\\xe9m``) still reads."""
    from epochbench.instances.jobs import load_workload, make_workload, save_workload
    jobs = {"id": [1, 2], "submit": [0.0, 1.0], "runtime": [5.0, 3.0], "procs": [2, 1], "res_mém": [1, 2],
            "res_gpu₂": [0, 1], "res_à": [1, 0]}       # à ends in byte \xa0, which str.strip() took (a review)
    w = make_workload(jobs, [4, 2, 2, 2], source="données/ω.csv")
    back = load_workload(save_workload(w, tmp_path / "u.swf"))
    assert back.resources == ("procs", "mém", "gpu₂", "à") and back.capacity.tolist() == [4, 2, 2, 2]
    again = load_workload(save_workload(back, tmp_path / "v.swf"))
    assert again.resources == back.resources
    assert "written from données/ω.csv" in (tmp_path / "u.swf").read_bytes().decode("utf-8")
    odd = make_workload({k: jobs[k] for k in ("id", "submit", "runtime", "procs")}, [4], source="w\udce9.csv")
    assert b"written from w\xe9.csv\n" in save_workload(odd, tmp_path / "o.swf").read_bytes()   # it raised
    head = "; Installation: Jülich Å\n; Computer: x\xa0\n".encode()       # written back byte for byte
    (tmp_path / "j.swf").write_bytes(head + b"; MaxProcs: 4\n1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1\n")
    assert head in save_workload(load_workload(tmp_path / "j.swf"), tmp_path / "k.swf").read_bytes()
    bad = tmp_path / "h.swf"
    bad.write_bytes("; MaxProcs: 12é\n1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1\n".encode())
    with pytest.raises(ValueError, match="header field 'MaxProcs' = '12é' is not a positive integer"):
        load_workload(bad)
    old = tmp_path / "l.swf"
    old.write_bytes(b"; MaxProcs: 4\n; EpochbenchResources: procs m\xe9m\n; EpochbenchCapacity: 4 2\n"
                    b"1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1\n")
    (tmp_path / "l.swf.extra.csv").write_text("id,res_mém\n1,1\n", encoding="utf-8")
    assert load_workload(old).resources == ("procs", "mém")
