"""``cg``, the pattern model of the epochs family by column generation
(issue 20.1, beyond the seeds): brute force on small instances, the Farley
bound never above the optimum and equal to the enumerated Gilmore-Gomory
bound once converged, the pricing against exhaustive enumeration, checked
packings never worse than the start, and known optima of the VBP data."""
from __future__ import annotations

import csv
import itertools
import os
import time
from pathlib import Path

import numpy as np
import pytest

from epochbench.exact import epochs_cg as cg
from epochbench.exact import packing as ep
from epochbench.exact.starts import START_HEURISTICS, best_start
from epochbench.instances.generators import load_vbp
from epochbench.instances.packing import EpochsInstance, check_epochs
from epochbench.instances.registry import get, solve

from test_exact_packing import brute_bins  # noqa: E402  (tests/ is on the path: no package)

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("EPOCHBENCH_DATA") or ROOT.parent / "shared" / "data")
VBP = DATA / "vbp"


def small(seed: int, n_max: int = 9) -> EpochsInstance:
    """A random instance brute force can solve (zeros and duplicate rows included)."""
    rng = np.random.default_rng(7000 + seed)
    k, n = int(rng.integers(1, 4)), int(rng.integers(2, n_max))
    cap = rng.integers(6, 16, size=k)
    dem = np.minimum(rng.integers(0, 10, size=(n, k)), cap)
    if n > 3:
        dem[1] = dem[0]                       # a type of multiplicity 2
    return EpochsInstance.build(cap, dem, meta={"name": f"cg{seed}"})


def uniform(n: int, seed: int) -> EpochsInstance:
    rng = np.random.default_rng(seed)
    return EpochsInstance.build(np.full(3, 100), rng.integers(10, 45, size=(n, 3)), meta={"name": f"u{n}-{seed}"})


def all_patterns(dem, cap, copies) -> list[np.ndarray]:
    """Every count vector that fits in one bin."""
    out = []
    for count in itertools.product(*[range(int(c) + 1) for c in copies]):
        count = np.array(count, dtype=np.int64)
        if np.all(count @ dem <= cap):
            out.append(count)
    return out


def max_pattern(dem, cap, copies, y) -> float:
    """The most valuable pattern under ``y`` by enumeration."""
    return max(float(y @ p) for p in all_patterns(dem, cap, copies))


# ---- the whole method ------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(30))
def test_cg_matches_brute_force_and_its_bound_is_valid(seed):
    inst = small(seed)
    best = brute_bins(inst)
    r = solve(inst, "cg", time_limit=10.0, threads=1)            # checked by the family's checker
    check_epochs(inst, r.decision)
    assert r.status == "optimal" and r.value == best == r.bound, (r, best)
    assert sorted(j for b in r.decision for j in b) == list(range(inst.n))
    cold = cg.column_generation(inst, time_limit=10.0, warm=False, smoothing=0.0)
    assert cold.value == best and cold.status == "optimal" and cold.info["start"] == "ffd"


@pytest.mark.parametrize("seed", range(25))
def test_the_pattern_bound_is_the_gilmore_gomory_bound_once_converged(seed):
    """Started from FFD with the combinatorial bound below the optimum, the
    column generation's rounded Farley bound never exceeds the optimum and,
    when the LP converged, equals the bound of the LP over every pattern."""
    inst = small(100 + seed, n_max=11)
    best = brute_bins(inst)
    r = cg.column_generation(inst, time_limit=10.0, warm=False)
    assert r.bound <= best and r.value >= best
    pb = r.info["pattern_bound"]
    if pb is not None:
        assert pb <= best
        if r.info["converged"]:
            assert pb == ep.pattern_lower_bound(inst)


def test_the_hard_vbp_case_is_proven_by_the_pattern_bound():
    """Seven jobs where volume, clique and L2 say 2 but 3 bins are needed."""
    cap = np.array([10, 10])
    dem = np.array([[6, 1], [1, 6], [5, 5], [4, 4], [6, 1], [1, 6], [3, 3]])
    inst = EpochsInstance.build(cap, dem)
    best = brute_bins(inst)
    r = solve(inst, "cg", time_limit=10.0)
    assert r.value == best and r.status == "optimal"


@pytest.mark.parametrize("limit", [0.0, 0.05, 1.0])
def test_never_worse_than_the_best_heuristic_under_any_time_limit(limit):
    """The start heuristics run within a tenth of the limit, the first one
    always (as for every exact method): below a second, on a loaded machine,
    only the first is sure to have run."""
    inst = uniform(150, 3)
    names = START_HEURISTICS["epochs"][:1] if limit < 1 else None
    ref = len(best_start(inst, budget=10.0, names=names).decision)
    r = solve(inst, "cg", time_limit=limit, threads=1)
    assert r.value <= ref and r.decision and r.status in ("optimal", "feasible")
    assert r.bound <= r.value and (r.status == "optimal") == (r.bound == r.value)
    assert r.bound >= ep.epochs_lower_bound(inst, ep.conflict_clique(ep.conflicts(inst), ep.ffd_order(inst)))


