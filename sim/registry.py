"""One policy registry for the three machine models, keyed by ``(machine, name)``.

A policy module declares its policies with :func:`register_policy` and the
options of its machine with :func:`declare_options` (name, type, default,
help, the policies an option applies to), once; the simulator face
(:func:`epochbench.sim.runner.simulate`), ``epochbench list --policies``
and the command line's ``simulate`` options all read them here.  The
catalog completes itself: the modules that define policies are imported on
the first lookup, then plug-ins of the entry-point group
``epochbench.policies`` (``MACHINE:NAME = module:factory``).  The gang and
farm machines declare theirs in modules of names and options alone
(:mod:`epochbench.sim.gang_names`, :mod:`epochbench.sim.farm_names`), so
that a command that lists them or parses their options does not import
the machines.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

from epochbench.instances.arguments import arg, named
from epochbench.instances.catalog import (Catalog, PluginError, first_sentence, guarded, in_package, module,
                                           origin_of, plugin_call, plugins)

#: the machine models: space-shared K-resource pool, gang-scheduling matrix, farm with licenses
MACHINES = ("pool", "gang", "farm")


@dataclass(frozen=True)
class Option:
    """An option of a machine's policies, declared once.

    ``name`` is the keyword (and the command line's ``--name`` with ``-``);
    ``type`` converts and checks a command-line value (raises ``ValueError``
    or ``argparse.ArgumentTypeError`` with a one-line message); ``default``
    None means "the policy's own default"; ``flag``: a switch; ``applies``:
    the policies it applies to (empty: every policy of the machine)."""

    name: str
    type: Callable[[str], Any] = str
    default: Any = None
    help: str = ""
    choices: tuple | None = None
    flag: bool = False
    applies: tuple[str, ...] = ()
    repeat: bool = False
    metavar: str | None = None


@dataclass(frozen=True)
class PolicySpec:
    """A registered policy: ``make(**options)`` builds it (a policy object,
    or for the gang machine the rule's name); ``rule`` is one line, with the
    paper and section it follows (``epochbench list --policies``)."""

    machine: str
    name: str
    make: Callable[..., Any]
    rule: str = ""


def _plugin_policy(ep) -> None:
    machine, _, name = ep.name.rpartition(":")
    machine = machine or "pool"
    if machine not in MACHINES or not name:
        raise PluginError(f"entry point name must be MACHINE:NAME with MACHINE in {', '.join(MACHINES)}")
    factory = ep.load()
    if not callable(factory):
        raise PluginError(f"{ep.value} is a {type(factory).__name__}, not a policy factory")
    taken = POLICIES.loaded().get((machine, name))
    if taken is not None and taken.make is factory:
        return                                          # registered itself on import
    if taken is not None:                               # it was ignored without a word
        raise PluginError(f"{machine} policy {name!r} already exists ({POLICIES.origin((machine, name))}); "
                          "a plug-in cannot replace it")
    register_policy(machine, name, factory, rule=first_sentence(factory.__doc__), origin=f"entry point {ep.value}")


#: every policy by ``(machine, name)``: the built-in policies' modules, then plug-ins
POLICIES: Catalog[PolicySpec] = Catalog(
    "policy", [module("epochbench.sim.policies"), module("epochbench.sim.backfill"), module("epochbench.sim.variants"),
               module("epochbench.sim.gang_names"), module("epochbench.sim.farm_names"),
               plugins("epochbench.policies", _plugin_policy)],
    describe_key=lambda k: f"{k[1]!r} on machine {k[0]!r}", builtin=5)

#: options by machine, in declaration order
OPTIONS: dict[str, dict[str, Option]] = {m: {} for m in MACHINES}


def register_policy(machine: str, name: str, make: Callable[..., Any], *, rule: str = "",
                    origin: str | None = None) -> PolicySpec:
    """Register policy ``name`` of ``machine`` built by ``make(**options)``.
    Called from outside epochbench, it loads the built-in policies' modules
    first, so that a built-in's name is refused now: before, the catalog
    took the newcomer, and the built-in's module then failed to load at
    the first lookup, with every policy it defines.  ``origin`` (default:
    ``builtin`` where epochbench's own modules register it, else ``module
    NAME``: :func:`~epochbench.instances.catalog.origin_of`) is what a clash
    of names says registered it (a plug-in's own was said to be built in)."""
    if machine not in MACHINES:
        raise ValueError(f"machine must be one of {', '.join(MACHINES)}, got {machine!r}")
    frame = sys._getframe(1)
    origin = origin or origin_of(make, frame)
    if not in_package(frame):
        load_builtins()
    spec = PolicySpec(machine, name, make, rule)
    return POLICIES.add((machine, name), spec, origin=origin, same=lambda old, new: old.make is new.make)


def load_builtins() -> None:
    """Load the built-in policies' modules, so that a registration from
    outside epochbench sees every built-in name (:meth:`Catalog.load_builtins
    <epochbench.instances.catalog.Catalog.load_builtins>`)."""
    POLICIES.load_builtins()


def made(machine: str, name: str, options: dict, ok: Callable[[Any], bool], what: str):
    """``make(**options)`` of policy ``name`` of ``machine``, a plug-in's
    failure said in one line naming it (:func:`~epochbench.instances.catalog.plugin_call`):
    its factory raised, or returned what ``ok`` refuses (``what`` says what
    it should be).  A ``ValueError`` (an option value refused, an
    :class:`OptionError` too: the caller's) stays one, and a ``TypeError``
    for an unexpected keyword (an option it does not take) one, named after
    the plug-in's policy; any other ``TypeError`` is its failure.  A
    plug-in's policy object comes back guarded
    (:func:`~epochbench.instances.catalog.guarded`): a method of it that
    raises in the run is one line naming it too (a gang plug-in returns a
    built-in policy's name: nothing of its own runs in the loop)."""
    make, origin = get_policy(machine, name).make, POLICIES.origin((machine, name))
    out = plugin_call(f"policy {name!r}", origin, lambda: make(**options), doing="its factory", ok=ok, wanted=what,
                      keywords=True)
    return out if isinstance(out, str) else guarded(out, f"policy {name!r}", origin)


def declare_options(machine: str, *options: Option) -> None:
    """Declare options of ``machine``'s policies (a name declared twice must
    be the same declaration)."""
    for opt in options:
        old = OPTIONS[machine].get(opt.name)
        if old is not None and old != opt:
            raise ValueError(f"option {opt.name!r} of machine {machine!r} declared twice differently")
        OPTIONS[machine][opt.name] = opt


#: the positional arguments each machine's loop gives its hooks
#: (:func:`check_hooks`), as :class:`epochbench.sim.engine.Engine`,
#: :class:`epochbench.sim.gang.GangSimulator` and
#: :func:`epochbench.sim.farm.simulate_farm` call them
HOOK_ARGUMENTS = {"progress": {"pool": ("arrived", "now"), "gang": ("arrived", "now"),
                               "farm": ("done", "now", "total")},
                  "on_pass": {"pool": ("time", "machine", "queue", "started"), "gang": ("time", "sim"),
                              "farm": ("view", "plan")}}


def check_hooks(machine: str, options: dict) -> None:
    """ValueError, before the run, unless each hook of ``options``
    (:data:`HOOK_ARGUMENTS`) is a function that takes the arguments the
    machine's loop gives it: a ``lambda: None`` failed in the middle of the
    run with a TypeError that named neither the hook nor its arguments.
    A signature Python cannot read is let through."""
    import inspect
    for hook, by_machine in HOOK_ARGUMENTS.items():
        func = options.get(hook)
        if func is None:
            continue
        if not callable(func):
            raise ValueError(f"{hook}: expected a function, got {func!r}")
        given = by_machine[machine]
        try:
            inspect.signature(func).bind(*given)
        except TypeError:
            raise ValueError(f"{hook}: the {machine} machine calls it as {hook}({', '.join(given)}); "
                             f"{getattr(func, '__name__', type(func).__name__)}{inspect.signature(func)} "
                             "cannot take that") from None
        except ValueError:                  # no signature to read (a builtin)
            continue


def number(name: str, value, ok: Callable[[float], bool], what: str, error: type = ValueError) -> float:
    """``value`` as a float when it is a real number (not a bool, not a
    string: the command line converts its text before a policy sees it) and
    ``ok`` holds; else a one-line ``error`` (a ``ValueError`` or a subclass)
    ``"name: what, got value"``, an int too large for a float included.
    What a policy's constructor calls on an option given from Python, so
    that ``simulate(..., starvation_limit=-5)`` is refused as
    ``--starvation-limit -5`` is, not run as another rule."""
    import numbers

    try:
        good = not isinstance(value, bool) and isinstance(value, numbers.Real) and ok(float(value))
    except OverflowError:
        good = False
    if not good:
        raise error(f"{named(name)}: {what}, got {value!r}")
    return float(value)


def numbers_of(name: str, value, ok: Callable[[float], bool], what: str) -> list[float]:
    """:func:`number` on each item of a 1-D list, tuple, array or Series (a
    single number, or a 0-d array, counts as a list of one); a string is
    refused."""
    import numpy as np

    if isinstance(value, (str, bytes)):
        raise ValueError(f"{named(name)}: {what}, got {value!r}")
    try:
        arr = np.asarray(value, dtype=object)
    except (TypeError, ValueError):
        raise ValueError(f"{named(name)}: {what}, got {value!r}") from None
    if arr.ndim > 1:
        raise ValueError(f"{named(name)}: {what}, got {value!r}")
    items = [arr.item()] if arr.ndim == 0 else list(arr)
    return [number(name, x, ok, what) for x in items]


def switch(name: str, value) -> bool:
    """``value`` when it is a bool (``lend="no"`` would be true); else a one-line ``ValueError``."""
    import numpy as np

    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: True or False, got {value!r}")
    return bool(value)


class OptionError(ValueError, TypeError):
    """An option a policy does not take: a ``ValueError`` (the command line
    prints it in one line) that is also the ``TypeError`` an unexpected
    keyword used to raise.  ``hint``: where the option may belong, said
    after the message (and after what a caller adds to it)."""

    hint = ""

    def __str__(self) -> str:
        return super().__str__() + self.hint


def check_applies(machine: str, policy: str, options: dict) -> None:
    """An option of another policy of the machine, set to other than its
    default, is refused (:class:`OptionError`, one line naming it)."""
    declared = OPTIONS[machine]
    for key, val in options.items():
        opt = declared.get(key)
        if opt is None or not opt.applies or policy in opt.applies:
            continue
        if val is not None and val != opt.default and val != []:
            raise OptionError(f"{arg(key)} applies to policy {', '.join(opt.applies)} only, not {policy!r}")


def unknown_option(exc: TypeError, machine: str, policy: str, also=(), hint: str = "") -> OptionError | None:
    """The one-line :class:`OptionError` for a ``TypeError`` that says a policy's
    runner got an unexpected keyword (naming it and the options that
    ``policy`` takes: ``also`` and the machine's declared ones that apply,
    then ``hint``); None for any other ``TypeError``."""
    if "unexpected keyword argument" not in str(exc):
        return None
    name = str(exc).rpartition(" argument ")[2]
    known = [*also, *(o.name for o in OPTIONS[machine].values() if not o.applies or policy in o.applies)]
    err = OptionError(f"policy {policy!r} ({machine}): unknown option {name}; it takes {', '.join(known) or 'none'}")
    err.hint = hint                        # said last, after any list a caller adds (bench.api)
    return err


class UnknownPolicy(KeyError, ValueError):
    """No policy of that name: a ``KeyError`` (a lookup that failed) that is
    also the ``ValueError`` the library promises for a bad argument; its
    text is the message itself (no quotes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def get_policy(machine: str, name: str) -> PolicySpec:
    """The policy ``name`` of ``machine``; :class:`UnknownPolicy` naming the machine's policies."""
    spec = POLICIES.find((machine, name))
    if spec is None:
        from epochbench.instances.registry import did_you_mean
        known = policy_names(machine)
        raise UnknownPolicy(f"no policy {name!r} on machine {machine!r}{did_you_mean(name, known)}; known: "
                            f"{', '.join(known) or 'none'}")
    return spec


def policies(machine: str | None = None) -> list[PolicySpec]:
    """Every policy (of ``machine``), machines in :data:`MACHINES` order."""
    specs = POLICIES.values()
    return sorted((s for s in specs if machine is None or s.machine == machine),
                  key=lambda s: MACHINES.index(s.machine))


def policy_names(machine: str) -> list[str]:
    return [s.name for s in policies(machine)]


def machine_of(policy: str, machine: str | None = None) -> str:
    """The machine of ``policy`` when none is named: the first of
    :data:`MACHINES` that has a policy of that name (``pool`` for ``easy``)."""
    if machine is not None:
        if machine not in MACHINES:
            raise ValueError(f"machine must be one of {', '.join(MACHINES)}, got {machine!r}")
        return machine
    for m in MACHINES:
        if POLICIES.find((m, policy)) is not None:
            return m
    from epochbench.instances.registry import did_you_mean
    known = "; ".join(f"{m}: {', '.join(policy_names(m))}" for m in MACHINES)
    every = [p for m in MACHINES for p in policy_names(m)]
    raise UnknownPolicy(f"no policy {policy!r}{did_you_mean(policy, every)}; policies: {known}")


def machine_options(machine: str) -> list[Option]:
    """The options declared for ``machine`` (loads the policy modules)."""
    POLICIES.complete()
    return list(OPTIONS[machine].values())
