"""The mapping LNS (issue 20.4, beyond the seeds): a checked mapping never
worse than its start, a valid lower bound (combinatorial and LP), status
optimal only when the mapping meets it, the time limit kept."""
from __future__ import annotations

import time

import numpy as np
import pytest

from epochbench.exact.mapping import lp_bound
from epochbench.exact.mapping_lns import KERNEL_SHARES, _kick, lns
from epochbench.exact.starts import best_start
from epochbench.instances.generators import generate
from epochbench.instances.mapping import MappingInstance
from epochbench.instances.registry import get, solve


@pytest.mark.parametrize("seed", [1, 2])
def test_lns_is_checked_never_worse_than_its_start_and_its_bound_is_valid(seed):
    inst = generate("braun-range", tasks=24, machines=4, seed=seed)[0]
    opt = solve(inst, "cpsat", time_limit=20.0, threads=1)
    assert opt.status == "optimal"
    r = solve(inst, "lns", time_limit=1.0, threads=1, seed=seed)          # checked by the family's checker
    start = best_start(inst, budget=1.0)
    assert r.value <= start.value + 1e-9 and r.value >= opt.value - 1e-9
    assert r.bound <= opt.value * (1 + 1e-9) and r.bound >= inst.lower_bound() - 1e-9
    assert (r.status == "optimal") == (r.value <= r.bound * (1 + 1e-12))
    assert r.info["repairs"] >= 0 and r.info["lp_bound"] == pytest.approx(lp_bound(inst))


def test_lns_improves_a_poor_start_by_repairs_within_its_limit(monkeypatch):
    """Within its limit, read from the deadlines the code passes on (no
    wall time asserted): the LNS asks for time left against one deadline,
    and every repair and kernel search it starts is given no later one."""
    from epochbench.exact import mapping_lns
    inst = generate("braun-range", tasks=128, machines=8, seed=3)[0]
    poor = np.zeros(inst.n, dtype=np.int64)                              # every task on machine 0
    given, asked = [], set()
    repair, kernel, time_left = mapping_lns._repair, mapping_lns._kernel, mapping_lns.time_left

    def spy_repair(inst_, sc, a, cols, deadline, *rest):
        given.append(deadline)
        return repair(inst_, sc, a, cols, deadline, *rest)

    def spy_kernel(inst_, sc, relax, best, share, deadline, *rest):
        given.append(deadline)
        return kernel(inst_, sc, relax, best, share, deadline, *rest)

    def left(deadline):                                                   # the LNS's deadline, as it asks
        asked.add(deadline)
        return time_left(deadline)

    monkeypatch.setattr(mapping_lns, "_repair", spy_repair)
    monkeypatch.setattr(mapping_lns, "_kernel", spy_kernel)
    monkeypatch.setattr(mapping_lns, "time_left", left)
    r = lns(inst, time_limit=2.0, hint=poor, seed=0, first=None)         # repairs only
    assert len(asked) == 1 and given and max(given) <= min(asked)
    assert r.info["start"] == "hint" and r.info["repairs"] > 0 and r.info["improved"] > 0
    assert r.value < inst.value(poor) / 2
    assert inst.value(np.array(r.decision)) == pytest.approx(r.value)


def test_lns_is_an_exact_kind_method_with_a_warm_start():
    m = get("mapping", "lns")
    assert m.exact and getattr(m.func, "warm_start", False)
    inst = generate("braun-range", tasks=16, machines=4, seed=5)[0]
    cold = solve(inst, "lns", time_limit=0.5, threads=1, warm=False)
    assert cold.info["start"].startswith("minmin") and cold.info["first"]["method"] == "milp-highs"
    r = lns(inst, time_limit=1.0, hint=np.zeros(inst.n, dtype=np.int64))       # HiGHS first, then repairs
    assert r.info["start"] == "hint + milp-highs" and r.value <= r.info["first"]["value"] + 1e-9


def test_a_machine_set_proven_optimal_is_not_drawn_again_while_its_tasks_stay():
    from epochbench.exact.mapping_lns import _fresh_neighbourhood, _key
    rng = np.random.default_rng(0)
    a = np.array([0, 0, 1, 2, 2, 1], dtype=np.int64)                     # 3 machines: 3 pairs of machines
    fin = np.array([9, 3, 5])
    first = _fresh_neighbourhood(a, fin, 2, rng, 0, set())
    assert sorted(first) == [0, 1]                                      # the makespan machine and the least loaded
    proven = {_key(a, first)}
    again = _fresh_neighbourhood(a, fin, 2, rng, 0, proven)
    assert again is not None and sorted(again) == [0, 2]                # redrawn at random
    proven.add(_key(a, again))
    assert _fresh_neighbourhood(a, fin, 2, rng, 0, proven) is None      # every set with machine 0 proven
    moved = a.copy()
    moved[2] = 0                                                        # other tasks on those machines
    assert _fresh_neighbourhood(moved, fin, 2, rng, 0, proven) is not None


