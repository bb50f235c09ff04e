"""Findings of two report-only reviews (the library's contracts, the
command line's bad input), each reproduced first; every test fails on the
code before its fix.

1. JSON nested thousands deep is one line (``compare``, exit 2), an
   unreadable record (``runs``), a torn line (a sweep's store), not a
   ``RecursionError`` traceback.
2. ``compare --fail-on time:`` fails a method that B measured with no time.
3. ``compare`` refuses a benchmark JSON whose method or family is no string,
   or whose ``instances`` is 0 or not whole (0 was read as 1).
4. ``solve --json`` keeps the ``reference`` fields on a disagreement.
5. ``simulate``: a selector option that only the method's hook refuses is
   refused before the run; gang's ``trace``, ``check`` and ``recorder`` are
   checked; the slice count includes the switch overhead.
6. A selector that stalls a run is both ``MethodFailed`` and ``RunStalled``.
7. A method that changes its instance raises ``MethodFailed`` (still a
   ``ValueError``); an exact method's claims about a value that its
   decision does not have are withdrawn.
8. ``generate("braun", names=" ")`` is refused, not an empty family.
"""
from __future__ import annotations

import json
import pickle

import pandas as pd
import pytest

import epochbench as eb
from epochbench import cli
from epochbench.instances.core import MethodFailed
from epochbench.instances.jobs import make_workload
from epochbench.instances.registry import METHODS
from epochbench.sim.engine import RunStalled

DEEP = 3000


def _deep(key: str) -> str:
    return '{"%s":' % key + "[" * DEEP + "]" * DEEP + "}"


@pytest.fixture
def registry():
    state = METHODS.snapshot()
    yield
    METHODS.restore(state)


def _workload(n=40, procs=1, nodes=64):
    return make_workload({"id": range(1, n + 1), "submit": [10 * i for i in range(n)], "runtime": [5] * n,
                          "estimate": [5] * n, "procs": [procs] * n}, [nodes])


# ---- 1: nested JSON ---------------------------------------------------------------------------------
def test_deeply_nested_json_is_one_line_in_compare_and_unreadable_in_runs(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text(_deep("benchmarks"))
    assert cli.main(["compare", str(deep), str(deep)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested too deep" in err and "Traceback" not in err
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "run.json").write_text(_deep("a"))
    assert cli.main(["runs", str(tmp_path / "r")]) == 0
    assert "unreadable" in capsys.readouterr().out


def test_a_deeply_nested_store_line_is_a_torn_line_and_he_params_one_error():
    from epochbench import sweep
    from epochbench.instances.hypererlang import load_params
    assert sweep._record(_deep("task").encode()) is None
    with pytest.raises(ValueError, match="nested too deep"):
        load_params(_deep("classes"))


# ---- 2: a time guard and a method with no time in B ---------------------------------------------------
def _scores(path, ff_failed, ff_on="i"):
    """A score CSV of 4 instances, ff and cpsat; ``ff_failed``: ff's rows are error rows (no time);
    ``ff_on``: the prefix of ff's instances' names (another: ff measured on other instances)."""
    rows = []
    for i in range(4):
        ff = ({"status": "error", "error": "RuntimeError: boom", "gap": float("nan"), "seconds": float("nan")}
              if ff_failed else {"status": "feasible", "error": "", "gap": 0.05, "seconds": 1e-4})
        rows += [{"family": "packing", "instance": f"{ff_on}{i}", "method": "ff", "gap_kind": "optimum", **ff},
                 {"family": "packing", "instance": f"i{i}", "method": "cpsat", "gap_kind": "optimum",
                  "status": "optimal", "error": "", "gap": 0.0, "seconds": 0.01}]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_a_time_guard_fails_a_method_that_lost_all_its_times(tmp_path, capsys):
    a, b = _scores(tmp_path / "a.csv", False), _scores(tmp_path / "b.csv", True)
    assert cli.main(["compare", str(a), str(b), "--fail-on", "time:20%"]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.split()[:1] == ["ff"])
    assert "time-lost" in row and "FAIL packing ff: no time in B: every solve failed (limit time:20%)" in out
    assert cli.main(["compare", str(a), str(a), "--fail-on", "time:20%"]) == 0
    other = _scores(tmp_path / "other.csv", True, ff_on="j")     # ff on other instances: disjoint, not compared
    capsys.readouterr()
    assert cli.main(["compare", str(a), str(other), "--fail-on", "time:20%"]) == 0
    assert "FAIL" not in capsys.readouterr().out


# ---- 3: benchmark JSON of the wrong types ----------------------------------------------------------------
def _bench(name, method="ff", family="packing", instances=5):
    return {"name": name, "group": "packing", "stats": {"median": 0.001},
            "extra_info": {"method": method, "family": family, "mean_gap": 0.1, "max_gap": 0.1,
                           "instances": instances}}


@pytest.mark.parametrize("change,field", [({"method": ["ff"]}, "extra_info.method"),
                                          ({"method": 7}, "extra_info.method"),
                                          ({"family": {"x": 1}}, "extra_info.family"),
                                          ({"family": True}, "extra_info.family"),
                                          ({"instances": 0}, "extra_info.instances"),
                                          ({"instances": 2.5}, "extra_info.instances")])
def test_a_benchmark_field_of_the_wrong_type_is_refused(tmp_path, capsys, change, field):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"benchmarks": [_bench("t1"), _bench("t2")]}))
    b.write_text(json.dumps({"benchmarks": [_bench("t1", **change), _bench("t2")]}))
    assert cli.main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert f"{b}: benchmark 0: {field}" in err and err.count("\n") == 1


