"""Metrics (sim/metrics.py) on hand-computed tiny schedules: wait, response,
bounded slowdown ([zhang-comparative] section 2.3), weighted response ([leinberger1999] section
3.2), utilization and capacity loss ([zhang-comparative] eq. 1, 2), small/large split,
out-of-order share."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from epochbench.instances.jobs import make_workload
from epochbench.sim.metrics import (busy_over_time, capacity_loss, out_of_order, per_job, queue_over_time, summarize,
                         utilization)


def result(rows, shift=0.0, runtime=None):
    """rows: (id, submit, start, end, procs, duration); estimate = duration,
    runtime = duration unless given (a job killed at its estimate)."""
    df = pd.DataFrame(rows, columns=["id", "submit", "start", "end", "procs", "duration"])
    for col in ("submit", "start", "end"):
        df[col] = df[col].astype(float) + shift
    df["duration"] = df["duration"].astype(float)
    return df.assign(estimate=df["duration"],
                     runtime=df["duration"] if runtime is None else np.asarray(runtime, dtype=float))


# N = 4.  Job 1 runs on 2 nodes at once; job 2 needs all 4 and waits for job 1;
# job 3 arrives later and backfills on a free node (it starts before job 2,
# which arrived earlier: out of order).  Busy nodes: [0,5) 2, [5,8) 3, [8,10) 2,
# [10,30) 4; job 2 waits on [0,10).
A = [(1, 0, 0, 10, 2, 10), (2, 0, 10, 30, 4, 20), (3, 5, 5, 8, 1, 3)]


def workload_of(res, capacity=4):
    return make_workload(res[["id", "submit", "runtime", "procs", "estimate"]], capacity)


def test_per_job_wait_response_bsld_weight():
    table = per_job(result(A)).set_index("id")
    assert table["wait"].tolist() == [0, 10, 0]
    assert table["response"].tolist() == [10, 30, 3]
    assert table["bsld"].tolist() == [1.0, 1.5, 1.0]          # job 3: max(3, 10) / max(3, 10)
    assert table["weight"].tolist() == [20, 80, 3]            # procs x execution time
    assert table["weighted_response"].tolist() == [200, 2400, 9]
    assert table["out_of_order"].tolist() == [False, False, True]


@pytest.mark.parametrize("wait, duration, tau, expect", [
    (3, 2, 10, 1.0),        # response 5 < tau: both terms at tau
    (18, 2, 10, 2.0),       # response 20 over max(2, 10)
    (50, 100, 10, 1.5),     # long job: plain slowdown
    (3, 2, 1, 2.5),         # tau = 1: 5 / 2
    (0, 0, 10, 1.0),        # zero-length job
])
def test_bounded_slowdown_threshold(wait, duration, tau, expect):
    res = result([(1, 0, wait, wait + duration, 1, duration)])
    assert per_job(res, tau=tau)["bsld"].iloc[0] == pytest.approx(expect)


def test_summary_of_schedule_a():
    res = result(A)
    s = summarize(res, workload_of(res), small_threshold=2)
    assert s["jobs"] == 3 and s["makespan"] == 30
    assert s["wait_mean"] == pytest.approx(10 / 3) and s["wait_median"] == 0 and s["wait_max"] == 10
    assert s["wait_std"] == pytest.approx(np.sqrt(600 / 27))            # population std
    assert s["response_mean"] == pytest.approx(43 / 3) and s["response_max"] == 30
    assert s["bsld_mean"] == pytest.approx(3.5 / 3) and s["bsld_max"] == 1.5
    assert s["weighted_response"] == pytest.approx(2609 / 3)            # mean of weight x response
    assert s["weighted_response_norm"] == pytest.approx(2609 / 103)     # normalised by total weight
    assert s["utilization"] == pytest.approx(103 / 120)                 # eq. 1: (20 + 80 + 3) / (4 x 30)
    assert s["capacity_loss"] == pytest.approx(17 / 120)                # eq. 2: 2x5 + 1x3 + 2x2 node-s
    assert (s["small_jobs"], s["small_wait_mean"], s["small_bsld_mean"]) == (2, 0.0, 1.0)
    assert (s["large_jobs"], s["large_wait_mean"], s["large_bsld_mean"]) == (1, 10.0, 1.5)
    assert s["out_of_order_jobs"] == 1 and s["out_of_order_share"] == pytest.approx(1 / 3)


def test_default_small_threshold_is_32_nodes():
    res = result([(1, 0, 0, 10, 32, 10), (2, 0, 10, 20, 33, 10)])
    s = summarize(res, np.array([64]))
    assert (s["small_jobs"], s["large_jobs"]) == (1, 1)
    assert (s["small_wait_mean"], s["large_wait_mean"]) == (0.0, 10.0)


def test_time_origin_is_first_arrival():
    """[zhang-comparative] eq. 1 puts the first arrival at t = 0: shifting a run changes nothing."""
    base, shifted = result(A), result(A, shift=1000.0)
    for key in ("utilization", "capacity_loss", "makespan"):
        assert summarize(shifted, [4])[key] == pytest.approx(summarize(base, [4])[key])


def test_capacity_loss_counts_only_idle_nodes_while_jobs_wait():
    # N = 4: job 1 (3 nodes) on [0, 10); job 2 (2 nodes) arrives at 2 and waits until 10;
    # then runs alone on [10, 20) with nobody waiting: idle but no loss.
    res = result([(1, 0, 0, 10, 3, 10), (2, 2, 10, 20, 2, 10)])
    assert capacity_loss(res, [4]) == pytest.approx(1 * 8 / (4 * 20))
    assert utilization(res, [4]) == pytest.approx((30 + 20) / (4 * 20))
    # no waiting at all: no loss, even with idle nodes
    assert capacity_loss(result([(1, 0, 0, 10, 1, 10)]), [4]) == 0.0


def test_capacity_loss_at_a_saturated_machine_is_one_minus_utilization():
    """[zhang-comparative] section 2.3: whenever nodes are idle somebody waits, so kappa = 1 - rho."""
    res = result(A)
    assert capacity_loss(res, [4]) + utilization(res, [4]) == pytest.approx(1.0)


def test_simultaneous_events_are_applied_together():
    # job 1 ends at 10 exactly when job 2 starts; job 3 arrives and starts at 10 too
    res = result([(1, 0, 0, 10, 4, 10), (2, 5, 10, 20, 2, 10), (3, 10, 10, 20, 2, 10)])
    grid, busy = busy_over_time(res)
    assert grid.tolist() == [0, 10, 20] and busy.tolist() == [4, 4, 0]
    grid = np.array([0.0, 5, 10, 20])
    assert busy_over_time(res, grid=grid)[1].tolist() == [4, 4, 4, 0]
    _, queued = queue_over_time(res, grid=grid)
    assert queued.tolist() == [0, 1, 0, 0]
    assert capacity_loss(res, [4]) == 0.0


def test_step_functions_of_schedule_a():
    grid, busy = busy_over_time(result(A))
    assert grid.tolist() == [0, 5, 8, 10, 30] and busy.tolist() == [2, 3, 2, 4, 0]
    grid, queued = queue_over_time(result(A))
    assert grid.tolist() == [0, 5, 10] and queued.tolist() == [1, 1, 0]


def test_out_of_order_ties_broken_by_id():
    # same submit: id 1 precedes id 2; id 2 starting first is out of order, equal starts are not
    assert out_of_order([0, 0], [1, 2], [5, 0]).tolist() == [False, True]
    assert out_of_order([0, 0], [1, 2], [5, 5]).tolist() == [False, False]
    assert out_of_order([0, 0], [2, 1], [5, 0]).tolist() == [False, False]


def test_out_of_order_matches_quadratic_definition():
    rng = np.random.default_rng(3)
    n = 300
    submit, ids, start = rng.integers(0, 50, n), rng.permutation(n), rng.integers(0, 80, n)
    earlier = (submit[:, None] < submit[None, :]) | ((submit[:, None] == submit[None, :]) & (ids[:, None] < ids[None, :]))
    brute = (earlier & (start[:, None] > start[None, :])).any(axis=0)
    assert out_of_order(submit, ids, start).tolist() == brute.tolist()


def test_extra_resources_utilization_and_weight():
    res = result(A).assign(res_mem=[8, 8, 2])
    w = make_workload(res[["id", "submit", "runtime", "procs", "estimate", "res_mem"]], [4, 8])
    s = summarize(res, w)
    assert s["utilization_mem"] == pytest.approx((80 + 160 + 6) / (8 * 30))
    weights = per_job(res, w).set_index("id")["weight"]
    # node equivalents: 4 x mean(procs/4, mem/8) x execution time
    assert weights.tolist() == pytest.approx([4 * (0.5 + 1) / 2 * 10, 4 * 20, 4 * 0.25 * 3])


def test_empty_result():
    res = result([])
    s = summarize(res, [4])
    assert s["jobs"] == 0 and np.isnan(s["wait_mean"]) and np.isnan(s["utilization"])
    assert s["small_jobs"] == 0 and np.isnan(s["out_of_order_share"])


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match="start"):
        per_job(result(A).drop(columns="start"))


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
def test_capacity_loss_of_a_time_shared_table_is_nan(monkeypatch, compiled):
    """Eq. 2 counts N - busy idle nodes while a job waits; jobs that share
    nodes in time (a gang run's table: two 4-node jobs in two rows of a
    4-node machine) hold more than N, and the sum went negative (-2.6 on a
    gang run through summarize).  NaN there; the gang's own summary gives eq. 3."""
    import epochbench.sim.metrics as M
    monkeypatch.setattr(M, "kernels_loaded", lambda: compiled)
    shared = result([(1, 0, 0, 20, 4, 10), (2, 0, 0, 20, 4, 10), (3, 1, 20, 30, 4, 10)])
    assert np.isnan(capacity_loss(shared, workload_of(shared)))
    assert np.isnan(summarize(shared, workload_of(shared))["capacity_loss"])
    spaced = result([(1, 0, 0, 10, 4, 10), (2, 0, 10, 20, 4, 10), (3, 1, 20, 30, 4, 10)])
    assert capacity_loss(spaced, workload_of(spaced)) == 0.0