def test_lns_skips_proven_neighbourhoods_and_stays_valid():
    inst = generate("braun-range", tasks=12, machines=3, seed=4)[0]
    r = lns(inst, time_limit=1.0, seed=0, first=None, machines=2, max_machines=2)
    assert r.info["proven_repairs"] >= 1                                # small repairs are proven at once
    assert r.status == "optimal" or r.info["skipped"] >= 1              # then not repeated
    assert inst.value(np.array(r.decision)) == pytest.approx(r.value) and r.value >= r.bound - 1e-9


def test_the_size_reduced_first_phase_returns_mappings_of_the_instance_and_no_bound_of_its_own():
    from epochbench.exact.mapping import lp_relaxation, start_mapping
    from epochbench.exact.mapping_lns import _reduced
    inst = generate("braun-range", tasks=40, machines=8, seed=6)[0]
    a, _ = start_mapping(inst)
    red = _reduced(inst, lp_relaxation(inst), a, 2)
    kept = red.etc == inst.etc
    assert kept[np.arange(inst.n), a].all() and (kept.sum(axis=1) >= 2).all() and kept.sum() < inst.etc.size
    assert (red.etc[~kept] > inst.value(a)).all()          # above the start's makespan: every exact model drops them
    r = solve(red, "milp-highs", time_limit=2.0, threads=1, hint=a)
    assert kept[np.arange(inst.n), np.array(r.decision)].all()
    assert inst.value(np.array(r.decision)) == pytest.approx(r.value) and r.value <= inst.value(a)
    opt = solve(inst, "cpsat", time_limit=20.0, threads=1)
    got = lns(inst, time_limit=1.0, reduce=2, seed=0)
    assert got.info["first"]["machines_per_task"] == 2 and got.info["first"]["bound"] is None
    assert got.bound <= opt.value * (1 + 1e-9) and got.value >= opt.value - 1e-9
    assert lns(inst, time_limit=0.5, reduce=0).info["first"]["machines_per_task"] == inst.k


def test_the_first_phase_weighs_total_work_when_its_method_takes_a_weight():
    inst = generate("braun-range", tasks=32, machines=4, seed=6)[0]
    hint = np.zeros(inst.n, dtype=np.int64)
    r = lns(inst, time_limit=1.0, hint=hint, seed=0)
    assert r.info["first"]["work_weight"] == 0.1 and r.value <= r.info["first"]["value"] + 1e-9
    plain = lns(inst, time_limit=1.0, hint=hint, seed=0, first_work_weight=0.0)
    assert plain.info["first"]["work_weight"] == 0.0
    other = lns(inst, time_limit=1.0, hint=hint, seed=0, first="cpsat")      # takes no weight
    assert other.info["first"]["work_weight"] is None
    for res in (r, plain, other):
        assert res.bound <= res.value and inst.value(np.array(res.decision)) == pytest.approx(res.value)


@pytest.mark.parametrize("prices", [None, [0.5, 0.3, 0.2]], ids=["uniform", "priced"])
def test_a_weighted_repair_finds_the_least_makespan_plus_weighted_work_of_its_machines(prices):
    """Brute force over every assignment of the repaired machines' tasks
    among them: the repair's mapping has the least merit (p x makespan + q x
    total work, or + q_j x the work on each machine j when the work is
    priced, the makespan at least the other machines' finishing time), so it
    never raises the makespan."""
    import itertools

    from epochbench.exact.mapping import scaled
    from epochbench.exact.mapping_lns import _finish, _merit, _repair, _weights
    inst = generate("braun-range", tasks=9, machines=3, seed=7)[0]
    sc = scaled(inst)
    weights = _weights(sc, 0.5, None if prices is None else np.array(prices))
    q = 50 if prices is None else np.array([75, 45, 30])
    assert weights[0] == 3 * 100 and np.array_equal(weights[1], q)
    a = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2])
    e = sc.etc[np.arange(inst.n), a]
    assert _merit(sc, a, weights) == 300 * _finish(sc, a).max() + int((np.broadcast_to(q, (3,))[a] * e).sum())
    rng = np.random.default_rng(3)
    for trial in range(4):
        a = rng.integers(0, 3, size=inst.n)
        cols = np.array([0, 1] if trial % 2 else [0, 1, 2])
        got, optimal = _repair(inst, sc, a, cols, time.perf_counter() + 20.0, 1, 0, weights)
        assert optimal
        rows = np.flatnonzero(np.isin(a, cols))
        best = min(_merit(sc, _put(a, rows, choice), weights)
                   for choice in itertools.product(cols, repeat=rows.size))
        assert _merit(sc, got, weights) == best
        assert (got[~np.isin(np.arange(inst.n), rows)] == a[~np.isin(np.arange(inst.n), rows)]).all()
        assert np.isin(got[rows], cols).all()
        assert _finish(sc, got).max() <= _finish(sc, a).max()