# ---- 4: solve --json on a disagreement ---------------------------------------------------------------------
def test_solve_json_keeps_the_reference_fields_on_a_disagreement(tmp_path, capsys):
    inst = eb.generate("leinberger", n=12, k=2, count=1, seed=3)[0]
    path = tmp_path / "i.json"
    eb.save(inst, path)
    ff = eb.solve(inst, "ff").value
    low = tmp_path / "low.csv"
    low.write_text(f"instance,optimum\n{inst.name},{ff / 2}\n")
    assert cli.main(["solve", str(path), "--method", "ff", "--reference", str(low), "--json"]) == 1
    ref = json.loads(capsys.readouterr().out)["reference"]
    assert {"value", "bound", "gap", "gap_kind", "ref_source", "beats_reference", "units"} <= set(ref)
    assert ref["gap_kind"] == "no bound" and ref["gap"] is None and "better than" in ref["disagreement"]


# ---- 5: simulate's options checked before the run -----------------------------------------------------------
@pytest.mark.parametrize("policy,kw,match", [
    ("bl-easy", {"selector_options": {"window": -1}}, "window"),
    ("easy", {"selector": "los", "selector_options": {"resource": 3}}, "resource")])
def test_a_selector_option_only_its_hook_refuses_is_refused_before_the_run(policy, kw, match):
    calls = []
    with pytest.raises(ValueError, match=f"selector_options: .*{match}"):   # no step had candidates here
        eb.simulate(_workload(), policy, on_pass=lambda *a: calls.append(a), **kw)
    assert calls == []


@pytest.mark.parametrize("kw,match", [({"recorder": 3}, "recorder: a GangRecorder"),
                                      ({"trace": "no"}, "trace: True or False"),
                                      ({"check": 0}, "check: True or False"),
                                      ({"switch_overhead": 0.9999999, "slice": 1}, "switch overhead")])
def test_gang_hooks_and_the_overheads_slices_are_checked(kw, match):
    jobs = {"id": range(1, 7), "submit": [0, 5, 9, 12, 20, 21], "runtime": [50, 30, 40, 10, 60, 5],
            "estimate": [60, 40, 40, 20, 90, 10], "procs": [32, 48, 16, 8, 64, 4]}
    with pytest.raises(ValueError, match=match):
        eb.simulate(make_workload(jobs, [64]), "gs", **kw)


# ---- 6: a stalled selector -------------------------------------------------------------------------------
def test_a_stalled_selector_is_both_method_failed_and_run_stalled(registry):
    eb.register("packing", "chooses-nothing")(lambda inst: [])
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "estimate": [5, 5], "procs": [4, 4]}, [8])
    with pytest.raises(MethodFailed, match="selector 'chooses-nothing'") as info:
        eb.simulate(w, "fcfs", selector="chooses-nothing")
    assert isinstance(info.value, RunStalled) and (info.value.queued, info.value.now) == (2, 1)
    again = pickle.loads(pickle.dumps(info.value))      # a worker's error reaches the client
    assert isinstance(again, RunStalled) and str(again) == str(info.value)


# ---- 7: a method's faults ----------------------------------------------------------------------------------
def test_a_plugin_policys_option_error_stays_a_value_error_and_its_bug_is_its_failure(registry):
    from epochbench.sim import policies, registry as sreg
    state = sreg.POLICIES.snapshot()

    def buggy(*, selector=None, selector_options=None):
        return len(5)
    try:
        sreg.register_policy("pool", "test-passes-foo", lambda **kw: policies.make("fcfs", foo=1),
                             origin="entry point x:y")
        sreg.register_policy("pool", "test-buggy", buggy, origin="entry point x:z")
        with pytest.raises(ValueError, match=r"^policy 'test-passes-foo' \(entry point x:y\): .*unknown option"):
            eb.simulate(_workload(), "test-passes-foo")
        with pytest.raises(MethodFailed, match=r"^policy 'test-buggy' \(entry point x:z\): its factory raised "
                                               r"TypeError"):
            eb.simulate(_workload(), "test-buggy")
        with pytest.raises(ValueError, match="unknown option 'bar'"):        # an option it does not take
            eb.simulate(_workload(), "test-buggy", bar=1)
    finally:
        sreg.POLICIES.restore(state)


def test_a_method_that_changes_its_instance_failed(registry):
    def mutates(inst):
        inst.meta["x"] = 1
        return []
    eb.register("packing", "mutates")(mutates)
    inst = eb.generate("leinberger", n=10, k=2, count=1, seed=1)[0]
    with pytest.raises(MethodFailed, match="changed the instance") as info:
        eb.solve(inst, "mutates")
    assert isinstance(info.value, ValueError)


def test_an_exact_claim_about_another_value_is_withdrawn(registry):
    inst = eb.generate("leinberger", n=30, k=3, count=1, seed=1)[0]
    ff = eb.solve(inst, "ff")

    @eb.register("packing", "claims-more", kind="exact")
    def claims_more(inst, *, time_limit, threads):
        return eb.Result(family="packing", method="x", decision=ff.decision, value=0.99, status="optimal",
                         seconds=0.0)

    r = eb.solve(inst, "claims-more", time_limit=1)
    assert (r.status, r.value, r.bound) == ("feasible", ff.value, None)
    assert "optimal claimed for a value 0.99" in r.info["withdrawn"]


# ---- 8: Braun's names ------------------------------------------------------------------------------------
@pytest.mark.parametrize("names", [" ", " \t "])
def test_braun_names_of_blanks_only_are_refused(names):
    with pytest.raises(ValueError, match="no file name"):
        eb.generate("braun", names=names)
