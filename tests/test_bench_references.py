"""The benchmark suite's reference solves (``Store.ensure_reference``): the
first run in this process for ``LOCAL_FIRST_S`` seconds, the rest on the
sweep (a local cluster, or the scheduler of ``$EPOCHBENCH_SCHEDULER``,
which then takes them all)."""
from __future__ import annotations

import os
import time

import pytest

from epochbench import suite, sweep


def _tasks(n: int) -> list[dict]:
    return [{"index": i} for i in range(n)]


def test_the_first_solves_run_here_one_after_the_other_until_the_time_is_spent(monkeypatch):
    monkeypatch.setattr(suite, "LOCAL_FIRST_S", 0.05)
    seen = []

    def slow(task):                     # each solve takes the whole budget: one runs here
        seen.append((task["index"], os.getpid()))
        time.sleep(0.06)
        return task["index"] * 10

    assert suite._solved_here_first(slow, _tasks(5)) == {0: 0}
    assert seen == [(0, os.getpid())]
    monkeypatch.setattr(suite, "LOCAL_FIRST_S", 60.0)
    seen.clear()
    assert suite._solved_here_first(lambda t: seen.append(t["index"]) or -t["index"], _tasks(4)) == \
        {0: 0, 1: -1, 2: -2, 3: -3}
    assert seen == [0, 1, 2, 3]                 # in order, each once


def test_a_scheduler_takes_every_solve(monkeypatch):
    monkeypatch.setenv(sweep.SCHEDULER_ENV, "tcp://127.0.0.1:9")   # never contacted here
    assert suite._solved_here_first(lambda t: pytest.fail("solved here"), _tasks(3)) == {}


def test_a_solve_that_raises_stops_them_with_its_type():
    def bad(task):
        raise ZeroDivisionError("bad instance")

    with pytest.raises(ZeroDivisionError, match="bad instance"):
        suite._solved_here_first(bad, _tasks(2))


def test_references_solved_here_are_those_the_sweep_gives(monkeypatch):
    """Without a scheduler and with every core asked for, a short batch of
    reference solves starts no cluster, and gives what a sweep in this
    process gives (values and statuses; the times differ)."""
    cfg = suite.Config("packing", "leinberger", tuple(sorted(dict(n=6, k=2, count=1, seed=5).items())), 2.0)
    monkeypatch.delenv(sweep.SCHEDULER_ENV, raising=False)
    monkeypatch.delenv("EPOCHBENCH_WORKERS", raising=False)
    monkeypatch.setattr(suite, "LOCAL_FIRST_S", 600.0)
    monkeypatch.setattr(sweep, "_on_dask", lambda *a, **k: pytest.fail("a cluster was started"))
    here = suite.Store()
    here.ensure_reference(cfg)
    monkeypatch.setenv("EPOCHBENCH_WORKERS", "1")
    monkeypatch.setattr(suite, "LOCAL_FIRST_S", 0.0)
    swept = suite.Store()
    swept.ensure_reference(cfg)
    got, want = here.results[cfg.id], swept.results[cfg.id]
    assert set(got) == {i.name for i in cfg.instances()} == set(want)
    for name, per in got.items():
        assert set(per) == set(want[name]) and {"cpsat", "milp-highs"} <= set(per)
        for method, res in per.items():
            assert (res.value, res.status, res.bound) == (want[name][method].value, want[name][method].status,
                                                          want[name][method].bound), (name, method)
