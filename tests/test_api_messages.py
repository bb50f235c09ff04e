"""Bad input to the Python face gets one clear line (an audit of the API).

1. ``eb.validate(..., scheduler=3)`` raised AttributeError from inside the sweep.
2. A registered method with a second required argument raised Python's
   TypeError at ``eb.solve``, naming neither the method nor the keyword.
3. ``eb.solve("ff", inst)`` printed the whole instance (3,500 characters).
4. ``engine="fast"`` on a policy without a compiled loop said "no selector,
   selector options, on_pass or machine", none of which was given.
5. ``eb.save(inst, folder)`` said "pass overwrite=True", which then failed.
Each test fails on the code before.
"""
from __future__ import annotations

import numpy as np
import pytest

import epochbench as eb
from epochbench.instances import registry


@pytest.fixture
def inst():
    return eb.generate("leinberger", n=64, k=2, count=1, seed=1)[0]


@pytest.mark.parametrize("address", [3, ["tcp://x:1"]])
def test_a_scheduler_that_is_not_text_is_one_value_error(address):
    with pytest.raises(ValueError, match=r"^scheduler: expected an address such as 'tcp://head:8786', got "):
        eb.validate(lambda i: (), count=0, scheduler=address)


def test_a_methods_required_keyword_is_named_before_it_runs(inst, tmp_path, capsys):
    from epochbench import cli
    registry.register("packing", "needs-x-test", origin="test")(lambda instance, x: ())
    try:
        with pytest.raises(ValueError, match=r"^packing method 'needs-x-test': parameter 'x' has no default; give "
                                             r"it with the keyword x=\.\.\.$"):
            eb.solve(inst, "needs-x-test")
        assert eb.solve(inst, "needs-x-test", x=1).decision == ()
        eb.save(inst, tmp_path / "i.json")
        assert cli.main(["solve", str(tmp_path / "i.json"), "--method", "needs-x-test"]) == 2
        assert "parameter 'x' has no default; give it with --param x=VALUE" in capsys.readouterr().err
        assert cli.main(["solve", str(tmp_path / "i.json"), "--method", "needs-x-test", "--param", "x=1"]) == 0
    finally:
        registry._REGISTRY.pop(("packing", "needs-x-test"), None)


def test_an_exact_methods_own_keywords_count_as_given(inst):
    def mine(instance, *, time_limit, threads):
        return ()
    registry.register("packing", "exact-kw-test", kind="exact", origin="test")(mine)
    try:
        assert eb.solve(inst, "exact-kw-test", time_limit=1).decision == ()
    finally:
        registry._REGISTRY.pop(("packing", "exact-kw-test"), None)


def test_swapped_solve_arguments_get_a_short_message(inst):
    with pytest.raises(ValueError) as info:
        eb.solve("ff", inst)
    said = str(info.value)
    assert said.startswith("method: expected a method name, got PackingInstance(capacity=array([1000, 1000]), ")
    assert "\n" not in said and len(said) < 200
    assert said.endswith("... (the arguments are eb.solve(instance, method))")


def test_engine_fast_names_what_has_no_compiled_loop():
    jobs = ({"id": np.arange(1, 4), "submit": np.array([0., 1, 2]), "runtime": np.array([10.] * 3),
             "procs": np.array([64] * 3)}, 64)
    from epochbench.sim import policies, registry as sreg
    sreg.POLICIES.complete()
    state = sreg.POLICIES.snapshot()
    try:                                             # every built-in pool policy has one: a user's has not
        sreg.register_policy("pool", "test-mine", lambda **kw: policies.make("easy"), origin="test")
        with pytest.raises(ValueError, match=r"^engine='fast': policy 'test-mine' has no compiled loop \(fast "
                                             r"path\); those with one: fcfs, .*easy, conservative.* \(leave "
                                             r"engine='auto' for the generic engine\)"):
            eb.simulate(jobs, "test-mine", engine="fast")
    finally:
        sreg.POLICIES.restore(state)
    with pytest.raises(ValueError, match=r"^engine='fast' \(the compiled fast path\) of policy 'easy' takes no "
                                         r"selector; leave engine='auto'"):
        eb.simulate(jobs, "easy", engine="fast", selector="ff")
    assert eb.simulate(jobs, "easy", engine="fast").engine == "fast"


@pytest.mark.parametrize("overwrite", [False, True])
def test_saving_one_instance_to_a_folder_says_to_name_a_file(inst, tmp_path, overwrite):
    with pytest.raises(ValueError, match=r": is a folder; save one instance to a file \(e\.g\. .*\.json\)"):
        eb.save(inst, tmp_path, overwrite=overwrite)
    eb.save(inst, tmp_path / "i.json")
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        eb.save(inst, tmp_path / "i.json")
    eb.save(inst, tmp_path / "i.json", overwrite=True)


