"""Exact methods on objectives of 1e15 and entries across 24 orders of
magnitude (a fuzzing review against brute force): an ``optimal`` claim is
never a value that a checked decision beats by whole units, a checked
start is never traded for a worse answer, and rounded integer data never
makes a valid instance invalid inside a method."""
import itertools

import pytest

import epochbench as eb
from epochbench.exact._binary import MEETS_RTOL, against
from epochbench.instances.knapsack import KnapsackInstance
from epochbench.instances.mapping import MappingInstance

MAPPING_EXACT = ["cpsat", "milp-cbc", "milp-highs", "bnp", "lns"]


def _brute_mapping(inst):
    t, m = inst.etc.shape
    return min(inst.value(a) for a in itertools.product(range(m), repeat=t))


@pytest.mark.parametrize("method", MAPPING_EXACT)
def test_mapping_start_50_above_the_bound_at_1e15_is_not_optimal(method):
    # within 2**-43 of the bound, relative: only the data's whole-number grid tells them apart
    inst = MappingInstance.build([[1e15, 1e15 + 1], [1e15 + 1, 1e15 + 50]])
    assert inst.lower_bound() == _brute_mapping(inst) == 1e15 + 1
    r = eb.solve(inst, method, time_limit=5, threads=1)
    assert r.value == 1e15 + 1 and r.status == "optimal"


def test_a_tie_but_for_rounding_keeps_the_solvers_answer():
    # 0.1 + 0.2 is 0.30000000000000004: on the objective's grid (tenths) the start ties with CP-SAT's (2,)
    inst = KnapsackInstance.build([2], [[1], [1], [2]], [0.1, 0.2, 0.3])
    r = eb.solve(inst, "cpsat", time_limit=5, threads=1)
    assert r.status == "optimal" and r.value == pytest.approx(0.3) and "note" not in r.info


@pytest.mark.parametrize("method", MAPPING_EXACT)
def test_mapping_start_a_unit_above_the_bound_at_1e15_is_not_optimal(method):
    # Min-Min's start (0, 1) is 1e15 + 999; the optimum (1, 0) is 1e15 + 1, the lower bound's value:
    # within 1e-12 of each other, which the start's test took for a tie
    inst = MappingInstance.build([[1e15, 1e15 + 1], [1e15 + 1, 1e15 + 999]])
    assert inst.lower_bound() == _brute_mapping(inst) == 1e15 + 1
    r = eb.solve(inst, method, time_limit=5, threads=1)
    assert r.value == 1e15 + 1 and r.status == "optimal" and r.bound == 1e15 + 1


@pytest.mark.parametrize("time_limit", [0.001, 0.01])
def test_bnp_bound_on_data_floored_to_zero(time_limit):
    # a scale of 0.5 floors 1e-9, 0.1 and 1 to 0: every task takes 0 on a machine ready at 0, which no
    # instance holds; the bound of those arrays used to be built as an instance and raised InstanceError
    inst = MappingInstance.build([[2.0**40, 1.0], [1e-09, 1.0], [0.1, 0.1], [0.1, 1e15], [1.0, 1e15]], [0.0, 0.0])
    r = eb.solve(inst, "bnp", time_limit=time_limit, threads=1)
    assert r.value == pytest.approx(_brute_mapping(inst), rel=0, abs=0)
    assert r.bound <= r.value and r.status in ("optimal", "feasible")


@pytest.mark.parametrize("method", ["cpsat", "milp-cbc", "milp-highs", "mkp-bb"])
def test_knapsack_never_worse_than_its_start(method):
    # a profit of 1 beside 1e15 + 1 rounds to 0 on the integer grid: CP-SAT's optimum of the rounded data,
    # (3,), is a unit below the greedy start (every weight 0: take all), which must be returned
    inst = KnapsackInstance.build([7], [[0], [0], [0], [0]], [0.0, 1.0, 0.0, 1e15 + 1])
    r = eb.solve(inst, method, time_limit=5, threads=1)
    assert r.value == 1e15 + 2
    assert r.bound is None or r.bound >= r.value


def test_against_meets_only_within_rounding():
    assert against(1e15 + 999, 1e15 + 1, "min") == "open"       # 1e-12 of the value, far from rounding
    assert against(1e15 + 1, 1e15 + 999, "max") == "open"
    assert against(1.0, 1.0 + MEETS_RTOL / 2, "max") == "meets"
    assert against(1.0 + 1e-13, 1.0, "max") == "meets"           # beyond the bound by float noise
    assert against(1.0 + 1e-9, 1.0, "max") == "refuted"
    assert against(5e-13, 1e-12, "max") == "open"                 # relative: small objectives too
