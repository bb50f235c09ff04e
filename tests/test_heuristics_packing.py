"""Packing heuristics: the seeds' worked examples and properties."""
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import epochbench.heuristics.packing as hp
from epochbench.heuristics import _greedy
from epochbench.instances import EpochsInstance, PackingInstance, check_packing, reservation_from_running
from epochbench.instances.registry import names, solve

FIG1 = [[8, 4], [4, 2], [7, 16], [11, 20], [1, 12], [1, 10]]
HEURISTICS = ["fcfs", "ff", "bestfit", "worstfit", "bl", "bb", "los"]


def fig1():
    return EpochsInstance.build([16, 32], FIG1, meta={"name": "seed000-fig1"})


# ---- [leinberger1999] figure 1 ----------------------------------------------------------
def test_fig1_fcfs_needs_four_epochs():
    r = solve(fig1(), "fcfs")
    assert r.decision == ((0, 1), (2,), (3, 4), (5,))
    assert r.value == 4


def test_fig1_first_fit_needs_three_epochs():
    r = solve(fig1(), "ff")
    assert r.decision == ((0, 1, 4, 5), (2,), (3,))
    assert r.value == 3


def test_fig1_first_epoch_loads_match_the_figure():
    inst = fig1().packing(range(6))
    assert inst.demand[list(hp.fcfs(inst))].sum(axis=0).tolist() == [12, 6]
    assert inst.demand[list(hp.first_fit(inst))].sum(axis=0).tolist() == [14, 28]


@pytest.mark.parametrize("method", HEURISTICS)
def test_every_heuristic_solves_fig1_feasibly(method):
    r = solve(fig1(), method)
    assert 2 <= r.value <= 4


# ---- [vadhiyar-notes] LOS worked example --------------------------------------------------
TABLE2_UTIL = [
    [0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0],
    [0, 0, 0, 3, 3, 3],
    [0, 1, 1, 3, 4, 4],
    [0, 1, 2, 3, 4, 5],
    [0, 1, 2, 3, 4, 5],
]
# the down-left arrows of table 2: selected flags
TABLE2_SELECTED = [
    [0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0],
    [0, 0, 0, 1, 1, 1],
    [0, 1, 1, 0, 1, 1],
    [0, 0, 1, 0, 0, 1],
    [0, 0, 0, 0, 0, 0],
]
LOS_SIZES = [7, 3, 1, 2, 2]


def los_instance(**kw):
    return PackingInstance.build([10], [[s] for s in LOS_SIZES], [5], estimate=[4, 5, 6, 4, 2],
                                 meta={"name": "seed002-los"}, **kw)


def test_los_matrix_equals_table_2():
    util, sel = hp.los_matrix(LOS_SIZES, 5)
    assert util.tolist() == TABLE2_UTIL
    assert sel.astype(int).tolist() == TABLE2_SELECTED


def test_los_selects_jobs_2_and_4_for_utilization_5():
    inst = los_instance()
    chosen = hp.los(inst)
    assert sorted(chosen) == [1, 3]  # wj2 and wj4 of the seed, 0-based
    assert inst.demand[chosen].sum() == 5


def test_first_fit_reaches_only_4_on_the_los_example():
    inst = los_instance()
    assert hp.first_fit(inst) == [1, 2]
    assert inst.demand[hp.first_fit(inst)].sum() == 4


def test_los_example_shadow_time_is_28():
    shadow, extra = reservation_from_running([10], [5], [7], [[5]], [3], now=25)
    assert shadow == 28 and extra.tolist() == [3]


def test_los_with_reservation_keeps_the_late_jobs_in_extra():
    inst = los_instance(shadow=28, extra=[3], now=25)
    assert inst.reservation.past_shadow.tolist() == [True, True, True, True, False]
    chosen = hp.los(inst)
    check_packing(inst, chosen)
    assert inst.demand[chosen].sum() == 5  # e.g. wj2 (3, late) + wj5 (2, ends before 28)
    late = [j for j in chosen if inst.reservation.past_shadow[j]]
    assert inst.demand[late].sum() <= 3


# ---- BB and BL ([leinberger1999] section 2.2) ----------------------------------------------
def test_balance_measure_by_hand():
    used = np.array([0.5, 0.25])
    # job (0, 0.25): U + R = (0.5, 0.5) -> max 0.5 / mean 0.5 = 1
    assert _greedy.balance_score(used, np.array([0.0, 0.25]), False) == 1.0
    # job (0.25, 0): (0.75, 0.25) -> 0.75 / 0.5 = 1.5; fullness 1 - 0.5 = 0.5
    assert _greedy.balance_score(used, np.array([0.25, 0.0]), False) == 1.5
    assert _greedy.balance_score(used, np.array([0.25, 0.0]), True) == 0.25  # (1.5 - 1) * 0.5