def _put(a, rows, choice):
    out = a.copy()
    out[rows] = choice
    return out


def test_lns_prices_work_by_the_lp_duals_unless_told_otherwise():
    inst = generate("braun-range", tasks=32, machines=4, seed=6)[0]
    hint = np.zeros(inst.n, dtype=np.int64)
    for prices in ("lp", "uniform"):
        r = lns(inst, time_limit=1.0, hint=hint, seed=0, prices=prices)
        assert r.info["prices"] == prices and r.value < inst.value(hint)
        assert r.bound <= r.value and inst.value(np.array(r.decision)) == pytest.approx(r.value)
    assert lns(inst, time_limit=1.0, hint=hint, seed=0).info["prices"] == "lp"


def test_repair_weights_fall_back_to_the_makespan_alone_at_zero_or_beyond_the_integer_range():
    from epochbench.exact.mapping import Scaled
    from epochbench.exact.mapping_lns import _weights
    small = Scaled(np.ones((4, 2), dtype=np.int64), np.zeros(2, dtype=np.int64), 1.0, True)
    assert _weights(small, 0.0) is None and _weights(small, 0.004) is None     # rounds to 0 on the grid
    assert _weights(small, 0.25) == (200, 25)
    huge = Scaled(np.full((4, 2), 2**55, dtype=np.int64), np.zeros(2, dtype=np.int64), 1.0, True)
    assert _weights(huge, 0.5) is None


def test_lns_weighs_work_in_its_repairs_until_its_tail():
    inst = generate("braun-range", tasks=32, machines=6, seed=6)[0]     # more machines than a repair takes
    hint = np.zeros(inst.n, dtype=np.int64)
    r = lns(inst, time_limit=1.0, hint=hint, seed=0, first=None)
    assert r.info["repair_work_weight"] == 0.5
    whole = lns(inst, time_limit=1.0, hint=hint, seed=0, first=None, tail_share=1.0)
    assert whole.info["tail_from_repair"] == 0                              # the makespan alone from the start
    never = lns(inst, time_limit=1.0, hint=hint, seed=0, first=None, tail_share=0.0)
    assert "tail_from_repair" not in never.info
    plain = lns(inst, time_limit=1.0, hint=hint, seed=0, first=None, repair_work_weight=0.0)
    assert plain.info["repair_work_weight"] == 0.0 and "tail_from_repair" not in plain.info
    for res in (r, whole, never, plain):
        assert res.bound <= res.value and inst.value(np.array(res.decision)) == pytest.approx(res.value)
        assert res.value < inst.value(hint)


@pytest.mark.parametrize("params, message", [({"repair_work_weight": -0.5}, "repair_work_weight must be"),
                                             ({"repair_work_weight": float("nan")}, "repair_work_weight must be"),
                                             ({"tail_share": 1.5}, "tail_share must be"),
                                             ({"prices": "duals"}, "prices must be one of lp, uniform"),
                                             ({"kernel_share": -0.1}, "kernel_share must be"),
                                             # these ran silently, and the last failed mid-run naming work_weight
                                             ({"first_share": 5}, "'first_share' must lie in"),
                                             ({"max_machines": -3}, "'max_machines' must be an integer >= 4"),
                                             ({"machines": 1}, "'machines' must be an integer >= 2"),
                                             ({"repair_s": -1}, "'repair_s' must be a finite number > 0"),
                                             ({"reduce": -1}, "'reduce' must be an integer >= 0"),
                                             ({"first_work_weight": -1}, "'first_work_weight' must be"),
                                             ({"first": {}}, "first must be one of"),   # was read as None
                                             ({"first": ""}, "first must be one of")])
def test_lns_refuses_a_negative_work_weight_or_a_tail_beyond_the_time_limit(params, message):
    inst = generate("braun-range", tasks=8, machines=2, seed=1)[0]
    with pytest.raises(ValueError, match=message):
        lns(inst, time_limit=0.5, **params)


