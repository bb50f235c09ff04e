"""LOS on the compiled loop (sim/los_fast.py): the kernel's set against the
generic heuristic on single steps (one- and two-constraint DP, the all-fit
shortcut), the rerun after a work-array overflow, the selector options that
keep LOS on the generic engine, and the KTH trace."""
import numpy as np
import pandas as pd
import pytest

import epochbench.heuristics.packing as hp
from epochbench.instances import PackingInstance
from epochbench.instances.data import data_root
from epochbench.sim import los_fast, policies
from epochbench.sim.pool import simulate_pool as simulate

from test_sim_engine import random_stream, same_schedule

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"


def kernel_set(sizes, past, free, extra):
    """los_select on one K = 1 step: candidates 0..q-1, ``past`` flags made
    by the estimates (now 0, shadow 1)."""
    q = len(sizes)
    dem = np.array(sizes, dtype=np.int64).reshape(q, 1)
    est = np.where(np.asarray(past, dtype=bool), 2.0, 0.5)
    lw, bits = los_fast.los_work(q, True, 1)
    while True:
        m = los_fast.los_select(0.0, 1.0, np.arange(q, dtype=np.int64), 0, q, dem, est,
                                np.array([free], np.int64), np.array([extra], np.int64), lw, bits)
        if m >= 0:
            return lw[los_fast.OUT:los_fast.OUT + m].tolist()
        lw, bits = los_fast.los_work(q, True, los_fast.los_grown(lw, bits))


def generic_set(sizes, past, free, extra):
    cap = max(free, extra, *sizes)             # the machine holds what is left beside the head, extra
    inst = PackingInstance.build([cap], [[s] for s in sizes], [cap - free], shadow=1.0, extra=[extra],
                                 runtime_past_shadow=np.asarray(past, dtype=bool), now=0.0)
    return hp.los(inst)


def test_the_seed_example_with_and_without_a_binding_reservation():
    """[vadhiyar-notes] table 2: sizes 7 3 1 2 2 on 5 free processors, wj2 and wj4."""
    sizes = [7, 3, 1, 2, 2]
    assert kernel_set(sizes, [False] * 5, 5, 5) == generic_set(sizes, [False] * 5, 5, 5) == [1, 3]
    late = [True, True, True, True, False]
    assert kernel_set(sizes, late, 5, 3) == generic_set(sizes, late, 5, 3)


def test_a_negative_extra_reads_as_zero_for_a_job_that_needs_none_of_it():
    """A past-shadow job with no demand on resource 1 fits beside an extra of
    -1 there: negative entries read as 0, as the packing instance clips
    them (no simulation passes a negative extra; the kernel's contract)."""
    dem = np.array([[1, 0]], np.int64)
    est = np.array([2.0])                      # now 0 + 2 > shadow 1: past the shadow time
    lw, bits = los_fast.los_work(1, True, 1)
    m = los_fast.los_select(0.0, 1.0, np.arange(1, dtype=np.int64), 0, 1, dem, est,
                            np.array([2, 5], np.int64), np.array([2, -1], np.int64), lw, bits)
    assert lw[los_fast.OUT:los_fast.OUT + m].tolist() == [0]


@pytest.mark.parametrize("width", [40, 300])
@pytest.mark.parametrize("seed", range(4))
def test_kernel_chooses_the_generic_set_on_random_steps(seed, width):
    """Many steps per seed: all-fit, one-constraint (extra >= free, or the
    late jobs fit in extra) and two-constraint cases, ties included; up to
    ``width`` free processors (300: bitsets of several words)."""
    rng = np.random.default_rng(seed + width)
    kinds = set()
    for _ in range(300 if width < 100 else 60):
        q = int(rng.integers(1, 14))
        free = int(rng.integers(1, width))
        sizes = rng.integers(1, rng.choice([4, 12, width // 2, width]) + 1, q).tolist()
        past = (rng.random(q) < rng.choice([0.2, 0.6, 0.9])).tolist()
        extra = int(rng.integers(0, free + 5))
        ok = [s <= free and (not p or s <= extra) for s, p in zip(sizes, past)]
        late = sum(s for s, p, o in zip(sizes, past, ok) if o and p)
        kinds.add("two" if late > min(extra, free) and extra < free else "one")
        assert kernel_set(sizes, past, free, extra) == generic_set(sizes, past, free, extra), \
            (sizes, past, free, extra)
    assert kinds == {"one", "two"}


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_los_fast_path_equals_generic_on_more_streams(k, seed):
    """Beyond the busy streams of test_sim_engine: a wider machine (more DP
    columns) with overruns, K up to 3 (the generic heuristic's K > 1
    filter and first fit)."""
    df = random_stream(np.random.default_rng(900 + 10 * k + seed), 300, k=k, cap=40, overrun=bool(seed))
    res = same_schedule(df, [40] * k, "los")
    assert res.jobs["start"].notna().all()
    gen = simulate(df, [40] * k, "los", engine="generic")
    assert res.options == gen.options and res.options["selector_stats"]["steps"] > 0


def test_los_fast_path_equals_generic_on_a_wide_machine():
    """300 nodes: the DP's bitsets span five words."""
    df = random_stream(np.random.default_rng(31), 300, k=1, cap=300, overrun=True)
    same_schedule(df, [300], "los")


def test_an_overflow_of_the_work_arrays_reruns_to_the_same_schedule(monkeypatch):
    df = random_stream(np.random.default_rng(77), 250, k=1, cap=40)
    ref = simulate(df, [40], "los").jobs
    monkeypatch.setattr(los_fast, "SCRATCH", 1)
    grown = []
    monkeypatch.setattr(policies, "los_grown", lambda *a: grown.append(los_fast.los_grown(*a)) or grown[-1])
    res = same_schedule(df, [40], "los")
    pd.testing.assert_frame_equal(res.jobs, ref)
    assert grown, "the small work arrays never overflowed"


def test_selector_options_keep_los_on_the_generic_engine():
    df = random_stream(np.random.default_rng(3), 60, k=2)
    res = simulate(df, [16, 16], "los", selector_options={"resource": 1})
    assert res.engine == "generic"
    with pytest.raises(ValueError, match="selector options"):
        simulate(df, [16, 16], "los", engine="fast", selector_options={"resource": 0})


def test_los_fast_path_equals_generic_on_a_kth_prefix():
    if not KTH.exists():
        pytest.skip(f"KTH SWF trace absent at {KTH} (set EPOCHBENCH_DATA)")
    from epochbench.instances.jobs import read_swf
    w = read_swf(KTH)
    res = same_schedule(w.jobs.head(4000), w.capacity, "los")
    assert res.jobs["start"].notna().all()
