"""Per-epoch gaps along a run (sim/record.py EpochGaps, ``simulate --epoch-gaps``):
the oracle's steps are proven and no heuristic beats them, a policy's own rule
has gap 0 against itself, recording leaves the schedule unchanged, and the
command line writes the per-step table and the summary."""
import json

import numpy as np
import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.sim.policies import make
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.record import EpochGaps, both
from test_sim_engine import random_stream


def run(df, cap, policy, **kw):
    pol = make(policy, **kw)
    gaps = EpochGaps(pol, ("ff", "bl", "bb"))
    res = simulate(df, cap, pol, on_pass=gaps)
    return res, gaps


@pytest.mark.parametrize("k", [1, 2, 3])
def test_oracle_steps_are_proven_and_never_beaten(k):
    df = random_stream(np.random.default_rng(90 + k), 150, k=k)
    _, gaps = run(df, [16] * k, "easy", selector="mkp-bb", selector_options={"time_limit": 10.0})
    frame = gaps.frame()
    assert len(frame) > 20 and frame["proven"].all()
    for m in ("ff", "bl", "bb"):
        assert (frame[f"{m}_gap"] >= -1e-9).all(), m
    s = gaps.summary()
    assert s["steps"] == len(frame) and s["unproven"] == 0
    empty = (frame["started"] == 0) & (frame["reference"] == 0) & \
        (frame[["ff_value", "bl_value", "bb_value"]] == 0).all(axis=1)
    assert s["nothing_fits"] == int(empty.sum())
    assert s["bb_gap"]["count"] == len(frame) - s["nothing_fits"] and 0.0 <= s["bb_gap"]["optimal_share"] <= 1.0
    rest = frame.loc[~empty, "ff_gap"]
    assert s["ff_gap"]["mean"] == pytest.approx(rest.mean())
    assert s["ff_gap"]["optimal_share"] == pytest.approx(float((rest <= 1e-9).mean()))


def test_steps_where_nothing_fits_are_left_out_of_the_summary():
    gaps = EpochGaps(make("easy", selector="mkp-bb"), ("ff",))
    gaps.rows = [{"time": 0.0, "candidates": 3, "started": 0, "reference": 0.0, "proven": True,
                  "ff_value": 0.0, "ff_gap": 0.0},
                 {"time": 1.0, "candidates": 3, "started": 2, "reference": 0.5, "proven": True,
                  "ff_value": 0.25, "ff_gap": 0.5}]
    s = gaps.summary()
    assert s["steps"] == 2 and s["nothing_fits"] == 1
    assert s["ff_gap"]["count"] == 1 and s["ff_gap"]["mean"] == 0.5 and s["ff_gap"]["optimal_share"] == 0.0
    # the policy's own empty choice against a method that starts something is a decision to compare
    gaps.rows[0].update(ff_value=0.25, ff_gap=-1.0)
    assert gaps.summary()["nothing_fits"] == 0


def test_under_an_exact_selector_the_gaps_are_over_its_proven_steps():
    """An unproven step's reference is the selector's fallback (the policy's
    own rule) or an answer without a proof: at 1e-4 s every step fell back
    and ff_gap read mean 0 %, FF against itself.  A heuristic policy's steps
    (never proven) keep their gaps to its own choice."""
    rows = [{"time": 0.0, "candidates": 3, "started": 1, "reference": 0.5, "proven": False,
             "ff_value": 0.5, "ff_gap": 0.0},
            {"time": 1.0, "candidates": 3, "started": 2, "reference": 0.5, "proven": True,
             "ff_value": 0.25, "ff_gap": 0.5}]
    exact = EpochGaps(make("easy", selector="mkp-bb"), ("ff",))
    exact.rows = [dict(r) for r in rows]
    s = exact.summary()
    assert s["steps"] == 2 and s["unproven"] == 1 and s["ff_gap"]["count"] == 1 and s["ff_gap"]["mean"] == 0.5
    own = EpochGaps(make("bl-easy"), ("ff",))
    own.rows = [dict(r, proven=False) for r in rows]
    assert own.summary()["ff_gap"]["count"] == 2
    # every step counted once: an unproven step was counted in nothing_fits too, and a heuristic
    # policy's steps all read unproven
    assert s["nothing_fits"] == 0 and own.summary()["unproven"] == 0
    exact.rows += [{"time": 2.0, "candidates": 2, "started": 0, "reference": 0.0, "proven": True,
                    "ff_value": 0.0, "ff_gap": 0.0},
                   {"time": 3.0, "candidates": 2, "started": 0, "reference": 0.0, "proven": False,
                    "ff_value": 0.0, "ff_gap": 0.0}]
    s = exact.summary()
    assert (s["steps"], s["unproven"], s["nothing_fits"], s["ff_gap"]["count"]) == (4, 2, 1, 1)