def test_summarize_of_a_gang_run_gives_no_negative_capacity_loss():
    import epochbench as eb
    from epochbench.sim.metrics import summarize as summarize_jobs
    jobs = pd.DataFrame({"id": [1, 2, 3, 4], "submit": [0.0, 0.0, 5.0, 7.0], "runtime": [300.0, 100.0, 11.0, 20.0],
                         "estimate": [300.0, 100.0, 22.0, 20.0], "procs": [16, 64, 2, 40]})
    w = make_workload(jobs, 64)
    res = eb.simulate(w, "gs")
    assert np.isnan(summarize_jobs(res.jobs, w)["capacity_loss"])
    assert res.summary(w)["capacity_loss"] >= 0


def test_a_killed_job_counts_its_execution_not_its_runtime():
    # N = 4; job 1 asked 100 s, killed at its estimate 50 s (duration 50); job 2 runs 100 s
    res = result([(1, 0, 0, 50, 2, 50), (2, 0, 0, 100, 2, 100)], runtime=[100, 100])
    assert per_job(res).set_index("id")["weight"].tolist() == [100.0, 200.0]     # procs x t^e
    assert utilization(res, [4]) == pytest.approx((2 * 50 + 2 * 100) / (4 * 100))
    s = summarize(res, [4])
    assert s["utilization"] == pytest.approx(0.75)
    assert s["weighted_response_norm"] == pytest.approx((100 * 50 + 200 * 100) / 300)


