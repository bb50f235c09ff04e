"""BL-EASY and BB-EASY on the compiled loop (sim/greedy_fast.py): the
kernel's picks against the packing heuristics on single steps (ties,
reservations, every option), whole streams against the generic engine with
the heuristics' options, the options that keep a run on the generic engine,
and the KTH trace."""
import numpy as np
import pandas as pd
import pytest

import epochbench.heuristics.packing as hp
from epochbench.heuristics import _greedy
from epochbench.instances import PackingInstance
from epochbench.instances.data import data_root
from epochbench.sim import backfill  # noqa: F401  (registers bl-easy and bb-easy)
from epochbench.sim import greedy_fast as gf, policies
from epochbench.sim.pool import simulate_pool as simulate

from test_sim_engine import random_stream, same_schedule

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
HEURISTICS = {gf.BL_RULE: hp.backfill_lowest, gf.BB_RULE: hp.backfill_balanced}
#: selector options of each rule that the compiled loop takes
OPTIONS = {gf.BL_RULE: [{}, {"window": 0}, {"window": 2}, {"window": 3, "fullness": "excess"},
                        {"fullness": "off"}, {"window": 7}, {"fullness": False}],
           gf.BB_RULE: [{}, {"fullness": "excess"}, {"fullness": "off"}, {"fullness": True}]}


def kernel_picks(rule, cap, free, extra, dem, est, options):
    """greedy_select on one step: candidates 0..q-1 in queue order, now 0,
    shadow 1 (a job of estimate > 1 runs past it)."""
    q, k = dem.shape
    gi, gfl, low = gf.greedy_work(q, k, cap, True, *gf.fast_options(rule, options, k))
    m = gf.greedy_select(0.0, 1.0, np.arange(q, dtype=np.int64), 0, q, dem, est, np.asarray(free, np.int64),
                         np.asarray(extra, np.int64), rule, gi, gfl, low)
    assert gi[gf.STEPS] == 1
    return gi[gf.OUT:gf.OUT + m].tolist()


def heuristic_picks(rule, cap, free, extra, dem, est, options):
    inst = PackingInstance.build(cap, dem, np.asarray(cap) - np.asarray(free), shadow=1.0,
                                 extra=np.maximum(extra, 0), runtime_past_shadow=est > 1.0, now=0.0)
    return HEURISTICS[rule](inst, **options)


@pytest.mark.parametrize("rule", [gf.BL_RULE, gf.BB_RULE])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_kernel_picks_what_the_heuristic_picks_on_random_steps(rule, k):
    """Small capacities and demands drawn from few values: many equal scores
    (ties to the earlier job, within the rounding bounds), jobs that fit
    only outside ``extra``, negative extras."""
    rng = np.random.default_rng(100 * rule + k)
    runs = differ = 0
    for _ in range(150):
        cap = rng.choice([1, 3, 4, 8, 14], k)
        free = rng.integers(0, cap + 1)
        extra = rng.integers(-2, cap + 1)
        q = int(rng.integers(1, 30))
        dem = np.minimum(rng.choice([0, 1, 2, 4], (q, k)), cap)
        dem[:, 0] = np.maximum(dem[:, 0], 1)
        est = rng.choice([0.5, 1.0, 2.0], q)
        for options in OPTIONS[rule]:
            got = kernel_picks(rule, cap, free, extra, dem, est, options)
            want = heuristic_picks(rule, cap, free, extra, dem, est, options)
            assert got == want, (cap, free, extra, dem, est, options)
            runs += 1
            differ += got != kernel_picks(rule, cap, free, extra, dem, est, {})
    assert runs > 500 and (k == 1 or differ > 0)      # the options change some picks


def test_no_candidates_is_not_a_step():
    gi, gfl, low = gf.greedy_work(3, 1, [4], True)
    m = gf.greedy_select(0.0, 1.0, np.arange(3, dtype=np.int64), 2, 2, np.ones((3, 1), np.int64),
                         np.ones(3), np.array([4]), np.array([0]), gf.BL_RULE, gi, gfl, low)
    assert m == 0 and gi[gf.STEPS] == 0


def test_lowest_score_takes_the_window_largest_requirements_in_order():
    """BL's score for w >= 2 takes the requirements in the order (share
    descending, index ascending) without a scratch array, so that the
    compiled loop calls it: against that order, sorted in Python."""
    rng = np.random.default_rng(3)
    for _ in range(3000):
        k = int(rng.integers(2, 9))
        share = rng.integers(0, 4, k) / 3.0
        low = rng.random(k) < 0.5
        w = int(rng.integers(2, k + 1))
        top = sorted(range(k), key=lambda i: (-share[i], i))[:w]
        miss = sum(not low[i] for i in top)
        assert _greedy.lowest_score(np.zeros(k), share, low, w, _greedy.OFF) == miss / w


