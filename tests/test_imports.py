"""ortools 9.15 bundles HiGHS 1.12: highspy of another version in the same
process fails with an undefined symbol.  Both must import and solve here."""


def test_highspy_and_ortools_in_one_process():
    import highspy
    from ortools.linear_solver import pywraplp
    from ortools.sat.python import cp_model

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    x = h.addVariable(0, 4)
    h.changeColIntegrality(0, highspy.HighsVarType.kInteger)
    h.changeColCost(0, -1.0)
    h.run()
    assert h.getInfo().objective_function_value == -4

    m = cp_model.CpModel()
    y = m.NewIntVar(0, 4, "y")
    m.Maximize(y)
    s = cp_model.CpSolver()
    s.parameters.num_workers, s.parameters.max_time_in_seconds = 1, 10.0     # pinned, as every exact solve
    assert s.Solve(m) == cp_model.OPTIMAL and s.Value(y) == 4

    lp = pywraplp.Solver.CreateSolver("SCIP") or pywraplp.Solver.CreateSolver("CBC")
    assert lp is not None
    del x
