"""``epochbench simulate``: jobs.csv, report.json, --json, dropped jobs."""
import json

import pandas as pd
import pytest

from epochbench.cli import main

SWF = """; MaxProcs: 16
; MaxNodes: 16
    1   0  -1   10   8  -1  -1   8   20  -1  1  1  1  -1 -1 -1 -1 -1
    2   1  -1   30  10  -1  -1  10   40  -1  1  1  1  -1 -1 -1 -1 -1
    3   2  -1    5   4  -1  -1   4   10  -1  1  1  1  -1 -1 -1 -1 -1
    4   3  -1   -1   4  -1  -1   4   10  -1  1  1  1  -1 -1 -1 -1 -1
    5   4  -1    5  32  -1  -1  32   10  -1  1  1  1  -1 -1 -1 -1 -1
    6   5  -1   50   2  -1  -1   2   20  -1  1  1  1  -1 -1 -1 -1 -1
"""


@pytest.fixture
def swf(tmp_path):
    f = tmp_path / "tiny.swf"
    f.write_text(SWF)
    return f


@pytest.mark.parametrize("policy", ["fcfs", "nonfcfs", "easy", "conservative"])
def test_simulate_writes_jobs_and_report(swf, tmp_path, capsys, policy):
    out = tmp_path / "out"
    assert main(["simulate", "--workload", str(swf), "--policy", policy, "--out", str(out)]) == 0
    jobs = pd.read_csv(out / "jobs.csv")
    assert {"id", "submit", "start", "end", "procs", "estimate", "runtime"} <= set(jobs.columns)
    assert sorted(jobs["id"]) == [1, 2, 3, 6]
    assert (jobs["start"] >= jobs["submit"]).all()
    report = json.loads((out / "report.json").read_text())
    assert report["dropped"] == {"negative_runtime": 1, "too_many_processors": 1}
    assert report["policy"] == policy and report["jobs"] == 4
    for key in ("wait_mean", "bsld_mean", "utilization", "capacity_loss"):
        assert key in report["metrics"]
    assert "utilization" in capsys.readouterr().out


