"""Readings of the seed papers: BB / BL's fullness modifier and window (seed
000 section 2.2), ``--param``, Rajaei's generator ([rajaei-dadfar]), the EASY
reservation, cs-i-np, EDF's order ([capannini2007]) and SA's cooling ([vadhiyar-notes])."""
import json

import numpy as np
import pytest

import epochbench.heuristics.packing as hp
from epochbench.cli import check_params, main, param_value, parse_params
from epochbench.heuristics import mapping as hm
from epochbench.instances import PackingInstance, reservation_from_running
from epochbench.instances.mapping import MappingInstance
from epochbench.instances.workloads import rajaei
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.farm import generate_stream, simulate_farm
from epochbench.sim.farm_policies import ConvergentScheduling, make_farm_policy
from epochbench.sim.policies import make
from test_farm_sim import stream as farm_stream
from test_sim_policies import stream as job_stream


# ---- fullness modifier ([leinberger1999] section 2.2) --------------------------------------------
def bb_example():
    """Empty 100/100 machine; the small job first in the queue."""
    return PackingInstance.build([100, 100], [[1, 1], [100, 90]], meta={"name": "bb-full"})


def bl_example():
    """Used (10, 50): resource 0 is the lowest; job 1 (1, 1) matches it (tie -> lower index),
    job 0 (45, 50) has its largest need on resource 1 but nearly fills the machine."""
    return PackingInstance.build([100, 100], [[45, 50], [1, 1]], [10, 50], meta={"name": "bl-full"})


def test_bb_default_lets_the_nearly_full_job_win():
    # scaled: small 1.0 * 0.99 = 0.99, large (100/95) * 0.05 = 0.053 -> the large job
    assert hp.backfill_balanced(bb_example()) == [1]
    assert hp.backfill_balanced(bb_example(), fullness="scaled") == [1]
    # excess: the perfectly balanced small job scores 0 and blocks the 95 % one
    assert hp.backfill_balanced(bb_example(), fullness="excess") == [0]
    assert hp.backfill_balanced(bb_example(), fullness="off") == [0]


def test_bl_default_lets_the_nearly_full_job_win():
    # scaled: job 0 (1 + 1) * 0.225 = 0.45 beats job 1 (1 + 0) * 0.69
    assert hp.backfill_lowest(bl_example()) == [0]
    assert hp.backfill_lowest(bl_example(), fullness="excess") == [1]
    assert hp.backfill_lowest(bl_example(), fullness="off") == [1]


def test_bool_fullness_and_bad_options():
    assert hp.backfill_balanced(bb_example(), fullness=True) == [1]     # True: the default reading
    assert hp.backfill_balanced(bb_example(), fullness=False) == [0]    # False: off
    with pytest.raises(ValueError, match="fullness"):
        hp.backfill_balanced(bb_example(), fullness="product")
    with pytest.raises(ValueError, match="window"):
        hp.backfill_lowest(bl_example(), window=-1)
    with pytest.raises(ValueError, match="window"):
        hp.backfill_lowest(bl_example(), window=1.5)


def test_bl_window_follows_the_paper_range():
    # w = 0 (and w >= K) checks no resource: every job matches, the fullness alone decides
    assert hp.backfill_lowest(bl_example(), window=0, fullness="off") == [0]       # first fit
    assert hp.backfill_lowest(bl_example(), window=5, fullness="off") == [0]
    assert hp.backfill_lowest(bl_example(), window=0) == [0]                        # the fuller one


# plain reference of the compiled kernel (heuristics/_greedy.select) for BB and BL
def _ref_score(rule, used, share, window, mode):
    tot = used + share
    avail = 1.0 - tot.mean()
    if rule == "bb":
        measure = tot.max() / tot.mean() if tot.sum() > 0 else 1.0
    else:
        w = min(window, len(used))
        low = set(np.argsort(used, kind="mergesort")[:w].tolist())
        top = np.argsort(-share, kind="stable")[:w].tolist()
        measure = sum(i not in low for i in top) / w if w else 0.0
        if mode == "off":
            return measure
        measure += 1.0
    return {"off": measure, "excess": (measure - 1.0) * avail, "scaled": measure * avail}[mode]


def _ref_select(inst, rule, window, mode):
    cap = inst.capacity.astype(float)
    scale = np.where(cap > 0, cap, 1.0)
    free = inst.free.astype(np.int64)
    alive = list(range(inst.n))
    picked = []
    while True:
        alive = [j for j in alive if (inst.demand[j] <= free).all()]
        if not alive:
            return picked
        used = (cap - free) / scale
        scores = [_ref_score(rule, used, inst.demand[j] / scale, window, mode) for j in alive]
        best = alive[int(np.argmin(scores))]
        picked.append(best)
        free = free - inst.demand[best]
        alive.remove(best)


