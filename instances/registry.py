"""Registry of methods per family: a heuristic or solver registers under a name
and the CLI, the benchmarks and the simulator find it here.

A *heuristic* is a plain function ``f(instance, **params)`` returning the
decision (packing: job indices in pick order; epochs: list of bins) or a
:class:`~epochbench.instances.core.Result`.  An *exact* method is ``f(instance, *,
time_limit, threads, **params)`` returning a :class:`Result` with its bound
and status.  :func:`solve` times the call, runs the family's independent
feasibility check and recomputes the objective; nothing unchecked leaves it.
"""
from __future__ import annotations

import math
import numbers
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable

from .catalog import Catalog, PluginError, in_package, modules_of, origin_of, plugins
from .checks import SEQUENCES, short, with_article
from .core import InfeasibleSolution, InstanceChanged, MethodFailed, Result, check_threads, content, handed
from .io import check, families


#: ``replay`` methods return a decision stored with the instance (a recorded
#: policy choice); they are called like heuristics but never listed among them
KINDS = ("heuristic", "exact", "replay")

#: the built-in method packages, imported by name on the first lookup that
#: needs them (cheap heuristics first, exact solvers last, so that nothing
#: imports OR-Tools, PuLP or SciPy before an exact method is asked for)
HEURISTIC_PACKAGE = "epochbench.heuristics"
EXACT_PACKAGE = "epochbench.exact"

#: entry-point group of third-party methods: ``NAME`` or ``FAMILY:NAME`` =
#: ``module:function`` (family ``packing`` when omitted)
ENTRY_POINT_GROUP = "epochbench.heuristics"


@dataclass(frozen=True)
class Method:
    family: str
    name: str
    func: Callable
    kind: str  # one of KINDS
    origin: str = "builtin"

    @property
    def exact(self) -> bool:
        return self.kind == "exact"


def _derive_epochs() -> None:
    """Every packing heuristic, built-in or plug-in, also serves ``epochs``
    (applied epoch after epoch, :func:`~epochbench.instances.packing.epochs_by`),
    unless an ``epochs`` method of that name exists."""
    for m in list(METHODS.loaded().values()):
        _derive_one(m)


def _derive_one(m: "Method") -> None:
    """The ``epochs`` method of packing heuristic ``m`` (see :func:`_derive_epochs`)."""
    from .packing import epochs_by
    if m.family == "packing" and m.kind == "heuristic" and ("epochs", m.name) not in METHODS.loaded():
        # two threads loading one source both derive it: the same derivation is no clash
        derived = Method("epochs", m.name, epochs_by(m.func, m.name), "heuristic", m.origin)
        METHODS.add(("epochs", m.name), derived,
                    origin=m.origin, same=lambda old, new: getattr(old.func, "__wrapped__", None) is m.func)


def _derived(m: "Method") -> bool:
    """``m`` is the ``epochs`` method derived from a packing heuristic (an
    ``epochs`` method registered under its name replaces it, unless the
    heuristic is a built-in one: its name stays taken)."""
    packing = METHODS.loaded().get(("packing", m.name))
    return m.family == "epochs" and packing is not None and getattr(m.func, "__wrapped__", None) is packing.func


def _heuristics() -> None:
    modules_of(HEURISTIC_PACKAGE)()
    _derive_epochs()


def _load_plugin(ep) -> None:
    """Import entry point ``ep`` and register it (unless loading it already
    did); a name taken by another method, built-in or plug-in, is refused."""
    family, _, name = ep.name.rpartition(":")
    family = family or "packing"
    if not name:
        raise PluginError("empty method name")
    if family not in families():
        raise PluginError(f"unknown family {family!r} (families: {', '.join(families())})")
    func = ep.load()
    if not callable(func):
        raise PluginError(f"{ep.value} is {with_article(type(func).__name__)}, not a function")
    taken = METHODS.loaded().get((family, name))
    if taken is not None and taken.func is func:
        return                                          # registered itself (decorator) on import
    # an epochs method may replace the one derived from a plug-in's packing heuristic of its name (as register
    # lets it: the README's own epochs method), not a built-in's
    if taken is not None and not (_derived(taken) and taken.origin != "builtin"):
        raise PluginError(f"{family} method {name!r} already exists ({taken.origin}); "
                          "a plug-in cannot replace it")
    register(family, name, origin=f"entry point {ep.value}")(func)


