"""A plug-in's code called inside a simulation's loop fails in one line
naming it, exit status 1 on the command line (each case fails on the code
before its fix, where it ended in a traceback, or in exit status 2 as if
the command line were wrong; two tests hold what did not change: a working
plug-in's run, and the engine's own check of a start):

1. a pool policy a plug-in's factory made, whose ``schedule``, ``arrive``
   or ``__len__`` raises (or calls ``sys.exit``); what epochbench refused
   inside such a call (a start the engine checked) still reads as before;
2. a farm policy whose ``plan`` raises, or returns a list or None (a
   built-in path too: the farm checks every plan);
3. a CS policy's ``matcher`` or ``mkp`` that is a user's method and raises
   or gives a decision the checker refuses.
"""
from __future__ import annotations

import re

import pytest

import epochbench as eb
from epochbench import cli
from epochbench.instances.catalog import PluginObject, guarded
from epochbench.instances.core import MethodFailed
from epochbench.instances.jobs import make_workload
from epochbench.sim import registry as sreg
from epochbench.sim.engine import Policy
from epochbench.sim.farm import PlanError
from epochbench.sim.pool import simulate_pool


def _workload(jobs: int = 3, procs: int = 2, nodes: int = 4):
    """``jobs`` jobs of ``procs`` processors, one a second, 5 s each."""
    return make_workload({"id": range(1, jobs + 1), "submit": range(jobs), "runtime": [5] * jobs,
                          "estimate": [5] * jobs, "procs": [procs] * jobs}, [nodes])


class _Fifo(Policy):
    """A first-come-first-served pool policy whose step ``fail`` raises
    ``error`` (none: it works)."""
    name = "fifo"

    def __init__(self, fail=None, error=None):
        self.fail, self.error, self.q = fail, error, []

    def _maybe(self, step):
        if self.fail == step:
            raise self.error

    def arrive(self, job, now):
        self._maybe("arrive")
        self.q.append(job)

    def queue(self):
        return list(self.q)

    def __len__(self):
        self._maybe("__len__")
        return len(self.q)

    def schedule(self, now, machine, start):
        self._maybe("schedule")
        while self.q and machine.fits(self.q[0]):
            start(self.q.pop(0))


# ---- 1 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("step,error,said", [
    ("schedule", ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
    ("schedule", ValueError("bad\nstate"), "ValueError: bad state"),
    ("schedule", SystemExit(3), "SystemExit: 3"),
    ("arrive", KeyError(7), "KeyError: 7"),
    ("__len__", RuntimeError("lost count"), "RuntimeError: lost count")])
def test_a_plugin_pool_policy_that_raises_is_named(catalogs_restored, step, error, said):
    sreg.register_policy("pool", "test-fifo", lambda **kw: _Fifo(step, error), origin="entry point lab:fifo")
    with pytest.raises(MethodFailed) as caught:
        eb.simulate(_workload(), "test-fifo")
    assert str(caught.value) == f"policy 'test-fifo' (entry point lab:fifo): its {step} raised {said}"
    assert caught.value.__cause__ is error


def test_a_plugin_pool_policy_that_works_runs_as_the_same_code_given_directly(catalogs_restored):
    sreg.register_policy("pool", "test-fifo", lambda **kw: _Fifo(), origin="entry point lab:fifo")
    run = eb.simulate(_workload(), "test-fifo")
    w = _workload()
    direct = simulate_pool(w.table, w.capacity, _Fifo())
    assert run.policy == "test-fifo" and run.engine == "generic"
    assert run.jobs["start"].tolist() == direct.jobs["start"].tolist() == eb.simulate(_workload(), "fcfs").jobs[
        "start"].tolist()


