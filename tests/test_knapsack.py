"""The knapsack family: instances, OR-Library loaders, greedy MKP, exact models ([capannini2007] 4.2)."""
import itertools
import json

import numpy as np
import pytest

from epochbench.cli import main
from epochbench.exact.knapsack import as_packing
from epochbench.heuristics.knapsack import critical_licenses, greedy_mkp, greedy_ratio, license_clusters
from epochbench.instances import InfeasibleSolution, InstanceError, load_instance, save_instance
from epochbench.instances.data import data_root
from epochbench.instances.generators import generate
from epochbench.instances.knapsack import (KnapsackInstance, check_knapsack, license_usage, load_mknap1, load_mknapcb,
                                read_mkcbres)
from epochbench.instances.registry import solve

ORLIB = data_root() / "orlib"
EXACT = ("cpsat", "milp-highs", "milp-cbc", "mkp-bb")


def need(name):
    path = ORLIB / name
    if not path.exists():
        pytest.skip(f"{path} absent (OR-Library data; set EPOCHBENCH_DATA)")
    return path


def brute_force(inst):
    best = 0.0
    for r in range(inst.n + 1):
        for sel in itertools.combinations(range(inst.n), r):
            if np.all(inst.weights[list(sel)].sum(axis=0) <= inst.capacity):
                best = max(best, inst.value(sel))
    return best


# ---- instances and checker ---------------------------------------------------------------
def test_build_validates_and_names_the_field():
    with pytest.raises(InstanceError, match="'profit' has a negative"):
        KnapsackInstance.build([2], [[1]], [-1.0])
    with pytest.raises(InstanceError, match="'weights' has 2 licenses"):
        KnapsackInstance.build([2], [[1, 1]], [1.0])
    with pytest.raises(InstanceError, match="'weights' has a negative"):
        KnapsackInstance.build([2], [[-1]], [1.0])
    with pytest.raises(InstanceError, match="'profit' must have length 2"):
        KnapsackInstance.build([2], [[1], [1]], [1.0])
    with pytest.raises(InstanceError, match="field 'weights' missing"):
        KnapsackInstance.from_dict({"kind": "knapsack", "capacity": [1], "profit": []}, "f.json")
    assert KnapsackInstance.build([3, 1], [], []).n == 0


def test_json_round_trip(tmp_path):
    inst = generate("mkp", n=7, k=3, count=1)[0]
    save_instance(inst, tmp_path / "x.json")
    back = load_instance(tmp_path / "x.json")
    assert back.kind == "knapsack" and back.name == inst.name
    assert np.array_equal(back.weights, inst.weights) and np.array_equal(back.profit, inst.profit)
    d = json.loads((tmp_path / "x.json").read_text())
    assert set(d) == {"kind", "capacity", "weights", "profit", "meta"}


def test_checker_rejects_infeasible_selections():
    inst = KnapsackInstance.build([2, 1], [[1, 1], [1, 0], [1, 1]], [3.0, 2.0, 1.0], {"name": "t"})
    assert check_knapsack(inst, [1, 0]) == (1, 0)
    with pytest.raises(InfeasibleSolution, match="license 1 over-committed"):
        check_knapsack(inst, [0, 2])
    with pytest.raises(InfeasibleSolution, match="twice"):
        check_knapsack(inst, [1, 1])
    with pytest.raises(InfeasibleSolution, match="outside"):
        check_knapsack(inst, [3])
    assert license_usage(inst, [0, 1]) == 1.0  # license 0 (rho 3/2) fully used


# ---- generators -----------------------------------------------------------------------------
def test_random_mkp_construction():
    for corr in ("uncorrelated", "correlated"):
        inst = generate("mkp", n=30, k=4, tightness=0.25, correlation=corr, count=1, seed=2)[0]
        assert np.array_equal(inst.capacity, np.floor(0.25 * inst.weights.sum(axis=0)).astype(int))
        assert inst.weights.min() >= 1 and inst.weights.max() <= 1000
        if corr == "correlated":
            q = (inst.profit - inst.weights.sum(axis=1) / 4) / 500
            assert np.all((q > -0.01) & (q < 1.01))


def test_farm_mkp_items_ask_for_critical_licenses():
    for inst in generate("farm-mkp", n=250, count=2, seed=1):
        crit = np.zeros(inst.k, dtype=bool)
        crit[inst.meta["critical"]] = True
        assert crit.any() and np.all(inst.weights[:, crit].sum(axis=1) >= 1)
        assert np.all(inst.profit > 0) and set(np.unique(inst.weights)) <= {0, 1}
        assert np.array_equal(critical_licenses(inst), crit)  # the items carry every request of L_c
        assert inst.k == 40 and len(inst.meta["jobs"]) == inst.n


