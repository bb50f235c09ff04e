"""Bin-elimination LNS for the epochs family (issue 20.1, beyond the
seeds): checked packings never worse than the start, the combinatorial
bound, a repair that empties a bin when the jobs of k bins fit in k - 1."""
from __future__ import annotations

import numpy as np
import pytest

from epochbench.exact import epochs_lns
from epochbench.exact.epochs_lns import _repack, lns
from epochbench.exact.packing import ffd_bins
from epochbench.exact.starts import best_start
from epochbench.instances.packing import EpochsInstance, check_epochs
from epochbench.instances.registry import get, solve

from test_epochs_cg import _s3  # noqa: E402  (tests/ is on the path: FFD 11 bins, bound and ffd-l2 10)


def random_epochs(n: int, seed: int) -> EpochsInstance:
    rng = np.random.default_rng(seed)
    return EpochsInstance.build(np.full(3, 100), rng.integers(10, 40, size=(n, 3)), meta={"name": f"r{n}-{seed}"})


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lns_is_checked_never_worse_than_its_start_and_bounded(seed):
    inst = random_epochs(60, seed)
    r = solve(inst, "lns", time_limit=1.0, threads=1, seed=seed)            # the family's checker passed it
    start = best_start(inst, budget=1.0)
    assert r.value <= min(len(start.decision), len(ffd_bins(inst)))
    assert r.bound <= r.value and (r.status == "optimal") == (r.value <= r.bound)
    assert sorted(j for b in r.decision for j in b) == list(range(inst.n))
    cold = solve(inst, "lns", time_limit=0.5, threads=1, warm=False)
    assert cold.info["start"] == "ffd" and cold.value <= len(ffd_bins(inst))


def test_a_repair_empties_the_target_bin_when_the_jobs_fit_in_one_bin_fewer():
    cap = np.array([10, 10])
    dem = np.array([[5, 1], [5, 1], [1, 5], [1, 5], [4, 4], [4, 4]])
    # now: bin 0 = {4}, bin 1 = {0, 2}, bin 2 = {1, 3, 5}; all six fit in two bins ({0,1}+..., ...)
    jobs, where = [4, 0, 2, 1, 3, 5], [0, 1, 1, 2, 2, 2]
    weight = np.ones(6, dtype=np.int64)
    new = _repack(dem, cap, jobs, where, 3, weight, deadline=__import__("time").perf_counter() + 10, threads=1,
                  seed=0)
    assert new is not None and 0 not in new                                   # bin 0 ends empty
    for b in (1, 2):
        assert (dem[[j for j, nb in zip(jobs, new) if nb == b]].sum(axis=0) <= cap).all()


def test_lns_is_an_exact_kind_method_of_the_epochs_family():
    m = get("epochs", "lns")
    assert m.exact and getattr(m.func, "warm_start", False)
    r = lns(random_epochs(20, 4), time_limit=0.5)
    assert r.info["repairs"] >= 0 and r.info["lower_bound"] >= 1


@pytest.mark.parametrize("params, message", [
    ({"max_bins": 0}, "'max_bins' must be an integer >= 3"),   # failed in numpy after the start
    ({"bins": 1}, "'bins' must be an integer >= 2"),           # was raised to 2 without a word
    ({"bins": -1}, "'bins' must be an integer >= 2"),
    ({"bins": 2.5}, "'bins' must be an integer >= 2"),
    ({"repair_s": 0}, "'repair_s' must be a finite number > 0"),  # repairs had no time
    ({"repair_s": float("inf")}, "'repair_s' must be a finite number > 0"),
])
def test_lns_refuses_bad_parameters_in_one_line(params, message):
    inst = random_epochs(12, 1)
    for call in (lambda: lns(inst, time_limit=0.5, **params), lambda: solve(inst, "lns", time_limit=0.5, **params)):
        with pytest.raises(ValueError, match=message) as err:
            call()
        assert "\n" not in str(err.value)
    assert solve(inst, "lns", time_limit=0.5, threads=1, bins=2, max_bins=2).status in ("optimal", "feasible")


# -- rules a one-token change broke unseen (mutation review, round 5) --
def test_failed_repairs_target_the_emptiest_bin_grow_the_neighbourhood_and_prove_nothing(monkeypatch):
    """Every repair fails: the first one's neighbourhood holds the emptiest
    bin of the start, each PATIENCE failures add a bin up to max_bins, and
    FFD's 11 bins against the bound 10 stay feasible, not optimal."""
    inst = _s3()
    start = ffd_bins(inst)
    calls = []

    def no_repair(dem, cap, jobs, where, k, weight, deadline, threads, seed):
        calls.append((list(jobs), list(where), k, weight))
        return None

    monkeypatch.setattr(epochs_lns, "_repack", no_repair)
    r = epochs_lns.lns(inst, time_limit=0.5, warm=False, bins=2, max_bins=4)
    check_epochs(inst, r.decision)
    assert r.value == len(start) == 11 and r.info["lower_bound"] == 10
    assert r.status == "feasible" and r.bound == 10.0
    jobs, where, k, weight = calls[0]                      # bin 0 of the first repair: the emptiest bin
    fill = [int(weight[b].sum()) for b in start]
    assert sorted(j for j, w in zip(jobs, where) if w == 0) == sorted(start[int(np.argmin(fill))])
    ks = [c[2] for c in calls]
    P = epochs_lns.PATIENCE
    assert len(ks) > 3 * P and ks[:P] == [2] * P and ks[P:2 * P] == [3] * P and max(ks) == 4


def test_lns_uses_the_warm_start_even_without_time_for_repairs():
    inst = _s3()
    heur = best_start(inst, budget=0.0)
    r = lns(inst, time_limit=0.0, threads=1)
    check_epochs(inst, r.decision)
    assert r.info["start"] == heur.method and r.value == 10.0 and r.status == "optimal"
