"""A user's method cannot look better than it is: a decision of the wrong
type is refused (a set, a dict, a generator, a string, None used to be
read through ``tuple()``), the time is the one measured around the call
(a returned ``Result`` used to keep its own ``seconds``), and the share at
the reference counts a failed or unanswered instance as not at it (it used
to read 100 % beside 8 failures of 10)."""
import sys

import numpy as np
import pandas as pd
import pytest

import epochbench as eb
from epochbench.instances.core import InfeasibleSolution, Result
from epochbench.scoring import summarize
from epochbench.validation import Verdict, verdict_table

pytestmark = pytest.mark.usefixtures("registry_restored")   # the methods registered here leave with each test


@pytest.fixture(scope="module")
def inst():
    return eb.generate("leinberger", n=6, k=2, count=1, seed=1)[0]


@pytest.mark.parametrize("out", [{0}, {0: "x"}, (i for i in [0]), "", None, 0],
                         ids=["set", "dict", "generator", "str", "none", "int"])
def test_a_decision_of_the_wrong_type_is_refused(inst, out):
    name = f"test-wrong-type-{type(out).__name__}"
    eb.register("packing", name)(lambda i, out=out: out)
    with pytest.raises(InfeasibleSolution, match=rf"returned .* \({type(out).__name__}\), not a decision"):
        eb.solve(inst, name)


def test_the_time_is_measured_around_the_call_not_reported_by_the_method(inst):
    import time

    def slow_but_says_fast(i):
        time.sleep(0.05)
        return Result("packing", "x", (), 0.0, "feasible", 1e-9)

    def not_timed(i):
        return Result("packing", "x", (), 0.0, "feasible", None)

    eb.register("packing", "test-says-fast")(slow_but_says_fast)
    eb.register("packing", "test-not-timed")(not_timed)
    assert eb.solve(inst, "test-says-fast").seconds >= 0.05
    assert 0 <= eb.solve(inst, "test-not-timed").seconds < 1
    with pytest.raises(ValueError, match="seconds must be a finite number >= 0"):   # no time, not a wrong one
        Result("packing", "x", (), 0.0, "feasible", -5.0)


def test_failed_instances_count_as_not_at_the_reference():
    rows = pd.DataFrame({"method": ["mine"] * 4 + ["ff"] * 4, "instance": list("abcd") * 2,
                         "ok": [True, False, False, False] + [True] * 4,
                         "gap": [0.0, 0.0, np.nan, 0.5] + [0.0, 0.1, 0.0, 0.0],   # a failure may carry a gap
                         "gap_kind": ["optimum"] * 8, "seconds": [0.001] * 8})
    text = verdict_table(Verdict(rows, ["three failures"]))
    mine = next(line for line in text.splitlines() if line.split()[0] == "mine").split()
    assert mine[1:6] == ["4", "3", "0.00%", "0.00%", "25%"]             # instances, failures, mean, max, at ref
    ff = next(line for line in text.splitlines() if line.split()[0] == "ff").split()
    assert ff[5] == "75%"


def test_unanswered_solves_count_as_not_at_the_reference_in_score():
    table = pd.DataFrame({"family": ["packing"] * 4, "method": ["m"] * 4, "gap": [0.0, np.nan, np.nan, np.nan],
                          "value": [3.0, np.nan, np.nan, np.nan], "seconds": [0.01] * 4,
                          "gap_kind": ["optimum"] * 4, "beats_reference": [False] * 4})
    row = summarize(table).iloc[0]
    assert row["no_answer"] == 3 and row["mean_gap"] == 0.0 and row["at_bound"] == 0.25