@pytest.mark.parametrize("seed", range(3))
def test_a_kernel_of_share_one_keeps_every_pair_a_better_mapping_may_use(seed):
    """Any mapping's makespan is at least the LP bound plus its LP reduced
    costs, so the kernel of share 1 leaves out no better mapping: CP-SAT on
    it proves the optimum (brute force over every mapping).  A kernel of
    share 0 keeps the start's pairs and the LP solution's, and its mapping
    is never worse than the start."""
    import itertools

    from epochbench.exact.mapping import lp_relaxation, minmin_start, scaled
    from epochbench.exact.mapping_lns import _kernel
    inst = generate("braun-range", tasks=8, machines=3, seed=20 + seed)[0]
    maps = np.array(list(itertools.product(range(inst.k), repeat=inst.n)), dtype=np.int64)
    opt = min(inst.value(a) for a in maps)
    relax, sc, start = lp_relaxation(inst), scaled(inst), minmin_start(inst)
    got, proven, whole = _kernel(inst, sc, relax, start, 1.0, time.perf_counter() + 20.0, 1, 0)
    assert proven and inst.value(got) == pytest.approx(opt) and whole <= inst.etc.size
    got, _, pairs = _kernel(inst, sc, relax, start, 0.0, time.perf_counter() + 20.0, 1, 0)
    assert inst.value(got) <= inst.value(start) * (1 + 1e-12)
    assert inst.n <= pairs <= whole


def test_lns_runs_kernel_searches_once_its_best_stalls_in_the_second_half():
    inst = generate("braun-range", tasks=96, machines=8, seed=3)[0]
    r = lns(inst, time_limit=4.0, seed=0, first=None)
    none = lns(inst, time_limit=2.0, seed=0, first=None, kernel_share=0.0)
    assert none.info["kernels"] == []
    for res in (r, none):
        assert res.bound <= res.value and inst.value(np.array(res.decision)) == pytest.approx(res.value)
    if r.status == "optimal" and not r.info["kernels"]:
        pytest.skip("proven optimal before any kernel search")
    ks = r.info["kernels"]
    assert ks and all(k["ended_s"] >= 2.0 and inst.n <= k["pairs"] <= inst.etc.size for k in ks)
    assert all(k["value"] is None or k["value"] >= r.value - 1e-9 for k in ks)
    # the kernel grows after a search that found nothing better, starts small again after one that did
    assert ks[0]["share"] == KERNEL_SHARES[0]
    for prev, nxt in zip(ks, ks[1:]):
        at = 0 if prev["improved"] else KERNEL_SHARES.index(prev["share"]) + 1
        assert nxt["share"] == KERNEL_SHARES[at]
    assert all(not k["improved"] or k["value"] is not None for k in ks)


def test_machines_are_related_by_their_tasks_cheap_pairs_on_each_other():
    from epochbench.exact.mapping_lns import _relatedness
    a = np.array([0, 0, 1, 2], dtype=np.int64)
    cheap = np.array([[1, 1, 0],          # task 0 (on machine 0): cheap on 1
                      [1, 1, 1],          # task 1 (on 0): cheap on 1 and 2
                      [0, 1, 0],          # task 2 (on 1): nowhere else
                      [1, 0, 1]], bool)   # task 3 (on 2): cheap on 0
    rel = _relatedness(a, cheap)
    assert rel.tolist() == [[0, 2, 2], [2, 0, 0], [2, 0, 0]]


def test_a_related_neighbourhood_holds_the_makespan_machine_the_least_loaded_and_related_ones():
    from epochbench.exact.mapping_lns import _neighbourhood, _related
    rng = np.random.default_rng(0)
    fin = np.array([9, 3, 5, 7, 6, 8])
    rel = np.zeros((6, 6))
    rel[0, 4] = rel[4, 0] = 50.0                                        # machine 4: cheap pairs with 0
    rel[4, 2] = rel[2, 4] = 50.0                                        # then machine 2, through machine 4
    for _ in range(20):
        cols = _related(fin, 4, rng, rel)
        assert cols[0] == 0 and cols[1] == 1 and sorted(cols) == [0, 1, 2, 4]
    assert len(set(_related(fin, 6, rng, rel))) == 6                   # every machine can be drawn
    assert sorted(_neighbourhood(fin, 3, rng, 1, rel)) == [0, 1, 4]    # odd turns: related
    assert sorted(_neighbourhood(fin, 3, rng, 0, rel)) == [0, 1, 2]    # even turns: the least loaded


