"""Exact methods on profits / preferences far below 1 (down to 1e-14).

The integer scaling of the objective (``exact/_binary.py: profit_scale``)
once accepted a power of ten when every profit was integral to an absolute
1e-9: a profit of 1e-9 or less rounded to 0, so the knapsack / packing
models maximised an objective of zeros and the Hungarian method took such a
preference for "not eligible", each still claiming a proof.  Every exact
method of a family that says ``optimal`` must here equal brute force
(all subsets, all matchings), and none may raise.
"""
import itertools

import numpy as np
import pytest

from epochbench.exact._binary import profit_scale
from epochbench.instances.assignment import AssignmentInstance
from epochbench.instances.generators import generate
from epochbench.instances.knapsack import KnapsackInstance
from epochbench.instances.packing import PackingInstance
from epochbench.instances.registry import solve

KNAPSACK = ("cpsat", "milp-cbc", "milp-highs", "mkp-bb")
ASSIGNMENT = ("hungarian", "cpsat", "milp-cbc", "milp-highs")
LIMIT = 20


def close(a, b):
    """Equal to 1e-9 of the larger (the values are sums of a few floats)."""
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


# ---- brute force -------------------------------------------------------------------------
def best_subset(weights: np.ndarray, capacity: np.ndarray, profit: np.ndarray) -> float:
    """The most profit of a subset of the items within the capacity."""
    n, best = len(profit), 0.0
    for r in range(1, n + 1):
        for sel in itertools.combinations(range(n), r):
            if np.all(weights[list(sel)].sum(axis=0) <= capacity):
                best = max(best, float(profit[list(sel)].sum()))
    return best


def best_matching(p: np.ndarray) -> tuple[int, float]:
    """(maximum cardinality, the most weight of a matching of that cardinality)
    over the eligible pairs ``p > 0``."""
    n, m = p.shape
    best = (0, 0.0)
    for perm in itertools.permutations(range(max(n, m)), n):
        pairs = [(i, k) for i, k in enumerate(perm) if k < m and p[i, k] > 0]
        key = (len(pairs), float(sum(p[i, k] for i, k in pairs)))
        if key[0] > best[0] or (key[0] == best[0] and key[1] > best[1]):
            best = key
    return best


def check_knapsack_result(r, optimum: float, where: str) -> None:
    assert r.status in ("optimal", "feasible"), where
    assert r.value <= optimum * (1 + 1e-9), where                     # the decision was checked: feasible
    if r.status == "optimal":
        assert close(r.value, optimum), f"{where}: optimal {r.value!r}, brute force {optimum!r}"
        assert close(r.bound, optimum), where
    elif r.bound is not None:
        assert r.bound >= optimum * (1 - 1e-9), f"{where}: bound {r.bound!r} below the optimum {optimum!r}"


# ---- the scaling itself ----------------------------------------------------------------------
@pytest.mark.parametrize("profits", [[0.5, 0.25, 0.125, 1e-9], [3e-10, 2e-10, 2e-10], [3e-10, 1e-10, 1e-10],
                                     [1e-14, 7e-15], [4.2e-12, 1.0], [1 / 3, 1e-9]])
def test_profit_scale_never_rounds_a_positive_profit_to_zero(profits):
    p = np.array(profits)
    s = profit_scale(p)
    if s is not None:
        q = np.round(p * s)
        assert np.all(q >= 1)
        assert np.all(np.abs(p * s - q) <= 1e-9 * p * s)


def test_profit_scale_keeps_the_decimal_scales_of_ordinary_data():
    assert profit_scale(np.array([3.0, 7.0, 1000.0])) == 1
    assert profit_scale(np.array([0.5, 1.25, 2.0])) == 100
    assert profit_scale(np.array([0.0, 0.0])) == 1
    assert profit_scale(np.array([6.660656118633338, 28.865543925740972])) == 10**9   # as before: to 1e-9
    assert profit_scale(np.array([3e-10, 2e-10])) == 10**10


def test_milp_weight_scale_is_a_power_of_two_only_below_one():
    from epochbench.exact._binary import milp_weight_scale
    assert milp_weight_scale(np.array([1.0, 0.5])) == 1.0
    assert milp_weight_scale(np.array([812.3])) == 1.0
    s = milp_weight_scale(np.array([3e-10, 1e-10]))
    assert 1.0 <= 3e-10 * s < 2.0 and np.log2(s) == int(np.log2(s))


# ---- the reviewer's repros ----------------------------------------------------------------
def test_hungarian_and_the_models_find_the_heavier_matching_with_a_tiny_preference():
    """[[0.5, 0.25], [0.125, 1e-9]]: hungarian said optimal 0.375 (1e-9 taken
    for ineligible); the optimum is 0.500000001."""
    p = np.array([[0.5, 0.25], [0.125, 1e-9]])
    inst = AssignmentInstance.build(p)
    nu, optimum = best_matching(p)
    assert (nu, optimum) == (2, 0.5 + 1e-9)
    for method in ASSIGNMENT:
        r = solve(inst, method, time_limit=LIMIT, threads=1)
        assert len(r.decision) == nu, method
        check_knapsack_result(r, optimum, method)
    assert solve(inst, "hungarian").status == "optimal"


def test_hungarian_does_not_raise_on_preferences_below_1e_9():
    """[[3e-10, 1e-10], [1e-10, 0]]: hungarian raised "matched 0 pairs, maximum is 2"."""
    p = np.array([[3e-10, 1e-10], [1e-10, 0.0]])
    inst = AssignmentInstance.build(p)
    nu, optimum = best_matching(p)
    for method in ASSIGNMENT:
        r = solve(inst, method, time_limit=LIMIT, threads=1)
        assert len(r.decision) == nu == 2, method
        check_knapsack_result(r, optimum, method)