@pytest.mark.parametrize("mode", ["over", "dup", "raise", "none"])
def test_a_selector_that_fails_mid_simulation_is_named_with_its_step_and_jobs(mode):
    from epochbench.instances.core import MethodFailed
    from epochbench.instances.workloads import workload
    calls = {"n": 0}

    def flaky(inst):
        calls["n"] += 1
        if calls["n"] < 5 or inst.n < 2:
            return []
        return {"over": lambda: list(range(inst.n)) * 2, "dup": lambda: [0, 0],
                "raise": lambda: 1 / 0, "none": lambda: None}[mode]()

    eb.register("packing", f"test-flaky-{mode}")(flaky)
    s = workload(model="lublin03", jobs=400, seed=3, processors=64)
    with pytest.raises(MethodFailed, match=rf"selector 'test-flaky-{mode}' failed at step \d+ of policy 'easy', "
                                           r"time \d+, on \d+ candidate job\(s\) \[\d+") as err:
        eb.simulate((s.jobs, s.capacity), policy="easy", selector=f"test-flaky-{mode}")
    assert "\n" not in str(err.value) and err.value.__cause__ is not None


def test_sys_exit_in_a_users_method_fails_that_method_not_the_command(inst, tmp_path, capsys):
    """``score`` and ``simulate`` ended with status 0 and no output when a
    registered heuristic called ``sys.exit(0)``."""
    from epochbench import cli
    from epochbench.instances.core import MethodFailed
    from epochbench.instances.jobs import make_workload

    def leaves(i):
        raise SystemExit(0)

    eb.register("packing", "test-exits")(leaves)
    with pytest.raises(MethodFailed, match=r"method 'test-exits' \(.*\) raised SystemExit\(0\)"):
        eb.solve(inst, "test-exits")
    table = eb.score([inst], ["test-exits", "ff"])
    assert list(table["status"]) == ["error", "feasible"] and "SystemExit(0)" in table["error"].iloc[0]
    jobs = {"id": range(1, 5), "submit": [0, 1, 2, 3], "runtime": [50, 30, 40, 10], "estimate": [60, 40, 40, 20],
            "procs": [48, 32, 16, 8]}
    with pytest.raises(MethodFailed, match=r"selector 'test-exits' failed at step 1 .*SystemExit\(0\)"):
        eb.simulate(make_workload(jobs, [64]), "easy", selector="test-exits")
    eb.save([inst], tmp_path / "fam")
    capsys.readouterr()
    assert cli.main(["score", str(tmp_path / "fam"), "--methods", "test-exits,ff", "--workers", "1"]) == 1
    assert (tmp_path / "fam" / "scores.csv").exists()
    assert "test-exits failed on" in capsys.readouterr().err


def test_a_packing_heuristic_serves_epochs_with_a_result_and_one_budget_for_the_whole_plan():
    """Its epochs method refused an ``eb.Result`` (documented as a decision)
    and gave each epoch the whole time limit again (1 s took 3 s on six
    epochs)."""
    import time
    seen = []

    def one_at_a_time(inst, time_limit=1.0):
        seen.append(time_limit)
        time.sleep(min(0.05, time_limit))
        return Result("packing", "x", (0,), 0.0, "feasible", 0.0)

    eb.register("packing", "test-result-epochs")(one_at_a_time)
    E = eb.generate("leinberger", n=5, k=2, count=1, seed=1)[0]
    from epochbench.instances.packing import EpochsInstance
    epochs = EpochsInstance.build(E.capacity, E.demand, meta={"name": "e5"})
    res = eb.solve(epochs, "test-result-epochs", time_limit=0.12)
    assert res.value == 5 and len(seen) == 5
    from epochbench.instances.packing import MIN_EPOCH_TIME_LIMIT      # once spent, each epoch gets the floor
    assert seen[0] <= 0.12 and all(b <= a for a, b in zip(seen, seen[1:])) and seen[-1] == MIN_EPOCH_TIME_LIMIT
    assert res.seconds < 0.4


def test_a_reservations_arrays_are_read_only_in_the_copy_a_user_gets():
    """Only the instance's own fields were made read-only: a write to
    ``inst.reservation.extra`` passed, and was caught only afterwards."""
    from epochbench.instances.core import handed
    inst = next(i for i in eb.generate("los", n=6, count=10, seed=1) if i.reservation is not None)
    given, _ = handed(inst)
    for arr in (given.reservation.extra, given.reservation.past_shadow, given.demand):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 0


