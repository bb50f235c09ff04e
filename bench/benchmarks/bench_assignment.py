"""Benchmarks of the assignment family ([capannini2007] section 5): MIS, MFS, IMFS
time and gap per size against the lexicographic optimum (Hungarian) on
[capannini2007] farm matrices (``assign-farm``) and on random ones
(``assign-random``, half the pairs eligible, no overhead bonus for the
previous plan), MFS on 150 x 150, and IMFS against MFS when one job arrives
or leaves after an optimal plan.  Gaps and times go to
``extra_info`` and ``bench-assignment.csv`` in the run's results folder.

Cases: ``imfs (no event)`` starts from the farm's generated plan (random
jobs running) or, on ``assign-random``, from nothing; ``imfs (arrive)`` /
``imfs (leave)`` from the optimal plan before the event (``meta["previous"]``).
Gaps: ``gap`` is the weight gap against the optimum's weight, ``card_gap``
the cardinality shortfall ``(nu - |M|) / nu`` (see instances/assignment.py).

Run with ``pytest --benchmark`` (``--quick`` for fewer sizes)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from epochbench.scoring import gap_of
from epochbench.suite import (instance_record, median_seconds, plugin_heuristics, record, rows_writer,
                              rounds as bench_rounds, time_rounds)
from epochbench.instances.assignment import lexicographic_matching
from epochbench.instances.generators import generate
from epochbench.instances.registry import get, solve

ROWS: list[dict] = []
COUNT = 5
CASES = {  # case -> (method, event)
    "mis": ("mis", "none"), "mfs": ("mfs", "none"), "hungarian": ("hungarian", "none"),
    "imfs (no event)": ("imfs", "none"), "imfs (arrive)": ("imfs", "arrive"),
    "imfs (leave)": ("imfs", "leave"), "mfs (arrive)": ("mfs", "arrive"), "mfs (leave)": ("mfs", "leave"),
    **{name: (name, "none") for name in plugin_heuristics("assignment")}}      # a plug-in's, beside them
GENERATORS = {"assign-farm": {}, "assign-random": {"density": 0.5}}
#: the seeds and time limits of this module's benchmarks, recorded in the run's ``run.json``
SEED, DENSE_SEED, EXACT_S = 1, 2, 60.0
SETTINGS = {"seeds": {"gap and time per size": SEED, "dense 150 x 150": DENSE_SEED},
            "time_limits_s": {"exact methods, gap and time per size": EXACT_S}}


_write_rows = rows_writer(ROWS, "bench-assignment.csv")


@lru_cache(maxsize=None)
def instances(gen: str, size: int, event: str):
    """``COUNT`` instances, their maximum cardinality and the Hungarian
    method's checked result (the proven lexicographic optimum).  Event
    ``none``: the farm's generated plan (random jobs running), none for
    ``assign-random`` (IMFS starts empty)."""
    insts = generate(gen, n=size, machines=size, event=event, count=COUNT, seed=SEED, **GENERATORS[gen])
    ref = [(len(lexicographic_matching(i.preference)), solve(i, "hungarian")) for i in insts]
    return insts, ref


def pytest_generate_tests(metafunc):
    if {"gen", "size", "case"} <= set(metafunc.fixturenames):
        sizes = (10, 50, 150) if metafunc.config.getoption("--quick") else (10, 25, 50, 100, 150)
        metafunc.parametrize(("gen", "size", "case"), [(g, s, c) for g in GENERATORS for s in sizes for c in CASES])


def _bench(benchmark, func, insts, rounds, config):
    """Median ms over the rounds, and each instance's median round time (s)."""
    for inst in insts:
        func(inst)  # compile / load the numba cache
    rounds = bench_rounds(config, rounds, lambda: func(insts[0]))
    times = time_rounds(benchmark, func, insts, rounds, len(insts))
    return 1000 * median_seconds(benchmark), times


def test_gap_and_time_per_size(benchmark, gen, size, case, request):
    method, event = CASES[case]
    insts, ref = instances(gen, size, event)
    gaps, cards, per, solved = [], [], [], []
    m = get("assignment", method)
    for inst, (nu, opt) in zip(insts, ref):
        r = solve(inst, method, **({"time_limit": EXACT_S, "threads": 1} if m.exact else {}))
        g = gap_of(inst, r, [opt])
        gaps.append(g["gap"])
        per.append({**instance_record(inst, r, g), "cardinality": r.info["cardinality"], "max_cardinality": nu})
        solved.append((inst, r, g, nu))
        cards.append((nu - r.info["cardinality"]) / nu)
    benchmark.group = f"{gen}-{size}x{size}"
    ms, times = _bench(benchmark, m.func, insts, rounds=max(10, 4 * COUNT), config=request.config)
    for inst, r, g, nu in solved:               # a heuristic's time: the rounds' median on the instance; an
        seconds = r.seconds if m.exact else times.get(inst.name, r.seconds)   # exact method's: its solve's
        record("assignment", f"{gen}-{size}x{size} {case}", inst.name, method, m.kind, g["gap"], g["gap_kind"],
               seconds, short=r.info["cardinality"] < nu, status=r.status)
    info = {"generator": gen, "size": size, "case": case, "method": method, "event": event, "instances": len(insts),
            "mean_gap": float(np.mean(gaps)), "max_gap": float(np.max(gaps)),
            "mean_card_gap": float(np.mean(cards)), "max_card_gap": float(np.max(cards)),
            "optimal_share": float(np.mean((np.array(gaps) <= 1e-9) & (np.array(cards) == 0))),
            "median_ms": ms}
    benchmark.extra_info.update(info, per_instance=per)
    ROWS.append({"test": "gap per size", **info})


@pytest.mark.parametrize("method", ["mfs", "mis", "hungarian", *plugin_heuristics("assignment")])
def test_dense_150(benchmark, method, request):
    """Complete 150 x 150 matrices (every pair eligible, preferences 1..100)."""
    insts = generate("assign-random", n=150, machines=150, count=3, seed=DENSE_SEED)
    func = get("assignment", method).func
    benchmark.group = "assignment-dense-150x150"
    ms, _ = _bench(benchmark, func, insts, rounds=15, config=request.config)
    benchmark.extra_info.update({"method": method, "median_ms": ms})
    ROWS.append({"test": "dense 150x150", "method": method, "median_ms": ms})