def test_lowest_score_by_hand():
    used = np.array([0.2, 0.6])
    low = np.array([True, False])
    assert _greedy.lowest_score(used, np.array([0.1, 0.3]), low, 1, False) == 1.0
    assert _greedy.lowest_score(used, np.array([0.3, 0.1]), low, 1, False) == 0.0
    # fullness: a matching job scores 0; a missing one 1 * (1 - (0.3 + 0.8) / 2)
    assert _greedy.lowest_score(used, np.array([0.3, 0.1]), low, 1, True) == 0.0
    assert _greedy.lowest_score(used, np.array([0.1, 0.2]), low, 1, True) == pytest.approx(0.45)


def test_bb_prefers_the_job_that_balances():
    # memory is half used; the CPU-heavy job balances, the memory-heavy one does not
    inst = PackingInstance.build([10, 10], [[1, 4], [4, 1]], [0, 5], meta={"name": "bb"})
    assert hp.backfill_balanced(inst, fullness=False)[0] == 1
    assert hp.first_fit(inst)[0] == 0


def test_fullness_lets_a_filling_job_beat_a_better_balanced_small_one():
    # job 0 (4, 5): balance 0.25 / 0.225 = 1.11, availability 0.775 -> 0.111 * 0.775 = 0.086
    # job 1 (14, 20): balance 1 / 0.85 = 1.18 (worse), availability 0.15 -> 0.176 * 0.15 = 0.026
    inst = PackingInstance.build([20, 20], [[4, 5], [14, 20]], meta={"name": "full"})
    assert hp.backfill_balanced(inst, fullness=False)[0] == 0
    assert hp.backfill_balanced(inst, fullness=True)[0] == 1


def test_bl_picks_a_job_whose_largest_need_is_the_lowest_resource():
    # CPU is the least used resource: BL skips the memory-heavy head of the queue
    inst = PackingInstance.build([10, 10], [[1, 3], [3, 1]], [2, 6], meta={"name": "bl"})
    assert hp.backfill_lowest(inst, fullness=False)[0] == 1


def test_bl_falls_back_to_first_fit_when_nothing_matches():
    inst = PackingInstance.build([10, 10], [[1, 3], [2, 4]], [2, 6], meta={"name": "bl2"})
    assert hp.backfill_lowest(inst, fullness=False) == [0]


def test_best_and_worst_fit_pick_largest_and_smallest():
    inst = PackingInstance.build([10], [[3], [6], [1]], meta={"name": "bf"})
    assert hp.best_fit(inst)[0] == 1
    assert hp.worst_fit(inst)[0] == 2


# ---- properties on random instances -------------------------------------------------
@st.composite
def packing_instances(draw, reservation=None):
    k = draw(st.integers(1, 3))
    n = draw(st.integers(0, 9))
    cap = draw(st.lists(st.integers(1, 12), min_size=k, max_size=k))
    used = [draw(st.integers(0, c)) for c in cap]
    demand = [[draw(st.integers(0, c)) for c in cap] for _ in range(n)]
    kw = {}
    if reservation if reservation is not None else draw(st.booleans()):
        kw = dict(shadow=1.0, extra=[draw(st.integers(0, c)) for c in cap],
                  runtime_past_shadow=[draw(st.booleans()) for _ in range(n)])
    return PackingInstance.build(cap, np.array(demand, dtype=np.int64).reshape(n, k), used,
                                 meta={"name": "hyp"}, **kw)


def brute_force(inst, objective="utilization"):
    best = 0.0
    for r in range(inst.n + 1):
        for combo in combinations(range(inst.n), r):
            try:
                check_packing(inst, combo)
            except AssertionError:
                continue
            best = max(best, inst.value(combo, objective))
    return best


@settings(max_examples=150, deadline=None)
@given(packing_instances())
def test_every_heuristic_is_feasible_and_maximal(inst):
    for m in names("packing", "heuristic"):
        r = solve(inst, m)  # raises if infeasible
        if m == "fcfs":
            assert list(r.decision) == list(range(len(r.decision)))
            continue
        rest = [j for j in range(inst.n) if j not in r.decision]
        for j in rest:  # nothing left could still start
            with pytest.raises(AssertionError):
                check_packing(inst, list(r.decision) + [j])


@settings(max_examples=150, deadline=None)
@given(packing_instances())
def test_los_is_exact_for_one_resource(inst):
    if inst.k != 1:
        return
    assert solve(inst, "los").value == pytest.approx(brute_force(inst))