def test_simulate_json_is_one_object(swf, capsys):
    assert main(["simulate", "--workload", str(swf), "--policy", "easy", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["metrics"]["jobs"] == 4 and report["seconds"] >= 0


def test_simulate_job6_runs_past_its_estimate_only_without_kill(swf, tmp_path):
    for flag, duration in (([], 20.0), (["--no-kill"], 50.0)):
        out = tmp_path / f"o{len(flag)}"
        assert main(["simulate", "--workload", str(swf), "--policy", "fcfs", "--out", str(out), *flag]) == 0
        jobs = pd.read_csv(out / "jobs.csv").set_index("id")
        assert jobs.loc[6, "end"] - jobs.loc[6, "start"] == duration


def test_simulate_oracle_selector(swf, capsys):
    assert main(["simulate", "--workload", str(swf), "--policy", "easy", "--selector", "cpsat", "--json",
                 "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["engine"] == "generic" and report["metrics"]["jobs"] == 4


def test_threads_for_the_serial_cbc_selector_are_said_to_do_nothing(swf, capsys):
    """The report said threads=4 without a word, though CBC runs serially."""
    assert main(["simulate", "--workload", str(swf), "--policy", "easy", "--selector", "milp-cbc",
                 "--threads", "4", "--time-limit", "5"]) == 0
    assert "note: --threads 4 has no effect: milp-cbc runs serially" in capsys.readouterr().err
    assert main(["simulate", "--workload", str(swf), "--policy", "easy", "--selector", "milp-highs",
                 "--threads", "2", "--time-limit", "5"]) == 0
    assert "has no effect" not in capsys.readouterr().err


def test_simulate_text_names_the_selector_and_its_fallbacks(swf, capsys):
    """The text report of a run with a selector says so (it read like the
    policy's own run), and how many steps fell back to the policy's rule."""
    from epochbench.cli_simulate import _selector_note
    assert main(["simulate", "--workload", str(swf), "--policy", "easy", "--selector", "bl", "--param",
                 "window=2"]) == 0
    out = capsys.readouterr().out
    steps = [line for line in out.splitlines() if line.startswith("selector:")]
    assert len(steps) == 1 and steps[0].startswith("selector: bl window=2; ") and "step(s) given to it" in steps[0]
    assert "fell back" not in out and "proven" not in out
    rep = {"policy": "easy", "options": {"selector": "cpsat", "selector_options": {"time_limit": 0.001},
                                         "selector_stats": {"steps": 92, "unproven": 15, "fallback": 9}}}
    assert _selector_note(rep) == ("selector: cpsat time_limit=0.001; 92 step(s) given to it, 15 without a proven "
                                   "optimum, of which 9 fell back to easy's own rule (9 with no answer in time)")
    rep["options"]["selector_stats"].update(fallback=11, rule_better=4)
    assert _selector_note(rep).endswith("of which 11 fell back to easy's own rule (7 with no answer in time; "
                                        "4 where the rule did better than the unproven answer)")
    rep["options"]["selector_stats"].update(fallback=4, rule_better=4)
    assert _selector_note(rep).endswith("of which 4 fell back to easy's own rule (4 where the rule did better "
                                        "than the unproven answer)")
    assert _selector_note({"policy": "easy", "options": {"selector": None}}) == ""
    assert main(["simulate", "--workload", str(swf), "--policy", "easy"]) == 0
    assert "selector" not in capsys.readouterr().out


def test_simulate_unknown_policy_is_a_clear_error(swf, capsys):
    assert main(["simulate", "--workload", str(swf), "--policy", "nope"]) != 0
    assert "nope" in capsys.readouterr().err


@pytest.mark.parametrize("policy", ["gs", "bgs", "mgs", "mbgs"])
def test_simulate_gang_policies(swf, tmp_path, capsys, policy):
    out = tmp_path / "g"
    assert main(["simulate", "--workload", str(swf), "--policy", policy, "--mpl", "2", "--slice", "5",
                 "--switch-overhead", "0.01", "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["policy"] == policy and report["engine"] == "gang" and report["jobs"] == 4
    assert "capacity_loss" in report["metrics"]
    jobs = pd.read_csv(out / "jobs.csv")
    assert (jobs["end"] - jobs["start"] >= jobs["duration"] - 1e-9).all()


def test_simulate_farm(tmp_path, capsys):
    assert main(["simulate", "--machine", "farm", "--policy", "cs-ni-np", "--farm-jobs", "60",
                 "--machines", "12", "--licenses", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert 0 <= report["metrics"]["late_share"] <= 1 and report["metrics"]["jobs"] == 60
    assert main(["simulate", "--machine", "farm", "--policy", "edf", "--workload", "x.swf"]) == 2
    capsys.readouterr()
    assert main(["simulate", "--machine", "farm", "--policy", "cs-ni-np", "--farm-jobs", "30", "--machines", "12",
                 "--licenses", "4", "--cs-constant", "aging=0", "--cs-constant", "literal_fbar=1", "--json"]) == 0
    consts = json.loads(capsys.readouterr().out)["options"]["constants"]
    assert consts["aging"] == 0.0 and consts["literal_fbar"] is True and consts["overhead"] == 800.0
    assert main(["simulate", "--machine", "farm", "--policy", "edf", "--cs-constant", "aging=0"]) == 2
    assert main(["simulate", "--machine", "farm", "--policy", "cs-i-p", "--cs-constant", "agin=0"]) == 2
    assert "KEY one of" in capsys.readouterr().err


def test_gang_machine_rejects_pool_policies(swf, capsys):
    assert main(["simulate", "--workload", str(swf), "--machine", "gang", "--policy", "easy"]) == 2
    assert "gs, bgs, mgs, mbgs" in capsys.readouterr().err


def test_every_share_and_count_in_the_text_report_has_its_unit():
    """gang's capacity_lost_any_time* had no '(share)' (only capacity_loss
    matched) and the farm's late no '(jobs)'."""
    from epochbench.cli_simulate import _unit
    assert _unit("capacity_lost_any_time") == _unit("capacity_lost_any_time_mean") == " (share)"
    assert _unit("late") == _unit("deadline_jobs") == " (jobs)" and _unit("late_share") == " (share)"
    assert _unit("bsld_mean") == "" and _unit("wait_mean") == " (s)"
    assert _unit("slowdown_mean") == " (jobs without deadline)"       # the farm's: [capannini2007] fig. 5


def test_a_metric_without_jobs_to_average_reads_dash_in_text(tmp_path, capsys):
    """The text report printed ``nan`` where the JSON says null (the
    large jobs' means of a stream without large jobs; the farm's
    slowdown when every job has a deadline)."""
    one = tmp_path / "one.csv"
    one.write_text("id,submit,runtime,estimate,procs\n1,0,100,200,4\n")
    assert main(["simulate", "--workload", str(one), "--nodes", "8", "--policy", "easy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not any("nan" in line for line in lines)
    assert any(line.split() == ["large_wait_mean", "(s)", "-"] for line in lines)
