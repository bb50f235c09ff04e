"""Gang-scheduling simulator speed ([zhang-comparative] sections 5-6): GS-5 over a
10,000-job stream on 320 processors (the issue's target: under 30 s), and
BGS-5, MGS-5, MBGS-5 and GS-5 with 5 % context switches on the same
stream; GS-5 and BGS-5 over the whole KTH SP2 trace (27,992 jobs, 100
processors).  Jobs per second, passes, slices and the run's metrics in
``extra_info``.  Run with ``pytest --benchmark`` (``--quick``: one round,
the 10,000-job stream only)."""
from __future__ import annotations

import pytest

from epochbench.experiments.zhang_queues import zhang_stream
from epochbench.instances.data import data_root
from epochbench.sim.gang import simulate_gang, summarize_gang
from epochbench.suite import median_seconds, rounds as bench_rounds

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
FACTOR = 1.4  # offered load 0.55 x 1.4 = 0.77 ([zhang-comparative] section 2.2's scaling)


@pytest.fixture(scope="module")
def stream10k():
    """lublin03 on 320 nodes, 10,000 jobs, Phi = 0.2 estimates (the zhang-gang stream)."""
    _, wl = zhang_stream(10_000, 0, FACTOR, "phi", 0.2)
    return wl


def _run(benchmark, request, wl, policy, group, **kw):
    simulate_gang(wl.jobs.head(300), wl.capacity, policy, **kw)  # compile the kernels once
    rounds = bench_rounds(request.config, 1 if request.config.getoption("--quick") else 3)
    res = benchmark.pedantic(simulate_gang, args=(wl.jobs, wl.capacity, policy), kwargs=kw,
                             rounds=rounds, iterations=1)
    m = summarize_gang(res, wl)
    benchmark.group = group
    benchmark.extra_info.update({
        "policy": policy, **kw, "jobs": res.n, "nodes": int(wl.capacity[0]),
        "jobs_per_second": res.n / median_seconds(benchmark), "passes": res.passes,
        "slices": res.stats["slices"], "migrations": res.stats["migrations"],
        "utilization": m["utilization"], "bsld_mean": m["bsld_mean"], "wait_mean": m["wait_mean"],
        "capacity_loss": m["capacity_loss"]})
    return res


@pytest.mark.parametrize("policy, overhead", [("gs", 0.0), ("gs", 0.05), ("bgs", 0.0), ("mgs", 0.0),
                                              ("mbgs", 0.0)])
def test_mpl5_10k_jobs_320_nodes(benchmark, request, stream10k, policy, overhead):
    if request.config.getoption("--quick") and (policy, overhead) != ("gs", 0.0):
        pytest.skip("quick suite: GS-5 only")
    _run(benchmark, request, stream10k, policy, "gang-10k-320", mpl=5, switch_overhead=overhead)


@pytest.mark.parametrize("policy", ["gs", "bgs"])
def test_mpl5_kth(benchmark, request, policy):
    if request.config.getoption("--quick"):
        pytest.skip("whole KTH trace: full suite only")
    if not KTH.exists():
        pytest.skip(f"KTH trace absent at {KTH} (set EPOCHBENCH_DATA)")
    from epochbench.instances.jobs import read_swf
    _run(benchmark, request, read_swf(KTH), policy, "gang-kth", mpl=5)
