"""Literature heuristics of the epochs family (vector bin packing, beyond
the seeds): first fit decreasing under three size measures and the
bin-centric heuristics of Panigrahy et al. 2011."""
import numpy as np
import pytest

from epochbench.heuristics.vbp import bin_centric, first_fit_decreasing
from epochbench.instances import EpochsInstance
from epochbench.instances.registry import names, solve

NEW = ["ffd-sum", "ffd-max", "ffd-l2", "bc-dot", "bc-l2"]


def test_registered_as_epochs_heuristics():
    assert set(NEW) <= set(names("epochs", "heuristic"))


def test_golden_one_resource():
    inst = EpochsInstance.build([10], [[6], [5], [5], [4]], meta={"name": "g"})
    assert first_fit_decreasing(inst) == [[0, 3], [1, 2]]
    assert bin_centric(inst, "dot") == [[0, 3], [1, 2]]


def test_golden_two_resources_size_measure_matters():
    # normalised: j0 (.9,.1) j1 (.5,.5) j2 (.6,0) j3 (.1,.9) j4 (.4,.4)
    inst = EpochsInstance.build([10, 10], [[9, 1], [5, 5], [6, 0], [1, 9], [4, 4]], meta={"name": "g2"})
    # sum order j0 j1 j3 j4 j2: j3 joins j0, j4 joins j1, j2 alone
    assert first_fit_decreasing(inst, "sum") == [[0, 3], [1, 4], [2]]
    # max order j0 j3 j2 j1 j4: j2 opens bin 1 before j1, so j4 joins j2 and j1 is left alone
    assert first_fit_decreasing(inst, "max") == [[0, 3], [2, 4], [1]]
    # dot with r = (1, 1) takes the largest sum first (j0, then j3 fills it); l2 the closest to r: j1, then j4
    assert bin_centric(inst, "dot") == [[0, 3], [1, 4], [2]]
    assert bin_centric(inst, "l2") == [[1, 4], [0, 3], [2]]


def _random(seed: int) -> EpochsInstance:
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(1, 5)), int(rng.integers(1, 40))
    cap = rng.integers(5, 40, size=k)
    dem = np.minimum(cap, rng.integers(0, 25, size=(n, k)))
    return EpochsInstance.build(cap, dem, meta={"name": f"r{seed}"})


@pytest.mark.parametrize("seed", range(25))
def test_feasible_above_the_volume_bound_and_bins_closed_only_when_full(seed):
    inst = _random(seed)
    for m in NEW:
        r = solve(inst, m)                                   # the family's checker runs inside
        assert len(r.decision) >= inst.lower_bound()
    for score in ("dot", "l2"):
        bins = bin_centric(inst, score)
        for b, content in enumerate(bins):                   # nothing packed later fitted when b was closed
            free = inst.capacity - inst.demand[content].sum(axis=0)
            later = [j for other in bins[b + 1:] for j in other]
            assert not any((inst.demand[j] <= free).all() for j in later)


def test_bad_option_is_one_clear_error():
    inst = _random(1)
    with pytest.raises(ValueError, match="size must be one of"):
        first_fit_decreasing(inst, "volume")
    with pytest.raises(ValueError, match="score must be"):
        bin_centric(inst, "cosine")


# -- rules a one-token change broke unseen (mutation review, round 6) --
def test_golden_l2_orders_by_euclidean_norm_not_sum():
    # sums: j1 1.2 > j0 1.0 > j2 0.8; norms: j0 1.0 > j1 0.85 > j2 0.57
    inst = EpochsInstance.build([10, 10], [[10, 0], [6, 6], [4, 4]], meta={"name": "g3"})
    assert first_fit_decreasing(inst, "sum") == [[1, 2], [0]]
    assert first_fit_decreasing(inst, "l2") == [[0], [1, 2]]


def test_golden_bin_centric_scores_against_what_is_left():
    # after j0 (20, 90) the bin has r = (0.8, 0.1): dot prefers j2 (5, 1): 0.041 over j1 (0, 10): 0.01
    # (against the full bin (1, 1) j1 would win); j1 then no longer fits
    inst = EpochsInstance.build([100, 100], [[20, 90], [0, 10], [5, 1]], meta={"name": "g4"})
    assert bin_centric(inst, "dot") == [[0, 2], [1]]


def _exact_bin_centric(inst: EpochsInstance, score: str) -> list[list[int]]:
    """Bin-centric packing with every score in rational arithmetic (the
    reference of the ties): the first of the exactly largest dot product
    d . r, or of the exactly smallest squared distance ||r - d||**2."""
    from fractions import Fraction
    cap = [int(c) for c in inst.capacity]
    left = list(range(inst.n))
    bins = []
    while left:
        free = list(cap)
        cur = []
        while True:
            cand = [j for j in left if all(int(inst.demand[j, k]) <= free[k] for k in range(inst.k))]
            if not cand:
                break
            if score == "dot":
                val = [sum(Fraction(int(inst.demand[j, k]) * free[k], cap[k] ** 2) for k in range(inst.k)) for j in cand]
            else:
                val = [-sum(Fraction(free[k] - int(inst.demand[j, k]), cap[k]) ** 2 for k in range(inst.k)) for j in cand]
            pick = cand[val.index(max(val))]
            cur.append(pick)
            left.remove(pick)
            free = [free[k] - int(inst.demand[pick, k]) for k in range(inst.k)]
        bins.append(cur)
    return bins


@pytest.mark.parametrize("seed", range(40))
def test_bin_centric_breaks_exact_ties_by_index(seed):
    """Scores equal in exact arithmetic tie, whatever their rounding: on
    capacities of 10 and 20 most steps have such ties (0.1 + 0.2 against
    0.3), and every pick is the first of the exactly best.  A BLAS
    matrix-vector product told such ties apart by rounding, differently by
    CPU (46 of 460 VBP and generated instances packed otherwise)."""
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(2, 6)), int(rng.integers(5, 40))
    cap = rng.choice([10, 20], size=k)
    dem = rng.integers(0, 8, size=(n, k))
    inst = EpochsInstance.build(cap, dem, meta={"name": f"t{seed}"})
    for score in ("dot", "l2"):
        assert bin_centric(inst, score) == _exact_bin_centric(inst, score), score


def test_bin_centric_tells_apart_scores_a_billionth_apart():
    """The tie tolerance is rounding (K^2 ulps), not a margin: on a capacity
    of 1e10, items of 5e9 and 5e9 + 1 score 0.5 and 0.5 + 1e-10, and the
    larger goes first."""
    inst = EpochsInstance.build([10**10], [[5 * 10**9], [5 * 10**9 + 1]], meta={"name": "near"})
    assert bin_centric(inst, "dot") == [[1], [0]]
    assert bin_centric(inst, "l2") == [[1], [0]]
