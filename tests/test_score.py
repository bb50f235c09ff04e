"""Scoring: reference bounds, gap labels, solver disagreement, plug-ins."""
import json
import math

import pandas as pd
import pytest

from epochbench.instances import catalog
from epochbench.scoring import SolverDisagreement, reference, score, summarize
from epochbench.instances import EpochsInstance, PackingInstance, Result, gap
from epochbench.instances import registry


def pk():
    return PackingInstance.build([10], [[6], [5], [5]], meta={"name": "p"})


def res(method, value, status, bound=None, family="packing"):
    return Result(family, method, (), value, status, 0.0, bound)


def test_gap_formula():
    assert gap(0.8, 1.0) == pytest.approx(0.2)
    assert gap(3, 2) == pytest.approx(0.5)
    assert math.isnan(gap(1.0, None))


def test_reference_is_the_proven_optimum():
    ref = reference(pk(), [res("ff", 0.6, "feasible"), res("cpsat", 1.0, "optimal", 1.0)])
    assert ref.bound == 1.0 and ref.kind == "optimum"


def test_reference_without_proof_is_the_tightest_bound_and_labelled():
    ref = reference(pk(), [res("cpsat", 0.9, "feasible", 1.2), res("milp-cbc", 0.8, "feasible", 1.1)])
    assert ref.bound == 1.1 and ref.kind == "bound"


def test_epochs_reference_uses_the_trivial_lower_bound():
    inst = EpochsInstance.build([10], [[6], [6], [6]], meta={"name": "e"})
    ref = reference(inst, [res("ff", 3, "feasible", family="epochs")])
    assert ref.bound == 2 and ref.kind == "bound"  # ceil(18 / 10)
    inst2 = EpochsInstance.build([10], [[4], [4], [4]], meta={"name": "e2"})
    ref2 = reference(inst2, [res("ff", 2, "feasible", family="epochs")])
    assert ref2.bound == 2 and ref2.kind == "optimum"  # a solution meets the bound


def test_a_bound_is_met_only_within_the_claim_tolerance():
    """A checked solution 1.25 above a lower bound of 1.4e6 (8.8e-7 of it)
    met the bound at the scorer's 1e-6 and was called the optimum, with a
    gap of 0; the bound is the reference now, and a solution within the
    registry's tolerance of a claim (1e-9) still meets it."""
    def ref(value, bound):
        return reference(pk(), [res("ff", value, "feasible"), res("cpsat", value, "feasible", bound)])
    near = ref(0.9, 0.9 * (1 + 8.8e-7))
    assert near.kind == "bound" and near.bound == 0.9 * (1 + 8.8e-7)
    met = ref(0.9, 0.9 + 1e-11)
    assert met.kind == "optimum" and met.bound == 0.9
    small = ref(1e-3, 1e-3 + 5e-10)           # objectives below 1: the tolerance is absolute there
    assert small.kind == "optimum"


def test_disagreeing_proofs_are_an_error():
    with pytest.raises(SolverDisagreement):
        reference(pk(), [res("cpsat", 1.0, "optimal", 1.0), res("milp-cbc", 0.9, "optimal", 0.9)])


def test_score_table_and_summary():
    table = score([pk()], ["ff", "los", "cpsat"], time_limit=5)
    assert list(table["method"]) == ["ff", "los", "cpsat"]
    assert table.loc[table.method == "los", "gap"].iloc[0] == 0  # 5 + 5 = 10
    assert table.loc[table.method == "ff", "gap"].iloc[0] == pytest.approx(0.4)  # 6 of 10
    summ = summarize(table)
    assert set(summ.columns) >= {"mean_gap", "max_gap", "median_s"}


def test_entry_point_plugins_are_registered(monkeypatch):
    class EP:
        name = "packing:plugin-first"
        value = "somepkg:plugin"

        @staticmethod
        def load():
            return lambda inst: [0] if inst.n else []

    state = registry.METHODS.snapshot()                 # before the fake entry point is visible
    monkeypatch.setattr(catalog, "entry_points", lambda group: [EP()] if group == registry.ENTRY_POINT_GROUP else [])
    registry.METHODS.rewind(registry._plugins)
    try:
        assert "plugin-first" in registry.names("packing", "heuristic")
        assert registry.solve(pk(), "plugin-first").decision == (0,)
        assert "plugin-first" in registry.names("epochs", "heuristic")     # every packing heuristic serves epochs
    finally:
        registry.METHODS.restore(state)


def test_score_refuses_twice_named_instances_and_methods_before_writing(tmp_path, capsys):
    """Two instances of one name, a method named twice or none at all would
    count rows twice (or none) in the summary: one line, nothing written."""
    from epochbench.cli import main
    from epochbench.instances import save_instance
    folder = tmp_path / "f"
    folder.mkdir()
    inst = PackingInstance.build([10], [[4], [5]], meta={"name": "same"})
    save_instance(inst, folder / "a.json")
    save_instance(inst, folder / "b.json")
    cases = [("ff", "instance 'packing same' appears twice"), ("ff,ff", "method 'ff' appears twice"),
             ("", "no method"), ("ff,nosuch", "no method 'nosuch' for family 'packing'"),
             ("greedy-mkp", "no method 'greedy-mkp' for family 'packing'")]
    for k, (methods, needle) in enumerate(cases):
        if k == 1:
            (folder / "b.json").unlink()
        assert main(["score", str(folder), "--methods", methods, "--out", str(tmp_path / "s")]) == 2
        assert needle in capsys.readouterr().err
        assert not list(tmp_path.glob("s.*"))