def _plugins() -> None:
    plugins(ENTRY_POINT_GROUP, _load_plugin)()
    _derive_epochs()


def _exact() -> None:
    modules_of(EXACT_PACKAGE)()


#: every method, by ``(family, name)``; complete itself on lookup (the
#: built-in ones before the plug-ins, so that a plug-in cannot take a
#: built-in name that a later source would register)
METHODS: Catalog[Method] = Catalog("method", [_heuristics, _exact, _plugins],
                                   describe_key=lambda k: f"{k[1]!r} for family {k[0]!r}", builtin=2)
#: the catalog's dict of methods (tests patch single entries in it)
_REGISTRY = METHODS._items


#: texts that pandas' CSV reader takes for a missing value by default: no method may be named so
MISSING_WORDS = frozenset({"#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                           "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


def register(family: str, name: str, *, kind: str = "heuristic", origin: str | None = None):
    """Decorator: register ``func`` as method ``name`` of ``family``.
    ``origin`` (default: ``builtin`` where the decorator is applied in one
    of epochbench's own modules, else ``module NAME``: the function's
    module, or the one applying the decorator to a wrapper of one of
    epochbench's functions) is what listings and :func:`~epochbench.validation.validate`
    go by (only built-in heuristics are its yardsticks, and only they are
    handed an instance uncopied); ``origin="builtin"`` from anywhere else
    is a ValueError, as is a name with commas, whitespace, ``:``, ``/``,
    ``=``, control or invisible characters, a leading ``-`` or one of
    :data:`MISSING_WORDS`."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not isinstance(name, str) or not name or any(c in name for c in ",:/=") or any(c.isspace() for c in name):
        raise ValueError(f"method name: expected a name without commas, spaces, ':', '/' or '=' (lists of "
                         f"methods split on commas and spaces, entry points and validate's labels on ':', "
                         f"--where method=NAME on '='; '/' is a path's), got {name!r}")
    if name.startswith("-") or not name.isprintable() or name in MISSING_WORDS:
        raise ValueError(f"method name: {name!r} " + (
            "starts with '-' (the command line reads it as an option)" if name.startswith("-") else
            "holds a control or invisible character" if not name.isprintable() else
            "reads as a missing value in CSV files (pandas), where results and comparisons are written"))
    if origin is not None and not isinstance(origin, str):       # "" (or None): the default, as it always was
        raise ValueError(f"origin: expected text naming where the method comes from, got {origin!r}")

    def deco(func):
        frame = sys._getframe(1)                              # where the decorator is applied
        ours = in_package(frame)
        if origin == "builtin" and not ours:
            raise ValueError("origin: 'builtin' names epochbench's own methods (handed instances uncopied, the "
                             "yardsticks of validate); name where yours comes from, or leave origin out")
        if not callable(func):
            raise ValueError(f"method {name!r} for family {family!r}: expected a callable, "
                             f"got {type(func).__name__}")
        _check_instance_argument(family, name, func)
        if kind == "exact":
            _check_exact_signature(family, name, func)
        src = origin or origin_of(func, frame)
        if src != "builtin":
            _load_builtins()   # a built-in name is refused now, not when a later lookup loads it
        old = METHODS.loaded().get((family, name))
        if old is not None and old.func is not func and not (_derived(old) and old.origin != "builtin"):
            raise ValueError(f"method {name!r} already registered for family {family!r} by {old.origin}")
        twin_too = family == "packing" and kind == "heuristic"     # it also serves epochs under its name
        if src != "builtin":
            _no_lookalike(family, name)
            if twin_too:
                _no_lookalike("epochs", name)
        twin = METHODS.loaded().get(("epochs", name)) if twin_too else None
        if src != "builtin" and twin is not None and twin.origin == "builtin" and not _derived(twin):
            raise ValueError(f"method {name!r}: a packing heuristic also serves epochs under its name, and "
                             f"epochs has a built-in {name!r}; choose another name")
        m = METHODS.add((family, name), Method(family, name, func, kind, src), origin=src, same=lambda a, b: True)
        if METHODS.has_loaded(_heuristics):    # registered after the derivation: its epochs method now
            _derive_one(m)
        return func

    return deco


def _fold(name) -> str:
    """``name`` in one case and width (NFKC, casefold): ``FF`` and a
    full-width ``ＦＦ`` fold to ``ff``."""
    import unicodedata
    return unicodedata.normalize("NFKC", str(name)).casefold()


def _no_lookalike(family: str, name: str) -> None:
    """ValueError where ``name`` differs from a built-in method of ``family``
    only in case or width (``FF``, full-width ``ＦＦ`` beside ``ff``): on a
    leaderboard or in ``--methods`` the two read as one."""
    key = _fold(name)
    for (fam, other), m in METHODS.loaded().items():
        if fam == family and m.origin == "builtin" and other != name and _fold(other) == key:
            raise ValueError(f"method name: {name!r} differs from {family}'s built-in {other!r} only in case or "
                             "width; choose another name")


def _check_instance_argument(family: str, name: str, func) -> None:
    """ValueError unless ``func`` takes a positional argument, the instance
    (every method is called ``func(instance, **keywords)``): a method
    taking none is refused when registered, not at its first solve with a
    TypeError naming neither it nor the instance.  A signature Python
    cannot read is let through."""
    import inspect
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return
    kinds = {p.kind for p in params}
    if not kinds & {inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                    inspect.Parameter.VAR_POSITIONAL}:
        raise ValueError(f"method {name!r} for family {family!r}: its function must take the instance as its "
                         "first positional argument (it is called func(instance, **keywords)); it takes none")


def _check_exact_signature(family: str, name: str, func) -> None:
    """ValueError unless ``func`` takes the keywords every exact method is
    called with (``time_limit``, ``threads``: :func:`solve`), so that a
    method missing them is refused when registered, not at its first solve
    with a TypeError.  A signature Python cannot read is let through."""
    import inspect
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    names = {p.name for p in params if p.kind in (inspect.Parameter.KEYWORD_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)}
    missing = [k for k in ("time_limit", "threads") if k not in names]
    if missing:
        raise ValueError(f"exact method {name!r} for family {family!r}: its function must take the keyword "
                         f"argument(s) {', '.join(missing)} (every exact method is called with time_limit "
                         "in seconds and threads)")


def _load_builtins() -> None:
    """Import every built-in method module (cheap: no solver is imported
    before a solve), so that a name check sees all of them."""
    METHODS.load_builtins()


class UnknownMethod(KeyError, ValueError):
    """No method of that name in the family: a ``KeyError`` (a lookup that
    failed) that is also the ``ValueError`` the library promises for a bad
    argument; its text is the message itself (no quotes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def get(family: str, name: str) -> Method:
    """The method ``name`` of ``family``, importing built-in modules and
    plug-ins as needed; :class:`UnknownMethod` (a ``KeyError`` and a
    ``ValueError``) listing the family's methods otherwise."""
    if not isinstance(name, str):              # a function passed where its registered name belongs
        raise UnknownMethod(f"expected the name of a registered {family} method, got {type(name).__name__} "
                            f"{name!r}; register a function with eb.register({family!r}, NAME) and pass NAME")
    m = METHODS.find((family, name))
    if m is None:
        known = names(family)
        raise UnknownMethod(f"no method {name!r} for family {family!r}{did_you_mean(name, known)}; registered: "
                            f"{', '.join(known) or 'none'}")
    return m


def did_you_mean(name, known) -> str:
    """``" (did you mean 'ff'?)"`` naming the entries of ``known`` spelt like
    ``name`` (the three closest spellings, closest first), else "": compared
    in one case and width (``FF`` or a full-width ``ｆｆ`` is ``ff``, the
    closest); entries that fold alike (two plug-ins ``Foo`` and ``FOO``) are
    all named, in ``known``'s order."""
    import difflib
    folded: dict[str, list] = {}
    for k in dict.fromkeys(known):
        folded.setdefault(_fold(k), []).append(k)
    close = [k for f in difflib.get_close_matches(_fold(name), list(folded), n=3, cutoff=0.6) for k in folded[f]]
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


def get_named(family: str, name: str, keyword: str) -> Method:
    """:func:`get`, its message naming the argument that gave ``name``
    (``selector='fff': no method ...`` in a Python call, ``--selector
    fff: ...`` on the command line)."""
    from epochbench.instances.arguments import arg
    try:
        return get(family, name)
    except UnknownMethod as exc:
        raise UnknownMethod(f"{arg(keyword, name)}: {exc}") from None


def snapshot(family: str, names_: list[str]) -> tuple[Method, ...]:
    """The methods ``names_`` of ``family`` as this process has them (names
    it does not know are left out: the caller's lookup reports them), to be
    carried to another process with :func:`using`."""
    return tuple(m for m in (METHODS.find((family, n)) for n in names_) if m is not None)


#: the entries :func:`using` put in place, by key: (the entry before any block, the blocks' own
#: entries in the order they came, each under its block's token)
_USING: dict = {}
_USING_LOCK = threading.Lock()


@contextmanager
def using(shipped: tuple[Method, ...] = ()):
    """While the block runs, look methods up as the process that took the
    :func:`snapshot` had them: a method registered there at run time (or
    patched) is unknown or different in a worker process, whose own modules
    and plug-ins register the rest.  Entries whose function is the one
    registered here already are left alone; the others are put back when
    the last block that shipped them ends (a worker serves many sweeps, and
    a Dask worker with several threads runs blocks at once: the first to end
    put the old entry back, or removed it, under the others).  Blocks that
    ship different functions under one name at once: the latest block still
    running is looked up."""
    token, took = object(), []
    try:
        with _USING_LOCK:
            for m in shipped:
                key = (m.family, m.name)
                held = _USING.get(key)
                base = held[0] if held is not None else METHODS.find(key)
                if held is None and base is not None and base.func is m.func and base.kind == m.kind:
                    continue
                if held is None:
                    held = _USING[key] = (base, [])
                held[1].append((token, m))
                _REGISTRY[key] = m
                took.append(key)
        yield
    finally:
        with _USING_LOCK:
            for key in took:
                base, stack = _USING[key]
                stack[:] = [(t, m) for t, m in stack if t is not token]
                if stack:
                    _REGISTRY[key] = stack[-1][1]
                    continue
                del _USING[key]
                if base is None:
                    _REGISTRY.pop(key, None)
                else:
                    _REGISTRY[key] = base


def methods_loaded(family: str | None = None) -> list[Method]:
    """The methods registered so far (no import)."""
    return [m for (f, _), m in METHODS.loaded().items() if family is None or f == family]


def names(family: str, kind: str | None = None) -> list[str]:
    return [m.name for m in methods(family) if kind is None or m.kind == kind]


#: listing order: families as the README presents them, then exact methods
#: (they set the reference), heuristics, replays; registration order within
FAMILY_ORDER = ("packing", "epochs", "knapsack", "assignment", "mapping")


def _rank(m: Method) -> tuple:
    fam = FAMILY_ORDER.index(m.family) if m.family in FAMILY_ORDER else len(FAMILY_ORDER)
    return fam, ("exact", "heuristic", "replay").index(m.kind)


def methods(family: str | None = None) -> list[Method]:
    """Every method of ``family`` (all families with ``None``), in listing
    order (:data:`FAMILY_ORDER`, exact methods first); loads every source."""
    METHODS.complete()
    return sorted(methods_loaded(family), key=_rank)


def as_result(inst, method: str, out, seconds: float, describe: bool = True) -> Result:
    """Wrap a method's raw decision (or Result) as a checked :class:`Result`;
    ``describe=False`` skips the family's ``describe`` figures (the check
    always runs).  ``seconds`` is the time the caller measured: it replaces
    whatever a returned Result says, so that no method reports its own
    speed.  A decision that is not a list, tuple, range or numpy array (a
    set, a dict, a generator, a string, None) is an
    :class:`~epochbench.instances.core.InfeasibleSolution`."""
    if isinstance(out, Result):
        if out.family != inst.kind:      # else its decision's shape was blamed ("selection entry 0 is (0,)")
            raise InfeasibleSolution(f"{inst.name}: {method} returned a Result of family {out.family!r} for a "
                                     f"{inst.kind} instance")
        given, info = out.decision, out.info
    elif isinstance(out, SEQUENCES):
        given, info = tuple(out), {}
    else:
        raise InfeasibleSolution(f"{inst.name}: {method} returned {short(out, 40)} ({type(out).__name__}), not a "
                                 "decision (a list, tuple, range or numpy array)")
    decision = check(inst, given)
    if describe and hasattr(inst, "describe"):  # family-specific figures of a decision, e.g. a matching's cardinality
        info = {**info, **inst.describe(decision)}
    fields = dict(family=inst.kind, method=method, decision=decision, value=inst.value(decision),
                  seconds=seconds, info=info)   # the time measured here, never the method's own figure
    if isinstance(out, Result):  # one Result made (and checked) per call: a simulated step makes four
        return replace(out, **fields)
    return Result(status="feasible", **fields)


#: an exact method's wall-time limit when none is given (seconds)
DEFAULT_TIME_LIMIT = 10.0


def cold(method: Method, options: dict) -> dict:
    """``options`` with ``warm=False`` for an exact method that starts from
    the best heuristic by default (its function has ``warm_start``), unless
    ``options`` say otherwise: a simulator's oracle step starts cold, so
    that a step it cannot solve in time falls back to the policy's own rule."""
    if method.exact and getattr(method.func, "warm_start", False) and "warm" not in options:
        return {**options, "warm": False}
    return options


def forwards(func, impl, *, drop: tuple[str, ...] = ()):
    """Give ``func``, a registered method that passes its keyword arguments
    on to ``impl``, the signature of ``impl`` (its parameters but those in
    ``drop``), so that the command line's ``--param`` check
    (:func:`inspect.signature`) names what the method really accepts
    instead of taking anything through ``**params``.  Returns ``func``."""
    import inspect
    params = [p for p in inspect.signature(impl).parameters.values() if p.name not in drop]
    func.__signature__ = inspect.Signature(params)
    return func


def takes_time_limit(func) -> bool:
    """Whether a heuristic has a ``time_limit`` budget of its own (e.g. SA)."""
    import inspect
    try:
        return "time_limit" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _no_warm_up() -> None:
    """What :func:`solve` calls for a method without a ``warm_up`` hook."""


def _tiny_packing():
    from .packing import PackingInstance
    return PackingInstance.build([4], [[1], [2]])


def _tiny_epochs():
    from .packing import EpochsInstance
    return EpochsInstance.build([4, 4], [[1, 2], [3, 1], [2, 2]])


def _tiny_knapsack():
    from .knapsack import KnapsackInstance
    return KnapsackInstance.build([2, 2], [[1, 0], [0, 1], [1, 1]], [1.0, 1.0, 1.5])


def _tiny_assignment():
    from .assignment import AssignmentInstance
    return AssignmentInstance.build([[1.0, 2.0], [2.0, 0.0]])


def _tiny_mapping():
    from .mapping import MappingInstance
    return MappingInstance.build([[1.0, 2.0], [2.0, 1.0], [1.5, 1.5]])


#: the smallest instance of each built-in family, for first-call warm-ups
TINY = {"packing": _tiny_packing, "epochs": _tiny_epochs, "knapsack": _tiny_knapsack,
        "assignment": _tiny_assignment, "mapping": _tiny_mapping}
_WARMED: set = set()


def first_call_warm_up(m: Method) -> None:
    """A built-in heuristic without a ``warm_up`` hook would pay for loading
    its compiled kernels (numba's start-up included: 10 to 300 ms) inside
    its first timed call in a process; it runs once, untimed, on the
    family's :data:`TINY` instance instead, and once more with a time
    limit (:data:`WARM_UP_LIMIT`) when it takes one: a budgeted run calls
    kernels of its own (tabu's descent in parts compiled inside the first
    timed call: 0.74 s on a 0.05 s limit, and another answer than the
    same seed's next call)."""
    key = (m.family, m.name)
    if m.exact or key in _WARMED or hasattr(m.func, "warm_up") or m.origin != "builtin" or m.family not in TINY:
        return
    _WARMED.add(key)
    budgets = ({}, {"time_limit": WARM_UP_LIMIT}) if takes_time_limit(m.func) else ({},)
    for budget in budgets:
        try:
            m.func(TINY[m.family](), **budget)
        except Exception:   # noqa: BLE001 - a warm-up only; the timed call reports any error
            pass


#: the time limit of a warm-up run on a :data:`TINY` instance (ample: it ends long before)
WARM_UP_LIMIT = 60.0


def load(family: str, name: str) -> None:
    """Load what built-in method ``name`` of ``family`` calls (compiled
    kernels, solver modules: its ``warm_up`` hook, or one untimed call,
    :func:`first_call_warm_up`), so that a simulator's clock does not pay
    for it (bb-easy's first run: 0.45 s, later ones 0.02 s).  A plug-in's
    or a user's method is left alone: its hooks run inside :func:`solve`,
    where its failures are reported as its own."""
    m = get(family, name)
    if m.origin == "builtin":
        _load(m)


def _load(m: Method) -> None:
    """``m``'s one-time loading: its ``warm_up`` hook, else one untimed call
    (:func:`first_call_warm_up`)."""
    getattr(m.func, "warm_up", _no_warm_up)()
    first_call_warm_up(m)


def solve(inst, method: str, *, time_limit: float | None = None, threads: int = 1, describe: bool = True,
          **params) -> Result:
    """Run ``method`` on ``inst``: timed, feasibility-checked, objective recomputed.

    Raises :class:`~epochbench.instances.core.InfeasibleSolution` if the decision fails
    the family's checker.  An exact method that found no solution returns
    status ``timeout`` or ``infeasible`` with an empty decision, which is
    checked too (an empty packing is feasible; an empty epoch plan is not
    unless the queue is empty, and then its status says why).  ``describe=False``
    leaves the family's ``describe`` figures out of ``info`` (a simulator
    calling a method at every event does not need them).  ``time_limit``
    (seconds): the whole call's wall time for an exact method (default
    :data:`DEFAULT_TIME_LIMIT`; past it by more than :func:`overrun_tolerance`,
    ``info["overrun_s"]`` says by how much).  ``seconds`` is the method's
    call alone: one-time loading (solver imports, compiled kernels, done by
    the method's ``warm_up`` hook and :func:`first_call_warm_up` before
    the clock starts) is not in it.  A heuristic with a budget of its own (a
    ``time_limit`` parameter, e.g. ``sa``) gets it when given, the others
    ignore it.  A heuristic's result has no bound and its status is
    ``feasible`` (a returned Result's other status, ``optimal``,
    ``infeasible`` or ``timeout``, is kept in ``info["claimed"]``);
    a result without a bound has ``info["bound_kind"] = "none"``.  A time
    limit that is not a number >= 0 (NaN, negative, a bool) is a ValueError,
    whatever the method, and so are ``threads`` other than an integer from 1
    to :data:`~epochbench.instances.core.MAX_THREADS` (None: 1, the default).  A registered (not built-in) method that raises
    ``SystemExit`` raises :class:`~epochbench.instances.core.MethodFailed`
    instead (from its call or its ``warm_up`` hook): a ``sys.exit`` in a
    heuristic fails that heuristic, not the
    ``score`` or simulation that called it.
    """
    if inst.kind not in families():
        raise KeyError(f"unknown family {inst.kind!r}")
    m = get(inst.kind, method)
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real)
                                   or not time_limit >= 0):        # NaN fails >= 0
        raise ValueError(f"time_limit must be a number of seconds >= 0, got {time_limit!r}")
    if time_limit is not None:
        time_limit = float(time_limit)  # a numpy number or a Fraction reaches every method as a float
    threads = 1 if threads is None else check_threads(threads)    # None: the default, as for time_limit
    try:
        _load(m)                                      # a compiled kernel loads before the clock starts
        given, before = _given(m, inst)
        t0 = time.perf_counter()
        if m.exact:
            out = m.func(given, time_limit=DEFAULT_TIME_LIMIT if time_limit is None else time_limit,
                         threads=threads, **params)
        elif time_limit is not None and takes_time_limit(m.func):
            out = m.func(given, time_limit=time_limit, **params)
        else:
            out = m.func(given, **params)
    except SystemExit as exc:   # sys.exit in a user's method: its failure, not the command's (score's exit 0)
        if m.origin == "builtin":
            raise
        raise MethodFailed(f"{inst.name}: method {method!r} ({m.origin}) raised SystemExit({exc.code!r})") from None
    seconds = time.perf_counter() - t0
    if before is not None and content(given) != before:
        raise InstanceChanged(f"{inst.name}: method {method!r} ({m.origin}) changed the instance it was given")
    if m.exact:
        out = _overrun(out, DEFAULT_TIME_LIMIT if time_limit is None else time_limit, seconds)
    if m.exact and isinstance(out, Result) and out.status in ("infeasible", "timeout") and not out.decision:
        # no decision, no value (NaN: JSON null), as score counts it: no answer
        out = _refuted(inst, out)
        return _unbounded(replace(out, family=inst.kind, method=method, seconds=seconds, value=math.nan, bound=None))
    res = as_result(inst, method, out, seconds, describe)
    if not m.exact:
        return _unbounded(_no_proof(res))
    return _unbounded(_kind_said(honest(_value_said(res, out), getattr(inst, "sense", "max"))))


def solve_step(inst, method: str, where: Callable[[], str], **options) -> Result:
    """:func:`solve` for one step of a longer run (a simulator's matcher,
    an epoch's gap): a user's or a plug-in's method that fails (raises, or
    answers what the checker refuses) stops the run with
    :class:`~epochbench.instances.core.MethodFailed`, one line, ``where()``
    (what called it and at which step) then the exception's type and
    message, the cause chained; a built-in's failure is raised as it is.
    ``options`` go to :func:`solve`."""
    try:
        return solve(inst, method, **options)
    except Exception as exc:
        if get(inst.kind, method).origin == "builtin":
            raise
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise MethodFailed(f"{where()}: {type(exc).__name__}: {why}") from exc


def _value_said(res: Result, out) -> Result:
    """An exact method's checked result ``res`` with its ``optimal``
    withdrawn (``feasible``, ``info["withdrawn"]``) when the method claimed
    it without a bound, for a value (``out.value``) that its decision is not
    worth (beyond :data:`CLAIM_TOL`, relative): the claim was about another
    solution (a plug-in that claimed ``optimal`` at 0.99 for a decision
    worth 0.37 was certified optimal at 0.37).  A claim with a bound is
    judged on that bound (:func:`honest`); the value a method returns is
    otherwise replaced by its decision's, as a heuristic's is."""
    said = out.value if isinstance(out, Result) else None
    if res.status != "optimal" or out.bound is not None or not isinstance(said, numbers.Real) \
            or isinstance(said, bool) or not math.isfinite(said):
        return res
    if abs(float(said) - res.value) <= CLAIM_TOL * max(1.0, abs(res.value)):
        return res
    why = f"optimal claimed for a value {float(said)!r} that the decision is not worth ({res.value!r})"
    return replace(res, status="feasible", bound=None, info={**res.info, "withdrawn": why})


def _kind_said(res: Result) -> Result:
    """An exact result with a bound whose ``info`` does not say what proved
    it (a plug-in's): ``bound_kind`` ``"method"``, the method's own claim
    (``solve --json`` had no ``info`` at all, where the README promises
    ``bound_kind``)."""
    info = res.info or {}
    if res.bound is None or info.get("bound_kind"):
        return res
    return replace(res, info={**info, "bound_kind": "method"})


def _refuted(inst, res: Result) -> Result:
    """``res`` (no decision) with an ``infeasible`` claim withdrawn where
    the empty decision passes the family's checker (packing, knapsack and
    assignment: choosing nothing is feasible): status ``timeout``, no
    answer, and ``info["withdrawn"]`` says why, as :func:`honest` withdraws
    a claim beside a decision.  Other families' claims stand here; a
    checked solution of another method refutes them in ``score``."""
    if res.status != "infeasible":
        return res
    try:
        check(inst, ())
    except InfeasibleSolution:
        return res
    return replace(res, status="timeout", info={**(res.info or {}), "withdrawn": "infeasible claimed, but the "
                                                "empty decision is feasible"})


def _unbounded(res: Result) -> Result:
    """``res`` with ``info["bound_kind"] = "none"`` when it has no bound
    (a heuristic's, a timeout's, a withdrawn claim's: a kind the method
    named for a bound it no longer has would say otherwise)."""
    info = res.info or {}                          # a user's Result may carry None
    if res.bound is not None or info.get("bound_kind") == "none":
        return res
    return replace(res, info={**info, "bound_kind": "none"})


def _no_proof(res: Result) -> Result:
    """A heuristic's result: no bound, and status ``feasible`` (its decision
    passed the checker; only exact methods prove anything, and a heuristic
    runs without a time limit: an ``optimal``, ``infeasible`` or
    ``timeout`` it returned is kept in ``info["claimed"]`` and checked by
    ``validate``; ``infeasible`` beside a checked decision read as such in
    ``score``).  The entries :func:`solve` writes itself (:data:`SOLVE_INFO`)
    are dropped from the heuristic's own ``info``: an ``info["claimed"]``
    of its own said a status it never returned.  ``info["bound_kind"]`` is
    ``"none"``, as :func:`_unbounded` says of any result without a bound
    (set here in the same copy: one Result made, not two)."""
    info = {k: v for k, v in res.info.items() if k not in SOLVE_INFO}
    if res.status != "feasible":
        info["claimed"] = res.status
    kept = len(info) == len(res.info)
    info["bound_kind"] = "none"
    if res.status == "feasible" and res.bound is None and kept and res.info.get("bound_kind") == "none":
        return res
    return replace(res, status="feasible", bound=None, info=info)


#: the ``info`` entries that :func:`solve` writes: a heuristic's status claim, an exact call's overrun
SOLVE_INFO = ("claimed", "overrun_s")


def overrun_tolerance(time_limit: float) -> float:
    """How far past its limit an exact call may end before ``info`` says so
    (:func:`solve`): 20 ms or a tenth of the limit, whichever is more."""
    return max(0.02, 0.1 * float(time_limit))


def _overrun(out, time_limit: float, seconds: float):
    """``out`` with ``info["overrun_s"]`` (seconds past ``time_limit``) when
    the exact call took more than :func:`overrun_tolerance` longer; a method
    that knows which of its phases took the time says so in
    ``info["phases"]``."""
    if isinstance(out, Result) and seconds > time_limit + overrun_tolerance(time_limit):
        return replace(out, info={**out.info, "overrun_s": round(seconds - time_limit, 4)})
    return out


def _given(m: Method, inst) -> tuple:
    """What method ``m`` is handed: ``inst`` itself for epochbench's own
    methods; for a plugin's or a user's, a copy and its content
    (:func:`~epochbench.instances.core.handed`), so that
    :func:`solve` checks the answer on the original and can tell when the
    method changed its instance (``meta``, or an array it made writable),
    which would corrupt every later method's run on it."""
    return (inst, None) if m.origin == "builtin" else handed(inst)


#: relative tolerance of :func:`honest` between a claimed optimum or bound and the value
CLAIM_TOL = 1e-9


def honest(res: Result, sense: str) -> Result:
    """An exact method's result whose claims hold together: ``optimal`` needs
    ``bound == value`` (:data:`CLAIM_TOL` relative; a method that proved
    optimality reports its value as the bound), and a bound that is not
    finite, or on the wrong side of the checked value (below it for
    ``sense="max"``), proves nothing.
    A claim that fails is withdrawn (``feasible``, ``bound=None``) and
    ``info["withdrawn"]`` says why; so is ``infeasible`` beside a decision
    (one that passed the checker: the instance is feasible).  O(1)."""
    if res.status == "infeasible":
        res = replace(res, status="feasible", info={**res.info, "withdrawn": "infeasible claimed beside a decision "
                                                                            "that passed the checker"})
    if res.bound is None:
        if res.status == "optimal":
            return replace(res, bound=res.value)
        return res
    tol = CLAIM_TOL * max(1.0, abs(res.value))
    if not math.isfinite(res.bound):    # inf would pass as met by every value within the scorer's tolerance
        why = f"bound {res.bound!r} is not finite"
    elif (res.bound < res.value - tol) if sense == "max" else (res.bound > res.value + tol):
        why = f"bound {res.bound!r} is on the wrong side of the value {res.value!r}"
    elif res.status == "optimal" and abs(res.bound - res.value) > tol:
        why = f"optimal claimed with bound {res.bound!r} != value {res.value!r}"
    else:
        return res
    before = res.info.get("withdrawn")              # an infeasible claim withdrawn above keeps its reason
    return replace(res, status="feasible", bound=None,
                   info={**res.info, "withdrawn": f"{before}; {why}" if before else why})