def test_a_zero_length_run_gives_nan_not_a_crash():
    res = result([(1, 5, 5, 5, 1, 0), (2, 5, 5, 5, 2, 0)])
    assert np.isnan(utilization(res, [4])) and np.isnan(capacity_loss(res, [4]))
    s = summarize(res, [4])
    assert s["makespan"] == 0 and s["bsld_mean"] == 1.0 and s["wait_mean"] == 0.0
    assert np.isnan(s["utilization"]) and np.isnan(s["capacity_loss"])


def test_small_and_large_std_are_population_std():
    # small jobs wait 0 and 4 (population std 2, not 2.83); one large job: std 0, not NaN
    res = result([(1, 0, 0, 10, 1, 10), (2, 0, 4, 14, 1, 10), (3, 0, 14, 24, 40, 10)])
    s = summarize(res, [64])
    assert s["small_wait_std"] == pytest.approx(2.0) and s["large_wait_std"] == 0.0
    assert s["small_bsld_std"] == pytest.approx(0.2) and s["large_bsld_std"] == 0.0   # bsld 1.0, 1.4; 2.4


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
def test_small_large_split_on_both_paths(monkeypatch, compiled):
    import epochbench.sim.metrics as M
    monkeypatch.setattr(M, "kernels_loaded", lambda: compiled)
    res = result([(1, 0, 0, 10, 2, 10), (2, 0, 10, 30, 4, 20), (3, 5, 5, 8, 1, 3)])
    s = summarize(res, [4], small_threshold=2)
    assert (s["small_jobs"], s["small_wait_mean"], s["small_bsld_mean"]) == (2, 0.0, 1.0)
    assert (s["large_jobs"], s["large_wait_mean"], s["large_bsld_mean"]) == (1, 10.0, 1.5)


