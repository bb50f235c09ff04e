"""License-knapsack rules that a one-token change broke unseen (mutation
review, round 7): a license without copies weighs infinitely, a job asking
for no critical license is picked first, equal ratios go in index order
(a stable sort), clusters are ordered by their first job, license_usage
counts only licenses with rho > 1, and from_farm leaves out and counts a
job no machine can run."""
import numpy as np

from epochbench.heuristics.knapsack import greedy_mkp, greedy_ratio, license_clusters
from epochbench.instances import farm
from epochbench.instances.knapsack import KnapsackInstance, from_farm, license_usage


def test_a_license_without_copies_weighs_infinitely_so_its_job_comes_last():
    """_surrogate: a critical license with b_l = 0 that a job asks for makes
    a-bar infinite, so that job is ordered last (not weighed 0).  Licenses
    0 (no copies), 1, 2 (one copy each).  J0 asks 0+1 (profit 100), J1 asks
    1+2 (profit 3), J2 asks 2 (profit 2).  Order: J2 (2/1), J1 (3/2), J0
    (inf weight).  J2 taken; J1 discarded, licenses 1 and 2 stop being
    critical, one re-sort; J0 discarded (no copy of license 0).  Were license
    0 weighed 0, J0 would come first, its discard would re-sort J1 ahead of
    J2 and the answer would be (1,)."""
    inst = KnapsackInstance.build([0, 1, 1], [[1, 1, 0], [0, 1, 1], [0, 0, 1]], [100, 3, 2])
    r = greedy_mkp(inst)
    assert r.decision == (2,)
    assert r.info == {"critical": 3, "discarded": 2, "resorts": 1}


def test_a_job_asking_for_no_critical_license_is_picked_first():
    """_order: a-bar = 0 (no critical license asked for) sorts first, and the
    decision is in pick order.  License 0 (1 copy, asked twice) is critical,
    license 1 (5 copies, asked once) is not: J2 (license 1 only, profit 1)
    is picked before J0 (profit 10); J1 is discarded."""
    inst = KnapsackInstance.build([1, 5], [[1, 0], [1, 0], [0, 1]], [10, 5, 1])
    r = greedy_mkp(inst)
    assert r.decision == (2, 0)
    assert r.info["discarded"] == 1


def test_equal_ratios_are_taken_in_index_order_among_many_jobs():
    """_order sorts stably (mergesort): with 20 identical jobs and 5 copies
    the first five indices are taken, in order (an unstable sort keeps the
    index order only on short arrays)."""
    inst = KnapsackInstance.build([5], [[1]] * 20, [1.0] * 20)
    assert greedy_mkp(inst).decision == (0, 1, 2, 3, 4)
    assert greedy_ratio(inst).decision == (0, 1, 2, 3, 4)


def test_clusters_are_ordered_by_their_first_job_not_by_license():
    """license_clusters: 'ordered by their first job'.  License 0 is asked
    for (twice) by job 1 only, license 1 by job 0 only: the components come
    out license-first as [[1], [0]] and must be sorted to [[0], [1]]."""
    inst = KnapsackInstance.build([1, 1], [[0, 2], [2, 0]], [1.0, 1.0])
    assert [c.tolist() for c in license_clusters(inst)] == [[0], [1]]


def test_license_usage_counts_only_licenses_with_rho_above_one():
    """license_usage over L_c = {rho_l > 1}: license 0 (1 copy, asked once,
    rho = 1) is not critical, license 1 (1 copy, asked twice) is.  Job 1
    uses the one copy of license 1: usage 1/1 = 1.0 (counting license 0 too
    would give 1/2)."""
    inst = KnapsackInstance.build([1, 1], [[1, 1], [0, 1]], [1.0, 1.0])
    assert license_usage(inst, [1]) == 1.0
    assert license_usage(inst, [0]) == 1.0
    assert license_usage(inst, []) == 0.0


def test_from_farm_leaves_out_a_job_no_machine_can_run_and_counts_it():
    """from_farm: items are the jobs asking for a critical license with
    c-bar > 0; one such job whose preference row is all zero is left out
    and counted in meta['no_machine']."""
    st = farm.generate_farm(np.random.default_rng(3), jobs=12, machines=4, licenses=3, ratio=(0.3, 0.4))
    crit = farm.license_rho(st.jobs.licenses, st.copies) > 1.0
    asks = np.nonzero(st.jobs.licenses[:, crit].any(axis=1))[0].tolist()
    assert len(asks) >= 2
    p = np.ones((st.n, st.m))
    z = asks[0]
    p[z] = 0.0
    k = from_farm(st, p=p)
    assert k.meta["jobs"] == [i for i in asks if i != z]
    assert k.meta["no_machine"] == 1
    assert k.n == len(asks) - 1 and bool(np.all(k.profit > 0))
