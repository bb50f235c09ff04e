"""Recorded epochs (sim/record.py, --record-epochs, the ``recorded`` method):
every selection step saved as a packing instance with the policy's choice,
and re-solving it with the policy's own heuristic gives that choice back."""
import re

import numpy as np
import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.instances import load_instance, read_family
from epochbench.instances.core import InstanceError
from epochbench.instances.registry import solve
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.policies import make
from epochbench.sim.record import EpochRecorder, choice_of
from test_sim_engine import random_stream


def record(policy, df, cap, **kw):
    pol = make(policy, **kw)
    rec = EpochRecorder(pol)
    simulate(df, cap, pol, on_pass=rec)
    assert rec.instances, "no step recorded"
    return rec


@pytest.mark.parametrize("policy,own,k", [("easy", "ff", 1), ("easy", "ff", 2), ("bl-easy", "bl", 2),
                                          ("bb-easy", "bb", 2), ("los", "los", 1), ("fcfs", "fcfs", 2),
                                          ("nonfcfs", "ff", 1)])
def test_recorded_epochs_round_trip_to_the_policys_choice(policy, own, k):
    df = random_stream(np.random.default_rng(70 + k), 120, k=k)
    rec = record(policy, df, [16] * k)
    for inst in rec.instances:
        assert list(solve(inst, own).decision) == choice_of(inst), inst.name
        assert list(solve(inst, "recorded").decision) == choice_of(inst)
    # the head's reservation is part of every EASY-style step
    if policy != "fcfs" and policy != "nonfcfs":
        assert any(inst.reservation is not None for inst in rec.instances)


def test_recorded_method_needs_a_choice():
    rec = record("easy", random_stream(np.random.default_rng(3), 40), [16])
    inst = rec.instances[0]
    plain = type(inst).from_dict({**inst.to_dict(), "meta": {}}, source="x")
    with pytest.raises(InstanceError, match="no recorded choice"):
        solve(plain, "recorded")


@pytest.mark.parametrize("choice,needle", [([0.5], "entry 0 is 0.5, not an integer job index"),
                                            ([True], "a boolean"), ("1", "must be a list of job indices"),
                                            (["1"], "(str), not a job index"), ({"1": 5}, "must be a list"),
                                            (None, "got None"), ([99], "outside")])
def test_a_recorded_choice_that_is_no_list_of_job_indices_is_refused(choice, needle):
    """``meta["choice"]`` was read through ``int()``: 0.5 started job 0,
    ``[true]`` and ``"1"`` job 1, and ``null`` raised a TypeError."""
    rec = record("easy", random_stream(np.random.default_rng(3), 40), [16])
    inst = rec.instances[0]
    bad = type(inst).from_dict({**inst.to_dict(), "meta": {**inst.meta, "choice": choice}}, source="x")
    with pytest.raises(InstanceError, match=re.escape(needle)):
        solve(bad, "recorded")


def test_policies_without_a_selection_step_say_so():
    with pytest.raises(ValueError, match="no packing selection step"):
        EpochRecorder(make("conservative"))


def test_cli_records_and_scores_epochs(tmp_path, capsys):
    df = random_stream(np.random.default_rng(8), 80, k=1)
    trace = tmp_path / "s.csv"
    df.assign(id=df["id"]).to_csv(trace, index=False)
    rec = tmp_path / "epochs"
    assert main(["simulate", "--workload", str(trace), "--nodes", "16", "--policy", "bb-easy",
                 "--record-epochs", str(rec), "--quiet"]) == 0
    insts = read_family(rec)
    assert insts and all("choice" in i.meta for i in insts)
    one = load_instance(next(rec.glob("epoch*.json")))
    assert one.meta["policy"] == "bb-easy"
    assert main(["score", str(rec), "--methods", "recorded,bb,cpsat", "--time-limit", "5"]) == 0
    table = pd.read_csv(rec / "scores.csv")
    got = table.pivot(index="instance", columns="method", values="value")
    assert (got["recorded"] == got["bb"]).all()  # bb-easy's choices are bb's
    assert (table.loc[table["method"] == "recorded", "gap"] >= 0).all()