def test_the_summary_weights_extra_resources_as_per_job_does():
    # N = 4, mem 8; weights 4 x mean(procs/4, mem/8) x t^e = 30, 80, 3; responses 10, 30, 3
    res = result([(1, 0, 0, 10, 2, 10), (2, 0, 10, 30, 4, 20), (3, 5, 5, 8, 1, 3)]).assign(res_mem=[8, 8, 2])
    from types import SimpleNamespace
    w = SimpleNamespace(capacity=np.array([4, 8]), resources=("procs", "mem"))
    s = summarize(res, w)
    assert s["weighted_response"] == pytest.approx((30 * 10 + 80 * 30 + 3 * 3) / 3)
    assert s["weighted_response_norm"] == pytest.approx(2709 / 113)
    assert s["weighted_response"] == pytest.approx(per_job(res, w)["weighted_response"].mean())


def test_the_summary_bounds_slowdown_at_10_s_by_default():
    # a 2 s job waiting 3 s: max(5, 10) / max(2, 10) = 1, not 5 / 2
    res = result([(1, 0, 3, 5, 1, 2)])
    s = summarize(res, [4])
    assert s["bsld_mean"] == 1.0 == per_job(res)["bsld"].iloc[0]


def test_wait_is_start_minus_submit_when_a_job_is_time_shared():
    # a gang table: first slice at 2, end at 30 for 10 s of execution; wait = 2, response = 30
    res = result([(1, 0, 2, 30, 1, 10)])
    s = summarize(res, [4])
    assert s["wait_mean"] == 2.0 and s["response_mean"] == 30.0 and s["bsld_mean"] == 3.0
    assert per_job(res)["wait"].iloc[0] == 2.0


def test_the_report_metrics_use_its_small_threshold():
    import epochbench as eb
    from epochbench.instances.jobs import make_workload
    from epochbench.sim.runner import report
    jobs = pd.DataFrame({"id": [1, 2], "submit": [0.0, 0.0], "runtime": [10.0, 10.0], "estimate": [10.0, 10.0],
                         "procs": [1, 2]})
    w = make_workload(jobs, 4)
    rep = report(eb.simulate(w, "fcfs"), w, small_threshold=1)
    assert rep["small_threshold"] == 1
    assert (rep["metrics"]["small_jobs"], rep["metrics"]["large_jobs"]) == (1, 1)


