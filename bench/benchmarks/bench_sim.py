"""Simulator speed: EASY, conservative, FCFS, Non-FCFS and EASY's two other
scan orders (easy-sjf, easy-xfactor) over the KTH SP2 trace, and EASY on a 250,000-job stream (jobs per second and peak memory in
``extra_info``).  Run with ``pytest --benchmark``; ``--quick`` skips the
250k stream."""
from __future__ import annotations

import resource
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from epochbench.instances.data import data_root
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.instances.jobs import make_workload, read_swf
from epochbench.sim.metrics import summarize
from epochbench.suite import median_seconds, rounds as bench_rounds

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def kth():
    if not KTH.exists():
        pytest.skip(f"KTH trace absent at {KTH} (set EPOCHBENCH_DATA)")
    return read_swf(KTH)


def resampled(workload, n: int, seed: int = 0):
    """``n`` jobs drawn with replacement from ``workload`` (size, runtime,
    estimate kept together), Poisson arrivals at the trace's mean rate."""
    rng = np.random.default_rng(seed)
    src = workload.jobs
    pick = rng.integers(0, len(src), size=n)
    rate = len(src) / (src["submit"].max() - src["submit"].min())
    jobs = pd.DataFrame({"id": np.arange(1, n + 1), "submit": np.cumsum(rng.exponential(1 / rate, n)),
                         "runtime": src["runtime"].to_numpy()[pick], "estimate": src["estimate"].to_numpy()[pick],
                         "procs": src["procs"].to_numpy()[pick]})
    return make_workload(jobs, workload.capacity, source=f"resampled KTH x{n}")


@pytest.mark.parametrize("policy", ["easy", "conservative", "fcfs", "nonfcfs", "easy-sjf", "easy-xfactor"])
def test_kth(benchmark, kth, policy, request):
    """The compiled loop, always: with the default engine EASY ran in its
    pure-Python twin when it came first in the process (kernels not loaded
    yet; 84 ms against 13 ms) and compiled after another policy."""
    run = lambda: simulate(kth.jobs, kth.capacity, policy, engine="fast")  # noqa: E731
    simulate(kth.jobs.head(200), kth.capacity, policy, engine="fast")  # compile / warm up
    rounds = bench_rounds(request.config, 5, run)
    res = benchmark.pedantic(run, rounds=rounds, iterations=1)
    m = summarize(res.jobs, kth)
    benchmark.group = "sim-kth"
    benchmark.extra_info.update({
        "jobs": res.n, "jobs_per_second": res.n / median_seconds(benchmark), "engine": res.engine,
        "wait_mean": m["wait_mean"], "bsld_mean": m["bsld_mean"], "utilization": m["utilization"]})


def test_easy_250k(benchmark, kth, request):
    if request.config.getoption("--quick"):
        pytest.skip("250,000-job stream: full suite only")
    w = resampled(kth, 250_000)
    simulate(w.jobs.head(200), w.capacity, "easy")
    tracemalloc.start()
    res = benchmark.pedantic(simulate, args=(w.jobs, w.capacity, "easy"), rounds=3, iterations=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    benchmark.group = "sim-250k"
    benchmark.extra_info.update({"jobs": res.n, "jobs_per_second": res.n / median_seconds(benchmark),
                                 "peak_traced_mb": peak / 2**20,
                                 "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def test_nonfcfs_saturated_250k(benchmark, kth, request):
    """Non-FCFS on a stream it cannot keep up with (the trace resampled to
    250,000 jobs at offered load 0.85 on KTH's 100 nodes): its queue grows to
    tens of thousands, where a sorted queue costs O(q) per arrival (6.96 s
    before the per-size heaps, 0.064 s after, same schedule)."""
    if request.config.getoption("--quick"):
        pytest.skip("250,000-job stream: full suite only")
    w = resampled(kth, 250_000)
    jobs = w.jobs.copy()
    offered = (jobs["procs"] * jobs["duration"]).sum() / (w.capacity[0] * np.ptp(jobs["submit"]))
    jobs["submit"] *= offered / 0.85
    simulate(jobs.head(200), w.capacity, "nonfcfs")
    res = benchmark.pedantic(simulate, args=(jobs, w.capacity, "nonfcfs"), rounds=3, iterations=1)
    benchmark.group = "sim-250k"
    benchmark.extra_info.update({"jobs": res.n, "jobs_per_second": res.n / median_seconds(benchmark),
                                 "wait_mean": float((res.jobs["start"] - res.jobs["submit"]).mean())})
