"""Farm scheduling speed ([capannini2007] figs. 7-8): the time of one scheduling
pass of each farm policy on a [capannini2007] farm state, 150 machines and 20
licenses, 150 jobs running and 300 queued (issue 8 target: under 50 ms for
the incremental CS versions), and the scalability of one pass with the number
of jobs (fig. 8: cs-i-p, cs-ni-p, EDF).  Run with ``pytest --benchmark``;
``--quick`` keeps n <= 500 in the scalability sweep."""
from __future__ import annotations

import numpy as np
import pytest

from epochbench.instances.farm import generate_farm
from epochbench.sim.farm import next_event_state, snapshot
from epochbench.sim.farm_policies import POLICIES, make_farm_policy
from epochbench.suite import rounds as bench_rounds


def _state(n: int, busy: float):
    return generate_farm(np.random.default_rng(0), jobs=n, machines=150, licenses=20, busy=busy)


def _pass(benchmark, state, name, config):
    pol = make_farm_policy(name)

    def setup():
        view = snapshot(state)
        pol.reset(view.stream)
        return (view,), {}

    args, _ = setup()
    pol.plan(*args)  # warm-up: numba kernels load from the cache
    plan = benchmark.pedantic(pol.plan, setup=setup, rounds=bench_rounds(config, 7, lambda: pol.plan(*setup()[0])),
                              iterations=1)
    return plan


@pytest.mark.parametrize("policy", POLICIES)
def test_one_event_150_machines_300_queued(benchmark, policy, request):
    """One event inside a run: 150 jobs running under the policy's own
    previous plan, 300 queued, one arrival."""
    state = next_event_state(_state(450, busy=1.0), make_farm_policy(policy))   # 150 running (one per machine) + 300 queued + 1
    plan = _pass(benchmark, state, policy, request.config)
    benchmark.group = "farm-event-150x300"
    benchmark.extra_info.update({"running": int((state.jobs.running_on >= 0).sum()), "jobs": state.n,
                                 "planned": len(plan), "target_ms": 50 if "-i-" in policy else None})


@pytest.mark.parametrize("policy", POLICIES)
def test_one_event_cold_start(benchmark, policy, request):
    """The same farm, but the running jobs sit on random machines (no plan of
    the policy's own): the incremental matching has most to repair."""
    state = _state(450, busy=1.0)
    plan = _pass(benchmark, state, policy, request.config)
    benchmark.group = "farm-event-150x300-cold"
    benchmark.extra_info.update({"jobs": state.n, "planned": len(plan)})


@pytest.mark.parametrize("policy", ("cs-i-p", "cs-ni-p", "edf"))
@pytest.mark.parametrize("n", (100, 250, 500, 1000, 1500))
def test_scalability(benchmark, request, policy, n):
    if request.config.getoption("--quick") and n > 500:
        pytest.skip("n > 500: full suite only")
    _pass(benchmark, _state(n, busy=0.5), policy, request.config)
    benchmark.group = f"farm-scale-{policy}"
    benchmark.extra_info.update({"jobs": n})
