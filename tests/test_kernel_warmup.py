"""The kernel warm-up that ``pytest -n`` runs before its workers start
(``tests/kernel_warmup.py``, the root conftest): every part runs, and the
pool parts reach every pool policy, on one resource and on two."""
import io

import kernel_warmup as warmup
from epochbench.sim.registry import policy_names


def test_every_part_of_the_warm_up_runs():
    out = io.StringIO()
    assert warmup.run(warmup.PARTS, out) == 0, out.getvalue()
    assert sorted(p for half in warmup.HALVES.values() for p in half) == sorted(warmup.PARTS)


def test_the_pool_parts_reach_every_pool_policy_and_the_families_every_family():
    from epochbench.instances.registry import methods
    ran = warmup.pool(own=False) + warmup.pool(own=True)
    assert {r.split()[0] for r in ran} == set(policy_names("pool"))
    assert {r for r in ran if r.endswith("k=2")} == {f"{p} k=2" for p in policy_names("pool") if p != "multi-queue"}
    assert set(warmup.FAMILY_INSTANCES) == {m.family for m in methods() if m.origin == "builtin"}
