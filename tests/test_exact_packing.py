"""Exact models of the packing and epochs families (exact/packing.py).

Golden value ([leinberger1999] figure 1), brute force on small random instances,
agreement between the three backends, the ortools/highspy import trap, and a
few Panigrahy vector-bin-packing instances with known optima.
"""
from __future__ import annotations

import csv
import itertools
import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the project is not installed in the venv
    sys.path.insert(0, str(ROOT))

from epochbench.exact import packing as ep  # noqa: E402
from epochbench.instances.packing import EpochsInstance, PackingInstance, check_epochs, check_packing  # noqa: E402
from epochbench.instances.registry import get, solve  # noqa: E402

METHODS = ep.METHODS
LIMIT = 10.0
DATA = Path(os.environ.get("EPOCHBENCH_DATA") or ROOT.parent / "shared" / "data")
VBP = DATA / "vbp"


# ---- helpers -------------------------------------------------------------------------
def brute_packing(inst: PackingInstance) -> float:
    """Best objective over all 2^n subsets (feasibility by check_packing)."""
    w = inst.weights()
    best = 0.0
    for mask in range(1 << inst.n):
        sel = [j for j in range(inst.n) if mask >> j & 1]
        try:
            check_packing(inst, sel)
        except AssertionError:
            continue
        best = max(best, float(w[sel].sum()))
    return best


def brute_bins(inst: EpochsInstance) -> int:
    """Fewest bins by exhaustive assignment (job j into an open bin or a new one)."""
    dem, cap = inst.demand.tolist(), inst.capacity.tolist()
    best = [inst.n]

    def rec(j, loads):
        if len(loads) >= best[0]:
            return
        if j == inst.n:
            best[0] = len(loads)
            return
        for load in loads:
            if all(a + b <= c for a, b, c in zip(load, dem[j], cap)):
                for r, d in enumerate(dem[j]):
                    load[r] += d
                rec(j + 1, loads)
                for r, d in enumerate(dem[j]):
                    load[r] -= d
        rec(j + 1, loads + [list(dem[j])])

    rec(0, [])
    return best[0]