# ---- OR-Library -----------------------------------------------------------------------------
def test_the_readmes_account_of_greedy_mkp_beside_greedy_ratio():
    """Every license critical at the start on both sets; on mknapcb1 all 30
    re-order (65 times) and no pick changes; on the default farm-mkp the
    chosen jobs differ on 8 of 20 (the README had it that licenses stayed
    critical on mknapcb1 and were not all critical on farm-mkp)."""
    farm = generate("farm-mkp", count=20, seed=1)
    assert all(critical_licenses(i).all() for i in farm)
    assert sum(set(greedy_mkp(i).decision) != set(greedy_ratio(i).decision) for i in farm) == 8
    cb = load_mknapcb(need("mknapcb1.txt"))
    assert all(critical_licenses(i).all() for i in cb)
    assert [greedy_mkp(i).decision for i in cb] == [greedy_ratio(i).decision for i in cb]
    assert sum(greedy_mkp(i).info["resorts"] for i in cb) == 65 and all(greedy_mkp(i).info["resorts"] for i in cb)


def test_mknap1_loader():
    insts = load_mknap1(need("mknap1.txt"))
    assert [(i.n, i.k) for i in insts] == [(6, 10), (10, 10), (15, 10), (20, 10), (28, 10), (39, 5), (50, 5)]
    assert insts[1].meta["optimum"] == pytest.approx(8706.1) and insts[0].profit[1] == 600


def test_mknapcb_loader_and_reference_values():
    insts = load_mknapcb(need("mknapcb1.txt"))
    need("mkcbres.txt")
    assert len(insts) == 30 and insts[0].name == "5.100-00" and insts[29].name == "5.100-29"
    assert insts[0].meta["best_known"] == 24381 and insts[0].meta["lp_bound"] == pytest.approx(24585.902722)
    assert all("optimum" not in i.meta for i in insts)  # GA values are not proofs
    for inst in insts:
        assert inst.meta["best_known"] <= inst.meta["lp_bound"]
    assert len(read_mkcbres(str(ORLIB / "mkcbres.txt"))) == 270
    assert [i.name for i in generate("orlib-mknapcb", first=2)] == ["5.100-00", "5.100-01"]


def test_orlib_parse_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1\n 3 1 0\n 1 2 x\n")
    with pytest.raises(InstanceError, match="bad.txt: problem 1 profits: 'x'"):
        load_mknap1(bad)
    bad.write_text("2\n 1 1 0\n 5\n 1\n 1\n")
    with pytest.raises(InstanceError, match="file ends inside problem 2 header"):
        load_mknap1(bad)
    with pytest.raises(InstanceError, match="no such file"):
        load_mknap1(tmp_path / "none.txt")


# ---- exact ----------------------------------------------------------------------------------
@pytest.mark.parametrize("method", EXACT)
def test_exact_models_reach_the_mknap1_optima(method):
    for inst in load_mknap1(need("mknap1.txt")):
        r = solve(inst, method, time_limit=20, threads=1)
        assert r.status == "optimal", (inst.name, r)
        assert r.value == pytest.approx(inst.meta["optimum"]) and r.bound == pytest.approx(r.value)


def test_exact_models_agree_with_brute_force():
    for inst in generate("mkp", n=9, k=3, count=4, seed=5) + generate("mkp", n=8, k=2, correlation="correlated",
                                                                        count=3, seed=6):
        best = brute_force(inst)
        for m in EXACT:
            r = solve(inst, m, time_limit=10, threads=1)
            assert r.status == "optimal" and r.value == pytest.approx(best), (inst.name, m)


@pytest.mark.parametrize("problem", [20, 26, 28])
def test_mkp_bb_search_alone_proves_mknapcb1_at_the_best_known(problem):
    """The branch-and-bound alone (no CP-SAT) proves mknapcb1 problems
    optimal, each at Chu and Beasley's best-known value; the checker accepts it."""
    inst = load_mknapcb(need("mknapcb1.txt"))[problem]
    r = solve(inst, "mkp-bb", time_limit=60, threads=1, nodes=None)
    assert r.status == "optimal" and "finished_by" not in r.info
    assert r.value == inst.meta["best_known"] and r.bound == r.value
    check_knapsack(inst, r.decision)


def test_exact_knapsack_is_the_packing_model():
    inst = generate("mkp", n=6, k=2, count=1)[0]
    p = as_packing(inst)
    assert p.objective == "profit" and np.array_equal(p.demand, inst.weights)
    assert np.array_equal(p.free, inst.capacity)


# ---- heuristics -----------------------------------------------------------------------------
def reweight_example():
    """Licenses L1, L2, L3 (one copy each); jobs a: L3 (100), d: L1+L3 (150),
    x: L1+L2 (16), y: L2 (10).  Order a, d, y, x; a is taken, d discarded, so
    L1 stops being critical and x (now 16 / 1) moves ahead of y (10 / 1)."""
    return KnapsackInstance.build([1, 1, 1], [[0, 0, 1], [1, 0, 1], [1, 1, 0], [0, 1, 0]],
                                  [100.0, 150.0, 16.0, 10.0], {"name": "reweight"})


def test_greedy_mkp_reweights_after_a_discard():
    inst = reweight_example()
    r = greedy_mkp(inst)
    assert r.decision == (0, 2) and r.info["resorts"] == 1 and r.info["discarded"] == 2
    assert greedy_mkp(inst, reweight=False).decision == (0, 3)   # without re-weighting y wins
    assert greedy_ratio(inst).decision == (0, 3)
    assert brute_force(inst) == 160.0  # d + y: the greedy is a heuristic



