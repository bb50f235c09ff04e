"""What the summaries say: a solve without a decision is counted, not hidden
in the mean gap; matching a known optimum is not news (``beats_reference``);
the simulator's oracle step takes its time limit from ``--time-limit``."""
import json

import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.instances.packing import EpochsInstance
from epochbench.scoring import score, summarize

SWF = """; MaxProcs: 16
    1   0  -1   10   8  -1  -1   8   20  -1  1  1  1  -1 -1 -1 -1 -1
    2   1  -1   30  10  -1  -1  10   40  -1  1  1  1  -1 -1 -1 -1 -1
    3   2  -1    5   4  -1  -1   4   10  -1  1  1  1  -1 -1 -1 -1 -1
    4   4  -1    5  16  -1  -1  16   10  -1  1  1  1  -1 -1 -1 -1 -1
"""


def _epochs(meta):
    # four jobs of 5 on a machine of 10: two epochs are optimal, FFD finds them
    return EpochsInstance.build([10], [[5], [5], [5], [5]], meta={"name": "four", **meta})


@pytest.mark.parametrize("meta, beats", [({"optimum": 2, "best_known": 3}, False),   # OPT stated: not news
                                         ({"best_known": 3}, True),                     # better than known
                                         ({"optimum": 2, "best_known": 2}, False)])
def test_beats_reference_only_when_no_optimum_was_known(meta, beats):
    table = score([_epochs(meta)], ["ffd-sum"], time_limit=5)
    row = table.iloc[0]
    assert row["value"] == 2 and row["gap"] == 0
    assert bool(row["beats_reference"]) is beats


def test_the_summary_counts_the_solves_without_a_decision():
    table = pd.DataFrame({"family": ["packing"] * 4, "method": ["a", "a", "b", "b"],
                          "value": [0.5, float("nan"), 0.4, 0.45], "gap": [0.0, float("nan"), 0.2, 0.1],
                          "gap_kind": ["optimum"] * 4, "beats_reference": [False] * 4, "seconds": [0.1] * 4})
    s = summarize(table).set_index("method")
    assert s.loc["a", "no_answer"] == 1 and s.loc["b", "no_answer"] == 0
    assert s.loc["a", "mean_gap"] == 0.0 and s.loc["a", "instances"] == 2


def test_a_method_that_answered_none_is_at_the_reference_on_none():
    """The share at the reference counts an unanswered solve with a
    reference as not at it: 0 for a method that answered none (``score``
    printed "-", the leaderboards 0 %); without a reference it says
    nothing (NaN)."""
    nan = float("nan")
    table = pd.DataFrame({"family": ["packing"] * 6, "method": ["a", "a", "b", "b", "c", "c"],
                          "value": [nan, nan, 0.4, nan, nan, nan], "gap": [nan, nan, 0.0, nan, nan, nan],
                          "gap_kind": ["bound"] * 4 + ["no bound"] * 2, "beats_reference": [False] * 6,
                          "seconds": [0.1] * 6})
    s = summarize(table).set_index("method")
    assert s.loc["a", "at_bound"] == 0.0 and s.loc["b", "at_bound"] == 0.5
    assert pd.isna(s.loc["c", "at_bound"])


