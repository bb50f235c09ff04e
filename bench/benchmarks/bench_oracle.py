"""The packing oracle: ``mkp-bb`` against ``cpsat`` on the same epochs (issue 18.5).

Two sources of epochs, each at n = 64 and 128 queued jobs and K = 1, 2, 4, 8:
[leinberger1999] section 3.1 instances (``leinberger``, uniform requirements)
and selection steps recorded from EASY on a generated K-resource stream
(feitelson96, offered load 1.1 so that queues grow past 128; the first n
candidates of evenly spaced steps with at least n, reservation kept, where
at least two of them fit).  One
benchmark per (source, n, K, method): every instance solved ``REPS`` times
(each a fresh call: start, set-up and search), pytest-benchmark timing every
call; ``extra_info`` has the median and 90th percentile of the per-instance
median times, the share proven optimal and, for ``mkp-bb``, the speed-up
``cpsat median / mkp-bb median``, how many instances the search finished
without CP-SAT (``search_only_share``: no CP-SAT turn) and how many it
finished itself, after CP-SAT's turns or not (``search_finished_share``).
Both methods must agree on every optimum both prove.

Run with ``pytest --benchmark bench/benchmarks/bench_oracle.py``
(``--quick``: 3 instances, one repetition, n = 64 only).  No assertion on time.
"""
from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import pytest

from epochbench.exact.packing import packing_candidates
from epochbench.instances.packing import PackingInstance
from epochbench.instances.registry import solve

METHODS = ("cpsat", "mkp-bb")            # cpsat first: mkp-bb's speed-up is measured against it
SOURCES = ("leinberger", "recorded")
KS = (1, 2, 4, 8)
#: wall-time limit of every solve (seconds), full / quick
TIME_LIMIT = {False: 10.0, True: 2.0}
#: instances per configuration and calls per instance, full / quick
COUNT = {False: 10, True: 3}
REPS = {False: 3, True: 1}
SIZES = {False: (64, 128), True: (64,)}
SEED = 1
#: a recorded step is kept when at least this many of its first n candidates fit alone
MIN_FIT = 2
#: per (source, n, K): the per-instance median seconds of cpsat, for the speed-up
_CPSAT: dict[tuple, float] = {}


def pytest_generate_tests(metafunc):
    if {"source", "n", "k", "method"} <= set(metafunc.fixturenames):
        quick = bool(metafunc.config.getoption("--quick"))
        cases = [pytest.param(s, n, k, m, id=f"{s}-n{n}-K{k}-{m}")
                 for s, n, k, m in itertools.product(SOURCES, SIZES[quick], KS, METHODS)]
        metafunc.parametrize(("source", "n", "k", "method"), cases)


def head(inst: PackingInstance, n: int, name: str) -> PackingInstance:
    """The step restricted to its first ``n`` candidates (queue order), the
    reservation kept.  O(n K)."""
    res = inst.reservation
    kw = {} if res is None else dict(shadow=res.shadow, extra=res.extra, runtime_past_shadow=res.past_shadow[:n])
    est = None if inst.estimate is None else inst.estimate[:n]
    return PackingInstance.build(inst.capacity, inst.demand[:n], inst.used, estimate=est, meta={"name": name},
                                 source=name, **kw)


@lru_cache(maxsize=None)
def recorded(n: int, k: int, count: int) -> tuple:
    """``count`` EASY selection steps with at least ``n`` candidates, evenly
    spaced over a 3000-job feitelson96 stream with K resources (load 1.1,
    seed :data:`SEED`), each cut to its first ``n`` candidates, of those
    where at least :data:`MIN_FIT` of them fit (most steps of a full
    machine have nothing to decide)."""
    from epochbench.instances.jobs import make_workload
    from epochbench.instances.workloads import workload
    from epochbench.sim.policies import make
    from epochbench.sim.pool import simulate_pool
    from epochbench.sim.record import EpochRecorder

    stream = workload(model="feitelson96", jobs=3000, seed=SEED, k=k, load=1.1)
    wl = make_workload(stream.jobs, stream.capacity)
    pol = make("easy")
    rec = EpochRecorder(pol, min_candidates=n)
    simulate_pool(wl.jobs, wl.capacity, pol, on_pass=rec)
    cut = [head(inst, n, f"recorded-K{k}-n{n}-{i:05d}") for i, inst in enumerate(rec.instances)]
    steps = [inst for inst in cut if packing_candidates(inst).size >= MIN_FIT]
    if len(steps) < count:
        pytest.skip(f"only {len(steps)} recorded steps with >= {n} candidates at K = {k}")
    pick = np.linspace(0, len(steps) - 1, count).round().astype(int)
    return tuple(steps[i] for i in pick)


def instances(source: str, n: int, k: int, quick: bool) -> tuple:
    if source == "recorded":
        return recorded(n, k, COUNT[quick])
    from epochbench.instances.generators import leinberger
    return tuple(leinberger(n=n, k=k, dist="uniform", count=COUNT[quick], seed=SEED))


#: per (source, n, K): the results of each method, to check that the proven optima agree
_VALUES: dict[tuple, dict] = {}


def test_oracle(benchmark, source, n, k, method, request):
    quick = bool(request.config.getoption("--quick"))
    insts = instances(source, n, k, quick)
    limit = TIME_LIMIT[quick]
    solve(insts[0], method, time_limit=1.0)          # compile / start the solver once, untimed
    results: dict[str, list] = {inst.name: [] for inst in insts}
    calls = itertools.cycle(insts)

    def one(inst):
        r = solve(inst, method, time_limit=limit, threads=1, describe=False)
        results[inst.name].append(r)
        return r

    benchmark.pedantic(one, setup=lambda: ((next(calls),), {}), rounds=REPS[quick] * len(insts), iterations=1)
    benchmark.group = f"oracle-{source}-n{n}-K{k}"
    per = np.array([np.median([r.seconds for r in rs]) for rs in results.values()])
    proven = [all(r.status == "optimal" for r in rs) for rs in results.values()]
    key = (source, n, k)
    values = {name: rs[0] for name, rs in results.items()}
    other = _VALUES.setdefault(key, {})
    for name, r in values.items():
        for m, rr in other.get(name, {}).items():
            if r.status == rr.status == "optimal":
                assert abs(r.value - rr.value) <= 1e-9 * max(1.0, abs(r.value)), (name, method, m, r.value,
                                                                                  rr.value)
        other.setdefault(name, {})[method] = r
    median = float(np.median(per))
    info = {"source": source, "n": n, "k": k, "method": method, "instances": len(insts), "reps": REPS[quick],
            "time_limit": limit, "median_ms": 1000 * median, "p90_ms": 1000 * float(np.quantile(per, 0.9)),
            "max_ms": 1000 * float(per.max()), "proven_share": float(np.mean(proven))}
    if method == "cpsat":
        _CPSAT[key] = median
    else:
        info["speedup_vs_cpsat"] = _CPSAT[key] / median if key in _CPSAT and median > 0 else None
        info["search_only_share"] = float(np.mean([all(r.info.get("turns", 0) == 0 for r in rs)
                                                   for rs in results.values()]))
        info["search_finished_share"] = float(np.mean([all(r.status == "optimal" and "finished_by" not in r.info
                                                           for r in rs) for rs in results.values()]))
    benchmark.extra_info.update(info)
