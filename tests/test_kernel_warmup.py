"""The kernel warm-up that ``pytest -n`` runs before its workers start
(``tests/kernel_warmup.py``, the root conftest), run as the conftest runs
it, in a process of its own: every part of both halves runs, and the pool
parts reach every pool policy, on one resource and on two."""
import re
import subprocess
import sys

import kernel_warmup as warmup
from epochbench.sim.policies import FAST_CODES
from epochbench.sim.registry import policy_names


def test_both_halves_run_every_part_and_reach_every_pool_policy():
    res = subprocess.run([sys.executable, warmup.__file__, *warmup.HALVES], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    runs = dict(re.findall(r"^(\S+): [\d.]+ s \((\d+) runs\)$", res.stdout, re.M))
    assert sorted(runs) == sorted(warmup.PARTS), res.stdout
    pool = set(policy_names("pool"))
    assert set(FAST_CODES) == pool                        # every built-in pool policy has a compiled loop
    own = {name for name in pool if warmup.own_loop(name)}
    # one resource and two each, but multi-queue (its partitions split processors only) on one
    assert int(runs["pool"]) == 2 * len(pool - own) and int(runs["pool-own"]) == 2 * len(own) - 1
    assert sorted(p for half in warmup.HALVES.values() for p in half) == sorted(warmup.PARTS)


def test_every_family_has_an_instance_to_warm_up_on():
    from epochbench.instances.registry import methods
    assert set(warmup.FAMILY_INSTANCES) == {m.family for m in methods() if m.origin == "builtin"}