def test_a_gap_against_a_policy_that_started_nothing_is_undefined_not_divided_by_1e9():
    """FCFS with its head blocked starts nothing (reference 0) where FF
    starts something: that gap read -7.5e8, and the mean -1.9e10 %."""
    from epochbench.sim.record import _signed_gap
    assert np.isnan(_signed_gap(0.0, 0.25)) and _signed_gap(0.0, 0.0) == 0.0 and _signed_gap(0.5, 0.25) == 0.5
    df = random_stream(np.random.default_rng(3), 150, k=2)
    _, gaps = run(df, [16, 16], "fcfs")
    frame, s = gaps.frame(), gaps.summary()
    finite = frame["ff_gap"].dropna()
    assert s["ff_gap"]["undefined"] == int(frame["ff_gap"].isna().sum()) > 0
    assert (finite <= 1.0 + 1e-9).all() and (finite > -100).all()        # a start set of 16 x 16 units at most
    assert s["ff_gap"]["count"] + s["ff_gap"]["undefined"] <= len(frame)


def test_own_rule_has_gap_zero_against_itself():
    df = random_stream(np.random.default_rng(5), 120, k=2)
    _, gaps = run(df, [16, 16], "bb-easy")
    frame = gaps.frame()
    assert len(frame) and (frame["bb_gap"].abs() <= 1e-12).all()
    assert not frame["proven"].any()  # a heuristic policy proves nothing


def test_recording_leaves_the_schedule_unchanged():
    df = random_stream(np.random.default_rng(6), 120, k=2)
    plain = simulate(df, [16, 16], make("easy", selector="mkp-bb"))
    with_gaps, _ = run(df, [16, 16], "easy", selector="mkp-bb")
    pd.testing.assert_frame_equal(plain.jobs, with_gaps.jobs)


def test_refusals():
    with pytest.raises(ValueError, match="exact method"):
        EpochGaps(make("easy"), ("cpsat",))
    with pytest.raises(ValueError, match="no packing selection step"):
        EpochGaps(make("conservative"))
    with pytest.raises(ValueError, match="at least one"):
        EpochGaps(make("easy"), ())


def test_both_calls_every_hook():
    seen = []
    hook = both(lambda *a: seen.append(1), None, lambda *a: seen.append(2))
    hook(0.0, None, None, [])
    assert seen == [1, 2]


