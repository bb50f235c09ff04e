"""The farm machine's policies and options in the policy registry, without
the farm: the names, their rules and the options, which ``simulate``'s
parser and ``epochbench list --policies`` read, come from here, and
:mod:`epochbench.sim.farm_policies` (CS, EDF, the backfilling policies, the
farm model) is imported when a policy is made.
"""
from __future__ import annotations

from . import registry as _registry

POLICIES = ("cs-i-p", "cs-i-np", "cs-ni-p", "cs-ni-np", "edf", "easy", "bf-rm", "bf-unrm")


def _cs(name: str):
    _, inc, pre = name.split("-")

    def make(**kw):
        from .farm_policies import ConvergentScheduling
        return ConvergentScheduling(inc == "i", pre == "p", **{k: v for k, v in kw.items() if v is not None})
    return make


def _plain(cls: str, *args, **kwargs):
    """The factory of policy class ``cls`` of :mod:`epochbench.sim.farm_policies`
    built with ``args`` and ``kwargs``; it takes no options."""
    def make(**kw):
        if any(v is not None for v in kw.values()):
            raise ValueError(f"this policy takes no options, got {sorted(kw)}")
        from . import farm_policies
        return getattr(farm_policies, cls)(*args, **kwargs)
    return make


#: name -> (factory of the policy object from its options, one-line rule)
_FARM = {
    "cs-i-p": (_cs("cs-i-p"), "convergent scheduling, incremental matching (IMFS), preemptive ([capannini2007] sections 4-5)"),
    "cs-i-np": (_cs("cs-i-np"), ("convergent scheduling, incremental matching, non-preemptive ([capannini2007] sections 4-5): "
                                "IMFS from an empty plan, as the running jobs' machines are not matched, which reaches "
                                "MFS's optimum, so its schedules are cs-ni-np's but for ties between matchings of "
                                "equal weight; cs-i-p keeps a previous plan")),
    "cs-ni-p": (_cs("cs-ni-p"), "convergent scheduling, non-incremental matching (MFS), preemptive ([capannini2007] sections 4-5)"),
    "cs-ni-np": (_cs("cs-ni-np"), "convergent scheduling, non-incremental matching, non-preemptive ([capannini2007] sections 4-5)"),
    "edf": (_plain("EDF"), "earliest deadline first ([capannini2007] section 6)"),
    "easy": (_plain("FarmBackfill", "fcfs"), "EASY backfilling on the farm, FCFS order ([capannini2007] section 6)"),
    "bf-rm": (_plain("FarmBackfill", "cs", keep_reservation=False),
              "backfilling in CS priority order, reservation removed at each event ([capannini2007] section 6)"),
    "bf-unrm": (_plain("FarmBackfill", "cs", keep_reservation=True),
                "backfilling in CS priority order, reservation kept ([capannini2007] section 6)"),
}
assert tuple(_FARM) == POLICIES
for _name, (_make, _rule) in _FARM.items():
    _make.__name__ = _name.replace("-", "_")
    _registry.register_policy("farm", _name, _make, rule=_rule)


_O = _registry.Option
_CS = ("cs-i-p", "cs-i-np", "cs-ni-p", "cs-ni-np")
_registry.declare_options(
    "farm",
    _O("farm_jobs", int, 1500, "jobs in the generated stream (default 1500)"),
    _O("machines", int, 150, "machines (default 150)"),
    _O("licenses", int, 20, "license types (default 20)"),
    _O("interarrival", float, 10.0, "mean inter-arrival time (default 10)"),
    _O("seed", int, 0, "stream seed (default 0)"),
    _O("matcher", str, None, "CS matching: mis, mfs, imfs or an exact assignment method (hungarian, cpsat); "
       "default imfs for cs-i-*, mfs for cs-ni-*", applies=_CS),
    _O("mkp", str, "greedy-mkp", "CS license knapsack method (default greedy-mkp; exact: cpsat, milp-highs)",
       applies=_CS),
    _O("exact_time_limit", float, 1.0, "seconds per exact call (default 1)", applies=_CS),
    _O("cs_constant", str, None, "CS: override a footnote-1 constant (repeatable), e.g. aging=0.002, "
       "literal_fbar=1 (the deadline heuristic's f-bar exactly as printed in the seed)", repeat=True,
       metavar="KEY=VALUE", applies=_CS),
    _O("oracle_every", int, 0, "CS: every K-th pass, also solve the knapsack and the matching exactly and "
       "record the per-epoch gaps (default 0: never)", applies=_CS),
)