def test_a_job_killed_at_its_estimate_ends_at_start_plus_estimate():
    import epochbench as eb
    from epochbench.instances.jobs import make_workload
    jobs = pd.DataFrame({"id": [1], "submit": [0.0], "runtime": [20.0], "estimate": [10.0], "procs": [1]})
    w = make_workload(jobs, 4)
    t = eb.simulate(w, "fcfs").job_table(w)
    assert t["end"].iloc[0] - t["start"].iloc[0] == 10.0 and t["response"].iloc[0] == 10.0


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
def test_capacity_loss_by_hand_on_both_paths(monkeypatch, compiled):
    """One job waiting alone counts (eq. 2's delta_i: any job waiting); N + 1
    nodes held at once is time sharing: NaN."""
    import epochbench.sim.metrics as M
    monkeypatch.setattr(M, "kernels_loaded", lambda: compiled)
    # N = 4: job 1 (3 nodes) on [0, 10); job 2 (2 nodes) waits alone on [2, 10): 1 node x 8 s idle
    res = result([(1, 0, 0, 10, 3, 10), (2, 2, 10, 20, 2, 10)])
    assert capacity_loss(res, [4]) == pytest.approx(8 / (4 * 20))
    assert summarize(res, [4])["capacity_loss"] == pytest.approx(0.1)
    over = result([(1, 0, 0, 10, 3, 10), (2, 0, 0, 10, 2, 10), (3, 1, 10, 20, 1, 10)])   # 5 of 4 nodes
    assert np.isnan(capacity_loss(over, [4]))


def test_the_time_origin_is_the_first_arrival_not_the_first_start():
    # job 1 arrives at 0 and starts at 5 (a table where the first job waits): makespan 15, not 10
    res = result([(1, 0, 5, 15, 4, 10)])
    s = summarize(res, [4])
    assert s["makespan"] == 15.0
    assert s["utilization"] == pytest.approx(40 / 60) and s["capacity_loss"] == pytest.approx(20 / 60)


def test_the_job_table_has_the_readme_columns():
    import epochbench as eb
    from epochbench.instances.jobs import make_workload
    jobs = pd.DataFrame({"id": [1, 2, 3], "submit": [0.0, 0.0, 1.0], "runtime": [10.0, 10.0, 2.0],
                         "estimate": [10.0, 10.0, 2.0], "procs": [3, 4, 1]})
    w = make_workload(jobs, 4)
    t = eb.simulate(w, "easy").job_table(w)
    assert list(t.columns) == ["id", "submit", "start", "end", "procs", "estimate", "runtime", "duration",
                               "promised", "wait", "response", "bsld", "weight", "weighted_response",
                               "out_of_order"]
    assert t.set_index("id")["out_of_order"].tolist() == [False, False, True]   # job 3 backfills before job 2


_SAME_BITS = """
import numpy as np, pandas as pd
from epochbench.sim.metrics import summarize, utilization
r = np.random.default_rng(5)
n = 200_000
submit = np.sort(r.random(n) * 1e7)
start = submit + r.random(n) * 1e4
duration = r.random(n) * 1e5
res = pd.DataFrame({"id": np.arange(n), "submit": submit, "start": start, "end": start + duration,
                    "procs": r.integers(1, 64, n), "duration": duration, "estimate": duration,
                    "runtime": duration, "res_mem": r.integers(1, 1000, n)})
cap = [4096, 100_000]
class W:
    capacity = np.array(cap)
    resources = ("procs", "mem")
print(utilization(res, [4096]).hex(), utilization(res, W, "res_mem").hex(), summarize(res, [4096])["utilization"].hex())
"""


@pytest.mark.parametrize("threads", ["2", "4"])
def test_utilization_has_the_same_bits_whatever_blas_threads(threads):
    """np.dot split the sum between OpenBLAS's threads: its last bits changed with the core count
    (200,000 jobs: 1 and 2 threads differed); the pairwise sum is one order everywhere."""
    import os
    import subprocess
    import sys
    runs = [subprocess.run([sys.executable, "-c", _SAME_BITS], capture_output=True, text=True, check=True,
                           env={**os.environ, "OPENBLAS_NUM_THREADS": t, "OMP_NUM_THREADS": t}).stdout
            for t in ("1", threads)]
    assert runs[0] == runs[1] and len(runs[0].split()) == 3