def test_score_on_mixed_families_says_so_when_a_method_is_missing_from_one(tmp_path, capsys):
    """A folder holding packing and knapsack instances: ``ff`` has no
    knapsack method, and the message says the folder mixes families (it
    read as if ``ff`` were misspelt)."""
    from epochbench.cli import main
    from epochbench.instances import save_instance
    from epochbench.instances.knapsack import KnapsackInstance
    folder = tmp_path / "mix"
    folder.mkdir()
    save_instance(PackingInstance.build([10], [[4], [5]], meta={"name": "p"}), folder / "p.json")
    save_instance(KnapsackInstance.from_dict({"kind": "knapsack", "capacity": [10], "weights": [[4], [7]],
                                              "profit": [1.0, 2.0], "meta": {"name": "k"}}), folder / "k.json")
    assert main(["score", str(folder), "--methods", "ff", "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert "no method 'ff' for family 'knapsack'" in err
    assert "the instances mix the families" in err and "(1 of 2 are knapsack)" in err
    assert not list(tmp_path.glob("s.*"))


def test_a_method_that_raises_costs_its_rows_not_the_run(tmp_path, capsys):
    """score goes on: the failing method's rows say ``error`` with the
    message, the other methods are scored, the command exits 1 naming it."""
    from epochbench.cli import main
    from epochbench.instances import save_instance

    def broken(inst):
        raise RuntimeError("kaput")

    def broken_too(inst):
        raise ValueError("other")

    state = registry.METHODS.snapshot()
    try:
        registry.register("packing", "test-broken")(broken)
        registry.register("packing", "test-broken-too")(broken_too)
        folder = tmp_path / "f"
        folder.mkdir()
        for i in range(2):
            save_instance(PackingInstance.build([10], [[4], [5 + i]], meta={"name": f"p{i}"}), folder / f"p{i}.json")
        table = score([PackingInstance.build([10], [[4]], meta={"name": "t"})], ["ff", "test-broken"])
        assert list(table["status"]) == ["feasible", "error"] and "kaput" in table["error"].iloc[1]
        table = score([PackingInstance.build([10], [[4]], meta={"name": "t"})], ["test-broken", "ff", "bb"])
        assert list(table["method"]) == ["test-broken", "ff", "bb"]     # the order asked for (it came last)
        assert main(["score", str(folder), "--methods", "ff,cpsat,test-broken", "--time-limit", "5",
                     "--out", str(tmp_path / "s")]) == 1
        err = capsys.readouterr().err
        assert err.count("test-broken failed on") == 1 and "RuntimeError: kaput" in err     # the same error:
        assert "test-broken failed on 2 instances (p0, p1): RuntimeError: kaput" in err      # one line for both
        written = pd.read_csv(tmp_path / "s.csv")
        assert (written.loc[written.method == "ff", "gap"].notna()).all()
        prov = json.loads((tmp_path / "s.run.json").read_text())       # the record says it failed
        assert (prov["status"], prov["exit_status"], prov["failed"]) == ("failed", 1, 2)
        # the record counts the failed solves, not their lines, and quotes the first line printed
        assert main(["score", str(folder), "--methods", "ff,test-broken,test-broken-too",
                     "--out", str(tmp_path / "s3")]) == 1
        first = capsys.readouterr().err.strip().splitlines()[0].removeprefix("epochbench score: ")
        prov = json.loads((tmp_path / "s3.run.json").read_text())
        assert prov["error"] == f"4 failed solve(s), first: {first}"
        assert first == "test-broken failed on 2 instances (p0, p1): RuntimeError: kaput"
        assert main(["score", str(folder), "--methods", "ff", "--out", str(tmp_path / "s4")]) == 0
        assert "error" not in json.loads((tmp_path / "s4.run.json").read_text())    # a run that did not fail
    finally:
        registry.METHODS.restore(state)


def test_failure_lines_group_by_the_error_with_the_instance_as_its_subject_only():
    import pandas as pd
    from epochbench.cli import _failure_lines
    df = pd.DataFrame([dict(method="m", instance="a", error="RuntimeError: kaput"),       # 'a' inside 'kaput'
                       dict(method="m", instance="b", error="RuntimeError: kaput"),
                       dict(method="m", instance="1", error="InfeasibleSolution: job 1 is over capacity"),
                       dict(method="m", instance="2", error="InfeasibleSolution: job 2 is over capacity"),
                       dict(method="r", instance="x-1", error="InstanceError: x-1: no recorded choice"),
                       dict(method="r", instance="x-2", error="InstanceError: x-2: no recorded choice")])
    assert _failure_lines(df) == [
        "m failed on 2 instances (a, b): RuntimeError: kaput",
        "m failed on 1: InfeasibleSolution: job 1 is over capacity",         # other jobs: other errors
        "m failed on 2: InfeasibleSolution: job 2 is over capacity",
        "r failed on 2 instances (x-1, x-2): InstanceError: no recorded choice"]      # named before it