def test_sys_exit_in_a_users_warm_up_or_check_params_hook_fails_that_method(inst):
    """The method's hooks ran outside the SystemExit handling of its call:
    ``sys.exit(0)`` in ``warm_up`` ended ``score`` with status 0 and no
    output, as in the method itself."""
    from epochbench.instances.core import MethodFailed

    def cold(i):
        return ()

    cold.warm_up = lambda: sys.exit(0)
    eb.register("packing", "test-exits-warm")(cold)
    with pytest.raises(MethodFailed, match=r"method 'test-exits-warm' \(.*\) raised SystemExit\(0\)"):
        eb.solve(inst, "test-exits-warm")
    table = eb.score([inst], ["test-exits-warm", "ff"])
    assert list(table["status"]) == ["error", "feasible"]

    def checked(i, size=1):
        return ()

    checked.check_params = lambda i, **params: sys.exit(3)
    eb.register("packing", "test-exits-check")(checked)
    with pytest.raises(MethodFailed, match=r"method 'test-exits-check' \(.*\) on .*check_params hook raised "
                                           r"SystemExit: 3$"):            # its failure (exit 1), not bad input
        eb.score([inst], ["test-exits-check"], params={"packing": {"test-exits-check": {"size": 2}}})


@pytest.mark.parametrize("claim", ["infeasible", "timeout", "optimal"])
def test_a_heuristics_status_beside_a_checked_decision_is_feasible(inst, claim):
    """A heuristic returning ``Result(status="infeasible")`` with a checked
    decision kept that status: score read 'infeasible' beside its value and
    gap."""
    eb.register("packing", f"test-claims-{claim}")(
        lambda i: Result("packing", "x", (0,), 0.0, claim, 0.0))
    r = eb.solve(inst, f"test-claims-{claim}")
    assert r.status == "feasible" and r.bound is None and r.info["claimed"] == claim
    table = eb.score([inst], [f"test-claims-{claim}"])
    assert table["status"].tolist() == ["feasible"]


def test_an_exact_methods_infeasible_beside_a_checked_decision_is_withdrawn(inst):
    """eb.solve returned status 'infeasible' with a decision that passed the
    checker (and its value): only score, beside another method, noticed."""
    def claims(i, *, time_limit, threads):
        return Result("packing", "x", (0,), None, "infeasible", 0.0)
    eb.register("packing", "test-exact-infeasible", kind="exact")(claims)
    r = eb.solve(inst, "test-exact-infeasible")
    assert r.status == "feasible" and r.decision == (0,) and r.bound is None
    assert r.info["withdrawn"] == "infeasible claimed beside a decision that passed the checker"

    def claims_more(i, *, time_limit, threads):         # a bound below the value too: both reasons kept
        return Result("packing", "x", (0,), None, "infeasible", 0.0, bound=0.0)
    eb.register("packing", "test-exact-infeasible-bound", kind="exact")(claims_more)
    why = eb.solve(inst, "test-exact-infeasible-bound").info["withdrawn"]
    assert why.startswith("infeasible claimed beside a decision that passed the checker; bound 0.0 is on the wrong")


@pytest.mark.parametrize("policy", ["fcfs", "nonfcfs"])
def test_a_selector_that_starts_nothing_on_an_idle_machine_stops_the_run(policy):
    """The selector takes the whole step of fcfs and nonfcfs: choosing
    nothing with nothing running left the run without an event, and it
    ended "successfully" with every start NaN (every metric NaN, no word)."""
    from epochbench.instances.core import MethodFailed
    from epochbench.instances.jobs import make_workload
    w = make_workload({"id": range(1, 7), "submit": [0, 5, 9, 12, 20, 21], "runtime": [50, 30, 40, 10, 60, 5],
                       "estimate": [60, 40, 40, 20, 90, 10], "procs": [32, 48, 16, 8, 64, 4]}, [64])
    eb.register("packing", f"test-idle-{policy}")(lambda inst: [])
    with pytest.raises(MethodFailed, match=rf"^selector 'test-idle-{policy}' of policy '{policy}': 6 job\(s\) never "
                                           r"started: at time 21 nothing ran, arrived or was due"):
        eb.simulate(w, policy, selector=f"test-idle-{policy}")
    assert eb.simulate(w, "easy", selector=f"test-idle-{policy}").jobs["start"].notna().all()   # EASY starts its head