@pytest.mark.parametrize("warm", [True, False])
def test_knapsack_with_profits_below_1e_9(warm):
    """Capacity 10, weights 6 / 5 / 5, profits 3e-10 / 2e-10 / 2e-10: the
    exact methods said optimal 3e-10 (warm) or 0 (cold); items 1 + 2 give 4e-10."""
    inst = KnapsackInstance.build([10], [[6], [5], [5]], [3e-10, 2e-10, 2e-10])
    optimum = best_subset(inst.weights, inst.capacity, inst.profit)
    assert close(optimum, 4e-10)
    for method in KNAPSACK:
        r = solve(inst, method, time_limit=LIMIT, threads=1, warm=warm)
        check_knapsack_result(r, optimum, f"{method} warm={warm}")
        assert r.status == "optimal" and sorted(r.decision) == [1, 2], method


def test_packing_with_the_profit_objective_and_profits_below_1e_9():
    """mkp-bb said optimal 0 (nothing selected) where ff finds 3e-10."""
    inst = PackingInstance.build([10], [[6], [5], [5]], [0], profit=[3e-10, 2e-10, 2e-10], objective="profit")
    optimum = best_subset(inst.demand, inst.free, inst.profit)
    heur = solve(inst, "ff")
    assert heur.value == pytest.approx(3e-10, rel=1e-12)
    for method in KNAPSACK:
        r = solve(inst, method, time_limit=LIMIT, threads=1)
        check_knapsack_result(r, optimum, method)
        assert r.value >= heur.value
        assert r.status == "optimal", method


@pytest.mark.parametrize("method", ["mkp-bb", "cpsat"])
def test_a_timeout_without_a_solution_proves_nothing(method):
    """An exact knapsack solve stopped before any selection: no bound and
    ``bound_kind`` ``none`` (mkp-bb said ``solver``)."""
    inst = generate("mkp", n=250, k=30, tightness=0.25, count=1, seed=3)[0]
    r = solve(inst, method, time_limit=0.001, threads=1, warm=False)
    if r.status == "timeout":
        assert not r.decision
        assert r.bound is None and r.info["bound_kind"] == "none"
    assert (r.bound is None) == (r.info["bound_kind"] == "none")


def test_mkp_bb_itself_returns_no_bound_on_a_timeout():
    """Whether 1e-6 s leaves the first dive time to select a job depends on
    the machine's load, so the timeout's result is also built directly."""
    import time

    from epochbench.exact.knapsack import knapsack_mkp_bb
    from epochbench.exact.packing_bb import _result
    inst = generate("mkp", n=250, k=30, tightness=0.25, count=1, seed=3)[0]
    r = knapsack_mkp_bb(inst, time_limit=1e-6, threads=1, warm=False)
    assert (r.bound is None) == (r.info["bound_kind"] == "none")
    if r.status == "timeout":
        assert not r.decision and r.bound is None
    packing = generate("leinberger", n=8, k=2, count=1, seed=1)[0]
    out = _result(packing, (), 0.0, "timeout", 0.9, {"solver": "mkp-bb"}, time.perf_counter())
    assert out.bound is None and out.info["bound_kind"] == "none"     # the open subtrees' bound proves nothing


# ---- beyond the repros: random tiny data ------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("size", [1e-10, 1e-14])
def test_knapsack_with_random_tiny_profits_equals_brute_force(seed, size):
    """Non-decimal profits spanning two orders of magnitude, times ``size``:
    the MILPs then get a float objective (too wide for 32-bit integers),
    which CBC and HiGHS must not solve to their absolute gap of 1e-6."""
    rng = np.random.default_rng(seed)
    n = 11
    w = rng.integers(1, 100, (n, 2))
    inst = KnapsackInstance.build(w.sum(axis=0) // 3, w, rng.uniform(1, 100, n) * size)
    optimum = best_subset(inst.weights, inst.capacity, inst.profit)
    for method in KNAPSACK:
        r = solve(inst, method, time_limit=LIMIT, threads=1, warm=False)
        check_knapsack_result(r, optimum, f"{method} seed={seed} size={size}")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("size", [1e-10, 1e-14])
def test_assignment_with_random_tiny_preferences_equals_brute_force(seed, size):
    rng = np.random.default_rng(seed)
    p = np.where(rng.random((5, 4)) < 0.6, rng.uniform(1, 100, (5, 4)), 0.0) * size
    inst = AssignmentInstance.build(p)
    nu, optimum = best_matching(p)
    for method in ASSIGNMENT:
        r = solve(inst, method, time_limit=LIMIT, threads=1)
        assert len(r.decision) == nu, method
        check_knapsack_result(r, optimum, f"{method} seed={seed} size={size}")


def test_proofs_and_comparisons_are_relative_on_tiny_objectives():
    """A bound of 4e-14 does not meet a value of 3e-14 (an absolute 1e-12 said it did)."""
    from epochbench.exact._binary import proven
    from epochbench.exact.starts import better
    assert proven("feasible", 3e-14, 4e-14, "max") == ("feasible", 4e-14)
    assert proven("feasible", 3e-14, 3e-14 * (1 + 1e-15), "max") == ("optimal", 3e-14)
    assert proven("feasible", 0.0, 0.0, "max") == ("optimal", 0.0)
    assert better(4e-14, 3e-14, "max") and not better(3e-14, 4e-14, "max")
    assert better(3e-14, 4e-14, "min")
    assert not better(5.0, 5.0 + 1e-13, "min") and not better(0.0, 0.0, "max")