def test_greedy_mkp_after_a_resort_breaks_ties_by_index():
    """After a discard turns license 1 non-critical, jobs 2 and 3 weigh the
    same on license 0 alone (c / a-bar = 10 each) and only one of them fits:
    the re-sort takes the lower index first, as the order's rule says, not
    the order they had under the old weights (3 before 2)."""
    inst = KnapsackInstance.build([10, 10], [[0, 6], [0, 5], [5, 5], [5, 0], [3, 0]], [61.0, 100.0, 5.0, 5.0, 30.0])
    r = greedy_mkp(inst)
    assert r.decision == (1, 4, 2) and r.info["resorts"] == 1 and r.info["discarded"] == 2

def test_critical_licenses_and_clusters():
    # capacities 1; license 3 has 10 copies: not critical
    w = [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 0]]
    inst = KnapsackInstance.build([1, 1, 1, 10], w, [1.0] * 6)
    assert critical_licenses(inst).tolist() == [True, True, True, False]
    assert [c.tolist() for c in license_clusters(inst)] == [[0, 1, 4], [2, 5]]


def test_greedy_per_cluster_equals_greedy_on_the_whole():
    for inst in generate("farm-mkp", n=220, ratio_lo=0.5, ratio_hi=0.55, count=3, seed=4):
        whole = set(greedy_mkp(inst).decision)
        crit = critical_licenses(inst)
        parts = set(np.nonzero(inst.weights[:, crit].sum(axis=1) == 0)[0].tolist())
        for cl in license_clusters(inst):
            sub = KnapsackInstance.build(inst.capacity, inst.weights[cl], inst.profit[cl])
            parts |= {int(cl[i]) for i in greedy_mkp(sub).decision}
        assert whole == parts


@pytest.mark.parametrize("gen,kw", [("farm-mkp", dict(n=300, count=2)), ("mkp", dict(n=60, k=5, count=3))])
def test_greedies_are_feasible_and_below_the_optimum(gen, kw):
    for inst in generate(gen, **kw):
        opt = solve(inst, "cpsat", time_limit=10, threads=1)
        for m in ("greedy-mkp", "greedy-ratio"):
            r = solve(inst, m)  # checked by the registry
            assert 0 < r.value <= opt.bound + 1e-6
            assert 0 < r.info["license_usage"] <= 1


def test_greedy_on_mknapcb1_stays_below_the_reference():
    for inst in load_mknapcb(need("mknapcb1.txt")):
        for m in ("greedy-mkp", "greedy-ratio"):
            assert 0.8 * inst.meta["best_known"] < solve(inst, m).value <= inst.meta["best_known"]


# ---- command line ---------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["greedy-mkp", "greedy-ratio", "cpsat", "milp-cbc", "milp-highs"])
def test_cli_solve_json_prints_selected(capsys, tmp_path, method):
    assert main(["generate", "mkp", "--out", str(tmp_path), "--n", "12", "--k", "3", "--count", "1"]) == 0
    f = next(p for p in tmp_path.glob("mkp*.json"))
    capsys.readouterr()
    assert main(["solve", str(f), "--method", method, "--json", "--time-limit", "10"]) == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("selected", "value", "bound", "status", "seconds"):
        assert key in d
    inst = load_instance(f)
    assert d["value"] == pytest.approx(inst.value(d["selected"]))
    if method.startswith(("cpsat", "milp")):
        assert d["status"] == "optimal" and d["value"] == pytest.approx(brute_force(inst))


def test_a_license_without_copies_excludes_its_jobs():
    inst = KnapsackInstance.build([0, 2, 0], [[1, 1, 0], [0, 1, 0], [0, 1, 0]], [1.0, 2.0, 3.0])
    assert np.isinf(inst.rho()[0]) and inst.rho()[2] == 0
    assert greedy_mkp(inst).decision == (2, 1)
    for m in EXACT:
        assert solve(inst, m, time_limit=5, threads=1).value == brute_force(inst) == 5.0


def test_license_usage_is_one_when_the_critical_licenses_have_no_copies():
    """Nothing to use, none idle: 1.0, never 0 / 0."""
    import warnings
    from epochbench.instances.knapsack import license_usage
    inst = KnapsackInstance.build([0, 5], [[1, 1], [0, 1]], [1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert license_usage(inst, (1,)) == 1.0
        assert solve(inst, "greedy-ratio").info["license_usage"] == 1.0


def test_a_license_asked_for_exactly_as_often_as_it_has_copies_is_not_critical():
    """[capannini2007] 4.1: a license is critical when rho_l > 1, more asked
    for than there are copies; rho_l = 1 (every job that asks gets one) is
    not, and its jobs form no cluster."""
    inst = KnapsackInstance.build([2, 2, 3], [[1, 1, 0], [1, 2, 0], [0, 0, 2]], [1, 1, 1])
    assert inst.rho().tolist() == [1.0, 1.5, 2 / 3]
    assert critical_licenses(inst).tolist() == [False, True, False]
    assert [c.tolist() for c in license_clusters(inst)] == [[0, 1]]
