"""sim/calibrate.py: the mean queue length (Little's law over a window) and the
arrival-rate calibration of [leinberger1999] §3.1 (target within 10 %)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from epochbench.instances.workloads import workload
from epochbench.cli import main
from epochbench.sim.calibrate import calibrate_rate, mean_queue_length, queue_window
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.metrics import queue_over_time


def test_mean_queue_length_by_hand():
    # waits: job 0 [0, 0), job 1 [0, 5), job 2 [10, 15), job 3 [20, 20); window [0, 20]
    res = pd.DataFrame({"submit": [0.0, 0.0, 10.0, 20.0], "start": [0.0, 5.0, 15.0, 20.0]})
    assert mean_queue_length(res, warmup=0.0) == pytest.approx(10 / 20)
    assert queue_window(res["submit"], 0.5, 0.0) == (10.0, 20.0)
    assert mean_queue_length(res, warmup=0.5) == pytest.approx(5 / 10)
    res.loc[3, "start"] = np.nan                      # never started: waits to the window's end
    assert mean_queue_length(res, warmup=0.0) == pytest.approx(10 / 20)
    with pytest.raises(ValueError):
        queue_window(res["submit"], 0.6, 0.5)


def test_mean_queue_length_equals_the_step_function_integral():
    s = workload(model="feitelson96", jobs=1500, seed=9, load=0.9)
    res = simulate(s.jobs, s.capacity, "easy").jobs
    a, b = queue_window(res["submit"], 0.1, 0.1)
    grid, q = queue_over_time(res)
    edges = np.clip(grid, a, b)
    integral = float(np.dot(q[:-1], np.diff(edges)))
    assert mean_queue_length(res, 0.1, 0.1) == pytest.approx(integral / (b - a), rel=1e-9)


@pytest.mark.parametrize("model,k,target", [("feitelson96", 2, 16), ("feitelson96", 4, 64), ("lublin03", 1, 32)])
def test_calibration_reaches_the_target_within_10_percent(model, k, target):
    s = workload(model=model, jobs=2000, seed=1, k=k)
    cal = calibrate_rate(s.jobs, s.capacity, target, "easy")
    assert cal.converged and abs(cal.rel_error) <= 0.10
    assert cal.simulations <= 15 and len(cal.history) == cal.simulations
    # the stream it returns gives that queue length again (common random numbers, deterministic run)
    again = mean_queue_length(simulate(cal.jobs, s.capacity, "easy").jobs)
    assert again == pytest.approx(cal.mean_queue)
    assert cal.jobs["runtime"].equals(s.jobs["runtime"])
    gaps = np.diff(cal.jobs["submit"].to_numpy())
    assert cal.rate == pytest.approx(1 / gaps.mean()) and cal.mean_interarrival == pytest.approx(gaps.mean())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_calibration_takes_any_policy_name_and_options(seed):
    """Any policy and its options: the calibration reports what the scaled
    stream really does under them (re-simulated here), and says converged
    exactly when the error is within rtol.  (A comparison between policies'
    factors depends on the stream, so none is asserted.)"""
    from epochbench.instances.workloads import rajaei
    s = rajaei(600, seed=seed)
    for policy, options in (("nonfcfs", {"starvation_limit": 3600.0}), ("fcfs", {})):
        cal = calibrate_rate(s.jobs, s.capacity, 20, policy, **options)
        assert cal.policy == policy and cal.factor > 0 and cal.simulations >= 1
        again = simulate(cal.jobs, s.capacity, policy, **options)
        assert mean_queue_length(again.jobs, 0.1) == pytest.approx(cal.mean_queue)
        assert cal.rel_error == pytest.approx(cal.mean_queue / 20 - 1)
        assert cal.converged == (abs(cal.rel_error) <= 0.05)
        assert cal.converged or cal.note
    with pytest.raises(KeyError):
        calibrate_rate(s.jobs, s.capacity, 20, "no-such-policy")


def test_unreachable_target_is_an_error():
    s = workload(model="feitelson96", jobs=60, seed=3)
    with pytest.raises(ValueError, match="too few jobs"):
        calibrate_rate(s.jobs, s.capacity, 500, "easy")
    with pytest.raises(ValueError):
        calibrate_rate(s.jobs, s.capacity, 0, "easy")


def test_command_line(tmp_path, capsys):
    from epochbench.instances.workloads import write_workload
    from epochbench.instances.jobs import read_swf
    src = write_workload(tmp_path / "w.swf", model="feitelson96", jobs=1000, seed=4, k=2)
    out = tmp_path / "calibrated.swf"
    assert main(["calibrate", str(src), "--target", "24", "--policy", "easy", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert '"converged": true' in printed
    w = read_swf(out)
    assert w.capacity.tolist() == [128, 1000]
    assert mean_queue_length(simulate(w.jobs, w.capacity, "easy").jobs) == pytest.approx(24, rel=0.1)


def test_out_of_simulations_returns_the_best_point_with_a_note():
    s = workload(model="feitelson96", jobs=2000, seed=1, k=2)
    cal = calibrate_rate(s.jobs, s.capacity, 400, "easy", max_simulations=2)
    assert not cal.converged and cal.simulations == 2 and "max_simulations" in cal.note
    assert cal.mean_queue == max(v for _, v in cal.history)          # the closer of the two, from below


def test_a_jump_it_cannot_cross_is_said_with_the_queue_lengths_it_measured():
    """The note quoted Illinois-halved residuals as queue lengths (63.18 =
    sqrt(62.37 x 64), never measured); it quotes the measured ones now."""
    import re
    s = workload(model="lublin03", jobs=400, seed=3)                # the old note was wrong on this one
    cal = calibrate_rate(s.jobs, s.capacity, 16, "easy", rtol=1e-9, max_simulations=60)
    assert not cal.converged
    m = re.search(r"q jumps from (\S+) to (\S+) \(target 16, rtol 1e-09\) between factors (\S+) and (\S+) ",
                  cal.note)
    assert m, cal.note
    # to 11 significant digits, finer than rtol (at 4 a review read "jumps from 11.1 to 11.1" at rtol 1e-6)
    measured = {f"{f:.6g}": f"{v:.11g}" for f, v in cal.history}
    assert measured[m.group(3)] == m.group(1) and measured[m.group(4)] == m.group(2), (cal.note, cal.history)
    assert m.group(1) != m.group(2)


def test_a_stream_that_runs_past_its_estimates_is_not_calibrated_into_swf(tmp_path, capsys):
    """SWF keeps no kill rule: the calibrated stream of a kill_at_estimate
    false table, read back with the default, reached a mean queue of 7
    where the calibration said 19.8 (an audit).  .csv keeps the rule."""
    from epochbench.instances.jobs import make_workload, read_table, write_table
    s = workload(model="feitelson96", jobs=600, seed=4)
    jobs = s.jobs.copy()
    jobs["estimate"] = jobs["runtime"] * 0.5 + 1                # half the estimates short: the rule matters
    src = write_table(make_workload(jobs, s.capacity, kill_at_estimate=False), tmp_path / "nokill.csv")
    capsys.readouterr()
    assert main(["calibrate", str(src), "--target", "10", "--out", str(tmp_path / "c.swf")]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path / 'c.swf'}: SWF keeps no kill rule, and {src} runs jobs past their estimate" in err
    assert not (tmp_path / "c.swf").exists()
    assert main(["calibrate", str(src), "--target", "10", "--out", str(tmp_path / "c.csv")]) in (0, 1)
    assert read_table(tmp_path / "c.csv").kill_at_estimate is False


def test_a_calibration_that_writes_nothing_makes_no_folder_and_its_options_are_the_ones_run(tmp_path, capsys):
    """--out nd/sub/x.swf on a target the stream cannot reach left an empty
    nd/sub/ ("nothing written"); the JSON's options listed only the flags
    typed ({} for threshold-bf, which ran with its threshold 2)."""
    import json

    from epochbench.instances.jobs import make_workload, write_table
    s = workload(model="feitelson96", jobs=300, seed=1)
    src = write_table(make_workload(s.jobs, s.capacity), tmp_path / "s.csv")
    assert main(["calibrate", str(src), "--target", "1e9", "--out", str(tmp_path / "nd" / "sub" / "x.csv")]) == 2
    assert not (tmp_path / "nd").exists()
    capsys.readouterr()
    assert main(["calibrate", str(src), "--target", "3", "--policy", "threshold-bf"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["options"] == {"slowdown_threshold": 2.0}
    assert main(["calibrate", str(src), "--target", "3", "--policy", "slack-bf", "--slack-factor", "0.5",
                 "--out", str(tmp_path / "out" / "c.csv")]) in (0, 1)
    got = json.loads(capsys.readouterr().out)["options"]
    assert got == {"slack_factor": 0.5, "important_procs": None, "important_slack_factor": 0.0}


def test_a_calibration_records_no_option_that_calibrate_has_not(tmp_path, capsys):
    """los runs with its inner selector 'los', which is no option of
    calibrate: the note read '--selector los', which calibrate refuses and
    which sends simulate to the generic engine."""
    import json

    from epochbench.instances.jobs import make_workload, write_table
    s = workload(model="feitelson96", jobs=300, seed=1)
    src = write_table(make_workload(s.jobs, s.capacity), tmp_path / "s.csv")
    assert main(["calibrate", str(src), "--target", "3", "--policy", "los"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["options"] == {}
    assert main(["calibrate", str(src), "--target", "3", "--policy", "nonfcfs"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["options"] == {"starvation_limit": 86400.0}