def test_cli_writes_epoch_gaps(tmp_path, capsys):
    df = random_stream(np.random.default_rng(8), 80, k=1)
    trace = tmp_path / "s.csv"
    df.to_csv(trace, index=False)
    out = tmp_path / "run"
    assert main(["simulate", "--workload", str(trace), "--nodes", "16", "--policy", "easy", "--selector",
                 "mkp-bb", "--epoch-gaps", "ff,bb", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "ff_gap (per epoch)" in text and "bb_gap (per epoch)" in text
    summary = json.loads((out / "report.json").read_text())["extras"]["epoch_gaps"]["ff_gap"]
    line = next(l for l in text.splitlines() if l.strip().startswith("ff_gap (per epoch)"))
    assert f"median {100 * summary['median']:.3g} %" in line      # one step can swamp the mean: the median too
    table = pd.read_csv(out / "epoch_gaps.csv")
    assert list(table.columns[-4:]) == ["ff_value", "ff_gap", "bb_value", "bb_gap"] and len(table)
    rep = json.loads((out / "report.json").read_text())
    assert rep["extras"]["epoch_gaps"]["steps"] == len(table)
    assert main(["simulate", "--workload", str(trace), "--nodes", "16", "--policy", "easy", "--epoch-gaps", "cpsat",
                 "--quiet"]) != 0
    assert "'cpsat' is an exact method" in capsys.readouterr().err
    assert main(["simulate", "--workload", str(trace), "--nodes", "16", "--policy", "easy", "--epoch-gaps", "ff,bb,ff",
                 "--quiet"]) == 2                                 # accepted, its columns written twice
    assert capsys.readouterr().err.strip().endswith("method 'ff' appears twice (--epoch-gaps)")


@pytest.mark.parametrize("policy,selector", [("easy", "mkp-bb"), ("bb-easy", None)])
def test_the_gaps_read_the_selectors_own_instance_of_the_step(policy, selector):
    """The step's instance that the selector solved (``Step.instance``) is
    the one a hook would build from the step: same machine, jobs,
    reservation and value of what started."""
    from epochbench.sim.record import step_instance
    df = random_stream(np.random.default_rng(7), 120, k=2)
    pol = make(policy, selector=selector) if selector else make(policy)
    checked = []

    def hook(now, machine, queue, started):
        step = pol.step
        if step is None or step.instance is None:
            return
        fresh, choice = step_instance(pol, now, machine, started, {"name": "fresh"})
        mine = step.instance
        for f in ("capacity", "demand", "used", "estimate"):
            assert np.array_equal(getattr(mine, f), getattr(fresh, f)), f
        assert (mine.reservation is None) == (fresh.reservation is None)
        if fresh.reservation is not None:
            assert mine.reservation.shadow == fresh.reservation.shadow
            assert np.array_equal(mine.reservation.extra, fresh.reservation.extra)
            assert np.array_equal(mine.reservation.past_shadow, fresh.reservation.past_shadow)
        assert mine.value(choice) == fresh.value(choice)
        checked.append(now)
    simulate(df, [16, 16], pol, on_pass=hook)
    assert len(checked) > 20


@pytest.mark.parametrize("policy", ["los", "bl-easy", "bb-easy", "ff-easy"])
def test_a_selector_does_not_silently_replace_the_step_a_policy_is_named_after(policy, tmp_path, capsys):
    """los, bl-easy and bb-easy with --selector cpsat all ran as easy + cpsat
    and were reported under their own names (ff-easy --selector bb ran as bb-easy)."""
    with pytest.raises(ValueError, match=f"policy '{policy}' is EASY whose backfill step is"):
        make(policy, selector="cpsat")
    assert make(policy, selector={"bl-easy": "bl", "bb-easy": "bb", "los": "los", "ff-easy": "ff"}[policy]).selector
    f = tmp_path / "w.csv"
    random_stream(np.random.default_rng(1), 20, k=1).to_csv(f, index=False)
    assert main(["simulate", "--workload", str(f), "--nodes", "16", "--policy", policy, "--selector", "cpsat"]) == 2
    assert "--policy easy --selector cpsat" in capsys.readouterr().err


def test_gap_summary_statistics_by_hand():
    gaps = EpochGaps(make("bb-easy"), ("ff",))           # a heuristic policy: negative gaps are possible
    g = [-0.95, 0.0, 0.1, 0.2, 0.9]
    gaps.rows = [{"time": float(i), "candidates": 3, "started": 1, "reference": 1.0, "proven": False,
                  "ff_value": 1.0 - x, "ff_gap": x} for i, x in enumerate(g)]
    s = gaps.summary()["ff_gap"]
    assert s["count"] == 5 and s["undefined"] == 0
    assert s["mean"] == pytest.approx(0.05)
    assert s["median"] == pytest.approx(0.1)
    assert s["p90"] == pytest.approx(0.2 + 0.6 * 0.7)      # linear: index 3.6 between 0.2 and 0.9
    assert s["max"] == pytest.approx(0.9)
    assert s["optimal_share"] == pytest.approx(2 / 5)     # -0.95 (reference beaten) and 0.0


def test_a_step_whose_selector_answer_is_unproven_is_flagged():
    pol = make("easy", selector="mkp-bb")
    gaps = EpochGaps(pol, ("ff",))
    seen = []

    def mark(now, machine, queue, started):               # the third step with candidates: counted unproven
        if pol.step is not None and pol.step.candidates:
            seen.append(now)
            if len(seen) == 3:
                pol.selector_stats["unproven"] += 1

    df = random_stream(np.random.default_rng(6), 60, k=2)
    simulate(df, [16, 16], pol, on_pass=both(mark, gaps))
    frame = gaps.frame()
    assert len(frame) >= 3 and (~frame["proven"]).sum() == 1 and not frame["proven"].iloc[2]
    assert gaps.summary()["unproven"] == 1


def test_started_counts_the_steps_candidates_started_not_the_heads_before_it():
    pol = make("easy", selector="mkp-bb")
    gaps = EpochGaps(pol, ("ff",))
    want = []

    def count(now, machine, queue, started):
        if pol.step is not None and pol.step.candidates:
            want.append(len(set(started) & set(pol.step.candidates)))

    df = random_stream(np.random.default_rng(6), 120, k=2)
    simulate(df, [16, 16], pol, on_pass=both(count, gaps))
    assert gaps.frame()["started"].tolist() == want


def test_a_replay_method_is_refused_before_the_run():
    """``--epoch-gaps recorded`` was refused only at the run's first step,
    naming that step (it reads a recorded choice, which a live step has not)."""
    with pytest.raises(ValueError, match="epoch gaps: 'recorded' replays the choice recorded at an epoch"):
        EpochGaps(make("bb-easy"), ("ff", "recorded"))


# ---- from a review of the oracle's numbers ----------------------------------------------------------
def test_a_plugin_method_that_fails_is_one_line_naming_it_and_the_step(tmp_path, capsys, own_methods):
    """A plug-in heuristic in ``--epoch-gaps`` that raised gave a 43-line
    traceback; one whose answer the checker refused gave status 2 (bad
    input) without naming it.  Both are one line naming the method, the
    step and the time, status 1, as a failing selector is."""
    from epochbench.instances import registry
    from epochbench.instances.core import MethodFailed

    def raises(inst):
        raise RuntimeError("boom")

    def overfills(inst):
        return list(range(inst.n))                         # every candidate: over capacity
    registry.register("packing", "test-gaps-raises", origin="test")(raises)
    registry.register("packing", "test-gaps-overfills", origin="test")(overfills)
    df = random_stream(np.random.default_rng(8), 80, k=1)
    for name, why in (("test-gaps-raises", "RuntimeError: boom"), ("test-gaps-overfills", "InfeasibleSolution")):
        pol = make("easy")
        with pytest.raises(MethodFailed, match=rf"^epoch gaps: method '{name}' failed at step 1 of policy 'easy', "
                                               rf"time \S+, on \d+ candidate job\(s\): {why}"):
            simulate(df, [16], pol, on_pass=EpochGaps(pol, ("ff", name)))
    trace = tmp_path / "s.csv"
    df.to_csv(trace, index=False)
    assert main(["simulate", "--workload", str(trace), "--nodes", "16", "--policy", "easy", "--epoch-gaps",
                 "ff,test-gaps-raises", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "epoch gaps: method 'test-gaps-raises' failed at step 1" in err


def test_steps_left_out_by_min_candidates_are_counted():
    """``--min-candidates`` left steps out of ``steps`` without a word (the
    selector's own count was higher); ``skipped`` counts them."""
    df = random_stream(np.random.default_rng(91), 150, k=1)
    pol = make("easy")
    every, some = EpochGaps(pol, ("ff",)), EpochGaps(pol, ("ff",), min_candidates=4)
    simulate(df, [16], pol, on_pass=both(every, some), engine="generic")
    a, b = every.summary(), some.summary()
    assert a["skipped"] == 0 and a["min_candidates"] == 1 and b["min_candidates"] == 4
    assert 0 < b["skipped"] and b["steps"] + b["skipped"] == a["steps"]
    assert b["skipped"] == int((every.frame()["candidates"] < 4).sum())
    pol = make("easy", selector="mkp-bb")
    gaps = EpochGaps(pol, ("ff",), min_candidates=4)
    simulate(df, [16], pol, on_pass=gaps)
    s = gaps.summary()
    assert s["skipped"] > 0 and s["steps"] + s["skipped"] == pol.selector_stats["steps"]


def test_an_optimum_a_method_beats_is_no_proof(own_methods):
    """A plug-in exact selector that calls FF's answer optimal: the steps
    where BB does better are not proven (its gaps read a mean of -16 % and
    97 % optimal in a review's run)."""
    from epochbench.instances import registry
    from epochbench.instances.core import Result
    from epochbench.instances.registry import solve

    def liar(inst, *, time_limit, threads=1):
        r = solve(inst, "ff")
        return Result("packing", "liar", r.decision, r.value, "optimal", 0.0, bound=r.value)
    registry.register("packing", "test-gaps-liar", kind="exact", origin="test")(liar)
    df = random_stream(np.random.default_rng(93), 150, k=2)
    pol = make("easy", selector="test-gaps-liar")
    gaps = EpochGaps(pol, ("ff", "bb"))
    simulate(df, [16, 16], pol, on_pass=gaps)
    frame, s = gaps.frame(), gaps.summary()
    beaten = frame["bb_value"] > frame["reference"] + 1e-9 * frame["reference"].abs().clip(lower=1.0)
    assert beaten.any() and s["contradicted"] == int(beaten.sum())
    assert not frame.loc[beaten, "proven"].any() and frame.loc[~beaten, "proven"].all()
    assert s["unproven"] == s["contradicted"] and s["bb_gap"]["count"] > 0
    assert (frame.loc[frame["proven"], "bb_gap"] >= -1e-9).all()


def test_the_runs_seconds_leave_the_hooks_time_out():
    """``seconds`` times the simulation alone: a hook's own time (here
    0.02 s a pass) is not in it."""
    import time as _time
    df = random_stream(np.random.default_rng(94), 60, k=1)
    base = simulate(df, [16], "easy", engine="generic")
    slow = simulate(df, [16], "easy", on_pass=lambda *a: _time.sleep(0.02))
    assert slow.passes == base.passes > 10
    assert slow.seconds < 0.02 * slow.passes / 2          # the hook alone slept 0.02 x passes


@pytest.mark.parametrize("policy, selector", [("fcfs", None), ("easy", "mkp-bb")])
def test_the_counted_rows_of_the_table_give_the_summarys_figures(policy, selector):
    """``epoch_gaps.csv`` holds every step, those where nothing fits too
    (gap 0 for every method), which the report's summary leaves out: its
    ``counted`` column marks the steps the summary is over, so that a
    column's mean over them is the report's (a review found -5.2 % over the
    whole column against the report's -30.5 %)."""
    df = random_stream(np.random.default_rng(3), 150, k=2)
    _, gaps = run(df, [16, 16], policy, **({"selector": selector} if selector else {}))
    frame, s = gaps.frame(), gaps.summary()
    counted = frame[frame["counted"]]
    assert s["nothing_fits"] > 0 or selector
    assert len(frame) - len(counted) == s["unproven"] + s["nothing_fits"]
    for m in ("ff", "bl", "bb"):
        g = counted[f"{m}_gap"].dropna()
        assert s[f"{m}_gap"]["count"] == len(g)
        assert s[f"{m}_gap"]["mean"] == pytest.approx(g.mean(), rel=1e-12, abs=1e-15)