def test_registered_as_an_exact_method_with_a_warm_start():
    m = get("epochs", "cg")
    assert m.exact and m.func.warm_start and callable(m.func.warm_up)
    m.func.warm_up()
    tiny = EpochsInstance.build([10, 10], [[4, 2], [4, 4], [4, 9], [9, 4], [9, 7], [5, 5], [9, 5]])
    r = cg.column_generation(tiny, time_limit=10.0, warm=False)    # the warm-up's instance exercises the pricing
    assert r.info["bound_kind"] == "pattern" and r.info["exact_pricings"] >= 1 and r.value == 6 == r.bound
    assert solve(EpochsInstance.build([5], np.zeros((0, 1))), "cg", time_limit=1.0).value == 0


@pytest.mark.parametrize("bad", [{"time_limit": -1.0}, {"time_limit": True}, {"time_limit": 1.0, "smoothing": 1.0}])
def test_bad_arguments_are_refused(bad):
    with pytest.raises(ValueError, match="time_limit|smoothing"):
        cg.column_generation(small(0), **bad)


# ---- the pieces ---------------------------------------------------------------------------
def test_job_types_group_identical_demands():
    inst = EpochsInstance.build([10, 10], [[1, 2], [3, 4], [1, 2], [0, 0], [3, 4], [1, 2]])
    dem, mult, jobs = cg.job_types(inst)
    assert dem.tolist() == [[1, 2], [3, 4], [0, 0]] and mult.tolist() == [3, 2, 1]
    assert jobs == [[0, 2, 5], [1, 4], [3]]
    assert cg.max_copies(dem, mult, np.array([10, 10])).tolist() == [3, 2, 1]
    assert cg.max_copies(dem, np.array([9, 9, 9]), np.array([10, 10])).tolist() == [5, 2, 9]


@pytest.mark.parametrize("seed", range(20))
def test_pricing_matches_enumeration(seed):
    rng = np.random.default_rng(500 + seed)
    t, k = int(rng.integers(2, 7)), int(rng.integers(1, 4))
    cap = rng.integers(8, 20, size=k)
    dem = np.minimum(rng.integers(0, 9, size=(t, k)), cap)
    mult = rng.integers(1, 4, size=t)
    copies = cg.max_copies(dem, mult, cap)
    y = rng.random(t) * rng.integers(0, 2, size=t)             # some duals zero
    best = max_pattern(dem, cap, copies, y)
    if best == 0:
        return
    for p in cg.greedy_patterns(dem, cap, copies, y / best * 0.999):
        assert np.all(p @ dem <= cap) and np.all(p <= copies) and y / best * 0.999 @ p > 1
    # just below the optimum: the search finds a pattern worth more; just above: proves there is none
    upper, pats, done = cg.exact_patterns(dem, cap, copies, y, time.perf_counter() + 10, above=best * (1 - 1e-6))
    assert pats and upper >= best * (1 - 1e-6)
    for pat in pats:
        assert np.all(pat @ dem <= cap) and np.all(pat <= copies) and y @ pat > best * (1 - 1e-6)
    # every pattern worth more than half the optimum, when there are few enough to collect
    half = [p for p in all_patterns(dem, cap, copies) if y @ p > best / 2 * (1 + 1e-9)]
    upper, pats, done = cg.exact_patterns(dem, cap, copies, y, time.perf_counter() + 10, above=best / 2,
                                          most=len(half) + 1)
    assert done and upper >= best and {p.tobytes() for p in pats} <= {p.tobytes() for p in half}
    upper, pats, done = cg.exact_patterns(dem, cap, copies, y, time.perf_counter() + 10, above=best * (1 + 1e-6))
    assert done and pats == [] and upper >= best


def test_dominance_pairs_are_dominance():
    dem = np.array([[5, 5], [3, 4], [3, 4], [6, 1], [1, 1]])
    pairs = cg.dominance_pairs(dem, most=10)
    assert {tuple(p) for p in pairs.tolist()} == {(0, 1), (0, 2), (1, 2), (2, 1), (0, 4), (1, 4), (2, 4), (3, 4)}
    assert len(cg.dominance_pairs(dem, most=1)) == 3            # type 0 has no dominator