@pytest.mark.parametrize("mode", sorted(hp.FULLNESS))
def test_kernel_matches_the_plain_reference(mode):
    rng = np.random.default_rng(19)
    for trial in range(60):
        k = int(rng.integers(1, 5))
        cap = rng.integers(5, 40, size=k)
        used = (rng.random(k) * cap * 0.6).astype(np.int64)
        demand = (rng.random((int(rng.integers(0, 12)), k)) ** 2 * cap * 0.7).astype(np.int64)
        inst = PackingInstance.build(cap, demand.reshape(-1, k), used, meta={"name": f"r{trial}"})
        assert hp.backfill_balanced(inst, fullness=mode) == _ref_select(inst, "bb", 1, mode), trial
        for w in range(0, k + 1):
            got = hp.backfill_lowest(inst, window=w, fullness=mode)
            assert got == _ref_select(inst, "bl", w, mode), (trial, w)


# ---- --param ----------------------------------------------------------------------------------
def test_param_values_and_signature_check():
    assert [param_value(v) for v in ("2", "0.5", "true", "False", "excess", "none")] == [2, 0.5, True, False,
                                                                                        "excess", None]
    assert parse_params(["window=2", "fullness=excess"]) == {"window": 2, "fullness": "excess"}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_params(["window"])
    with pytest.raises(ValueError, match="given twice"):
        parse_params(["window=1", "window=2"])
    with pytest.raises(ValueError, match=r"no parameter 'windw'; it accepts: window, fullness"):
        check_params(hp.backfill_lowest, {"windw": 2}, "bl")
    with pytest.raises(ValueError, match=r"window=none: bl does not take none"):
        check_params(hp.backfill_lowest, {"window": None}, "bl")


def test_a_whole_number_written_as_a_float_reaches_an_integer_parameter_as_an_int():
    """``--param window=2.0`` passed the integer check and reached the method
    as 2.0 (``range(window)`` failed); now an int, where the parameter is an
    integer one (an int default or an ``int`` annotation).  A float
    parameter keeps its float; from Python the value is left as given."""
    def mine(inst, window: int = 2, size: int = 1, share=0.5, step: int | None = None):
        return ()
    given = parse_params(["window=2.0", "size=1e1", "share=1.0"])
    out = check_params(mine, given, "mine")
    assert out == {"window": 2, "size": 10, "share": 1.0}
    assert [type(out[k]) for k in ("window", "size", "share")] == [int, int, float]
    kept = {"window": 2.0}
    assert check_params(mine, kept, "mine", cli=False) == {"window": 2.0} and type(kept["window"]) is float
    with pytest.raises(ValueError, match="expects an integer"):
        check_params(mine, {"window": 2.5}, "mine")