@pytest.mark.parametrize("policy", ["bl-easy", "bb-easy"])
@pytest.mark.parametrize("k", [2, 4])
def test_whole_streams_equal_the_generic_engine_with_every_option(policy, k):
    rng = np.random.default_rng(k + len(policy))
    df = random_stream(rng, 200, k=k, cap=8, overrun=True)
    rule = {"bl-easy": gf.BL_RULE, "bb-easy": gf.BB_RULE}[policy]
    assert policies.FAST_CODES[policy] == rule
    for options in OPTIONS[rule]:
        res = same_schedule(df, [8] * k, policy, selector_options=options)
        gen = simulate(df, [8] * k, policy, selector_options=options, engine="generic")
        assert res.options == gen.options and res.options["selector_stats"]["steps"] > 0


def test_bl_and_bb_take_the_compiled_loop_and_choose_differently():
    df = random_stream(np.random.default_rng(8), 300, k=3, cap=8)
    runs = {p: simulate(df, [8] * 3, p) for p in ("bl-easy", "bb-easy", "easy")}
    assert {r.engine for r in runs.values()} == {"fast"}
    starts = {p: r.jobs["start"].tolist() for p, r in runs.items()}
    assert starts["bl-easy"] != starts["bb-easy"]
    assert starts["easy"] not in (starts["bl-easy"], starts["bb-easy"])


@pytest.mark.parametrize("options,match", [({"window": -1}, "window"), ({"fullness": "most"}, "fullness"),
                                           ({"depth": 2}, "depth")])
def test_options_the_heuristic_refuses_run_on_the_generic_engine_and_are_named(options, match):
    df = random_stream(np.random.default_rng(2), 40, k=2, cap=8)
    assert not policies.fast_takes_options("bl-easy", options, 2)
    with pytest.raises((ValueError, TypeError), match=match):
        simulate(df, [8, 8], "bl-easy", selector_options=options)
    with pytest.raises(ValueError, match="engine='fast'"):
        simulate(df, [8, 8], "bl-easy", selector_options=options, engine="fast")


def test_options_given_as_pairs_read_as_the_policy_reads_them():
    df = random_stream(np.random.default_rng(4), 60, k=2, cap=8)
    res = simulate(df, [8, 8], "bl-easy", selector_options=[("window", 2)])
    assert res.engine == "fast"
    assert res.jobs.equals(simulate(df, [8, 8], "bl-easy", selector_options={"window": 2}, engine="generic").jobs)


def test_engine_fast_names_only_what_keeps_it_from_the_compiled_loop():
    df = random_stream(np.random.default_rng(5), 30, k=2, cap=8)
    with pytest.raises(ValueError, match="takes no on_pass hook;"):
        simulate(df, [8, 8], "bl-easy", selector_options={"window": 2}, on_pass=lambda *a: None, engine="fast")


@pytest.mark.parametrize("policy", ["los", "bl-easy", "bb-easy"])
def test_an_empty_stream_reports_the_selector_steps_on_either_engine(policy):
    df = random_stream(np.random.default_rng(6), 5).iloc[:0]
    fast, gen = simulate(df, [16], policy), simulate(df, [16], policy, engine="generic")
    assert fast.options == gen.options and fast.options["selector_stats"]["steps"] == 0


def test_options_of_other_policies_keep_the_generic_engine():
    assert policies.fast_takes_options("easy", None, 1)
    assert not policies.fast_takes_options("los", {"resource": 0}, 1)
    assert not policies.fast_takes_options("bb-easy", {"window": 1}, 2)     # BL's option, not BB's


@pytest.mark.skipif(not KTH.exists(), reason=f"reference trace {KTH} absent (set EPOCHBENCH_DATA)")
def test_kth_schedules_equal_the_generic_engine():
    from epochbench.instances.jobs import read_swf
    w = read_swf(KTH)
    jobs = w.jobs.iloc[:6000]
    for policy in ("bl-easy", "bb-easy"):
        fast = simulate(jobs, w.capacity, policy)
        gen = simulate(jobs, w.capacity, policy, engine="generic")
        assert fast.engine == "fast"
        pd.testing.assert_frame_equal(fast.jobs, gen.jobs)
        assert fast.options == gen.options