def random_packing(rng, n, k, reservation, objective, dup=False) -> PackingInstance:
    """A random packing epoch; ``dup``: the second half repeats the first (identical jobs)."""
    cap = rng.integers(5, 30, size=k)
    used = rng.integers(0, cap // 3 + 1)
    dem = rng.integers(0, cap // 2 + 2, size=(n, k))
    if dup:
        dem[n // 2:] = dem[:n - n // 2]
    kw = {}
    if reservation:
        kw = dict(shadow=5.0, extra=rng.integers(0, cap // 2 + 1), runtime_past_shadow=rng.random(n) < 0.5)
    profit = np.round(rng.uniform(0.0, 10.0, size=n), 2) if objective == "profit" else None
    return PackingInstance.build(cap, dem, used, profit=profit, objective=objective,
                                 meta={"name": f"rand-{n}-{k}-{reservation}-{objective}"}, **kw)


def read_vbp(path: Path) -> EpochsInstance:
    """Minimal VPSolver reader: d; d capacities; m; m lines of d sizes and a multiplicity."""
    tok = [int(t) for t in path.read_text().split()]
    d = tok[0]
    cap, m, pos = tok[1:1 + d], tok[1 + d], 2 + d
    rows = []
    for _ in range(m):
        sizes, mult = tok[pos:pos + d], tok[pos + d]
        rows += [sizes] * mult
        pos += d + 1
    return EpochsInstance.build(cap, rows, meta={"name": path.stem})


def vbp_optima() -> dict[str, int]:
    """Known optima: column OPT, or the lower bound LB where the best known
    packing meets it (classes 4 and 5 list OPT = -1 but LB = best_overall)."""
    out = {}
    with open(VBP / "Panigrahy_summary_known.csv", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            opt, lb, best = int(row["OPT"]), int(row["LB"]), int(row["best_overall"])
            if opt > 0 or lb == best:
                out[row["instance_name"]] = opt if opt > 0 else lb
    return out


FIG1 = EpochsInstance.build([16, 32], [(8, 4), (4, 2), (7, 16), (11, 20), (1, 12), (1, 10)],
                            meta={"name": "seed000-fig1"})


# ---- registration and trivial cases ---------------------------------------------------
@pytest.mark.parametrize("family", ["packing", "epochs"])
@pytest.mark.parametrize("method", METHODS)
def test_registered_exact(family, method):
    assert get(family, method).exact


@pytest.mark.parametrize("method", METHODS)
def test_empty_queues(method):
    p = PackingInstance.build([10, 10], [])
    r = solve(p, method, time_limit=LIMIT)
    assert (r.status, r.value, r.decision, r.bound) == ("optimal", 0.0, (), 0.0)
    e = EpochsInstance.build([10, 10], [])
    r = solve(e, method, time_limit=LIMIT)
    assert (r.status, r.value, r.decision) == ("optimal", 0.0, ())


def test_unknown_parameter_rejected():
    with pytest.raises(TypeError, match="unexpected keyword"):
        solve(FIG1, "cpsat", time_limit=LIMIT, gap=0.1)


def test_solver_params_reach_cpsat():
    """CP-SAT parameters by name change the solve: stopping at the first
    solution of a 40-job K = 4 epoch leaves it unproven; without the cuts the
    optimum is the default one's."""
    rng = np.random.default_rng(7)
    inst = PackingInstance.build([100] * 4, rng.integers(1, 40, size=(40, 4)), meta={"name": "params"})
    first = solve(inst, "cpsat", time_limit=LIMIT, threads=1, warm=False,
                  solver_params={"stop_after_first_solution": True})
    full = solve(inst, "cpsat", time_limit=LIMIT, threads=1)
    uncut = solve(inst, "cpsat", time_limit=LIMIT, threads=1,
                  solver_params={"add_cg_cuts": False, "add_mir_cuts": False, "add_zero_half_cuts": False})
    assert full.status == uncut.status == "optimal" and uncut.value == full.value
    assert first.status == "feasible" and first.value <= full.value
    check_packing(inst, uncut.decision)


@pytest.mark.parametrize("params", [{"relative_gap_limit": 0.5}, {"absolute_gap_limit": 1e9}])
def test_gap_limit_is_no_proof(params):
    """A gap limit stops CP-SAT with its status OPTIMAL before the bound meets
    the solution: that is a feasible solution with CP-SAT's own bound, never
    an optimum (the bound was overwritten with the value, and score measured
    the heuristics' gaps against it)."""
    rng = np.random.default_rng(3)
    inst = PackingInstance.build([100] * 4, rng.integers(1, 40, size=(36, 4)), meta={"name": "gap"})
    full = solve(inst, "cpsat", time_limit=LIMIT, threads=1)
    cut = solve(inst, "cpsat", time_limit=LIMIT, threads=1, warm=False, solver_params=params)
    assert full.status == "optimal"
    check_packing(inst, cut.decision)
    assert cut.value < full.value <= cut.bound and cut.status == "feasible"


@pytest.mark.parametrize("method,params,match", [
    ("cpsat", {"no_such_parameter": 1}, "'no_such_parameter' is not a CP-SAT parameter"),
    ("cpsat", {"num_workers": 4}, "'num_workers' is set from time_limit, threads and seed"),
    ("cpsat", {"num_search_workers": 4}, "'num_search_workers' is set from time_limit, threads and seed"),
    ("cpsat", {"add_cg_cuts": "maybe"}, "'add_cg_cuts' cannot be 'maybe'"),
    ("cpsat", "add_cg_cuts=false", "must map CP-SAT parameter names to values"),
    ("milp-highs", {"add_cg_cuts": False}, "'milp-highs' takes none"),
])
def test_solver_params_refused_in_one_line(method, params, match):
    with pytest.raises(ValueError, match=match) as err:
        solve(PackingInstance.build([10], [[4], [5]]), method, time_limit=LIMIT, solver_params=params)
    assert "\n" not in str(err.value)


# ---- golden: [leinberger1999] figure 1 --------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_seed000_figure1_unc_two_epochs(method):
    r = solve(FIG1, method, time_limit=LIMIT, threads=1)
    assert r.status == "optimal" and r.value == 2 and r.bound == 2
    assert len(ep.ffd_bins(FIG1)) == 3  # the solver, not FFD, found the two exact-fit epochs
    assert {frozenset(b) for b in r.decision} == {frozenset({0, 2, 4}), frozenset({1, 3, 5})}
    assert r.info["solver"] in ("CP-SAT", "CBC", "HiGHS")


@pytest.mark.parametrize("method", METHODS)
def test_threads_used_are_recorded(method):
    """Every backend says how many threads it ran with (CBC always one)."""
    r = solve(PackingInstance.build([10], [[4], [5], [6]]), method, time_limit=LIMIT, threads=2)
    assert r.status == "optimal"
    assert r.info["threads"] == (1 if r.info["solver"] == "CBC" else 2)


# ---- brute force: packing -------------------------------------------------------------
PACK_CASES = [(seed, k, res, obj) for seed, (k, res, obj) in enumerate(
    itertools.product((1, 2, 3), (False, True), ("utilization", "count", "profit")))]


@pytest.mark.parametrize("seed,k,reservation,objective", PACK_CASES)
def test_packing_matches_brute_force(seed, k, reservation, objective):
    rng = np.random.default_rng(1000 + seed)
    inst = random_packing(rng, int(rng.integers(6, 13)), k, reservation, objective)
    best = brute_packing(inst)
    values = {}
    for method in METHODS:
        r = solve(inst, method, time_limit=LIMIT, threads=1)
        assert r.status == "optimal", (method, r)
        assert list(r.decision) == sorted(r.decision)
        assert abs(r.value - best) <= 1e-9, (method, r.value, best)
        assert r.bound == r.value
        values[method] = r.value
    assert max(values.values()) - min(values.values()) <= 1e-9


def test_packing_reservation_binds():
    """Two jobs past the shadow time cannot both start: extra fits only one."""
    inst = PackingInstance.build([10], [[4], [4], [2]], shadow=3.0, extra=[5],
                                 runtime_past_shadow=[True, True, False], objective="count")
    for method in METHODS:
        r = solve(inst, method, time_limit=LIMIT)
        assert r.value == 2 and r.status == "optimal"
        assert 2 in r.decision and len(set(r.decision) & {0, 1}) == 1


def test_packing_oversized_jobs_filtered():
    inst = PackingInstance.build([10, 10], [[11, 1], [3, 3], [5, 12]], used=[2, 0])
    for method in METHODS:
        r = solve(inst, method, time_limit=LIMIT)
        assert r.decision == (1,) and r.status == "optimal"


def test_packing_fractional_profits_exact():
    """Decimal profits are scaled to integers exactly (OR-Library mknap1 style)."""
    inst = PackingInstance.build([10], [[5], [5], [6]], profit=[1.05, 1.05, 2.15], objective="profit")
    for method in METHODS:
        r = solve(inst, method, time_limit=LIMIT)
        assert r.status == "optimal" and abs(r.value - 2.15) < 1e-12 and r.bound == r.value


def test_integer_objective_fallback_rounds():
    coefs, scale, exact = ep.integer_objective(np.array([1 / 3, 2 / 3]), None, 2)
    assert not exact and all(isinstance(c, int) for c in coefs)
    assert abs(coefs[0] / scale - 1 / 3) <= 0.5 / scale


def test_packing_awkward_capacities_use_rounded_scaling():
    """Pairwise coprime large capacities: lcm * K overflows the exact scaling,
    the rounded one still finds the optimum and a valid bound."""
    rng = np.random.default_rng(7)
    cap = [100003, 99991, 100019, 99989]            # below the MILPs' range limits (1e6)
    dem = rng.integers(1, 40000, size=(10, 4))
    inst = PackingInstance.build(cap, dem)
    best = brute_packing(inst)
    for method in METHODS:
        r = solve(inst, method, time_limit=LIMIT)
        assert r.status == "optimal" and abs(r.value - best) <= 1e-9
        assert "objective_scaling" in r.info


# ---- brute force: epochs --------------------------------------------------------------
@pytest.mark.parametrize("seed", range(10))
def test_epochs_matches_brute_force(seed):
    rng = np.random.default_rng(2000 + seed)
    k, n = int(rng.integers(1, 4)), int(rng.integers(3, 9))
    cap = rng.integers(8, 20, size=k)
    dem = np.minimum(rng.integers(0, 12, size=(n, k)), cap)
    inst = EpochsInstance.build(cap, dem, meta={"name": f"bp{seed}"})
    best = brute_bins(inst)
    for method in METHODS:
        r = solve(inst, method, time_limit=LIMIT, threads=1)
        assert r.status == "optimal" and r.value == best and r.bound == best, (method, r, best)
        check_epochs(inst, r.decision)
        assert all(b for b in r.decision)


@pytest.mark.parametrize("seed", range(40))
def test_epochs_lower_bounds_are_valid(seed):
    """Volume, clique, L2 and pattern-LP bounds never exceed the optimum; the
    answer does not depend on the pattern bound."""
    rng = np.random.default_rng(3000 + seed)
    k, n = int(rng.integers(1, 4)), int(rng.integers(2, 9))
    cap = rng.integers(6, 16, size=k)
    dem = np.minimum(rng.integers(0, 10, size=(n, k)), cap)
    inst = EpochsInstance.build(cap, dem)
    best = brute_bins(inst)
    clique = ep.conflict_clique(ep.conflicts(inst), ep.ffd_order(inst))
    assert ep.epochs_lower_bound(inst, clique) <= best
    assert ep.pattern_lower_bound(inst) <= best
    assert len(ep.ffd_bins(inst)) >= best
    r = solve(inst, "cpsat", time_limit=LIMIT, pattern_bound=False)
    assert r.value == best and r.status == "optimal"


def test_l2_bound_beats_volume():
    """Three items of 6 in bins of 10: volume says 2, L2 says 3."""
    assert ep.l2_bound(np.array([6, 6, 6]), 10) == 3
    assert ep.l2_bound(np.array([5, 5, 5, 5]), 10) == 2


def test_epochs_zero_demand_job_gets_a_used_bin():
    inst = EpochsInstance.build([10], [[6], [6], [0], [6]])
    for method in METHODS:
        r = solve(inst, method, time_limit=LIMIT)
        assert r.value == 3 and r.status == "optimal"


# Nine jobs of three resources: two bins hold them (brute force), CBC proved three with
# the data in units of 1e9 while the redundant rows reached coefficients of 1e11
SMALL_CAP, SMALL_DEM = [15, 16, 12], [[5, 3, 1], [5, 3, 1], [3, 5, 2], [1, 4, 3], [5, 3, 4], [1, 2, 3],
                                      [2, 2, 1], [3, 3, 3], [5, 3, 2]]
# capacities of about 1e10 without a common factor: three bins hold them, CP-SAT proved four
BIG_CAP = [12000000000, 20000000000, 24000000000]
BIG_DEM = [[1970540252, 6942942971, 5970735605], [3986575692, 3947294652, 8978159250],
           [2977957204, 4967041828, 3961089937], [1948214004, 4982975472, 11906416254],
           [3909584333, 2950439004, 7983341898], [2961739128, 2917071582, 5944626739],
           [1981299409, 8995248228, 9945196185], [2988471329, 8984377439, 6900097845],
           [5946691651, 8994402336, 6989514360]]


@pytest.mark.parametrize("method", METHODS)
def test_epochs_large_demands_keep_the_true_optimum(method):
    """Demands in bytes: the model divides each resource by its gcd and
    leaves out the redundant rows whose coefficients would reach the total
    demand; the solvers then prove the optimum (brute force), not a bin more.
    CBC and HiGHS, whose proofs failed on such data (CBC even without those
    rows), are not run on the one without a common factor (coefficients near
    1e10): they return the start, unproven."""
    scaled = EpochsInstance.build([c * 10**9 for c in SMALL_CAP], [[x * 10**9 for x in r] for r in SMALL_DEM])
    big = EpochsInstance.build(BIG_CAP, BIG_DEM)
    assert (brute_bins(scaled), brute_bins(big)) == (2, 3)
    for inst, opt in ((scaled, 2), (big, 3)):
        r = solve(inst, method, time_limit=LIMIT, threads=1, warm=False, pattern_bound=False)
        check_epochs(inst, r.decision)
        solver = {"milp-cbc": "CBC", "milp-highs": "HiGHS"}.get(method)
        if solver and inst is big:
            assert r.status == "feasible" and r.value >= opt >= r.bound and solver in r.info["note"]
        else:
            assert r.status == "optimal" and r.value == opt


def test_epochs_sums_near_the_int64_limit_do_not_wrap():
    """Demands of about 2**62: FFD, the conflicts and the bounds compare
    without int64 overflow (the start used to put three such jobs in one bin)."""
    inst = EpochsInstance.build([2**63 - 1], [[2**62 - 1]] * 3)
    assert len(ep.ffd_bins(inst)) == 2 and ep.conflicts(inst).sum() == 0
    four = EpochsInstance.build([2**63 - 1], [[2**62 + 1]] * 4)
    assert four.lower_bound() == 3 and ep.conflicts(four).sum() == 12      # every pair conflicts
    assert ep.l2_bound(four.demand[:, 0], 2**63 - 1) == 4
    r = solve(inst, "cpsat", time_limit=LIMIT, threads=1)
    assert r.value == 2 and r.status == "optimal"
    check_epochs(inst, r.decision)


@pytest.mark.parametrize("seed, scale", [(70, 9), (212, 11), (246, 10)])
def test_cpsat_proves_the_true_optimum_with_coefficients_of_1e10(seed, scale):
    """Random knapsack rows with coefficients of 1e10 and more: CP-SAT 9.15's
    presolve (inclusion detection) proved a wrong optimum on these; with
    :func:`~epochbench.exact._binary.cpsat_safeguard` it proves brute force's."""
    rng = np.random.default_rng(seed)
    f = 10**scale
    k, n = int(rng.integers(1, 4)), int(rng.integers(6, 12))
    cap, dem = rng.integers(10 * f, 30 * f, k), rng.integers(0, 12 * f, (n, k))
    objective = ("utilization", "count", "profit")[seed % 3]
    extra = {"profit": rng.integers(1, 100, n).tolist()} if objective == "profit" else {}
    inst = PackingInstance.build(cap.tolist(), dem.tolist(), objective=objective, **extra)
    r = solve(inst, "cpsat", time_limit=LIMIT, threads=1, warm=False)
    assert r.status == "optimal" and r.value == pytest.approx(brute_packing(inst), rel=1e-9)


def test_packing_demands_near_the_int64_limit():
    """Five jobs of up to a third of 2**63: their sum wraps in int64, which
    used to drop the capacity row from the model (CP-SAT then selected all
    five, over capacity).  The row stays; CP-SAT cannot take it (its sum is
    past its integer range) and says so, returning the start; mkp-bb proves
    the optimum."""
    c = 2**63 - 1
    inst = PackingInstance.build([c], [[c // 3 + 11], [c // 3 + 5], [c // 3 - 7], [c // 4], [c // 5 + 3]],
                                 objective="count")
    model = ep.packing_model(inst, ep.packing_candidates(inst))
    assert len(model.rows) == 1
    r = solve(inst, "cpsat", time_limit=LIMIT, threads=1)
    assert r.status == "feasible" and "beyond CP-SAT's integer range" in r.info["note"]
    assert solve(inst, "mkp-bb", time_limit=LIMIT).value == r.value == 3 == brute_packing(inst)


# ---- the version trap: CP-SAT and HiGHS in one process --------------------------------
def test_ortools_and_highspy_share_a_process():
    import highspy
    from ortools.linear_solver import pywraplp
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    a, b = m.new_bool_var("a"), m.new_bool_var("b")
    m.add(a + b <= 1)
    m.maximize(2 * a + 3 * b)
    s = cp_model.CpSolver()
    s.parameters.num_workers, s.parameters.max_time_in_seconds = 1, 10.0     # pinned, as every exact solve
    assert s.solve(m) == cp_model.OPTIMAL and s.objective_value == 3

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    h.addCol(-2.0, 0.0, 1.0, 0, [], [])
    h.addCol(-3.0, 0.0, 1.0, 0, [], [])
    h.changeColIntegrality(0, highspy.HighsVarType.kInteger)
    h.changeColIntegrality(1, highspy.HighsVarType.kInteger)
    h.addRow(-inf, 1.0, 2, np.array([0, 1], dtype=np.int32), np.array([1.0, 1.0]))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert abs(h.getInfo().objective_function_value + 3) < 1e-9

    lp = pywraplp.Solver.CreateSolver("SCIP") or pywraplp.Solver.CreateSolver("CBC")
    assert lp is not None
    x, y = lp.BoolVar("x"), lp.BoolVar("y")
    lp.Add(x + y <= 1)
    lp.Maximize(2 * x + 3 * y)
    assert lp.Solve() == pywraplp.Solver.OPTIMAL and abs(lp.Objective().Value() - 3) < 1e-9


def test_highs_thread_count_can_change():
    """HiGHS's global scheduler is reset when another thread count is asked."""
    for threads in (1, 2, 1):
        r = solve(FIG1, "milp-highs", time_limit=LIMIT, threads=threads)
        assert r.status == "optimal" and r.value == 2


# ---- Panigrahy vector bin packing ([mommessin2025] data) ------------------------
# one instance per class; where the bounds alone settle every n=20 instance of a
# class (3, 5) any will do, elsewhere one where FFD exceeds every bound, so
# CP-SAT itself has to close the gap.
VBP_CASES = ["class1_20_3_5", "class2_20_3_3", "class3_20_3_0", "class4_20_5_5", "class5_20_3_0",
             "class6_20_3_5", "class7_20_3_8", "class8_20_5_0", "class9_20_3_4"]
NEEDS_DATA = pytest.mark.skipif(not (VBP / "Panigrahy_summary_known.csv").exists(),
                                reason=f"VBP data not found under {VBP} (set EPOCHBENCH_DATA)")


@NEEDS_DATA
@pytest.mark.parametrize("name", VBP_CASES)
def test_vbp_known_optimum_cpsat(name):
    opt = vbp_optima()[name]
    inst = read_vbp(VBP / name.split("_")[0] / f"{name}.vbp")
    assert inst.n in (20, 21) and inst.k in (3, 5)  # class 9 comes in triples: 21 items
    r = solve(inst, "cpsat", time_limit=LIMIT, threads=1, warm=False)     # from FFD: CP-SAT has work to do
    assert r.value == opt and r.status == "optimal", r
    if name.split("_")[0] not in ("class3", "class5"):
        assert r.info["solver"] == "CP-SAT" and r.info["ffd"] > r.info["lower_bound"]
    warm = solve(inst, "cpsat", time_limit=LIMIT, threads=1)                # from the best heuristic
    assert warm.value == opt and warm.status == "optimal" and warm.info["start"]


@NEEDS_DATA
def test_vbp_pattern_bound_proves_hard_instance():
    """class1_20_5_6: volume, L2 and clique bounds say 6, the optimum is 7;
    the Gilmore-Gomory pattern LP proves 7 at once (the bare models cannot
    within 10 s)."""
    name = "class1_20_5_6"
    inst = read_vbp(VBP / "class1" / f"{name}.vbp")
    assert ep.epochs_lower_bound(inst, ep.conflict_clique(ep.conflicts(inst), ep.ffd_order(inst))) == 6
    assert ep.pattern_lower_bound(inst) == vbp_optima()[name] == 7
    r = solve(inst, "cpsat", time_limit=LIMIT, threads=1)
    assert r.status == "optimal" and r.value == 7 and r.bound == 7


@NEEDS_DATA
@pytest.mark.parametrize("method", METHODS)
def test_vbp_bare_model_without_pattern_bound(method):
    name = "class8_20_5_0"
    inst = read_vbp(VBP / "class8" / f"{name}.vbp")
    r = solve(inst, method, time_limit=LIMIT, threads=1, pattern_bound=False)
    assert r.status == "optimal" and r.value == vbp_optima()[name], r


@pytest.mark.parametrize("method", ["cpsat", "milp-highs", "milp-cbc", "mkp-bb"])
def test_a_start_given_to_an_exact_method_is_checked_and_revalued(method):
    """A start claiming 99 for a decision worth 0.158 was trusted: cpsat and
    milp-highs returned it instead of their optimum, and dropped the proof;
    ``start="ff"`` raised an AttributeError."""
    import epochbench as eb
    from epochbench.instances.core import Result
    inst = eb.generate("leinberger", n=12, k=3, count=1, seed=4)[0]
    best = solve(inst, method, time_limit=5, threads=1)
    lying = Result("packing", "x", (0,), 99.0, "feasible", 0.0)
    got = solve(inst, method, time_limit=5, threads=1, start=lying)
    assert got.status == "optimal" and got.value == pytest.approx(best.value) and got.value > inst.value((0,))
    for bad, says in (("ff", "start: expected an epochbench Result"), (Result("packing", "x", (0, 0), 1.0,
                                                                             "feasible", 0.0), "start: .*twice")):
        with pytest.raises(ValueError, match=says):
            solve(inst, method, time_limit=5, threads=1, start=bad)


def test_a_solver_calling_packing_infeasible_without_a_start_gives_a_timeout(monkeypatch):
    """No solution, no start, and a solver that (wrongly) says infeasible:
    nothing is proved (a packing epoch always has the empty selection), so
    the status is timeout, not infeasible, and there is no bound."""
    from epochbench.exact._binary import Outcome
    monkeypatch.setattr(ep, "run_model", lambda *a, **k: Outcome("infeasible", None, None, "int", {"solver": "x"}))
    inst = PackingInstance.build([10], [[6], [5]])
    r = ep.solve_packing(inst, "cpsat", time_limit=5.0, warm=False)
    assert r.status == "timeout" and r.bound is None and r.decision == ()


def test_weights_too_small_to_scale_onto_integers_are_one_clear_error():
    """Objective weights whose largest times the items is below about
    6e-294: no float scale brings them onto the integers that CP-SAT, the
    MILPs and mkp-bb solve over (an OverflowError from deep inside); one
    ValueError saying what to do.  The heuristics still answer, and weights
    of 1e-300 still solve."""
    import epochbench as eb
    from epochbench.instances.assignment import AssignmentInstance
    from epochbench.instances.knapsack import KnapsackInstance
    tiny = [(AssignmentInstance.build([[1e-305]]), ("cpsat", "milp-highs", "milp-cbc")),
            (KnapsackInstance.build([10], [[1], [2]], [1e-310, 5e-324]), ("cpsat", "milp-highs", "mkp-bb")),
            (PackingInstance.build([5], [[1], [2]], profit=[1e-310, 5e-324], objective="profit"), ("cpsat", "mkp-bb"))]
    said = r"largest weight .* too small for an exact method.*scale the weights up"
    for inst, methods in tiny:
        for m in methods:
            with pytest.raises(ValueError, match=said):
                eb.solve(inst, m, time_limit=2, threads=1)
    assert eb.solve(tiny[1][0], "greedy-mkp").value == pytest.approx(1e-310, rel=1e-9, abs=0)
    small = AssignmentInstance.build([[1e-300, 2e-300], [3e-300, 1e-300]])
    assert {eb.solve(small, m, time_limit=2, threads=1).status for m in ("cpsat", "milp-highs")} == {"optimal"}
