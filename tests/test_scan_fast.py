"""easy-sjf and easy-xfactor on the compiled loop (sim/scan_fast.py): the
kernel's list against the generic policy's order and backfill rule on single
steps, its sort against Python's, and whole streams (random, several
resources, overruns, a wide machine, a KTH prefix) against the generic
engine, job for job and pass for pass."""
from types import SimpleNamespace

import numpy as np
import pytest

from epochbench.instances.data import data_root
from epochbench.sim import loop_events, policies, scan_fast
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.variants import EASYSJF, EASYXFactor

from test_sim_engine import random_stream, same_schedule, stream

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
RULES = {"easy-sjf": (scan_fast.SJF_RULE, EASYSJF), "easy-xfactor": (scan_fast.XFACTOR_RULE, EASYXFactor)}


def generic_list(policy, now, shadow, dem, est, submit, free, extra):
    """The jobs 0..q-1 in the generic policy's scan order (its ``order``),
    kept where EASY's rule may start them in this pass: they fit in
    ``free`` and end by ``shadow`` or fit in ``extra``."""
    pol = RULES[policy][1]()
    pol.table = SimpleNamespace(estimate=est, submit=submit)
    order = pol.order(now, list(range(len(est))))
    return [j for j in order
            if (dem[j] <= free).all() and (now + est[j] <= shadow or (dem[j] <= extra).all())]


def kernel_list(policy, now, shadow, dem, est, submit, free, extra):
    q = len(est)
    order, keys = scan_fast.scan_work(q)
    c = scan_fast.scan_order(now, shadow, np.arange(q, dtype=np.int64), 0, q, dem, est, submit,
                             free, extra, RULES[policy][0], order, keys)
    return order[:c].tolist()


@pytest.mark.parametrize("policy", sorted(RULES))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_kernel_lists_what_the_generic_policy_scans_on_random_steps(policy, k):
    """Estimates and submit times drawn from a few values, so that keys tie
    (then arrival order decides), up to 60 candidates (the heapsort)."""
    rng = np.random.default_rng(100 + k)
    for _ in range(300):
        q = int(rng.integers(0, 61))
        dem = rng.integers(1, 9, (q, k)).astype(np.int64)
        est = rng.choice([1.0, 2.0, 3.0, 5.0, 8.0, 0.5], q)
        submit = np.sort(rng.choice([0.0, 1.0, 2.0, 4.0], q))
        now = 4.0 + float(rng.choice([0.0, 0.5, 3.0]))
        shadow = now + float(rng.choice([0.0, 1.0, 3.0, 10.0]))
        free = rng.integers(0, 12, k).astype(np.int64)
        extra = free - rng.integers(0, 6, k)
        args = (now, shadow, dem, est, submit, free, extra)
        assert kernel_list(policy, *args) == generic_list(policy, *args)


def test_keys_that_overflow_to_infinity_tie_in_arrival_order():
    """(now - submit + est) / est overflows for a tiny estimate and a long
    wait: both keys are -inf, and arrival order decides, as numpy's lexsort."""
    est = np.array([1e-300, 1.0, 1e-300])
    submit = np.zeros(3)
    dem = np.ones((3, 1), np.int64)
    args = (1e10, np.inf, dem, est, submit, np.array([4]), np.array([4]))
    with np.errstate(over="ignore"):
        assert kernel_list("easy-xfactor", *args) == generic_list("easy-xfactor", *args) == [0, 2, 1]


def test_the_sort_orders_by_key_then_row():
    rng = np.random.default_rng(5)
    for n in list(range(0, 40)) + [100, 257]:
        keys = rng.choice([-1.5, 0.0, 2.0, np.inf, -np.inf, 7.25], n).astype(np.float64)
        rows = rng.permutation(n).astype(np.int64)
        want = sorted(zip(keys.tolist(), rows.tolist()))
        loop_events.sort_by_key(keys, rows, n)
        assert list(zip(keys.tolist(), rows.tolist())) == want


@pytest.mark.parametrize("policy", sorted(RULES))
def test_both_take_the_compiled_loop(policy):
    df = random_stream(np.random.default_rng(1), 30)
    assert policies.FAST_CODES[policy] == RULES[policy][0]
    assert simulate(df, [16], policy).engine == "fast"


@pytest.mark.parametrize("policy", sorted(RULES))
@pytest.mark.parametrize("k,seed", [(1, 0), (1, 1), (2, 2), (3, 3), (1, 4), (2, 5)])
def test_whole_streams_equal_the_generic_engine(policy, k, seed):
    df = random_stream(np.random.default_rng(seed), 400, k=k, overrun=seed % 2 == 1)
    res = same_schedule(df, [16] * k, policy)
    assert res.jobs["start"].notna().all()


def bursts(rng, blocks, cap=256):
    """Blocks of a wide job, then a head wider than what it leaves free, then
    40 narrow jobs arriving at once: a pass lists dozens of them (the
    heapsort), with estimates and arrival times that tie."""
    rows, t, i = [], 0.0, 1
    for _ in range(blocks):
        wide = int(rng.integers(cap // 2, cap))
        rows += [(i, t, wide, 40.0, 50.0), (i + 1, t, cap, 10.0, 10.0)]
        i += 2
        for _ in range(40):
            est = float(rng.choice([5.0, 10.0, 20.0, 60.0]))
            rows.append((i, t + float(rng.choice([0.0, 0.0, 1.0])), int(rng.integers(1, 4)),
                         float(np.floor(est * rng.uniform(0.3, 1.0))), est))
            i += 1
        t += float(rng.choice([20.0, 45.0, 80.0]))
    return stream(rows)


@pytest.mark.parametrize("policy", sorted(RULES))
def test_passes_with_dozens_of_candidates_equal_the_generic_engine(policy, monkeypatch):
    df = bursts(np.random.default_rng(9), 30)
    listed = []
    generic_candidates = policies.backfill_candidates

    def counted(*args):
        rows = generic_candidates(*args)
        listed.append(len(rows))
        return rows

    monkeypatch.setattr(policies, "backfill_candidates", counted)
    same_schedule(df, [256], policy)
    assert max(listed) > 16                        # the kernel sorts them with its heapsort


@pytest.mark.parametrize("policy", sorted(RULES))
def test_kth_prefix_equals_the_generic_engine(policy):
    if not KTH.exists():
        pytest.skip(f"KTH SWF trace absent at {KTH} (set EPOCHBENCH_DATA)")
    from epochbench.instances.jobs import read_swf
    w = read_swf(KTH)
    res = same_schedule(w.jobs.head(5000), w.capacity, policy)
    assert res.jobs["start"].notna().all()
