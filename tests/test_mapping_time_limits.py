"""The mapping MILPs (``milp-highs``, ``milp-cbc``) keep their time limit:
the model is built from arrays (:func:`epochbench.exact.mapping.milp_model`)
and handed to HiGHS directly, the same model PuLP used to hand it (checked
against the former PuLP builder, kept here as the plain reference); the
call's deadline reaches every phase, a phase the deadline has passed is
skipped, and the start is returned.  No test looks at the clock."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pulp
import pytest

import epochbench as eb

from epochbench.exact import mapping as X
from epochbench.instances.generators import generate
from epochbench.instances.mapping import MappingInstance
from epochbench.instances.registry import solve

highspy = pytest.importorskip("highspy")


def reference_pulp_model(inst, coef, ready, allowed, lb, ub, hint, work_weight=0.0, prices=None):
    """The mapping MILP as exact/mapping.py built it in PuLP before the array
    model (objective C, plus the work term; x fixed to 0 outside ``allowed``;
    u[j] and x <= u rows for machines with a ready time)."""
    t, m = inst.etc.shape
    prob = pulp.LpProblem("mapping", pulp.LpMinimize)
    cmax = prob.add_variable("C", lb, ub, cat=pulp.LpContinuous)
    x = {}
    wi, wj = len(str(t - 1)), len(str(m - 1))
    for i in range(t):
        for j in np.flatnonzero(allowed[i]):
            x[i, int(j)] = prob.add_variable(f"x{i:0{wi}d}_{int(j):0{wj}d}", 0, 1, cat=pulp.LpInteger)
    w = (np.full(m, float(work_weight) / m) if prices is None
         else float(work_weight) * np.asarray(prices, dtype=float))
    prob += pulp.LpAffineExpression([(cmax, 1)] + ([(v, w[j] * float(coef[i, j])) for (i, j), v in x.items()]
                                                   if work_weight > 0 else []))
    for i in range(t):
        prob += (pulp.LpAffineExpression([(x[i, j], 1) for j in range(m) if (i, j) in x]) == 1, f"a{i}")
    us = {}
    for j in range(m):
        terms = [(x[i, j], float(coef[i, j])) for i in range(t) if (i, j) in x]
        if not terms:
            continue
        if ready[j] > 0:
            u = us[j] = prob.add_variable(f"u{j:0{wj}d}", 0, 1, cat=pulp.LpInteger)
            terms.append((u, float(ready[j])))
            for i in range(t):
                if (i, j) in x:
                    prob += (pulp.LpAffineExpression([(x[i, j], 1), (u, -1)]) <= 0, f"u{i}_{j}")
        prob += (pulp.LpAffineExpression(terms + [(cmax, -1)]) <= 0, f"m{j}")
    start = [(v, float(hint[i] == j)) for (i, j), v in x.items()]
    start += [(u, float(np.any(hint == j))) for j, u in us.items()]
    return prob, x, cmax, start


def instances():
    """Small Braun-range instances without and with ready times; the start
    fixes some pairs out."""
    out = []
    for tasks, machines, seed in ((16, 4, 0), (24, 4, 1), (40, 8, 2)):
        inst = generate("braun-range", tasks=tasks, machines=machines, seed=seed)[0]
        out.append(inst)
        out.append(MappingInstance.build(inst.etc, np.arange(machines) * float(inst.etc.mean()),
                                         {"name": f"ready{seed}"}))
    return out


def normalised(inst):
    """The data :func:`~epochbench.exact.mapping._milp` builds its model from."""
    hint = X.minmin_start(inst)
    unit = X.MILP_NORM / inst.value(hint)
    lb = min(X.MILP_NORM, inst.lower_bound() * unit)
    return hint, inst.etc * unit, inst.ready * unit, X._allowed(inst, hint, None), lb


WEIGHTS = [(0.0, None), (0.3, None), (0.3, "priced")]


def prices_for(inst, kind):
    if kind is None:
        return None
    p = np.r_[0.0, np.arange(1.0, inst.k)]
    return p / p.sum()


def lp_of(h) -> dict:
    lp = h.getLp()
    a = lp.a_matrix_
    return {"cost": np.asarray(lp.col_cost_), "col_lower": np.asarray(lp.col_lower_),
            "col_upper": np.asarray(lp.col_upper_), "row_lower": np.asarray(lp.row_lower_),
            "row_upper": np.asarray(lp.row_upper_), "integrality": [int(v) for v in lp.integrality_],
            "format": str(a.format_), "start": np.asarray(a.start_), "index": np.asarray(a.index_),
            "value": np.asarray(a.value_), "shape": (lp.num_col_, lp.num_row_)}


def _both(k, weight, priced):
    """Instance ``k``'s reference PuLP model (prob, x, cmax, start) and the
    arguments of :func:`milp_model` for the same model."""
    inst = instances()[k]
    hint, coef, ready, allowed, lb = normalised(inst)
    args = (coef, ready, allowed, lb, X.MILP_NORM, hint, weight, prices_for(inst, priced))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return inst, reference_pulp_model(inst, *args), args


@pytest.mark.parametrize("weight,priced", WEIGHTS)
@pytest.mark.parametrize("k", range(6))
def test_array_model_is_the_model_pulp_handed_to_highs(k, weight, priced):
    inst, (prob, x, cmax, start), args = _both(k, weight, priced)
    allowed = args[2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        prob.solverModel = highspy.Highs()
        prob.solverModel.setOptionValue("output_flag", False)
        pulp.HiGHS(msg=False).buildSolverModel(prob)
    model = X.milp_model(*args)
    ref, new = lp_of(prob.solverModel), lp_of(X.highs_mapping_model(model))
    assert ref.keys() == new.keys()
    for key in ref:
        assert np.array_equal(np.asarray(ref[key]) + 0.0 if key not in ("format", "shape") else ref[key],
                              np.asarray(new[key]) + 0.0 if key not in ("format", "shape") else new[key]), key
    # the hint handed over as HiGHS's start: the same columns, the same values, in the same order
    assert [v.index for v, _ in start] == model.start[0].tolist()
    assert [val for _, val in start] == model.start[1].tolist()
    if not allowed.all():
        assert model.xi.size == int(allowed.sum()) < inst.n * inst.k


@pytest.mark.parametrize("weight,priced", WEIGHTS)
@pytest.mark.parametrize("k", [2, 3])
def test_cbc_gets_the_same_mps_file_and_start(tmp_path, k, weight, priced):
    inst, (prob, x, cmax, start), args = _both(k, weight, priced)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for v, val in start:
            v.setInitialValue(val)
        cmax.setInitialValue(X.MILP_NORM)
        new, cols = X.pulp_mapping_model(X.milp_model(*args))
        prob.writeMPS(str(tmp_path / "ref.mps"))
        new.writeMPS(str(tmp_path / "new.mps"))
    assert (tmp_path / "ref.mps").read_text() == (tmp_path / "new.mps").read_text()
    assert {v.name: v.varValue for v in prob.variables()} == {v.name: v.varValue for v in new.variables()}
    assert [v.name for v in cols] == [v.name for v in new.variables()]  # column order = PuLP's (by name)


def test_every_build_phase_gives_up_once_the_deadline_has_passed():
    inst = instances()[1]
    hint, coef, ready, allowed, lb = normalised(inst)
    assert X.milp_model(coef, ready, allowed, lb, X.MILP_NORM, hint, deadline=0.0) is None
    model = X.milp_model(coef, ready, allowed, lb, X.MILP_NORM, hint)
    assert X.highs_mapping_model(model, deadline=0.0) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert X.pulp_mapping_model(model, deadline=0.0) is None
    status, bound, details = X.run_highs(model, 0.0, 1, 0)
    assert (status, bound, model.solution) == ("timeout", None, None)
    assert details["solver_status"] == "not started"


#: where each phase takes the deadline: (position, keyword)
DEADLINE_ARG = {"milp_model": (8, "deadline"), "run_highs": (1, "deadline"), "pulp_mapping_model": (1, "deadline"),
                "run_cbc": (1, "deadline")}


@pytest.mark.parametrize("method,phases", [("milp-highs", ("milp_model", "run_highs")),
                                           ("milp-cbc", ("milp_model", "pulp_mapping_model", "run_cbc"))])
def test_the_calls_deadline_reaches_the_model_and_the_solver(monkeypatch, method, phases):
    seen = {}

    def spy(name):
        real, (pos, key) = getattr(X, name), DEADLINE_ARG[name]

        def wrapped(*args, **kwargs):
            seen.setdefault(name, []).append(kwargs[key] if key in kwargs else args[pos])
            return real(*args, **kwargs)
        monkeypatch.setattr(X, name, wrapped)

    for name in phases:
        spy(name)
    r = X.solve_mapping(instances()[0], method, time_limit=30.0)
    deadlines = {d for ds in seen.values() for d in ds}
    assert set(seen) == set(phases) and len(deadlines) == 1 and math.isfinite(deadlines.pop())
    assert r.status == "optimal"


def test_highs_gets_the_time_left_less_its_margin(monkeypatch):
    got = {}
    real_model, real_seconds = X.highs_mapping_model, X.highs_seconds

    def model(*args, **kwargs):
        got["h"] = real_model(*args, **kwargs)
        return got["h"]

    def seconds(left):
        got["left"], got["limit"] = left, real_seconds(left)
        return got["limit"]
    monkeypatch.setattr(X, "highs_mapping_model", model)
    monkeypatch.setattr(X, "highs_seconds", seconds)
    X.solve_mapping(instances()[2], "milp-highs", time_limit=30.0)
    assert got["h"].getOptionValue("time_limit")[1] == got["limit"] < got["left"]


@pytest.mark.parametrize("method,phase", [("milp-highs", "milp_model"), ("milp-highs", "highs_mapping_model"),
                                          ("milp-cbc", "milp_model"), ("milp-cbc", "pulp_mapping_model")])
def test_time_running_out_while_building_returns_the_start(monkeypatch, method, phase):
    """A build phase that sees the deadline pass returns None: the solver is
    not started, and the call returns its start (a solution, not optimal)."""
    monkeypatch.setattr(X, phase, lambda *args, **kwargs: None)

    def no_solver(*args, **kwargs):
        raise AssertionError("the solver was started")
    monkeypatch.setattr(X, "run_cbc", no_solver)
    monkeypatch.setattr(X, "_highs_scheduler", no_solver)
    inst = instances()[3]
    r = X.solve_mapping(inst, method, time_limit=30.0)
    assert r.status == "feasible" and r.value == r.info["start_makespan"]
    assert r.info["start"] and r.info["solver_status"] == "not started"
    assert r.info["objective_units"] == "float" and r.info["bound_kind"] == "combinatorial"
    assert r.bound == pytest.approx(r.info["lower_bound"])
    start, _ = X.start_mapping(inst)
    assert inst.value(np.asarray(r.decision)) == inst.value(start)


def test_cbc_is_not_started_without_time_to_hand_it_the_model(monkeypatch):
    monkeypatch.setattr(X, "CBC_HANDOVER", 1e9)

    def no_solver(*args, **kwargs):
        raise AssertionError("CBC was started")
    monkeypatch.setattr(X, "run_cbc", no_solver)
    r = X.solve_mapping(instances()[0], "milp-cbc", time_limit=30.0)
    assert r.status == "feasible" and r.value == r.info["start_makespan"]
    assert r.info["solver_status"] == "not started" and "CBC" in r.info["note"]


@pytest.mark.parametrize("method", ["milp-highs", "milp-cbc"])
def test_milp_optimum_is_cpsats_with_ready_times(method):
    inst = instances()[1]
    opt = solve(inst, "cpsat", time_limit=30.0, threads=1)
    r = solve(inst, method, time_limit=30.0, threads=1)
    assert opt.status == r.status == "optimal"
    assert r.value == pytest.approx(opt.value, rel=1e-6)
    assert r.info["solver"] == ("HiGHS" if method == "milp-highs" else "CBC")
    assert r.info["objective_units"] == "float" and r.info["bound_kind"] == "solver"


@pytest.mark.parametrize("method", ["milp-highs", "milp-cbc"])
def test_weighted_milp_keeps_its_info(method):
    inst = instances()[0]
    p = [1.0] * inst.k
    r = solve(inst, method, time_limit=30.0, threads=1, work_weight=0.2, work_prices=p)
    assert r.status in ("feasible", "optimal") and r.info["work_weight"] == 0.2
    assert r.info["work_prices"] == pytest.approx([1.0 / inst.k] * inst.k)
    assert r.value <= r.info["start_makespan"]


def test_tabu_looks_at_its_limit_inside_a_descent_and_an_unreached_one_changes_nothing():
    """The limit was looked at only between descents, and a whole default
    run is one descent on large matrices: time_limit=0.01 took as long as
    none.  Parts of a descent make the same hops as one call."""
    import numpy as np
    from epochbench.heuristics import mapping as H
    from epochbench.instances.mapping import MappingInstance
    big = MappingInstance.build(np.random.default_rng(1).uniform(1, 100, (4000, 4)).round(2))
    full, cut = {}, {}
    H.tabu(big, init="mct", stats=full)
    H.tabu(big, init="mct", time_limit=1e-9, stats=cut)           # past its limit after the first part
    assert full["short_hops"] == 1200 and cut["short_hops"] < full["short_hops"]
    import pytest as _pytest
    with _pytest.MonkeyPatch.context() as mp:
        mp.setattr(H, "TABU_PAIRS", 7)                          # parts of a few rows: every descent is split
        for seed in range(6):
            inst = eb.generate("braun-range", tasks=48, machines=6, seed=seed)[0]
            for init in ("random", "minmin"):
                one, parts = {}, {}
                a = H.tabu(inst, init=init, stats=one)
                b = H.tabu(inst, init=init, time_limit=1e6, stats=parts)
                assert (a == b).all() and one == parts


@pytest.mark.parametrize("method, kw, needle", [
    ("ga", dict(crossover_rate=2.0), "option 'crossover_rate' must lie in \\[0, 1\\]"),
    ("ga", dict(mutation_rate=-1), "option 'mutation_rate' must lie in \\[0, 1\\]"),
    ("ga", dict(max_iter=-1), "option 'max_iter' must be an integer >= 0"),
    ("ga", dict(patience=-3), "option 'patience' must be an integer >= 0"),
    ("ga", dict(seed="abc"), "option 'seed' must be an integer >= 0 or a numpy Generator"),
    ("sa", dict(seed=-1), "option 'seed' must be an integer >= 0"),
    ("sa", dict(max_iter=-5), "option 'max_iter' must be an integer >= 0"),
    ("tabu", dict(hops=-1), "option 'hops' must be an integer >= 0"),
    ("tabu", dict(max_tries=0), "option 'max_tries' must be an integer >= 1"),
    ("tabu", dict(init="bogus"), "constructive mapping heuristic \\(olb, .*duplex\\), got 'bogus'"),
    ("sa", dict(init="cpsat"), "init must be a heuristic, not the exact method 'cpsat'"),
    ("tabu", dict(init="ga"), "init must be 'random' or a constructive mapping heuristic, not the metaheuristic 'ga'"),
])
def test_metaheuristic_options_out_of_range_are_one_line(method, kw, needle):
    inst = eb.generate("braun-range", tasks=8, machines=3, seed=1)[0]
    with pytest.raises(ValueError, match=needle):                  # accepted (rates clipped) or numpy's raw error
        eb.solve(inst, method, **kw)
    from epochbench.heuristics import mapping as H
    with pytest.raises(ValueError, match=needle):                  # a direct call checks them too
        getattr(H, method)(inst, **kw)


@pytest.mark.parametrize("method, kw, needle", [
    ("ga", dict(population=float("nan")), "option 'population' must be an integer >= 2, got nan"),
    ("ga", dict(population=None), "option 'population' must be an integer >= 2, got None"),
    ("ga", dict(population=1), "option 'population' must be an integer >= 2, got 1"),
    ("ga", dict(seeded="no"), "option 'seeded' must be True or False, got 'no'"),
    ("sa", dict(cooling="0.5"), "option 'cooling' must lie in \\(0, 1\\), got '0.5'"),
    ("sa", dict(cooling=None), "option 'cooling' must lie in \\(0, 1\\), got None"),
])
def test_a_direct_call_checks_the_kind_of_a_value_before_it_converts_it(method, kw, needle):
    """Called from Python, not through eb.solve (whose parameter check says
    it in its own words): NaN and None raised int()'s or float()'s bare
    error, a string cooling was read as a number and seeded='no' switched
    the Min-Min seed on (a non-empty string is true)."""
    from epochbench.heuristics import mapping as H
    inst = eb.generate("braun-range", tasks=8, machines=3, seed=1)[0]
    with pytest.raises(ValueError, match=needle):
        getattr(H, method)(inst, **kw)
    import numpy as np
    assert len(H.ga(inst, seeded=np.False_, population=10, max_iter=5)) == 8   # numpy's bool is a bool


def test_whole_float_counts_and_seedless_calls_still_run():
    """``--param hops=1e3`` reads a float; a seed of None or a SeedSequence is numpy's to take."""
    import numpy as np
    from epochbench.heuristics import mapping as H
    inst = eb.generate("braun-range", tasks=8, machines=3, seed=1)[0]
    assert (H.tabu(inst, hops=100.0) == H.tabu(inst, hops=100)).all()
    with pytest.raises(ValueError, match="option 'hops' must be an integer >= 0, got 10.5"):
        H.tabu(inst, hops=10.5)
    assert (H.ga(inst, max_iter=20.0, patience=5.0) == H.ga(inst, max_iter=20, patience=5)).all()
    assert (H.sa(inst, max_iter=1e3) == H.sa(inst, max_iter=1000)).all()
    for seed in (None, np.random.SeedSequence(3)):
        assert len(H.ga(inst, seed=seed, max_iter=5)) == 8 and len(H.tabu(inst, seed=seed, hops=5)) == 8
