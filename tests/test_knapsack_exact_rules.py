"""Exact license-knapsack rules that a one-token change broke unseen
(mutation review, round 8): the result names the knapsack family and its
method, mkp-bb refuses a non-positive time limit, and the time the start
took counts against the limit."""
import time

import pytest

import epochbench as eb

from epochbench.exact.knapsack import _left, knapsack_cpsat, knapsack_mkp_bb
from epochbench.instances.knapsack import KnapsackInstance


def _tiny():
    # capacities (5, 5); item weights (3,1) (3,4) (2,2), profits 4 5 3.
    # Feasible pairs: only {0, 2} (weights (5, 3)); {0,1} uses 6 > 5, {1,2} uses 6 > 5 on license 1.
    # So the optimum is {0, 2} with profit 7.
    return KnapsackInstance.build([5, 5], [[3, 1], [3, 4], [2, 2]], [4, 5, 3], {"name": "tiny"})


@pytest.mark.parametrize("solve, method", [(knapsack_cpsat, "cpsat"), (knapsack_mkp_bb, "mkp-bb")])
def test_result_names_the_knapsack_family_and_method(solve, method):
    res = solve(_tiny(), time_limit=20, threads=1, warm=False)
    assert res.family == "knapsack"
    assert res.method == method
    assert res.status == "optimal"
    assert tuple(res.decision) == (0, 2)
    assert res.value == pytest.approx(7.0)


@pytest.mark.parametrize("bad", [0, -1.0])
def test_mkp_bb_refuses_a_non_positive_time_limit(bad):
    # _left passes a non-positive limit through so that the callee refuses it;
    # it must not be turned into a microsecond budget and "solved".
    with pytest.raises(ValueError, match="time_limit"):
        knapsack_mkp_bb(_tiny(), time_limit=bad, threads=1, warm=False)


def test_left_subtracts_the_time_already_spent():
    # no timing assertion that can flake: elapsed time only grows, so with t0 set
    # 4 s (resp. 5 s) in the past what is left is at most 6 s (resp. the 1e-6 floor).
    assert _left(10.0, time.perf_counter() - 4.0) <= 6.0
    assert _left(1.0, time.perf_counter() - 5.0) == 1e-6
    assert _left(-1.0, time.perf_counter()) == -1.0        # passed through for the callee to refuse


def test_a_tightness_of_zero_is_refused():
    """Every capacity came out 0: instances worth 0 whatever a method does
    (packing refuses a zero capacity; knapsack wrote them without a word)."""
    from epochbench.instances.knapsack import random_mkp
    with pytest.raises(ValueError, match="tightness"):
        random_mkp(n=10, k=2, tightness=0.0, count=1, seed=1)
    with pytest.raises(ValueError, match="tightness"):
        eb.generate("mkp", tightness=0)
    assert all(c.min() >= 1 for c in (i.capacity for i in random_mkp(n=10, k=2, tightness=0.25, count=3, seed=1)))