def test_param_none_where_the_method_takes_none(tmp_path, capsys):
    """``--param nodes=none``: mkp-bb's search alone, without CP-SAT's turns
    (``nodes=None``), where ``nodes=1`` hands over at once; a parameter that
    does not take None refuses it."""
    from epochbench.instances.generators import leinberger
    from epochbench.instances.io import save_instance
    f = tmp_path / "k.json"
    save_instance(leinberger(n=64, k=8, count=1, seed=3)[0], f)
    runs = {}
    for nodes in ("1", "none"):
        assert main(["solve", str(f), "--method", "mkp-bb", "--json", "--param", f"nodes={nodes}"]) == 0
        runs[nodes] = json.loads(capsys.readouterr().out)
    assert runs["1"]["info"]["turns"] >= 1 and "turns" not in runs["none"]["info"]
    assert runs["none"]["status"] == "optimal" and runs["none"]["value"] == pytest.approx(runs["1"]["value"])
    assert main(["solve", str(f), "--method", "mkp-bb", "--param", "warm=none"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "warm=none" in err


def test_solve_and_score_take_param(tmp_path, capsys):
    f = tmp_path / "bb.json"
    f.write_text(json.dumps({"kind": "packing", "capacity": [100, 100], "demand": [[1, 1], [100, 90]],
                             "meta": {"name": "bb-full"}}))
    assert main(["solve", str(f), "--method", "bb", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["selected"] == [1]
    assert main(["solve", str(f), "--method", "bb", "--json", "--param", "fullness=excess"]) == 0
    assert json.loads(capsys.readouterr().out)["selected"] == [0]
    assert main(["solve", str(f), "--method", "bb", "--param", "window=2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "'window'" in err and "accepts: fullness" in err
    # score: the parameter goes to the methods that take it (bb), not to ff
    assert main(["score", str(f), "--methods", "bb,ff", "--param", "fullness=excess",
                 "--out", str(tmp_path / "s")]) == 0
    import pandas as pd
    rows = pd.read_csv(tmp_path / "s.csv").set_index("method")
    assert rows.loc["bb", "value"] == pytest.approx(0.01) and rows.loc["ff", "value"] == pytest.approx(0.01)
    assert main(["score", str(f), "--methods", "bb,ff", "--param", "fullness=excess"]) == 0
    assert main(["score", str(f), "--methods", "bb", "--param", "fullness=scaled",
                 "--out", str(tmp_path / "t")]) == 0
    assert pd.read_csv(tmp_path / "t.csv")["value"].iloc[0] == pytest.approx(0.95)
    assert main(["score", str(f), "--methods", "bb,ff", "--param", "nope=1"]) == 2
    assert "nope" in capsys.readouterr().err


@pytest.mark.parametrize("method", ["cpsat", "milp-highs", "cg", "lns"])
def test_an_exact_method_names_the_parameters_it_accepts(tmp_path, capsys, method):
    """Exact methods pass their options on to the solver function: the
    check sees that function's parameters, not a catch-all ``**params``."""
    f = tmp_path / "e.json"
    f.write_text(json.dumps({"kind": "epochs", "capacity": [10, 10], "demand": [[6, 1], [1, 6], [5, 5]]}))
    assert main(["solve", str(f), "--method", method, "--param", "bogus=1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no parameter 'bogus'" in err and "warm" in err
    assert main(["solve", str(f), "--method", method, "--time-limit", "2", "--param", "warm=false"]) == 0


def test_validate_takes_param(capsys):
    assert main(["validate", "epochbench.heuristics.packing:backfill_lowest", "--count", "1", "--time-limit", "1",
                 "--param", "window=2", "--param", "fullness=excess"]) == 0
    assert "verdict: PASS" in capsys.readouterr().out
    assert main(["validate", "epochbench.heuristics.packing:backfill_lowest", "--count", "1", "--param", "w=2"]) == 2
    assert "accepts: window, fullness" in capsys.readouterr().err


SWF = """; MaxProcs: 16
    1   0  -1   10   8  -1  -1   8   20  -1  1  1  1  -1 -1 -1 -1 -1
    2   1  -1   30  10  -1  -1  10   40  -1  1  1  1  -1 -1 -1 -1 -1
    3   2  -1    5   4  -1  -1   4   10  -1  1  1  1  -1 -1 -1 -1 -1
    4   3  -1    5  12  -1  -1  12   10  -1  1  1  1  -1 -1 -1 -1 -1
    5   4  -1   50   2  -1  -1   2   60  -1  1  1  1  -1 -1 -1 -1 -1
"""


def test_simulate_forwards_param_to_the_selector(tmp_path, capsys):
    f = tmp_path / "tiny.swf"
    f.write_text(SWF)
    assert main(["simulate", "--workload", str(f), "--policy", "bl-easy", "--json",
                 "--param", "window=2", "--param", "fullness=excess"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["options"]["selector_options"] == {"window": 2, "fullness": "excess"}
    assert main(["simulate", "--workload", str(f), "--policy", "bb-easy", "--param", "window=2"]) == 2
    assert "accepts: fullness" in capsys.readouterr().err
    assert main(["simulate", "--workload", str(f), "--policy", "easy", "--param", "window=2"]) == 2
    assert "no packing selector" in capsys.readouterr().err


def test_selector_options_reach_bb_in_the_simulator():
    # 100/100 machine: R (50, 50) runs until 100, the head (100, 100) waits for it; at 2 a small
    # (1, 1) and a large (50, 45) job arrive, both ending before the shadow time.  Scaled BB
    # backfills the large one (it nearly fills the machine), excess BB the balanced small one.
    df = job_stream([(1, 0, 50, 100, 100, 50), (2, 1, 100, 5, 5, 100),
                     (3, 2, 1, 5, 5, 1), (4, 2, 50, 5, 5, 45)], k=2)
    assert make("bb-easy").selector == "bb"
    starts = {}
    for mode in ("scaled", "excess"):
        res = simulate(df, [100, 100], "bb-easy", selector_options={"fullness": mode})
        starts[mode] = dict(zip(res.jobs["id"], res.jobs["start"]))
    assert starts["scaled"][4] == 2 and starts["scaled"][3] > 2
    assert starts["excess"][3] == 2 and starts["excess"][4] > 2
    default = simulate(df, [100, 100], "bb-easy")
    assert dict(zip(default.jobs["id"], default.jobs["start"])) == starts["scaled"]


# ---- Rajaei's generator ([rajaei-dadfar]) ------------------------------------------------------------
def test_rajaei_splits_the_runtimes_80_20():
    df = rajaei(20000, seed=7).jobs
    run, est = df["runtime"].to_numpy(), df["estimate"].to_numpy()
    short = (run >= 90) & (run <= 9 * 3600)
    assert short.mean() == pytest.approx(0.8, abs=0.01)
    assert run.min() >= 90 and run.max() <= 12 * 3600
    ratio = run / est
    assert ratio.min() >= 0.1 - 1e-3 and ratio.max() <= 1.0
    assert ratio.mean() == pytest.approx(0.55, abs=0.01)
    old = rajaei(20000, seed=7, split="estimates").jobs
    assert ((old["estimate"] > 9 * 3600).mean() == pytest.approx(0.2, abs=0.01)
            and old["estimate"].max() <= 12 * 3600)
    with pytest.raises(ValueError, match="split"):
        rajaei(10, split="both")


# ---- EASY reservation: jobs ending exactly at the shadow time --------------------------------
def test_reservation_counts_jobs_ending_at_the_shadow_time():
    # 10 nodes; A (4) and B (3) end at 10, C (2) at 20; the head needs 5
    shadow, extra = reservation_from_running([10], [9], [5], [[4], [3], [2]], [10.0, 10.0, 20.0])
    assert shadow == 10.0 and extra.tolist() == [3]        # B frees its 3 nodes at 10 too
    # the simulator's EASY on the same state: A, B, C start at 0; the head (5) arrives at 1
    df = job_stream([(1, 0, 4, 10), (2, 0, 3, 10), (3, 0, 2, 20), (4, 1, 5, 5)])
    pol = make("easy")
    steps = []
    simulate(df, [10], pol, on_pass=lambda now, machine, queue, started: steps.append(pol.step))
    blocked = [s for s in steps if s is not None and s.shadow is not None]
    assert blocked and blocked[0].shadow == shadow and blocked[0].extra.tolist() == extra.tolist()


# ---- cs-i-np: IMFS gets no previous plan -------------------------------------------------------
@pytest.mark.parametrize("preemptive", [True, False])
def test_cs_incremental_previous_plan(monkeypatch, preemptive):
    prevs = []
    inner = ConvergentScheduling._match

    def spy(self, inst, matcher, prev):
        prevs.append(prev)
        return inner(self, inst, matcher, prev)
    monkeypatch.setattr(ConvergentScheduling, "_match", spy)
    s = generate_stream(jobs=30, machines=6, licenses=3, interarrival=2.0, seed=3)
    res = simulate_farm(s, ConvergentScheduling(True, preemptive))
    assert res.jobs["end"].notna().all() and prevs
    if preemptive:
        assert any(prevs)                      # cs-i-p: IMFS starts from the previous plan
    else:
        assert not any(prevs)                  # cs-i-np: documented, IMFS always from scratch


# ---- EDF: increasing deadline ([capannini2007] writes "decreasing order") --------------------------------
def test_edf_orders_by_increasing_deadline():
    s = farm_stream([100.0] * 4, [0.0] * 4, deadline=[900.0, 300.0, 600.0, 150.0], m_bench=(400.0,))
    res = simulate_farm(s, make_farm_policy("edf"))
    starts = res.jobs["start"].tolist()
    assert np.argsort(starts).tolist() == [3, 1, 2, 0]      # 150, 300, 600, 900


# ---- SA: cooling factor and time budget ([vadhiyar-notes]) -----------------------------------------------
def sa_instance():
    rng = np.random.default_rng(5)
    etc = rng.uniform(1, 100, size=(64, 8))
    return MappingInstance.build(etc, meta={"name": "sa"})


def test_sa_slower_cooling_is_no_worse():
    inst = sa_instance()
    fast, slow = {}, {}
    a = hm.sa(inst, seed=3, stats=fast)                  # the seed's 10 % cooling
    b = hm.sa(inst, seed=3, cooling=0.999, stats=slow)
    assert inst.value(b) <= inst.value(a)
    assert slow["iterations"] > fast["iterations"]
    with pytest.raises(ValueError, match="cooling"):
        hm.sa(inst, cooling=1.0)


def test_sa_time_budget_is_honoured(monkeypatch):
    """On a clock that moves 0.01 s a reading (no wall time asserted): SA
    reads it as it starts and every SA_CHECK steps, and stops at the first
    reading 0.2 s after its start, the 21st."""
    import itertools
    from types import SimpleNamespace
    inst = sa_instance()
    stats, ticks = {}, itertools.count()
    readings = []
    monkeypatch.setattr(hm, "time", SimpleNamespace(perf_counter=lambda: readings.append(next(ticks) / 100)
                                                    or readings[-1]))
    hm.sa(inst, seed=1, cooling=0.999999, patience=10**9, max_iter=10**9, time_limit=0.2, stats=stats)
    assert readings[-1] == 0.2 and len(readings) == 21 and stats["iterations"] == 19 * hm.SA_CHECK
    with pytest.raises(ValueError, match="time_limit"):
        hm.sa(inst, time_limit=-1)