@pytest.mark.parametrize("policy, flags, said, keyword", [
    ("gs", ["--switch-overhead", "1.5"], "--switch-overhead: a fraction of the slice in [0, 1), got 1.5",
     {"switch_overhead": 1.5}),
    ("mgs", ["--variant", "1"], "--variant: migration policies take variant 2", {"variant": 1}),
    ("gs", ["--slice", "1e-6"], "--slice: 1e-06 s cuts this stream's", {"slice": 1e-6}),
    ("multi-queue", ["--partitions", "1,2"], "--partitions: processor counts summing to 64", {"partitions": "1,2"}),
])
def test_command_line_messages_name_flags_and_python_ones_keywords(tmp_path, monkeypatch, capsys, policy, flags,
                                                                   said, keyword):
    """The command line said ``switch_overhead: ...`` where its option is
    ``--switch-overhead``; a Python call still names the keyword."""
    from epochbench import cli
    from epochbench.instances.jobs import make_workload, write_table
    jobs = {"id": np.arange(1, 5), "submit": np.array([0., 1, 2, 3]), "runtime": np.array([1e4] * 4),
            "procs": np.array([64, 8, 8, 8])}
    write_table(make_workload(jobs, 64), tmp_path / "w.csv")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["simulate", "--workload", "w.csv", "--policy", policy, *flags]) == 2
    assert f"epochbench simulate: error: {said}" in capsys.readouterr().err
    python = said.split(":", 1)[0][2:].replace("-", "_")
    with pytest.raises(ValueError, match=rf"^{python}: "):
        eb.simulate(tmp_path / "w.csv", policy, **keyword)


def test_a_positional_only_second_argument_is_named_as_such(inst):
    """It was told to give ``x=...``, which then had no parameter ``x``."""
    registry.register("packing", "posonly-test", origin="test")(lambda instance, x, /: ())
    try:
        with pytest.raises(ValueError, match=r"^packing method 'posonly-test': positional-only parameter 'x' has no "
                                             r"default, and a method is called func\(instance, \*\*keywords\)"):
            eb.solve(inst, "posonly-test")
    finally:
        registry._REGISTRY.pop(("packing", "posonly-test"), None)


def test_a_heuristics_required_budget_is_given_only_when_a_time_limit_is(inst):
    """registry.solve passes a heuristic its time_limit only when one is
    given: counting it as always given let the raw TypeError through."""
    def budgeted(instance, *, time_limit):
        return ()
    registry.register("packing", "budget-test", origin="test")(budgeted)
    try:
        with pytest.raises(ValueError, match=r"parameter 'time_limit' has no default; give it with the keyword "
                                             r"time_limit=\.\.\."):
            eb.solve(inst, "budget-test")
        assert eb.solve(inst, "budget-test", time_limit=1).decision == ()
    finally:
        registry._REGISTRY.pop(("packing", "budget-test"), None)


def test_no_note_names_an_empty_list_before_an_unknown_methods_error(inst, tmp_path, capsys):
    from epochbench import cli
    eb.save(inst, tmp_path / "i.json")
    assert cli.main(["score", str(tmp_path / "i.json"), "--methods", "nosuch", "--threads", "4"]) == 2
    err = capsys.readouterr().err
    assert "note" not in err and "no method 'nosuch'" in err


def test_workers_beside_a_scheduler_are_refused_not_ignored(inst, monkeypatch):
    """``eb.score(workers=4, scheduler=...)`` ran on the scheduler and said
    nothing of ``workers``; the command line refuses the pair.  Nothing is
    contacted: the refusal comes first."""
    with pytest.raises(ValueError, match=r"^workers=4 and scheduler='tcp://127\.0\.0\.1:9': the scheduler's "
                                         r"workers run the sweep .*; give one of them$"):
        eb.score([inst], "ff", workers=4, scheduler="tcp://127.0.0.1:9")
    with pytest.raises(ValueError, match=r"^workers=2 and scheduler="):
        eb.validate(lambda i: (), count=0, workers=2, scheduler="tcp://127.0.0.1:9")
    monkeypatch.setenv("EPOCHBENCH_SCHEDULER", "tcp://127.0.0.1:9")
    with pytest.raises(ValueError, match=r"^workers=3 and \$EPOCHBENCH_SCHEDULER \(tcp://127\.0\.0\.1:9\): .*"
                                         r"unset EPOCHBENCH_SCHEDULER to run on local workers$"):
        eb.score([inst], "ff", workers=3)
    monkeypatch.delenv("EPOCHBENCH_SCHEDULER")
    assert len(eb.score([inst], "ff", workers=1)) == 1          # the default and one worker stay as they were
