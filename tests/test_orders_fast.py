"""fcfs-bf, sjf-bf, bfit-bf and wfit-bf on the compiled loop
(sim/orders_fast.py): whole streams against the generic engine, job for job
and pass for pass (K = 1 to 3, overruns, exact estimates where fcfs-bf
extends its plan, estimates lost in the times they are added to, ties in
size and estimate), the order of one pass against the generic keys, and a
KTH prefix."""
import numpy as np
import pytest

from epochbench.instances.data import data_root
from epochbench.sim import backfill, orders_fast, policies
from epochbench.sim.pool import simulate_pool as simulate

from test_sim_engine import random_stream, same_schedule
from test_variants_plans import lost_estimate_streams

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
POLICIES = ["fcfs-bf", "sjf-bf", "bfit-bf", "wfit-bf"]


@pytest.mark.parametrize("policy", POLICIES)
def test_each_takes_the_compiled_loop(policy):
    assert policies.FAST_CODES[policy] == orders_fast.ORDERS_RULE[policy[:-3]]
    assert simulate(random_stream(np.random.default_rng(0), 30), [16], policy).engine == "fast"


@pytest.mark.parametrize("order", ["fcfs", "sjf", "bfit", "wfit"])
def test_one_pass_orders_the_queue_as_the_generic_keys(order):
    rng = np.random.default_rng(3)
    for _ in range(200):
        q = int(rng.integers(0, 50))
        rows = np.sort(rng.choice(200, q, replace=False)).astype(np.int64)
        dem = rng.integers(1, 9, (200, 2)).astype(np.int64)
        est = rng.choice([1.0, 2.0, 3.5, 8.0], 200)
        free = rng.integers(0, 10, 2).astype(np.int64)
        tb = type("T", (), {"estimate": est, "demand": dem})
        want = backfill.ORDERS[order](tb, rows, free).tolist()
        work = orders_fast.orders_work(type("W", (), {"n": 200, "k": 2}))
        got = work[1]
        orders_fast._order(orders_fast.ORDERS_RULE[order], rows, q, got, work[2], work[3], dem, est, free)
        assert got[:q].tolist() == want


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", range(8))
def test_whole_streams_equal_the_generic_engine(policy, seed):
    """K = 1 to 3, loads 1.2 and 3; seeds 1 and 5 overrun, 2 and 6 have exact estimates."""
    k = 1 + seed % 3
    df = random_stream(np.random.default_rng(seed), 200, k=k, overrun=seed % 4 == 1, load=[1.2, 3.0][seed % 2])
    if seed % 4 == 2:
        df["duration"] = df["runtime"] = df["estimate"]
    same_schedule(df, [16] * k, policy)


@pytest.mark.parametrize("tiny", [1e-300, 1e-9])
def test_estimates_lost_in_the_time_equal_the_generic_engine(tiny):
    """Slots of no width (t + e == t), which fcfs-bf never extends a plan with."""
    for df, cap in lost_estimate_streams(tiny, 10):
        for policy in POLICIES:
            same_schedule(df, cap, policy)


@pytest.mark.parametrize("policy", POLICIES)
def test_kth_prefix_equals_the_generic_engine(policy):
    if not KTH.exists():
        pytest.skip(f"KTH SWF trace absent at {KTH} (set EPOCHBENCH_DATA)")
    from epochbench.instances.jobs import read_swf
    w = read_swf(KTH)
    res = same_schedule(w.jobs.head(4000), w.capacity, policy)
    assert res.jobs["start"].notna().all()