def test_epochs_by_reports_a_heuristic_that_starts_nothing():
    """The plan would never end: the method's failure (InfeasibleSolution), not a bad argument."""
    from epochbench.instances.core import InfeasibleSolution
    inst = EpochsInstance.build([4], [[1], [2]], meta={"name": "e"})
    with pytest.raises(InfeasibleSolution, match="e: <lambda> started nothing with 2 jobs left"):
        hp.epochs_by(lambda p: [])(inst)


def test_los_refuses_a_table_beyond_its_limit_in_one_line():
    """LOS's DP is pseudo-polynomial in the free capacity: a capacity of 2**40
    is a clear error, not a MemoryError."""
    from epochbench.instances.packing import PackingInstance
    from epochbench.instances.registry import solve
    with pytest.raises(ValueError, match="los: its dynamic-programming table"):
        solve(PackingInstance.build([2**40], [[5], [7]]), "los")


def test_packing_refuses_negative_profits_like_knapsack():
    from epochbench.instances import InstanceError
    with pytest.raises(InstanceError, match="'profit' has a negative entry"):
        PackingInstance.build([5], [[1], [2]], profit=[-1.0, 3.0], objective="profit")


def test_a_tie_that_rounding_splits_goes_to_the_earlier_job():
    """Jobs (1, 2, 14) and (0, 8, 4) on capacity [4, 14, 14] with 3 processors
    used both have BB balance 7/5 exactly; computed, 1.4 and
    1.4000000000000001, so (1, 2, 14) was picked in either order."""
    from epochbench.heuristics import packing as P
    from epochbench.heuristics._greedy import OFF, balance_score
    jobs = [[1, 2, 14], [0, 8, 4]]
    used, cap = np.array([0.75, 0.0, 0.0]), np.array([4.0, 14.0, 14.0])
    a, b = (balance_score(used, np.array(d) / cap, OFF) for d in jobs)
    assert a != b and abs(a - b) < 1e-15                   # the rounding this is about
    for order in (jobs, jobs[::-1]):
        inst = PackingInstance.build([4, 14, 14], order, [3, 0, 0])
        assert list(P.backfill_balanced(inst, fullness="off")) == [0], order


def test_the_tie_bound_follows_the_rounding_not_a_fixed_floor():
    """Capacities 1e7, a nearly full machine: the exact BB EXCESS scores are
    1.25e-14 and 2.5e-15, so job 1 is five times better; a fixed floor of
    1e-13 read them as a tie and took job 0 (a review of the tie rule)."""
    from epochbench.heuristics import packing as P
    inst = PackingInstance.build([10**7] * 2, [[185, 142], [187, 144]], [9999812, 9999856])
    assert list(P.backfill_balanced(inst, fullness="excess"))[:1] == [1]


def test_the_first_pick_is_the_exact_arithmetic_one_ties_to_the_earlier_job():
    """Against scores in fractions: the best job, and of several equally good
    the first in the queue, on small and large capacities, nearly full
    machines and repeated jobs (15 of 4,000 first picks differed before the
    tie rule: bestfit 13, worstfit 2)."""
    import random
    from fractions import Fraction
    rng = random.Random(3)

    def exact(rule, fullness, cap, used, d):
        k = len(cap)
        t = [Fraction(used[i] + d[i], cap[i]) for i in range(k)]
        sm = sum(t)
        if rule == _greedy.BB:
            bal = max(t) / (sm / k) if sm > 0 else Fraction(1)
            return {_greedy.SCALED: bal * (1 - sm / k), _greedy.EXCESS: (bal - 1) * (1 - sm / k),
                    _greedy.OFF: bal}[fullness]
        left = sum(1 - x for x in t)
        return left if rule == _greedy.BESTFIT else -left

    for _ in range(400):
        k, c = rng.choice([2, 3, 4, 8]), rng.choice([4, 100, 10**5, 10**7])
        cap = [rng.choice([c, 2 * c]) for _ in range(k)]
        used = [rng.randint(max(0, x - 50), x) if rng.random() < 0.5 else rng.randint(0, x) for x in cap]
        free = [x - u for x, u in zip(cap, used)]
        jobs = [[rng.randint(0, f) for f in free] for _ in range(rng.randint(2, 6))]
        jobs.append(list(jobs[0]))                                          # a repeat: a tie by construction
        for rule, fullness in ((_greedy.BB, _greedy.OFF), (_greedy.BB, _greedy.SCALED), (_greedy.BB, _greedy.EXCESS),
                               (_greedy.BESTFIT, _greedy.OFF), (_greedy.WORSTFIT, _greedy.OFF)):
            score = [exact(rule, fullness, cap, used, d) for d in jobs]
            want = min(range(len(jobs)), key=lambda i: (score[i], i))
            got = _greedy.select(np.array(jobs, dtype=float).T.copy(), np.array(cap, float), np.array(free, float),
                                 np.array(free, float), np.zeros(len(jobs), bool), False, rule, 1, fullness)[0]
            assert got == want, (rule, fullness, cap, used, jobs)