def test_simulate_time_limit_sets_the_oracle_steps_limit(tmp_path, capsys):
    f = tmp_path / "w.swf"
    f.write_text(SWF)
    assert main(["simulate", "--workload", str(f), "--policy", "easy", "--selector", "cpsat", "--time-limit", "0.5",
                 "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["options"]["selector_options"] == {"time_limit": 0.5}
    for argv, text in ((["--time-limit", "1"], "not to the policy's own steps (no --selector)"),
                       (["--selector", "ff", "--time-limit", "1"], "a heuristic"),
                       (["--selector", "cpsat", "--param", "time_limit=1"], "set it with --time-limit")):
        assert main(["simulate", "--workload", str(f), "--policy", "easy", *argv]) == 2
        assert text in capsys.readouterr().err


def test_simulate_threads_sets_the_oracle_steps_threads(tmp_path, capsys):
    """--param threads=2 said "set it with --threads", which simulate did not have."""
    f = tmp_path / "w.swf"
    f.write_text(SWF)
    assert main(["simulate", "--workload", str(f), "--policy", "easy", "--selector", "cpsat", "--threads", "2",
                 "--time-limit", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["options"]["selector_options"] == {"time_limit": 1.0, "threads": 2}
    for argv, text in ((["--policy", "easy", "--threads", "2"], "not to the policy's own steps (no --selector)"),
                       (["--policy", "easy", "--selector", "ff", "--threads", "2"], "a heuristic, not an exact method"),
                       (["--policy", "gs", "--threads", "2"], "space-shared policies' exact selectors only")):
        assert main(["simulate", "--workload", str(f), *argv]) == 2
        assert text in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse's own exit, status 2
        main(["simulate", "--workload", str(f), "--policy", "easy", "--selector", "cpsat", "--threads", "0"])
    assert "--threads: must be an integer from 1" in capsys.readouterr().err


def test_leaderboard_times_are_per_decision(monkeypatch):
    from types import SimpleNamespace

    from epochbench import suite
    monkeypatch.setattr(suite.STORE, "timing", {("c", "ff"): 0.5, ("c", "cpsat"): 0.5})
    monkeypatch.setattr(suite.STORE, "instance_timing", {("c", "ff", "i1"): 0.002})
    assert suite._decision_seconds("c", "cpsat", "i1", "exact", 3.0) == 3.0       # its own solve, not the median
    assert suite._decision_seconds("c", "ff", "i1", "heuristic", 9.0) == 0.002    # its rounds on that instance
    assert suite._decision_seconds("c", "ff", "i2", "heuristic", 9.0) == 0.5      # else the configuration's
    bench = SimpleNamespace(stats=SimpleNamespace(stats=SimpleNamespace(data=[1.0, 3.0, 2.0, 5.0, 4.0])))
    used = ["a", "b", "a", "b", "a", "b", "a"]                                    # two warm-up rounds first
    assert suite.instance_medians(bench, used, 2) == {"a": 2.0, "b": 4.0}          # a: 1, 2, 4; b: 3, 5
    assert suite.instance_medians(bench, used + ["b"], 2) == {"a": 2.0, "b": 4.0}  # a setup after the rounds
    assert suite.instance_medians(SimpleNamespace(), used, 2) == {}


def test_an_unknown_method_is_a_value_error_and_a_key_error():
    import epochbench as eb
    inst = _epochs({})
    for call in (lambda: eb.solve(inst, "nosuch"), lambda: eb.score([inst], ["nosuch"])):
        with pytest.raises(ValueError, match="no method 'nosuch' for family 'epochs'") as info:
            call()
        assert isinstance(info.value, KeyError) and not str(info.value).startswith('"')


def test_a_gap_within_float_rounding_is_zero():
    from epochbench.instances.core import gap
    assert gap(0.1 + 0.2, 0.3) == 0.0 and gap(2.0, 2.0) == 0.0
    assert gap(0.5, 1.0) == 0.5 and gap(1.0 - 1e-9, 1.0) > 0


def test_a_gap_is_relative_at_any_scale():
    """Objectives of 1e-10 have the gaps they would have at 1 (the bound
    was floored at 1e-9, and differences below 1e-12 were 0 whatever the scale)."""
    from epochbench.instances.core import gap
    assert gap(3e-10, 2e-10) == pytest.approx(0.5) and gap(3.0, 2.0) == pytest.approx(0.5)
    assert gap(1e-13, 2e-13) == pytest.approx(0.5)
    assert gap(0.0, 0.0) == 0.0


def test_a_gap_to_a_reference_of_0_is_0_within_eps_else_100_percent():
    """A reference of 0 has no scale: the difference was divided by eps =
    1e-9, so a value 1e-9 from 0 had a gap of 100 % and one 1e-6 from it
    100,000 %, numbers that measure eps.  Within eps (float noise of a sum
    or of a cost offset that cancels) the gap is 0; beyond it 1 (100 %:
    |ref - value| / max(|ref|, |value|)), finite (inf was the mean of every
    gap it entered, null in JSON and refused by compare), never NaN, which
    means "no reference"."""
    from epochbench.instances.core import gap
    assert gap(0.0, 0.0) == 0.0 and gap(1e-9, 0.0) == 0.0 and gap(-4e-10, 0.0) == 0.0
    assert gap(1e-15, 0.0, eps=1e-12) == 0.0
    for value in (2e-9, 1e-6, -1e-6, 5.0):
        assert gap(value, 0.0) == 1.0, value
    assert gap(1e-9, 0.0, eps=1e-12) == 1.0
    rows = pd.DataFrame({"family": "packing", "method": "m", "value": [0.0, 1e-6, 3.0],
                         "gap": [gap(0.0, 0.0), gap(1e-6, 0.0), gap(3.0, 2.0)], "seconds": 0.1,
                         "gap_kind": "optimum", "beats_reference": False})
    s = summarize(rows).iloc[0]
    assert s["max_gap"] == 1.0 and s["at_bound"] == pytest.approx(1 / 3)


def test_list_and_help_read_as_plain_text(capsys):
    assert main(["list"]) == 0
    for line in capsys.readouterr().out.splitlines():
        assert "``" not in line and len(line) < 140, line
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "``" not in capsys.readouterr().out


def test_a_share_short_of_all_or_above_none_never_reads_100_or_0_percent():
    """1330 of 1331 at the reference read "100%" beside a max gap of 12.5 %."""
    from epochbench.scoring import share_text
    assert share_text(1330 / 1331) == "99.9%" and share_text(1 / 1331) == "0.1%"
    assert share_text(1.0) == "100%" and share_text(0.0) == "0%" and share_text(0.5) == "50%"
    assert share_text(float("nan")) == "-"
    from epochbench.scoring import shown
    assert shown(pd.DataFrame({"at_bound": [1330 / 1331]}))["at_bound"].tolist() == ["99.9%"]


def test_a_gap_that_is_not_zero_never_reads_0_00_percent():
    """A mean gap under 0.005 % printed as 0.00 % beside an at-reference share under 100 %."""
    from epochbench.scoring import percent
    assert percent(3e-5) == "<0.01%" and percent(-3e-5) == ">-0.01%"
    assert percent(0.0) == percent(-0.0) == "0.00%" and percent(0.125) == "12.50%"
    assert percent(5e-5) == "0.01%" and percent(float("nan")) == "-"


class _Rounds:
    """A stand-in for pytest-benchmark's fixture: ``pedantic`` calls the
    setup and the function for every warm-up and timed round."""
    def pedantic(self, func, setup, rounds, iterations, warmup_rounds):
        for _ in range(warmup_rounds + rounds):
            args, kwargs = setup()
            func(*args, **kwargs)


@pytest.mark.parametrize("answer, needle", [
    (lambda inst, calls: [] if calls == 0 else None, "a timed round: .*returned None"),
    (lambda inst, calls: [0, 0] if calls else [], "a timed round: .*twice"),
    (lambda inst, calls: [] if calls % 2 else [0], None),        # randomised, each answer feasible: fine
])
def test_a_plugins_timed_rounds_are_checked(answer, needle):
    """The suite timed a plug-in's calls on its cached instances unchecked:
    one that answered the checked call properly and the timed ones with
    None (or an infeasible set, or another answer) in no time got a
    leaderboard time of 0.0005 ms.  Each timed answer is checked now."""
    from epochbench import suite
    from epochbench.instances.core import InfeasibleSolution
    from epochbench.instances.registry import METHODS, get, register
    inst = _packing_step()
    state, calls = METHODS.snapshot(), [0]

    def tricky(inst):
        out = answer(inst, calls[0])
        calls[0] += 1
        return out
    try:
        register("packing", "tricky")(tricky)
        if needle is None:
            assert suite.time_rounds(_Rounds(), tricky, [inst], 4, 1, get("packing", "tricky")) == {}
            return
        with pytest.raises(InfeasibleSolution, match=needle):
            suite.time_rounds(_Rounds(), tricky, [inst], 4, 1, get("packing", "tricky"))
    finally:
        METHODS.restore(state)


def test_a_plugin_is_timed_on_copies_and_a_change_is_refused():
    from epochbench import suite
    from epochbench.instances.registry import METHODS, get, register
    inst = _packing_step()
    before, state = inst.to_dict(), METHODS.snapshot()

    def rewrites(inst):
        inst.demand.flags.writeable = True
        inst.demand[:] = 0
        return [0]
    try:
        register("packing", "rewrites")(rewrites)
        with pytest.raises(ValueError, match="'rewrites' .* changed the instance it was given in a timed round"):
            suite.time_rounds(_Rounds(), rewrites, [inst], 3, 1, get("packing", "rewrites"))
        assert inst.to_dict() == before
        assert suite.time_rounds(_Rounds(), get("packing", "ff").func, [inst], 3, 1, get("packing", "ff")) == {}
    finally:
        METHODS.restore(state)


def _packing_step():
    """A small packing step."""
    import epochbench as eb
    return eb.generate("leinberger", n=8, k=2, count=1, seed=3)[0]


def test_a_plugins_exact_method_is_no_reference_and_its_false_claim_no_crash(monkeypatch):
    """Installed, never selected: an exact plug-in that raised failed the
    built-in benchmarks (it was solved as their reference), and one that
    claimed a false optimum ended the session in a traceback with no
    leaderboard.  It is solved only when selected, and a disagreement
    leaves its instance's rows without a gap, as score writes them."""
    from epochbench import suite
    from epochbench.instances.core import Result
    from epochbench.instances.registry import METHODS, register
    cfg = suite.Config("packing", "leinberger", tuple(sorted(dict(n=6, k=2, count=1, seed=5).items())), 2.0)
    store, state = suite.Store(), METHODS.snapshot()
    monkeypatch.setattr(suite, "EXACT_ORDER", ())
    try:
        @register("packing", "test-exact-raises", kind="exact")
        def raises(inst, *, time_limit, threads=1):
            raise RuntimeError("exactbad crashed")

        @register("packing", "test-exact-lies", kind="exact")
        def lies(inst, *, time_limit, threads=1):
            return Result(inst.kind, "x", (), 0.0, "optimal", 0.0, bound=0.0)
        monkeypatch.setattr(suite, "methods_for", lambda family: ["cpsat", "test-exact-raises", "test-exact-lies",
                                                                   "ff"])
        store.ensure_reference(cfg)                     # the plug-ins are not run: no RuntimeError
        inst = cfg.instances()[0]
        assert set(store.results[cfg.id][inst.name]) == {"cpsat"}
        store.result(cfg, inst, "ff")
        store.result(cfg, inst, "test-exact-lies")      # selected: run, and its claim disagrees with ff's value
        rows = list(store._scored(cfg))
        assert {r["method"] for r in rows} == {"cpsat", "ff", "test-exact-lies"}
        assert all(r["error"].startswith("disagreement: ") and r["gap"] != r["gap"] for r in rows)
    finally:
        METHODS.restore(state)


def test_a_failed_benchmark_is_off_the_board_and_said(monkeypatch):
    """A plug-in whose benchmark failed (an answer refused on one instance,
    or a timed round) was ranked on the answers it had, as if clean."""
    from types import SimpleNamespace

    from epochbench import suite
    from epochbench.benchmarks import bench_packing
    from epochbench.instances.registry import METHODS, register, solve
    store = suite.Store()
    monkeypatch.setattr(bench_packing, "STORE", store)
    cfg = next(c for c in suite.configs(True) if c.family == "packing")
    state = METHODS.snapshot()
    try:
        @register("packing", "test-exact-fails", kind="exact")
        def fails(inst, *, time_limit, threads=1):
            raise RuntimeError("exactbad crashed")
        request = SimpleNamespace(config=SimpleNamespace(getoption=lambda name: True))
        with pytest.raises(RuntimeError, match="exactbad crashed"):
            bench_packing.test_method(SimpleNamespace(group=None, extra_info={}), cfg.id, "test-exact-fails",
                                      request)
        assert store.failed == {(cfg.id, "test-exact-fails")}
    finally:
        METHODS.restore(state)
    inst = cfg.instances()[0]
    store.configs[cfg.id] = cfg
    store.results[cfg.id] = {inst.name: {"ff": solve(inst, "ff"), "bb": solve(inst, "bb")}}
    store.selected |= {(cfg.id, "ff"), (cfg.id, "bb")}
    store.failed.add((cfg.id, "bb"))
    assert {r["method"]: r["selected"] for r in store.rows} == {"ff": True, "bb": False}
    assert store.failed_methods() == {"packing": ["bb", "test-exact-fails"]}
    assert store.reference_only() == {}                 # failed, not "solved as a reference only"


def test_the_summary_counts_exact_solves_cut_short_and_prints_them_only_then():
    """``cut``: an exact method's rows with status feasible (no proof); a
    heuristic's feasible rows are not cut.  Printed only where it counts
    something, always in the summary's columns (a cpsat at 0.05 s read a
    0.68 % mean gap with nothing saying that 3 of its 4 solves were unproven)."""
    from epochbench.scoring import format_table, summarize
    rows = pd.DataFrame({"family": "packing", "instance": ["a", "b", "a", "b"],
                         "method": ["ff", "ff", "cpsat", "cpsat"],
                         "kind": ["heuristic", "heuristic", "exact", "exact"],
                         "status": ["feasible", "feasible", "feasible", "optimal"],
                         "value": [1.0, 2.0, 3.0, 4.0], "gap": [0.5, 0.2, 0.1, 0.0], "seconds": 0.001,
                         "gap_kind": "bound", "beats_reference": False})
    s = summarize(rows).set_index("method")
    assert s.loc["ff", "cut"] == 0 and s.loc["cpsat", "cut"] == 1
    assert " cut " in format_table(summarize(rows))
    proved = rows.assign(status=["feasible", "feasible", "optimal", "optimal"])
    assert summarize(proved)["cut"].sum() == 0 and " cut " not in format_table(summarize(proved))
