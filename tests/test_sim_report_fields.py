"""What a simulation's numbers depend on is in its report: the estimates
the input changed and the jobs killed at their estimate are counted, the
machine size's origin, the small-job threshold and tau are recorded, the
wait / response / slowdown have a p90, the weighted response is labelled
node s^2, and ``seconds`` times the simulation, not the loading of the
compiled loop (it did: 0.29 s for a 0.002 s FCFS run on KTH)."""
import json

import numpy as np
import pandas as pd

from epochbench import cli
from epochbench.sim import policies, pool


def _csv(tmp_path):
    jobs = pd.DataFrame({"id": [1, 2, 3, 4, 5], "submit": [0, 1, 2, 3, 4], "runtime": [10, 10, 0, 20, 5],
                         "estimate": [-5, np.nan, 0, 10, 5], "procs": [1, 2, 1, 2, 1]})
    path = tmp_path / "w.csv"
    jobs.to_csv(path, index=False)
    return path


def test_the_report_counts_what_the_input_changed_and_records_the_settings(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["simulate", "--workload", str(_csv(tmp_path)), "--policy", "fcfs", "--out", str(out),
                     "--small-threshold", "1"]) == 0
    text = capsys.readouterr().out
    rep = json.loads((out / "report.json").read_text())
    assert rep["adjusted"] == {"estimate_unknown_set_to_runtime": 2, "estimate_set_to_1s": 1}   # each job once
    assert rep["killed_at_estimate"] == 1                               # job 4: runtime 20, estimate 10
    assert rep["capacity_from"] == "largest_job" and rep["small_threshold"] == 1 and rep["tau"] == 10.0
    jobs = pd.read_csv(out / "jobs.csv")
    wait = (jobs["start"] - jobs["submit"]).to_numpy()
    assert np.isclose(rep["metrics"]["wait_p90"], np.quantile(wait, 0.9))
    assert "weighted_response (node s^2)" in text


def test_the_compiled_loop_is_loaded_before_the_clock_and_the_report_names_the_engine(monkeypatch):
    calls = []
    real = policies.warm_up
    monkeypatch.setattr(policies, "warm_up", lambda *a: (calls.append(a[0].name), real(*a)))
    jobs = pd.DataFrame({"id": [1, 2, 3], "submit": [0.0, 1.0, 2.0], "runtime": [5.0, 5.0, 5.0],
                         "estimate": [5.0, 5.0, 5.0], "duration": [5.0, 5.0, 5.0], "procs": [2, 2, 2]})
    if not policies.kernels_loaded():                  # EASY's pure-Python twin: nothing to load, none loaded
        assert pool.simulate_pool(jobs, [2], "easy").engine == "python" and calls == []
    res = pool.simulate_pool(jobs, [2], "conservative")
    assert calls == ["conservative"] and res.engine == "fast"


def test_the_farm_report_names_no_bounded_slowdown_settings_and_its_makespan_spans_the_stream():
    """The farm's figures use neither the small-job threshold nor tau (its
    slowdown is unbounded): its report said 32 and 10 s; its makespan was
    the last end, not the span from the first arrival as on the pool."""
    import dataclasses
    import epochbench as eb
    from epochbench.sim.farm import generate_stream
    from epochbench.sim.runner import report
    stream = generate_stream(jobs=30, seed=2)
    res = eb.simulate(stream, "edf")
    rep = report(res, stream)
    assert rep["small_threshold"] is None and rep["tau"] is None
    jobs = res.jobs
    assert rep["metrics"]["makespan"] == jobs["end"].max() - jobs["submit"].min()
    later = dataclasses.replace(stream, jobs=dataclasses.replace(stream.jobs, submit=stream.jobs.submit + 1000.0,
                                                                 deadline=stream.jobs.deadline + 1000.0))
    moved = eb.simulate(later, "edf")
    assert moved.metrics["makespan"] == rep["metrics"]["makespan"]