def test_a_policy_object_that_never_starts_its_jobs_stops_the_run():
    from epochbench.sim.engine import RunStalled
    from epochbench.sim.policies import FCFS
    from epochbench.sim.pool import simulate_pool

    class Never(FCFS):
        def schedule(self, now, machine, start):
            pass
    from epochbench.instances.jobs import make_workload
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "estimate": [5, 5], "procs": [1, 1]}, [4])
    with pytest.raises(RunStalled, match=r"^2 job\(s\) never started: at time 1 "):
        simulate_pool(w.table, w.capacity, Never())


@pytest.mark.parametrize("exc", [RuntimeError("boom\non two lines"), ValueError("bad thing"), ZeroDivisionError()])
def test_solve_reports_a_users_method_that_raises_in_one_line(inst, tmp_path, capsys, exc):
    """``epochbench solve`` printed a traceback when a registered method
    raised (a ``sys.exit`` in it gave one line); now one line naming the
    method and the exception, status 1, as score and validate report it."""
    from epochbench import cli

    def fails(i):
        raise exc

    eb.register("packing", "test-raises")(fails)
    eb.save(inst, tmp_path / "one.json")
    capsys.readouterr()
    assert cli.main(["solve", str(tmp_path / "one.json"), "--method", "test-raises"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"method 'test-raises' (" in err and f") raised {type(exc).__name__}" in err
    assert " ".join(str(exc).split()) in err


def test_a_heuristics_own_info_cannot_say_what_solve_says(inst):
    """``info["claimed"]`` is the status a heuristic returned, and
    ``overrun_s`` an exact call's overrun: a heuristic's own entries of those
    names passed through (``claimed: optimal`` beside a returned feasible)."""
    def says_too_much(i):
        return Result("packing", "x", (), 0.0, "feasible", 0.0,
                      info={"claimed": "optimal", "overrun_s": 99, "mine": 1})

    def claims(i):
        return Result("packing", "x", (), 0.0, "optimal", 0.0, info={"claimed": "feasible"})

    def says_none_already(i):       # its own bound_kind beside the entries solve writes
        return Result("packing", "x", (), 0.0, "feasible", 0.0, info={"claimed": "optimal", "bound_kind": "none"})

    def bounds_itself(i):           # a heuristic's bound, beside a bound_kind that says none
        return Result("packing", "x", (), 0.0, "feasible", 0.0, bound=5.0, info={"bound_kind": "none"})

    eb.register("packing", "test-says-too-much")(says_too_much)
    eb.register("packing", "test-claims")(claims)
    eb.register("packing", "test-says-none-already")(says_none_already)
    eb.register("packing", "test-bounds-itself")(bounds_itself)
    assert eb.solve(inst, "test-says-too-much").info == {"mine": 1, "bound_kind": "none"}
    assert eb.solve(inst, "test-claims").info["claimed"] == "optimal"
    assert eb.solve(inst, "test-says-none-already").info == {"bound_kind": "none"}
    r = eb.solve(inst, "test-bounds-itself")
    assert r.bound is None and r.status == "feasible" and r.info == {"bound_kind": "none"}


def test_a_method_cannot_write_the_familys_describe_figures():
    """``info`` holds the family's describe figures (knapsack: the license
    usage), computed from the decision; a method's own entry of that name
    does not stand, and ``describe=False`` leaves them out."""
    from epochbench.instances.knapsack import KnapsackInstance
    from epochbench.instances.registry import solve
    knap = KnapsackInstance.build([3, 2], [[1, 1], [2, 0]], [1.5, 2.0])

    def usage(i):
        return Result("knapsack", "x", (0,), 0.0, "feasible", 0.0, info={"license_usage": 7.0})

    eb.register("knapsack", "test-usage")(usage)
    r = solve(knap, "test-usage")
    assert r.info["license_usage"] == pytest.approx(knap.describe((0,))["license_usage"])
    assert r.info["license_usage"] != 7.0
    assert "license_usage" not in solve(knap, "greedy-mkp", describe=False).info
    assert "license_usage" in solve(knap, "greedy-mkp").info