def test_a_run_with_no_step_to_record_keeps_its_output_and_says_so(tmp_path, capsys):
    """One job on an idle machine: no selection step, so nothing to record.
    The run exited 2 (bad usage) and wrote neither --out nor the record;
    it is a valid run, reported and written, with one line on stderr."""
    trace = tmp_path / "one.swf"
    trace.write_text("; MaxProcs: 8\n1 100 -1 50 4 -1 -1 4 60 -1 1 1 1 -1 1 -1 -1 -1\n")
    rec, out = tmp_path / "re", tmp_path / "o"
    assert main(["simulate", "--workload", str(trace), "--policy", "easy", "--record-epochs", str(rec),
                 "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"recorded no selection step(s) of 1 pass(es): none had >= 1 candidate(s); {rec} is not written" in err
    assert not rec.exists() and (out / "jobs.csv").is_file() and (out / "report.json").is_file()


def test_a_recording_keeps_the_options_its_choices_were_made_with(tmp_path, own_methods):
    """``bb-easy --param fullness=excess``: 40 of 1,492 recorded steps did not
    replay with ``bb``, and the options were stored nowhere; an exact
    selector's steps did not say which were proven or fell back."""
    import json
    from epochbench.instances import registry
    from epochbench.instances.core import Result
    df = random_stream(np.random.default_rng(72), 120, k=2)
    rec = record("bb-easy", df, [16, 16], selector_options={"fullness": "excess"})
    for inst in rec.instances:
        assert inst.meta["selector_options"] == {"fullness": "excess"} and "selector_status" not in inst.meta
        assert list(solve(inst, "bb", fullness="excess").decision) == choice_of(inst), inst.name
    folder = rec.write(tmp_path / "r", workload="w")
    params = json.loads((folder / "manifest.json").read_text())["params"]
    assert params["options"] == {"selector": "bb", "selector_options": {"fullness": "excess"}}
    assert read_family(folder)[0].meta["selector_options"] == {"fullness": "excess"}
    # an exact selector that proves every other step and answers the rest with nothing
    calls = [0]

    def halves(inst, *, time_limit, threads=1):
        calls[0] += 1
        if calls[0] % 2:
            return solve(inst, "cpsat", time_limit=time_limit, threads=threads)
        return Result("packing", "halves", (), 0.0, "feasible", 0.0)
    registry.register("packing", "test-record-halves", kind="exact", origin="test")(halves)
    rec = record("easy", df, [16, 16], selector="test-record-halves")
    seen = {inst.meta["selector_status"] for inst in rec.instances}
    assert seen <= {"optimal", "feasible", "rule_better"} and {"optimal", "rule_better"} <= seen
    for inst in rec.instances:
        if inst.meta["selector_status"] == "rule_better":      # EASY's own rule started, which is FF here
            assert list(solve(inst, "ff").decision) == choice_of(inst)


def test_a_step_where_no_candidate_fits_is_not_recorded_but_counted(tmp_path, capsys):
    """A review's stream on 20 nodes: at t = 3 and t = 22 no candidate fits
    (every decision is the empty one), and ``score`` counted those steps at
    the optimum for every method: ff's mean gap 10 % and 75 % at the bound
    over 4 recorded steps, where ``--epoch-gaps`` says 20 % and 50 % over
    the 2 steps with a decision."""
    trace = tmp_path / "s5.swf"
    rows = [(1, 0, 1000, 10), (2, 1, 100, 20), (3, 2, 10, 6), (4, 2, 10, 5), (5, 2, 10, 5), (6, 3, 5, 15)]
    trace.write_text("; MaxProcs: 20\n" + "".join(f"{i} {s} -1 {r} {p} -1 -1 {p} {r} -1 1 1 1 -1 1 -1 -1 -1\n"
                                                  for i, s, r, p in rows))
    rec, out = tmp_path / "ep", tmp_path / "o"
    assert main(["simulate", "--workload", str(trace), "--policy", "easy", "--selector", "cpsat",
                 "--epoch-gaps", "ff", "--record-epochs", str(rec), "--out", str(out), "--quiet"]) == 0
    assert "(2 where no candidate fit left out)" in capsys.readouterr().err
    import json
    gaps = json.loads((out / "report.json").read_text())["extras"]["epoch_gaps"]
    assert gaps["nothing_fits"] == 2 and gaps["ff_gap"]["count"] == 2
    fam = read_family(rec)
    assert len(fam) == 2 and [inst.meta["time"] for inst in fam] == [2.0, 12.0]
    assert json.loads((rec / "manifest.json").read_text())["params"]["nothing_fits"] == 2
    assert main(["score", str(rec), "--methods", "recorded,ff,cpsat", "--time-limit", "5", "--threads", "1"]) == 0
    table = pd.read_csv(rec / "scores.csv")
    ff = table[table["method"] == "ff"]
    assert len(ff) == 2 and ff["gap"].mean() == pytest.approx(gaps["ff_gap"]["mean"])
    assert (ff["gap"] <= 1e-9).mean() == pytest.approx(gaps["ff_gap"]["optimal_share"])
