"""Rules of the result type, the input readers and scoring that a one-token
change broke unseen (mutation review, round 7): the gap formula on negative
references and infinite values, the int64 edge, a vector's shape, an
instance file's default name and its required fields, ``better``'s absolute
floor, and mapping's ``dual_bound`` keeping its best iterate."""
import json
import math

import numpy as np
import pytest

from epochbench.instances import InstanceError
from epochbench.instances.core import float_vector, gap, int_matrix
from epochbench.instances.io import load_instance
from epochbench.instances.mapping import dual_bound
from epochbench.scoring import TOL, better


def test_gap_divides_by_the_magnitude_of_a_negative_reference():
    """Rule: gap = |bound - value| / |bound|, never negative, also when the
    reference is negative (a cost offset or a signed objective): |-3 - -2| / |-2|
    = 0.5, and |-1 - -2| / |-2| = 0.5 on the other side."""
    assert gap(-3.0, -2.0) == 0.5
    assert gap(-1.0, -2.0) == 0.5
    assert gap(-2.0, -4.0) == 0.5


def test_gap_is_nan_when_the_value_is_infinite():
    """Rule: NaN when either side is missing, NaN or infinite ("no reference,
    no number"): an infinite value is not a gap of inf."""
    assert math.isnan(gap(math.inf, 1.0))
    assert math.isnan(gap(-math.inf, 1.0))
    assert math.isnan(gap(1.0, math.inf))
    assert math.isnan(gap(math.nan, 1.0))


def test_int_matrix_refuses_the_float_2_to_the_63():
    """Rule: floats beyond the int64 range are refused, never wrapped.  The
    float 2.0**63 is the first value past INT64_MAX (2**63 - 1); cast to
    int64 it would wrap to -2**63, which ``allow_negative`` would accept."""
    for allow in (False, True):
        with pytest.raises(InstanceError, match="beyond the int64 range"):
            int_matrix([2.0 ** 63], "demand", "x.json", ndim=1, allow_negative=allow)
        with pytest.raises(InstanceError, match="beyond the int64 range"):
            int_matrix(np.array([1.0, 2.0 ** 63]), "demand", "x.json", ndim=1, allow_negative=allow)
    # the largest float below 2**63 is an int64 and reads exactly
    below = np.nextafter(2.0 ** 63, 0.0)
    assert int(int_matrix([below], "demand", "x.json", ndim=1)[0]) == int(below)


def test_float_vector_refuses_a_matrix_of_n_entries():
    """Rule: float_vector wants shape (n,): a 1 x n matrix (or n x 1) holds
    n numbers but is not a vector of n and is refused, naming the field."""
    for bad in ([[1.0, 2.0]], [[1.0], [2.0]]):
        with pytest.raises(InstanceError, match="'profit' must have length 2"):
            float_vector(bad, "profit", "y.json", 2)
    assert float_vector([1.0, 2.0], "profit", "y.json", 2).shape == (2,)


def test_an_instance_file_without_meta_name_is_named_after_its_file(tmp_path):
    """Rule (load_instance): a file without ``meta.name`` is named after its
    file (``abc.json``: ``abc``); one with a name keeps it."""
    body = {"kind": "knapsack", "capacity": [10], "weights": [[3], [4]], "profit": [1.0, 2.0]}
    (tmp_path / "abc.json").write_text(json.dumps(body))
    assert load_instance(tmp_path / "abc.json").name == "abc"
    (tmp_path / "meta_no_name.json").write_text(json.dumps({**body, "meta": {"seed": 3}}))
    inst = load_instance(tmp_path / "meta_no_name.json")
    assert inst.name == "meta_no_name" and inst.meta["seed"] == 3
    (tmp_path / "named.json").write_text(json.dumps({**body, "meta": {"name": "given"}}))
    assert load_instance(tmp_path / "named.json").name == "given"


def test_a_required_field_given_as_null_is_missing(tmp_path):
    """Rule (check_fields): ``null`` is accepted only for fields not in
    ``required``; a required field written as ``null`` is reported as
    missing, like an absent one, not as a shape error further on."""
    body = {"kind": "knapsack", "capacity": None, "weights": [[3], [4]], "profit": [1.0, 2.0]}
    (tmp_path / "k.json").write_text(json.dumps(body))
    with pytest.raises(InstanceError, match=r"k\.json: field 'capacity' missing"):
        load_instance(tmp_path / "k.json")


def test_better_has_an_absolute_floor_of_tol_below_magnitude_1():
    """Rule: ``a`` is better than ``b`` only beyond TOL * max(1, |b|): for
    |b| < 1 the slack is TOL absolute (1e-6), not TOL * |b|, so 0.5 + 8e-7 is
    not better than 0.5 (max) and 0.5 - 8e-7 is not better (min); beyond the
    floor it is."""
    assert TOL == 1e-6
    assert not better(0.5 + 8e-7, 0.5, "max")
    assert not better(0.5 - 8e-7, 0.5, "min")
    assert better(0.5 + 2e-6, 0.5, "max")
    assert better(0.5 - 2e-6, 0.5, "min")
    # relative above magnitude 1: 1000 + 5e-4 is within 1e-6 * 1000
    assert not better(1000 + 5e-4, 1000.0, "max") and better(1000 + 2e-3, 1000.0, "max")


def test_dual_bound_is_the_best_of_its_iterates_not_the_last():
    """Rule: dual_bound = max over the tried weights w of sum_i min_j w_j etc[i, j];
    the first w is uniform, so on identical machines (where uniform w is
    optimal) the bound is the LP value total work / m exactly, and no later
    step may lower it.  Each value stays a valid lower bound (<= the
    optimum makespan)."""
    assert dual_bound(np.array([[1.0, 1.0]])) == 0.5                  # one task of 1 on 2 machines
    assert dual_bound(np.array([[2.0, 2.0], [2.0, 2.0]])) == 2.0      # optimum makespan 2
    assert dual_bound(np.array([[3.0, 3.0, 3.0]] * 3)) == pytest.approx(3.0, rel=1e-12)
    rng = np.random.default_rng(0)
    etc = rng.uniform(1, 10, size=(7, 3))
    assert dual_bound(etc) >= etc.min(axis=1).sum() / 3 - 1e-12     # at least the uniform start
    assert dual_bound(etc) >= dual_bound(etc, steps=5) - 1e-12       # more steps never lower it