# -- rules a one-token change broke unseen (mutation review, round 6) --
def test_los_trace_keeps_the_first_job_of_the_queue():
    """Algorithm 2 walks back to row 1: job 1 (size 6) is in the best set {6, 4} of 10."""
    sizes = [6, 3, 4]
    assert hp.los_trace(sizes, hp.los_matrix(sizes, 10)[1]) == [0, 2]
    inst = PackingInstance.build([10], [[s] for s in sizes], meta={"name": "los-first"})
    assert hp.los(inst) == [0, 2]                  # queue order: the DP's set, nothing left to fill


def test_los_matrix_takes_a_job_that_fills_the_free_processors_exactly():
    """A job of exactly the free size is a candidate (0 < s <= n): 5 beats 3."""
    util, sel = hp.los_matrix([3, 5], 5)
    assert util[-1].tolist() == [0, 0, 0, 3, 3, 5] and sel[2, 5]
    assert hp.los(PackingInstance.build([5], [[3], [5]], meta={"name": "los-exact"})) == [1]


def test_los_runs_its_dp_on_the_resource_it_is_given():
    # resource 0: sizes 1, 5, 5 -> {1, 2} fills 10; resource 1: sizes 6, 3, 4 -> {0, 2} fills 10
    inst = PackingInstance.build([10, 10], [[1, 6], [5, 3], [5, 4]], meta={"name": "los-res"})
    assert hp.los(inst, resource=0) == [1, 2]
    assert hp.los(inst, resource=1) == [0, 2]


def test_los_refuses_resource_k():
    inst = PackingInstance.build([10, 10], [[1, 6]], meta={"name": "los-k"})
    with pytest.raises(ValueError, match=r"option 'resource' must be an integer in 0\.\.1"):
        hp.los(inst, resource=2)


@pytest.mark.parametrize("fullness", ["off", "excess", "scaled"])
def test_bb_reads_an_empty_job_on_an_empty_machine_as_balanced(fullness):
    """U + R = 0: the balance measure is 1 (perfect balance, its floor), not 0, so the
    zero-demand job 1 does not jump ahead of job 0 (5, 5), which balances as well."""
    inst = PackingInstance.build([10, 10], [[5, 5], [0, 0]], meta={"name": "bb-zero"})
    assert hp.backfill_balanced(inst, fullness=fullness) == [0, 1]


def test_bl_utilisation_tie_goes_to_resource_0_on_a_wide_machine():
    """Empty machine with K = 16: every resource is equally used, resource 0 counts as the
    least used (the docstring's rule; a stable sort: numba's quicksort is not stable from 16
    elements on).  Job 1's largest need is resource 0, job 0's resource 14: BL takes job 1."""
    k = 16
    job0, job1 = [1] * k, [1] * k
    job0[14] = job1[0] = 5
    inst = PackingInstance.build([10] * k, [job0, job1], meta={"name": "bl-wide"})
    assert hp.backfill_lowest(inst, window=1, fullness="off")[0] == 1


def test_bb_scaled_tie_within_rounding_goes_to_the_earlier_job():
    """Jobs (1, 4, 0) and (3, 2, 0) on capacity [7, 7, 7] at [4, 1, 7] have the same exact
    SCALED score, 4/17; computed, 0.23529411764705896 and 0.23529411764705865 (6 units of
    the last place apart): the tie bound must cover it, so the earlier job is taken."""
    inst = PackingInstance.build([7, 7, 7], [[1, 4, 0], [3, 2, 0]], [4, 1, 7], meta={"name": "bb-tie"})
    assert hp.backfill_balanced(inst, fullness="scaled") == [0]


def test_reservation_from_running_frees_the_jobs_ending_at_the_shadow_time():
    """A head of 4 on a full machine of 10, running jobs of 5, 3 and 2 that
    end at 3, 3 and 8 (now 1): the head fits at 3 when the first leaves, and
    the second leaves then too: extra 5 + 3 - 4 = 4."""
    shadow, extra = reservation_from_running([10], [10], [4], [[5], [3], [2]], [2.0, 2.0, 7.0], now=1.0)
    assert shadow == 3.0 and extra.tolist() == [4]


def test_utilization_weighs_a_job_by_its_mean_share():
    inst = PackingInstance.build([4, 10], [[2, 5], [4, 0]])
    assert inst.value([0]) == pytest.approx(0.5) and inst.value([1]) == pytest.approx(0.5)
    assert inst.value([0, 1]) == pytest.approx(1.0)