def test_first_fit_and_patterns_to_bins_give_packings():
    inst = uniform(40, 9)
    dem, mult, jobs = cg.job_types(inst)
    cap = inst.capacity.astype(np.int64)
    bins = cg._first_fit([], mult.copy(), dem, cap)
    assert all(np.all(b @ dem <= cap) for b in bins) and np.array_equal(sum(bins), mult)
    packing = cg._patterns_to_bins(bins + [bins[0]], jobs)     # a surplus bin is dropped
    check_epochs(inst, packing)
    assert len(packing) == len(bins)


# ---- known optima of the VBP data ------------------------------------------------------------
NEEDS_DATA = pytest.mark.skipif(not (VBP / "Panigrahy_summary_known.csv").exists(),
                                reason=f"VBP data not found under {VBP} (set EPOCHBENCH_DATA)")
#: n = 40 instances the heuristics miss by a bin, whose optimum cg reaches and proves
VBP_CASES = ["class1_40_3_2", "class1_40_5_4", "class7_40_5_2", "class1_20_5_6"]


@NEEDS_DATA
@pytest.mark.parametrize("name", VBP_CASES)
def test_vbp_known_optimum(name):
    with open(VBP / "Panigrahy_summary_known.csv", newline="") as fh:
        opt = next(int(r["OPT"]) for r in csv.DictReader(fh, delimiter="\t") if r["instance_name"] == name)
    inst = load_vbp(VBP / name.split("_")[0] / f"{name}.vbp")
    r = solve(inst, "cg", time_limit=20.0, threads=1)
    assert r.value == opt and r.status == "optimal" and r.bound == opt, r.info


# -- rules a one-token change broke unseen (mutation review, round 5) --
def _s3():
    """FFD: 11 bins; the combinatorial bound and ffd-l2 (the only start
    heuristic a zero budget runs): 10."""
    rng = np.random.default_rng(3)
    return EpochsInstance.build(np.full(3, 100), rng.integers(10, 60, size=(int(rng.integers(8, 30)), 3)),
                                meta={"name": "s3"})


def test_without_time_the_status_is_optimal_only_when_the_packing_meets_the_bound():
    """No time for column generation: FFD's 6 or more bins against the
    combinatorial bound 5 (the optimum, 6, needs the pattern bound):
    feasible, bound 5."""
    tiny = EpochsInstance.build([10, 10], [[4, 2], [4, 4], [4, 9], [9, 4], [9, 7], [5, 5], [9, 5]],
                                meta={"name": "needs-patterns"})
    r = cg.column_generation(tiny, time_limit=0.0, warm=False)
    check_epochs(tiny, r.decision)
    assert r.info["lower_bound"] == 5 and r.value >= 6
    assert r.status == "feasible" and r.bound == 5.0
    full = cg.column_generation(tiny, time_limit=10.0, warm=False)
    assert full.status == "optimal" and full.value == full.bound == 6.0


def test_the_warm_start_is_used_even_without_time_for_column_generation():
    inst = _s3()
    heur = best_start(inst, budget=0.0)
    assert len(heur.decision) == 10 < len(ep.ffd_bins(inst)) == 11
    r = cg.column_generation(inst, time_limit=0.0)
    check_epochs(inst, r.decision)
    assert r.info["start"] == heur.method and r.value == 10.0 and r.status == "optimal"
    cold = cg.column_generation(inst, time_limit=0.0, warm=False)
    assert cold.info["start"] == "ffd" and cold.value == 11.0 and cold.status == "feasible"


@pytest.mark.parametrize("seed", range(3))
def test_an_unfinished_pricing_bounds_every_pattern_with_its_open_part(seed):
    """A pricing stopped after its first chunk (deadline passed, one pattern
    wanted) on 60 types of near-equal value density: its upper bound holds
    the open subtree's bound too, so it is at least the value of any
    pattern (a MILP's best after 50 nodes), which the patterns found alone
    miss."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    rng = np.random.default_rng(seed)
    dem, cap, copies = rng.integers(5, 40, size=(60, 4)), np.full(4, 100), rng.integers(1, 6, size=60)
    y = (1 + 0.05 * rng.random(60)) * dem.sum(axis=1) / 400
    x = milp(-y, constraints=LinearConstraint(dem.T, 0, cap), integrality=np.ones(60), bounds=Bounds(0, copies),
             options={"node_limit": 50}).x                  # a good pattern (deterministic work)
    assert np.all(dem.T @ np.round(x) <= cap)
    best = float(y @ np.round(x))
    upper, counts, done = cg.exact_patterns(dem, cap, copies, y, time.perf_counter() - 1, above=1.0, most=1)
    assert not done and len(counts) <= 1
    assert upper >= best - 1e-9