def test_a_start_refused_inside_a_plugins_schedule_reads_as_the_engines(catalogs_restored):
    class Early(_Fifo):
        def schedule(self, now, machine, start):
            start(2)                       # job row 2 arrives at time 2
    sreg.register_policy("pool", "test-early", lambda **kw: Early(), origin="entry point lab:early")
    with pytest.raises(MethodFailed) as caught:
        eb.simulate(_workload(), "test-early")
    assert "its schedule raised" not in str(caught.value) and "before it arrived" in str(caught.value)


def test_a_plugin_pool_policy_that_raises_on_the_command_line(catalogs_restored, tmp_path, capsys):
    sreg.register_policy("pool", "test-fifo", lambda **kw: _Fifo("schedule", ZeroDivisionError("x")),
                         origin="entry point lab:fifo")
    csv = tmp_path / "jobs.csv"
    csv.write_text("id,submit,runtime,estimate,procs\n1,0,5,5,2\n2,1,5,5,2\n")
    status = cli.main(["simulate", "--workload", str(csv), "--nodes", "4", "--policy", "test-fifo",
                       "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    assert err == ["epochbench simulate: error: policy 'test-fifo' (entry point lab:fifo): its schedule raised "
                   "ZeroDivisionError: x"]


def test_a_keyboard_interrupt_in_a_plugin_passes_as_it_is():
    class Stop:
        def go(self):
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        guarded(Stop(), "policy 'x'", "entry point lab:x").go()


class _Plain:
    """A plug-in's object with an attribute the caller sets (a farm policy's ``untimed``)."""
    untimed = 0.0

    def add(self, x):
        self.untimed += x
        return self.untimed


def test_a_guarded_object_reads_and_writes_the_plugins_attributes():
    obj = _Plain()
    g = guarded(obj, "policy 'x'", "entry point lab:x")
    assert isinstance(g, PluginObject) and guarded(obj, "policy 'x'", "builtin") is obj
    g.untimed = 1.5
    assert obj.untimed == 1.5 and g.add(1.0) == 2.5 and g.untimed == 2.5
    with pytest.raises(AttributeError):
        g.missing
    import copy
    import pickle
    for twin in (copy.deepcopy(g), pickle.loads(pickle.dumps(g))):    # as a Dask worker gets it: still works
        assert isinstance(twin, PluginObject) and twin.add(0.5) == 3.0 and obj.untimed == 2.5


# ---- 2 ------------------------------------------------------------------------------------------------
def _edf_subclass(plan):
    edf = type(sreg.get_policy("farm", "edf").make())

    class Mine(edf):
        pass
    Mine.plan = plan
    return Mine


def test_a_plugin_farm_policy_that_raises_is_named(catalogs_restored):
    def plan(self, view):
        return {}["nothing"]
    sreg.register_policy("farm", "test-plan", lambda **kw: _edf_subclass(plan)(), origin="entry point lab:plan")
    with pytest.raises(MethodFailed, match=r"^policy 'test-plan' \(entry point lab:plan\): its plan raised "
                                           r"KeyError: 'nothing'$"):
        eb.simulate(None, "test-plan", farm_jobs=5)


@pytest.mark.parametrize("plan,said", [([1, 2], "list [1, 2]"), (None, "NoneType None")])
def test_a_farm_plan_that_is_no_mapping_is_refused(catalogs_restored, plan, said):
    sreg.register_policy("farm", "test-plan", lambda **kw: _edf_subclass(lambda self, view: plan)(),
                         origin="entry point lab:plan")
    with pytest.raises(PlanError, match=rf"^edf: its plan is {re.escape(said)}, not a mapping \{{job: machine\}}$"):
        eb.simulate(None, "test-plan", farm_jobs=5)


# ---- 3 ------------------------------------------------------------------------------------------------
def test_a_users_matcher_that_raises_is_named(catalogs_restored):
    @eb.register("assignment", "test-boom")
    def boom(inst):
        return 1 / 0
    with pytest.raises(MethodFailed, match=r"^matcher 'test-boom' of policy 'cs-i-p' failed on step "
                                           r"'cs-i-p-match-0': ZeroDivisionError: division by zero$"):
        eb.simulate(None, "cs-i-p", farm_jobs=10, matcher="test-boom")


def test_a_users_mkp_whose_decision_is_refused_is_named_exit_status_1(catalogs_restored, tmp_path, monkeypatch, capsys):
    @eb.register("knapsack", "test-outside")
    def outside(inst):
        return [len(inst.profit)]          # no such item
    monkeypatch.chdir(tmp_path)
    status = cli.main(["simulate", "--machine", "farm", "--policy", "cs-i-p", "--farm-jobs", "40", "--machines",
                       "10", "--licenses", "2", "--interarrival", "1", "--mkp", "test-outside"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1
    assert err[0].startswith("epochbench simulate: error: mkp 'test-outside' of policy 'cs-i-p' failed on step "
                             "'cs-i-p-mkp-") and "InfeasibleSolution" in err[0]


@pytest.mark.parametrize("role,family,options", [
    ("matcher", "assignment", dict(farm_jobs=10, matcher="test-none")),
    ("mkp", "knapsack", dict(farm_jobs=40, machines=10, licenses=2, interarrival=1, mkp="test-none")),
])
def test_a_users_step_method_that_chooses_nothing_is_named_when_the_farm_stops(catalogs_restored, role, family,
                                                                              options):
    """A user's matcher that pairs nothing (or a knapsack that keeps
    nothing) is a feasible answer, so the run goes on until nothing runs;
    the farm's line then says which step chose none (it named only the
    policy)."""
    @eb.register(family, "test-none")
    def none(inst):
        return []
    with pytest.raises(PlanError, match=rf"^cs-i-p: nothing runs and nothing arrives at t=.*, \d+ job\(s\) queued "
                                        rf".*; its last pass's {role} 'test-none' chose none of the \d+ job\(s\) "
                                        rf"it was given$"):
        eb.simulate(None, "cs-i-p", **options)


# ---- 4 ------------------------------------------------------------------------------------------------
class _Cheat(_Fifo):
    """Starts jobs past what the machine has (``free``: it sets the
    machine's free resources high first), or hides its queue (``len0``)."""

    def __init__(self, how):
        super().__init__()
        self.how = how

    def __len__(self):
        return 0 if self.how == "len0" else len(self.q)

    def schedule(self, now, machine, start):
        if self.how == "free":
            machine.free[:] = 10**9
        super().schedule(now, machine, start)


@pytest.mark.parametrize("how,said", [
    ("free", "its run is no valid schedule: at time 2 the jobs running hold 6 of resource 0 (capacity 4), from "
             "the start of job id 3"),
    ("len0", "its run is no valid schedule: 3 job(s) never started (first id 1)")])
def test_a_run_that_is_no_schedule_of_the_stream_is_refused(catalogs_restored, how, said):
    """A plug-in that changed what the engine checks starts against ran to
    exit status 0 (264 processors busy on 128 nodes in the review; every
    job left unstarted, with every metric empty)."""
    sreg.register_policy("pool", "test-cheat", lambda **kw: _Cheat(how), origin="entry point lab:cheat")
    with pytest.raises(MethodFailed) as caught:
        eb.simulate(_workload(), "test-cheat")
    assert str(caught.value) == f"policy 'test-cheat' (entry point lab:cheat): {said}"


def test_schedule_fault_from_the_stream_alone():
    import numpy as np
    from epochbench.sim.pool import schedule_fault
    submit = np.array([0.0, 0.0, 1.0, 1.0])
    duration = np.array([2.0, 3.0, 0.0, 1.0])
    demand = np.array([[2, 1], [2, 0], [4, 1], [2, 1]])
    cap = np.array([4, 2])
    ok = np.array([0.0, 0.0, 3.0, 2.0])        # job 2 starts at 3, when job 1 ends (no width: holds nothing)
    assert schedule_fault(submit, duration, demand, cap, ok) is None
    assert schedule_fault(submit, duration, demand, cap, np.array([0.0, 0.0, 3.0, 3.0])) is None   # end == start
    assert schedule_fault(submit, duration, demand, cap, np.array([0.0, 0.0, 3.0, 1.5])) == (
        "at time 1.5 the jobs running hold 6 of resource 0 (capacity 4), from the start of job id 3")
    assert schedule_fault(submit, duration, demand, cap, np.array([0.0, 0.0, 0.5, 2.0])) == (
        "1 job(s) started before they arrived (first id 2: start 0.5, submit 1)")
    assert schedule_fault(submit, duration, demand, cap, np.array([0.0, np.nan, 3.0, 2.0]), np.array([7, 8, 9, 10])) \
        == "1 job(s) never started (first id 8)"
    two = np.array([[1, 2], [1, 1], [1, 0], [1, 0]])
    assert schedule_fault(submit, duration, two, cap, np.array([0.0, 0.0, 3.0, 2.0])) == (
        "at time 0 the jobs running hold 3 of resource 1 (capacity 2), from the start of job id 1")


class _Waker(_Fifo):
    """Asks for a pass at ``wake`` while jobs wait."""

    def __init__(self, wake):
        super().__init__()
        self.wake = wake

    def wakeup(self):
        return self.wake if self.q else float("inf")


@pytest.mark.parametrize("wake", [-100.0, 1.0, "soon", float("nan")])
def test_a_wakeup_that_is_not_after_now_is_refused(wake):
    """A time in the past turned the clock back past every event: the run
    never ended (the time now: a second pass at the same time, for ever);
    a string ended in a numpy traceback."""
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "estimate": [5, 5], "procs": [4, 4]}, [4])
    with pytest.raises(MethodFailed, match=rf"^policy 'fifo' at time 1: wakeup\(\) returned "
                                           rf"{re.escape(repr(wake))}, not a time after now"):
        simulate_pool(w.table, w.capacity, _Waker(wake))        # the old code: no end (the suite's timeout)


@pytest.mark.parametrize("how,said", [("set", "assignment destination is read-only"),
                                      ("flag", "cannot set WRITEABLE flag to True of this array")])
def test_a_farm_policy_cannot_change_eligibility(catalogs_restored, how, said):
    def plan(self, view):
        if how == "flag":
            view.eligible.flags.writeable = True
        view.eligible[:] = True
        return {}
    sreg.register_policy("farm", "test-elig", lambda **kw: _edf_subclass(plan)(), origin="entry point lab:elig")
    with pytest.raises(MethodFailed, match=rf"^policy 'test-elig' \(entry point lab:elig\): its plan raised "
                                           rf"ValueError: {said}$"):
        eb.simulate(None, "test-elig", farm_jobs=5)


def test_a_plugin_policys_value_error_in_reset_is_the_callers_input(catalogs_restored):
    """A plug-in wrapping multi-queue, given partitions that a job does not
    fit, read as the plug-in's bug (exit status 1), where the built-in's
    refusal is the caller's input (2)."""
    from epochbench.sim import variants
    sreg.register_policy("pool", "test-mq", lambda **kw: variants.MultiQueue(**kw), origin="entry point lab:mq")
    with pytest.raises(ValueError, match=r"^policy 'test-mq' \(entry point lab:mq\): partitions: job id 1 ") as caught:
        eb.simulate(_workload(jobs=2, procs=16, nodes=16), "test-mq")
    assert not isinstance(caught.value, MethodFailed)


def test_the_engines_own_refusals_name_the_plugin(catalogs_restored):
    """A plug-in returning a built-in's object read as ``policy 'fifo'``."""
    sreg.register_policy("pool", "test-waker", lambda **kw: _Waker(-1.0), origin="entry point lab:waker")
    with pytest.raises(MethodFailed, match=r"^policy 'test-waker' \(entry point lab:waker\) at time 1: wakeup"):
        eb.simulate(_workload(jobs=2, procs=4), "test-waker")


# ---- 5 ------------------------------------------------------------------------------------------------
def _exits(*args, **kwargs):
    raise SystemExit(5)


def test_sys_exit_in_a_policy_factory_or_a_generator_is_its_failure(catalogs_restored, tmp_path, capsys):
    """It ended the command with the plug-in's own status and no word."""
    from epochbench.instances import generators as gen
    sreg.register_policy("pool", "test-exits", _exits, origin="entry point lab:exits")
    with pytest.raises(MethodFailed, match=r"^policy 'test-exits' \(entry point lab:exits\): its factory raised "
                                           r"SystemExit: 5$"):
        eb.simulate(_workload(), "test-exits")

    def exits(*, count: int = 1):
        raise SystemExit(5)
    gen.register_generator("test-exits", exits, origin="entry point lab:gexits")
    assert cli.main(["generate", "test-exits", "--out", str(tmp_path / "g")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["epochbench generate test-exits: error: generator 'test-exits' (entry point lab:gexits): it raised "
                   "SystemExit: 5"]


def test_sys_exit_in_an_experiments_run_is_that_tasks_failure(catalogs_restored, tmp_path, capsys):
    """With --workers 1 (the task in the command's process) it ended the
    command with status 5, nothing said, the run record's exit status
    empty."""
    import json
    from epochbench.experiments import Experiment, register
    register(Experiment("test-exits", "mine", lambda opts: [{"i": 0}, {"i": 1}],
                        lambda task: _exits() if task["i"] else [{"x": 0}], lambda df: df),
             origin="entry point lab:EXITS")
    status = cli.main(["experiment", "test-exits", "--workers", "1", "--out", str(tmp_path / "e"), "--quiet"])
    err = capsys.readouterr().err
    assert status == 1 and "SystemExit: 5" in err
    record = json.loads(next((tmp_path / "e").glob("*.run.json")).read_text())
    assert record["exit_status"] == 1


@pytest.mark.parametrize("returned,said", [([1, 2], "run() returned a row that is 1 (int), not a dict"),
                                           (None, "run() returned None (NoneType), not a row (a dict) or a list "
                                                  "of rows")])
def test_an_experiments_run_returning_no_rows_is_that_tasks_failure(catalogs_restored, tmp_path, capsys, returned,
                                                                     said):
    """A list of numbers ended the whole command in a traceback from the
    table's column types; None failed as "'NoneType' object is not
    iterable"."""
    from epochbench.experiments import Experiment, register
    register(Experiment("test-norows", "mine", lambda opts: [{"i": 0}, {"i": 1}],
                        lambda task: returned if task["i"] else [{"x": 0}], lambda df: df),
             origin="entry point lab:NOROWS")
    status = cli.main(["experiment", "test-norows", "--workers", "1", "--out", str(tmp_path / "e"), "--quiet"])
    err = capsys.readouterr().err
    assert status == 1 and f"first: task {{'i': 1}} failed: TypeError: {said}" in err   # then the task's traceback,
    assert (tmp_path / "e" / "test-norows.partial.jsonl").exists()                      # the other run kept


def _bare(meta):
    import numpy as np
    from epochbench.instances.packing import PackingInstance
    good = eb.generate("leinberger", n=2, k=1, count=1, seed=0)[0]
    return PackingInstance(capacity=good.capacity, demand=np.array([[-5], [2]]), used=good.used,
                           estimate=good.estimate, profit=good.profit, reservation=None, objective=good.objective,
                           meta=meta)


@pytest.mark.parametrize("make,said", [
    (lambda: [_bare({"name": "neg"})], "its instance 'neg' is not one its family reads: "),
    (lambda: [_bare({})], "its instance 0 has no name (set meta['name'])"),
    (lambda: [eb.generate("leinberger", n=2, k=1, count=1, seed=0)[0],
              eb.generate("braun-range", count=1, tasks=4, machines=2, task_het="hi", machine_het="hi",
                          consistency="i")[0]],
     "it returned instances of 2 families (mapping, packing); a family folder holds one")])
def test_a_plugin_generators_instances_are_checked_as_files_would_be(catalogs_restored, tmp_path, make, said):
    """An instance made with the bare constructor (a demand of -5) was
    written, exit status 0, and refused by every command that read it; one
    without a name was the user's error (exit 2), the generator unnamed; two
    families were written into one folder."""
    from epochbench.instances import generators as gen

    def made(*, count: int = 1):
        return make()
    gen.register_generator("test-made", made, origin="entry point lab:made")
    with pytest.raises(MethodFailed) as caught:
        eb.generate("test-made")
    assert str(caught.value).startswith(f"generator 'test-made' (entry point lab:made): {said}")
    assert cli.main(["generate", "test-made", "--out", str(tmp_path / "g")]) == 1
    assert not (tmp_path / "g").exists()


def test_a_users_check_params_hook_that_raises_is_its_failure(own_methods, tmp_path, capsys):
    """A ZeroDivisionError in it was a traceback (solve, score)."""
    def hooked(inst, size=1):
        return []
    hooked.check_params = lambda inst, **params: 1 / 0
    eb.register("packing", "test-hooked")(hooked)
    inst = eb.generate("leinberger", n=4, k=1, count=1, seed=0)[0]
    eb.save(inst, tmp_path / "i.json")
    status = cli.main(["solve", str(tmp_path / "i.json"), "--method", "test-hooked", "--param", "size=2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1
    assert err[0].endswith("packing method 'test-hooked' (module test_plugin_calls) on "
                           "leinberger-K1-uniform-n4-s0000-000: its check_params hook raised ZeroDivisionError: "
                           "division by zero")


def test_a_policys_prints_do_not_corrupt_calibrates_json(catalogs_restored, tmp_path, capsys):
    """``calibrate``'s stdout began "POLICY SAYS" before its JSON (``simulate
    --json`` already sent such prints to stderr)."""
    import json
    from epochbench.instances.workloads import write_workload

    class Loud(_Fifo):
        def schedule(self, now, machine, start):
            print("POLICY SAYS", now)
            super().schedule(now, machine, start)
    sreg.register_policy("pool", "test-loud", lambda **kw: Loud(), origin="entry point lab:loud")
    src = write_workload(tmp_path / "w.swf", model="feitelson96", jobs=300, seed=4)
    cli.main(["calibrate", str(src), "--target", "4", "--policy", "test-loud"])
    out, err = capsys.readouterr()
    assert json.loads(out)["target"] == 4 and "POLICY SAYS" in err


def test_a_selector_refuted_by_epoch_gaps_is_said(own_methods, tmp_path, capsys):
    """An exact plug-in selector that claims every empty answer optimal was
    only counted (``contradicted`` 327 of 357 steps in a review), its
    ``selector_stats.unproven`` 0: the run read as an oracle's."""
    from epochbench.instances.core import Result

    def liar(inst, time_limit=None, threads=1):
        return Result("packing", "test-liar", (), 0.0, "optimal", 0.0, bound=0.0)
    eb.register("packing", "test-liar", kind="exact")(liar)
    csv = tmp_path / "jobs.csv"           # 2 blocks the head's 6 until 100; 3 backfills (ff starts it)
    csv.write_text("id,submit,runtime,estimate,procs\n1,0,100,100,6\n2,1,5,5,6\n3,2,10,10,2\n")
    cli.main(["simulate", "--workload", str(csv), "--nodes", "8", "--policy", "easy", "--selector", "test-liar",
              "--epoch-gaps", "ff", "--json"])
    out, err = capsys.readouterr()
    import json
    said = json.loads(out)["extras"]["epoch_gaps"]["contradicted"]
    assert said > 0 and (f"epochbench simulate: note: selector 'test-liar' called {said} step(s) optimal where an "
                         "--epoch-gaps method did better") in err


def test_a_plugin_policys_options_must_be_reportable(catalogs_restored):
    """``simulate --json`` and ``--out`` ended in a traceback after the run."""
    class Odd(_Fifo):
        def options(self):
            return {"x": object()}
    sreg.register_policy("pool", "test-odd", lambda **kw: Odd(), origin="entry point lab:odd")
    with pytest.raises(MethodFailed, match=r"^policy 'test-odd' \(entry point lab:odd\): its options\(\) returned "
                                           r"what a report cannot hold: Object of type object is not JSON"):
        eb.simulate(_workload(), "test-odd")


def test_a_users_exact_reference_that_fails_stops_validate_in_one_line(catalogs_restored):
    """``eb.validate(..., exact=PLUGIN)`` whose reference answers a decision
    the checker refuses (a review: job 0 of an empty queue) raised
    ``InfeasibleSolution`` out of validate, which lists ValueError only."""
    @eb.register("packing", "test-ex-lie", kind="exact")
    def lie(inst, *, time_limit, threads):
        return eb.Result("packing", "test-ex-lie", (0,), None, "optimal", None, bound=0.0115)
    with pytest.raises(MethodFailed, match=r"^the exact reference 'test-ex-lie' failed on instance '.+': "
                                           r"InfeasibleSolution: .*job 0") as err:
        eb.validate(lambda inst: [], count=1, exact="test-ex-lie", time_limit=5)
    assert "\n" not in str(err.value)


def test_a_result_of_another_family_is_refused_as_such(registry_restored):
    """A plug-in that returned an epochs Result for a packing instance was
    told its decision's shape was wrong (a review)."""
    @eb.register("packing", "test-wrong-family")
    def wrong(inst):
        return eb.Result("epochs", "test-wrong-family", ((0,),), 1.0, "feasible", 0.0)
    inst = eb.generate("leinberger", n=4, k=1, count=1, seed=1)[0]
    from epochbench.instances.core import InfeasibleSolution
    with pytest.raises(InfeasibleSolution,
                       match=r": test-wrong-family returned a Result of family 'epochs' for a packing instance$"):
        eb.solve(inst, "test-wrong-family")


def test_a_users_selector_whose_decision_is_refused_names_the_refusal_as_the_other_steps_do(catalogs_restored):
    """The pool selector's step goes through ``registry.solve_step`` as the
    epoch gaps' and the CS policies' steps do: a refused decision names its
    type there too (the selector's line had dropped it)."""
    @eb.register("packing", "test-twice")
    def twice(inst):
        return [0, 0] if inst.n else []
    jobs = {"id": range(1, 5), "submit": [0, 1, 2, 3], "runtime": [50, 30, 40, 10], "estimate": [60, 40, 40, 20],
            "procs": [48, 32, 16, 8]}
    with pytest.raises(MethodFailed, match=r"^selector 'test-twice' failed at step 1 of policy 'easy', time \d+, on "
                                           r"\d+ candidate job\(s\) \[\d.*\] \(a decision's index i is the i-th of "
                                           r"them\): InfeasibleSolution: easy@\d+: selection starts job 0 twice$"):
        eb.simulate(make_workload(jobs, [64]), "easy", selector="test-twice")


def test_many_resources_are_added_without_a_warning_each():
    """k_resources inserted one column at a time; past 100 pandas warned at
    each (about 1,800 lines of PerformanceWarning at k = 1,000)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = eb.generate("workload", jobs=20, seed=1, k=300)
    assert [c for c in s.jobs.columns if c.startswith("res_")] == [f"res_{r}" for r in range(1, 300)]
