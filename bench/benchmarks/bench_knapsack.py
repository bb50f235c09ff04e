"""Benchmarks of the knapsack family ([capannini2007] section 4.2): greedy MKP speed at
n = 1000, L = 40; greedy gaps on the 30 OR-Library ``mknapcb1`` problems
against ``mkcbres.txt``; exact proofs of ``mknapcb1`` problems 1-5 (full
suite only: CP-SAT needs tens of seconds each).  Gaps and times go to
``extra_info`` and ``bench-knapsack.csv`` in the run's results folder.

Run with ``pytest --benchmark`` (``--quick`` skips the proofs)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from epochbench.scoring import gap_of
from epochbench.suite import (instance_record, median_seconds, plugin_heuristics, record, rows_writer,
                              rounds as bench_rounds, time_rounds)
from epochbench.instances.data import data_root
from epochbench.instances.generators import generate
from epochbench.instances.knapsack import load_mknapcb
from epochbench.instances.registry import get, solve

MKNAPCB1 = data_root() / "orlib" / "mknapcb1.txt"
ROWS: list[dict] = []
#: the seeds and time limits of this module's benchmarks, recorded in the run's ``run.json``
SPEED_SEED, MKP_BB_S, REFERENCE_S = 1, 10.0, 300.0
SETTINGS = {"seeds": {"greedy speed, farm-mkp n = 1000, L = 40": SPEED_SEED},
            "time_limits_s": {"mkp-bb on mknapcb1 (full suite)": MKP_BB_S,
                              "cpsat on mknapcb1 problems 1-5 (full suite)": REFERENCE_S}}


_write_rows = rows_writer(ROWS, "bench-knapsack.csv")


@pytest.fixture(scope="module")
def mknapcb1():
    if not MKNAPCB1.exists():
        pytest.skip(f"{MKNAPCB1} absent (OR-Library data; set EPOCHBENCH_DATA)")
    return load_mknapcb(MKNAPCB1)


@pytest.mark.parametrize("method", ["greedy-mkp", "greedy-ratio", *plugin_heuristics("knapsack")])
def test_greedy_speed_n1000_l40(benchmark, method, request):
    """[capannini2007] section 6 MKP sizes: 1000 jobs, 40 licenses (ratio 40-45 %)."""
    insts = generate("farm-mkp", n=1000, machines=100, licenses=40, count=3, seed=SPEED_SEED)
    func = get("knapsack", method).func
    for inst in insts:
        func(inst)  # compile / load the numba cache
    cycle = itertools.cycle(insts)
    benchmark.group = "knapsack-speed-n1000-L40"
    benchmark.pedantic(func, setup=lambda: ((next(cycle),), {}), rounds=bench_rounds(request.config, 60, lambda: func(insts[0])),
                       iterations=1, warmup_rounds=3)
    med = median_seconds(benchmark)
    info = {"method": method, "items": [i.n for i in insts], "licenses": insts[0].k, "median_ms": 1000 * med}
    benchmark.extra_info.update(info)
    ROWS.append({"test": "speed n=1000 L=40", "method": method, "median_ms": 1000 * med,
                 "items": float(np.mean([i.n for i in insts]))})


@pytest.mark.parametrize("method", ["greedy-mkp", "greedy-ratio", *plugin_heuristics("knapsack")])
def test_greedy_gap_on_mknapcb1(benchmark, mknapcb1, method, request):
    """Gap to the best known values (Chu & Beasley GA, mkcbres.txt) on all 30
    problems, by :func:`epochbench.scoring.gap_of` (``beats``: problems where the
    greedy beats the GA value)."""
    gaps, kinds, beats, per, solved = [], set(), 0, [], []
    for inst in mknapcb1:
        r = solve(inst, method)                 # feasibility-checked
        g = gap_of(inst, r)
        solved.append((inst, r, g))
        gaps.append(g["gap"])
        kinds.add(g["gap_kind"])
        beats += g["beats_reference"]
        per.append(instance_record(inst, r, g))
    func = get("knapsack", method).func
    benchmark.group = "knapsack-mknapcb1"
    times = time_rounds(benchmark, func, mknapcb1, bench_rounds(request.config, 60, lambda: func(mknapcb1[0])), 3)
    for inst, r, g in solved:                   # the leaderboard's time: the rounds' median on the instance
        record("knapsack", "mknapcb1", inst.name, method, "heuristic", g["gap"], g["gap_kind"],
               times.get(inst.name, r.seconds), inst=inst, result=r)
    g = np.array(gaps)
    info = {"method": method, "problems": len(g), "mean_gap": float(g.mean()), "max_gap": float(g.max()),
            "min_gap": float(g.min()), "gap_vs": ", ".join(sorted(kinds)), "beats": int(beats),
            "median_ms": 1000 * median_seconds(benchmark)}
    benchmark.extra_info.update(info, per_instance=per)
    ROWS.append({"test": "mknapcb1 gap to mkcbres", **info})


def test_mkp_bb_proves_mknapcb1_within_10s(benchmark, mknapcb1, request):
    """``mkp-bb`` (1 thread, 10 s per problem, default hand-over) on all 30
    mknapcb1 problems: problems proven, gap to mkcbres.txt, median and
    largest time (full suite only)."""
    if request.config.getoption("--quick"):
        pytest.skip("mknapcb1 exact proofs: full suite only")
    results = []
    benchmark.group = "knapsack-mknapcb1-proofs"
    benchmark.pedantic(lambda: results.extend(solve(inst, "mkp-bb", time_limit=MKP_BB_S, threads=1)
                                              for inst in mknapcb1),
                       rounds=1, iterations=1)
    gaps, secs = [], []
    for inst, r in zip(mknapcb1, results):
        g = gap_of(inst, r)
        record("knapsack", "mknapcb1", inst.name, f"mkp-bb@{MKP_BB_S:g}s", "exact", g["gap"], g["gap_kind"], r.seconds,
               inst=inst, result=r)
        gaps.append(g["gap"])
        secs.append(r.seconds)
    info = {"method": "mkp-bb", "problems": len(results), "proven": sum(r.status == "optimal" for r in results),
            "mean_gap": float(np.mean(gaps)), "max_gap": float(np.max(gaps)),
            "median_s": float(np.median(secs)), "max_s": float(np.max(secs))}
    benchmark.extra_info.update(info)
    ROWS.append({"test": "mknapcb1 mkp-bb at 10 s", **info})


@pytest.mark.parametrize("problem", range(5))
def test_cpsat_proves_mknapcb1_reference_optimal(benchmark, mknapcb1, problem, request):
    """CP-SAT (1 thread, 300 s limit) on mknapcb1 problems 1-5: the proven
    optimum equals the GA value of mkcbres.txt."""
    if request.config.getoption("--quick"):
        pytest.skip("mknapcb1 exact proofs: full suite only")
    inst = mknapcb1[problem]
    benchmark.group = "knapsack-mknapcb1-proofs"
    r = benchmark.pedantic(lambda: solve(inst, "cpsat", time_limit=REFERENCE_S, threads=1), rounds=1, iterations=1)
    g = gap_of(inst, r)
    record("knapsack", "mknapcb1", inst.name, "cpsat", "exact", g["gap"], g["gap_kind"], r.seconds, inst=inst,
           result=r)
    info = {"problem": inst.name, "status": r.status, "value": r.value, "bound": r.bound,
            "best_known": inst.meta["best_known"], "seconds": r.seconds}
    benchmark.extra_info.update(info)
    ROWS.append({"test": "mknapcb1 cpsat proof", "method": "cpsat", **info})
    assert r.status == "optimal" and r.value == inst.meta["best_known"]
