"""Benchmarks of the packing and epochs families: one per (configuration,
method), decision time measured by pytest-benchmark, gap in ``extra_info``.

Run with ``pytest --benchmark`` (``--quick`` for the small suite)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from epochbench.instances.core import handed
from epochbench.instances.registry import get
from epochbench.suite import STORE, configs, median_seconds, methods_for, rounds as bench_rounds, time_rounds, warm_up


def _cases(quick: bool):
    # the configuration's id, not the object: pytest-benchmark stores params as JSON
    for cfg in configs(quick):
        for m in methods_for(cfg.family):
            yield pytest.param(cfg.id, m, id=f"{cfg.family}-{cfg.id}-{m}")


def pytest_generate_tests(metafunc):
    if {"config", "method"} <= set(metafunc.fixturenames):
        quick = bool(metafunc.config.getoption("--quick"))
        metafunc.parametrize(("config", "method"), list(_cases(quick)))


def _config(config: str, quick: bool):
    return next(c for c in configs(quick) if c.id == config)


def test_method(benchmark, config, method, request):
    cfg = _config(config, bool(request.config.getoption("--quick")))
    try:
        _bench_method(benchmark, cfg, method, request)
    except (Exception, pytest.fail.Exception):   # its test fails (a skip or Ctrl-C is no failure of its):
        STORE.failed.add((cfg.id, method))       # off the board (it was ranked on the answers it had)
        raise


def _bench_method(benchmark, cfg, method, request):
    insts = cfg.instances()
    m = get(cfg.family, method)
    benchmark.group = f"{cfg.family}-{cfg.id}"
    STORE.selected.add((cfg.id, method))
    warm_up(cfg, method)
    if m.exact:
        cycle = itertools.cycle(insts)
        benchmark.pedantic(lambda inst: STORE.result(cfg, inst, method),
                           setup=lambda: ((next(cycle),), {}), rounds=len(insts), iterations=1)
        seconds = [STORE.result(cfg, i, method).seconds for i in insts]
        STORE.timing[(cfg.id, method)] = float(np.median(seconds))
    else:
        STORE.ensure_reference(cfg)
        for inst in insts:  # checked results (feasibility, value) once per instance
            STORE.result(cfg, inst, method)
        probe = (lambda: m.func(insts[0])) if m.origin == "builtin" else (lambda: m.func(handed(insts[0])[0]))
        rounds = bench_rounds(request.config, max(20, 10 * len(insts)), probe=probe)
        times = time_rounds(benchmark, m.func, insts, rounds, len(insts), m)   # per-decision times
        median = median_seconds(benchmark)
        if median == median:                    # NaN when --benchmark-disable left it untimed
            STORE.timing[(cfg.id, method)] = median
        for name, t in times.items():
            STORE.instance_timing[(cfg.id, method, name)] = t
    benchmark.extra_info.update(STORE.extra_info(cfg, method))
    STORE.infos.append((cfg, method, benchmark.extra_info))    # scored again at the end (Store.refresh_infos)
