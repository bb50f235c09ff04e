"""The gang machine's policies and options in the policy registry, without
the machine: the names, their rules and the options, which ``simulate``'s
parser and ``epochbench list --policies`` read, come from here, and
:mod:`epochbench.sim.gang` (the matrix and its event loop) is imported only
by a gang run.  A policy's factory gives the rule's name, which
:func:`epochbench.sim.gang.simulate_gang` runs.
"""
from __future__ import annotations

from . import registry as _registry

#: name -> (backfilling, migration) ([zhang-comparative] sections 6.1-6.5)
GANG_POLICIES = {"gs": (False, False), "bgs": (True, False), "mgs": (False, True), "mbgs": (True, True)}
#: the options' defaults (:func:`epochbench.sim.gang.simulate_gang` takes them too)
DEFAULTS = dict(mpl=5, slice=200.0, switch_overhead=0.0, migration_cost=10.0, migration_limit=64,
                discrete=False, variant=3, cut_slice=False)

_RULES = {"gs": "gang scheduling: the Ousterhout matrix, best fit into rows ([zhang-comparative] section 6.1)",
          "bgs": "gang scheduling with backfilling of each row ([zhang-comparative] section 6.2)",
          "mgs": "gang scheduling with migration of tasks between processors ([zhang-comparative] section 6.4)",
          "mbgs": "gang scheduling with backfilling and migration ([zhang-comparative] section 6.5)"}


def _named(name: str):
    def make() -> str:
        return name
    make.__name__ = name
    return make


for _name in GANG_POLICIES:
    _registry.register_policy("gang", _name, _named(_name), rule=_RULES[_name])

_O = _registry.Option
_registry.declare_options(
    "gang",
    _O("mpl", int, DEFAULTS["mpl"], "multiprogramming level: rows of the matrix (default 5)"),
    _O("slice", float, DEFAULTS["slice"], "time slice in seconds, at most 1e9 (default 200)"),
    _O("switch_overhead", float, DEFAULTS["switch_overhead"], "context switch as a fraction of the slice (default 0)"),
    _O("migration_cost", float, DEFAULTS["migration_cost"],
       "mgs/mbgs: checkpoint + restart seconds per migration, at most 1000 slices or 1e4 (default 10)", applies=("mgs", "mbgs")),
    _O("migration_limit", int, DEFAULTS["migration_limit"],
       "mgs/mbgs: tasks migrated per slice, -1 = no limit (default 64)", applies=("mgs", "mbgs")),
    _O("discrete", bool, False, "schedule at slice boundaries only", flag=True),
    _O("cut_slice", bool, False, "continuous scheduling: every arrival or departure cuts the running slice short "
       "and the next row starts a fresh one (default: the running row keeps its slice end)", flag=True),
    _O("variant", int, DEFAULTS["variant"], "steps run: 1 Schedule+Fill, 2 +Clean, 3 all (mgs/mbgs: 2 = GS+FillMatrix-2)",
       choices=(1, 2, 3)),
)