def test_lns_refuses_a_negative_related_share_and_runs_without_related_neighbourhoods():
    inst = generate("braun-range", tasks=32, machines=4, seed=2)[0]
    with pytest.raises(ValueError, match="related_share must be"):
        lns(inst, time_limit=0.5, related_share=-1.0)
    for share in (0.0, 1.0):
        r = lns(inst, time_limit=1.0, seed=0, first=None, related_share=share)
        assert r.info["related_share"] == share
        assert r.bound <= r.value and inst.value(np.array(r.decision)) == pytest.approx(r.value)


@pytest.mark.parametrize("tasks, machines", [(8, 3), (40, 6)])
def test_lns_stops_with_a_proof_once_a_repair_of_every_machine_is_proven(tasks, machines):
    """A repair of every machine by the makespan alone that CP-SAT proves
    optimal is the instance's optimum: lns said 'feasible' with its LP
    bound below it and ran its whole time limit (8 x 3: cpsat proves
    940,370.97 in milliseconds).  With as many machines per repair as the
    instance has, repairs weigh the makespan alone from the start."""
    inst = generate("braun-range", count=1, tasks=tasks, machines=machines)[0]
    exact = solve(inst, "cpsat", time_limit=5.0)
    assert exact.status == "optimal"
    r = solve(inst, "lns", time_limit=5.0)
    assert (r.status, r.value, r.bound) == ("optimal", exact.value, exact.value)


def test_a_huge_repair_work_weight_weighs_the_makespan_alone_without_overflow():
    """A work weight whose priced objective leaves int64 makes the repairs
    weigh the makespan alone, as one beyond CP-SAT's range does (1e30 with LP
    prices overflowed numpy's cast with a RuntimeWarning)."""
    import warnings

    from epochbench.exact.mapping import scaled
    from epochbench.exact.mapping_lns import _weights
    inst = generate("braun-range", tasks=8, machines=2, seed=1)[0]
    sc = scaled(inst)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _weights(sc, 1e30, np.array([0.5, 0.5])) is None and _weights(sc, 1e30) is None
        p, q = _weights(sc, 0.5, np.array([0.25, 0.75]))
        assert q.dtype == np.int64 and q[1] == 3 * q[0] > 0


# -- rules a one-token change broke unseen (mutation review, round 5) --
def test_lns_with_no_time_calls_its_start_optimal_only_at_the_bound():
    inst = MappingInstance.build(np.array([[1000.0, 1000.0]] * 4 + [[1.0, 1.0]] * 2), np.zeros(2))
    r = lns(inst, time_limit=0.0, hint=np.array([0, 0, 1, 1, 0, 0]), threads=1)   # 2002 against the optimum 2001
    assert r.value == 2002.0 and r.status == "feasible" and r.bound == 2001.0


def test_a_long_hop_moves_some_tasks_and_only_a_few():
    a = np.zeros(200, dtype=np.int64)
    out = _kick(a, 4, np.random.default_rng(0))
    assert 0 < int((out != a).sum()) <= max(2, int(0.02 * a.size))


@pytest.mark.parametrize("seed", [3, 6, 11])
def test_a_proven_repair_of_some_machines_is_no_bound_on_the_instance(seed):
    inst = generate("braun-range", tasks=10, machines=4, seed=seed)[0]
    opt = solve(inst, "cpsat", time_limit=10.0, threads=1)
    assert opt.status == "optimal"
    r = lns(inst, time_limit=0.5, first=None, machines=2, max_machines=2, repair_work_weight=0.0, seed=0, threads=1)
    assert r.bound <= opt.value * (1 + 1e-9)
    assert r.status != "optimal" or r.value == pytest.approx(opt.value)


@pytest.mark.parametrize("seed", [4, 5])
def test_a_size_reduced_first_phase_proves_nothing_about_the_instance(seed):
    """The first phase (plain cpsat, so that its status counts) on a model
    reduced to one machine per task: its bound is no bound on the instance."""
    inst = generate("braun-range", tasks=10, machines=4, seed=seed)[0]
    opt = solve(inst, "cpsat", time_limit=10.0, threads=1)
    assert opt.status == "optimal"
    r = lns(inst, time_limit=2.0, first="cpsat", first_work_weight=0.0, first_share=0.5, reduce=1,
            machines=2, max_machines=2, seed=0, threads=1)
    assert r.info["first"]["machines_per_task"] == 1 and r.info["first"]["bound"] is None
    assert r.bound <= opt.value * (1 + 1e-9)
    assert r.status != "optimal" or r.value == pytest.approx(opt.value)
