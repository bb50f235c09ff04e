"""Compile (or load) the compiled kernels that the tests run, ahead of them.

``pytest -n auto`` runs this file twice at once, one half of the kernels
each (:data:`HALVES`), before its workers start (the root conftest's
:func:`pytest_configure`).  On a cold numba cache (a fresh clone) the
kernels cost about 230 s of one CPU to compile, and the fresh-clone run
took about 210 s more than a warm one when the workers compiled them on
demand.  The two halves take about 120 and 130 s cold (they share the
profile's helpers, compiled by whichever comes first), a few seconds warm.
On one machine within an hour, fresh-clone CI took 628 s before and 579,
697 and 623 s with this warm-up (the machine's speed drifts; pytest's own
time went 503 s -> 404, 471 and 451 s).

The kernels are reached through the public face on tiny inputs, as a user
reaches them: each pool policy with the compiled loop (``engine="fast"``)
on one resource and on two, the gang and farm machines, and each built-in
method of each family.  A kernel signature that only a test asks for is
compiled by that test, as before.  Failures are printed and the run goes
on: the tests report what is broken (``test_kernel_warmup.py`` runs both
halves as the conftest does).

Usage: ``python tests/kernel_warmup.py HALF`` (``sim`` or ``rest``), or
``python tests/kernel_warmup.py --part NAME ...``.
"""
from __future__ import annotations

import sys
import time
import warnings

import numpy as np

#: a small instance of each family: (generator, parameters)
FAMILY_INSTANCES = {
    "packing": ("leinberger", dict(n=16, k=2, count=1, seed=1)),
    "knapsack": ("farm-mkp", dict(n=12, seed=1)),
    "assignment": ("assign-random", dict(n=8, seed=1)),
    "epochs": ("fig1", {}),
    "mapping": ("braun-range", dict(tasks=16, machines=4, seed=1)),
}


def _stream(k: int, largest: int = 3, n: int = 24, seed: int = 0):
    """A random stream of ``n`` jobs on 4 processors and ``k - 1`` more
    resources of 4 units, at most ``largest`` processors a job."""
    from epochbench.instances.jobs import make_workload
    rng = np.random.default_rng(seed)
    jobs = {"id": np.arange(1, n + 1), "submit": np.sort(rng.integers(0, 50, n)).astype(float),
            "runtime": rng.integers(1, 30, n).astype(float),
            "procs": rng.integers(1, largest + 1, n).astype(np.int64)}
    jobs.update({f"res_r{i}": rng.integers(0, 4, n).astype(np.int64) for i in range(1, k)})
    return make_workload(jobs, [4] * k)


def compiled_pool_policies() -> list[str]:
    """The pool policies with a compiled loop (:data:`~epochbench.sim.policies.FAST_CODES`;
    the registry loads them all first): not those a test registers."""
    from epochbench.sim.policies import FAST_CODES
    from epochbench.sim.registry import policy_names
    return [name for name in policy_names("pool") if name in FAST_CODES]


def own_loop(name: str) -> bool:
    """Whether pool policy ``name`` runs a compiled loop of its own
    (:data:`~epochbench.sim.policies.OWN_LOOPS`), not the shared event loop."""
    from epochbench.sim.policies import FAST_CODES, OWN_LOOPS
    return FAST_CODES[name] in OWN_LOOPS


def pool(own: bool) -> list[str]:
    """Each pool policy of the shared event loop (``own`` False) or with a
    loop of its own (True), compiled, on one resource and on two (the
    policies with a compiled loop: not those a test registers)."""
    from epochbench.sim.pool import simulate_pool
    names = [name for name in compiled_pool_policies() if own_loop(name) == own]
    done = []
    for k in (1, 2):
        for name in names:
            if name == "multi-queue" and k > 1:                          # partitions split processors only
                continue
            w = _stream(k, largest=1 if name == "multi-queue" else 3)      # no job wider than a partition
            simulate_pool(w.table, w.capacity, name, engine="fast")
            done.append(f"{name} k={k}")
    return done


def machine(name: str) -> list[str]:
    """Each policy of the gang or farm machine on a short stream."""
    import epochbench as eb
    from epochbench.sim.registry import policy_names
    stream = None if name == "farm" else eb.generate("workload", jobs=60, seed=1, processors=16)
    options = dict(farm_jobs=40, machines=10, licenses=5) if name == "farm" else {}   # the farm makes its own
    done = []
    for policy in policy_names(name):
        eb.simulate(stream, policy, name, **options)
        done.append(policy)
    return done


def family(name: str) -> list[str]:
    """Each built-in method of family ``name`` on one small instance (exact
    ones with a 1 s limit and one thread); the replay method needs a
    recorded choice and is left out, as are methods that tests register."""
    import epochbench as eb
    from epochbench.instances.registry import methods
    generator, params = FAMILY_INSTANCES[name]
    inst = eb.generate(generator, **params)[0]
    done = []
    for method in [m.name for m in methods(name) if m.origin == "builtin" and m.kind != "replay"]:
        eb.solve(inst, method, time_limit=1.0, threads=1)
        done.append(method)
    return done


PARTS = {
    "pool": lambda: pool(own=False),
    "pool-own": lambda: pool(own=True),
    "gang": lambda: machine("gang"),
    "farm": lambda: machine("farm"),
    **{f"family-{name}": (lambda name=name: family(name)) for name in FAMILY_INSTANCES},
}
#: the two halves run at once, about equal in compile time on a cold cache
HALVES = {
    "sim": ("pool", "gang"),
    "rest": ("pool-own", "family-packing", "family-knapsack", "family-assignment", "farm", "family-epochs",
             "family-mapping"),
}


def run(parts, out=sys.stdout) -> int:
    """Run ``parts`` in order, a line each; the number that failed."""
    failed = 0
    for part in parts:
        t = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                what = PARTS[part]()
            print(f"{part}: {time.perf_counter() - t:.1f} s ({len(what)} runs)", file=out, flush=True)
        except Exception as exc:                      # the tests report it; the other parts still warm up
            failed += 1
            print(f"{part}: failed: {type(exc).__name__}: {exc}", file=out, flush=True)
    return failed


if __name__ == "__main__":
    args = sys.argv[1:]
    parts = args[1:] if args[:1] == ["--part"] else [p for half in args for p in HALVES[half]]
    sys.exit(1 if run(parts) else 0)
