"""Finding a user's function by name (``validate MODULE:FUNCTION``), and
checking a method's keyword parameters before anything runs.

Methods themselves need no loading: :mod:`epochbench.instances.registry`
imports the built-in modules and the entry-point plug-ins (group
``epochbench.heuristics``: ``NAME`` or ``FAMILY:NAME`` = ``module:function``)
on the first lookup that needs them.

A registered function may carry a ``check_params(inst, **params)`` hook
that raises ``ValueError`` for a parameter value it would refuse on
``inst`` (BL's ``window``, LOS's ``resource`` against K, a mapping hint
against the instance's size), without solving anything: ``score`` calls it
for every method and instance before the first solve, so that a bad value
is one error, not a table of error rows.
"""
from __future__ import annotations

import importlib

from epochbench.instances.checks import with_article

from .checks import (MAX_THREADS, _OWN_OPTIONS, _own_option, accepted_params, accepted_text, check_required,  # noqa: F401
                     check_limits, check_params, check_values, method_function)  # (MAX_THREADS, check_limits: the library's names)


def import_function(spec: str):
    """``"package.module:function"`` -> the function (clear error otherwise)."""
    mod_name, sep, func_name = spec.partition(":")
    if not sep or not mod_name or not func_name:
        raise ValueError(f"expected MODULE:FUNCTION, got {spec!r}")
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        hint = "" if exc.name != mod_name.split(".")[0] else \
            " (is its folder on PYTHONPATH? the command does not add the current folder)"
        raise ValueError(f"cannot import module {mod_name!r}: {exc}{hint}") from None
    except Exception as exc:   # noqa: BLE001 - the user's module failed while importing: one line, naming it
        kind = type(exc).__name__
        raise ValueError(f"module {mod_name!r} failed on import: {kind}: {exc}") from None
    except SystemExit as exc:  # sys.exit(0) in the module: validate passed with no output and status 0
        raise ValueError(f"module {mod_name!r} failed on import: SystemExit({exc.code!r})") from None
    try:
        func = getattr(mod, func_name)
    except AttributeError:
        raise ValueError(f"module {mod_name!r} has no attribute {func_name!r}") from None
    if not callable(func):
        raise ValueError(f"{spec}: {func_name!r} is {with_article(type(func).__name__)}, not a function")
    return func


def candidate_function(spec: str, family: str):
    """What ``validate`` checks, by name: ``"module:function"`` (imported,
    :func:`import_function`) or the registered name of a plug-in's or a
    user's heuristic of ``family`` (the README's plug-ins "appear in
    validate": ``validate NAME`` was refused, "expected MODULE:FUNCTION").
    A built-in or exact method's name is a ValueError saying what to give."""
    if ":" in spec:
        return import_function(spec)
    from epochbench.instances.registry import get, names
    if spec not in names(family):
        raise ValueError(f"expected MODULE:FUNCTION or the name of a registered {family} heuristic, got {spec!r}")
    method = get(family, spec)
    if method.exact or method.origin == "builtin":
        what = "an exact method" if method.exact else "a built-in heuristic"
        raise ValueError(f"{spec!r} is {what}: validate checks your own heuristics (MODULE:FUNCTION, or the "
                         f"name of one registered by a plug-in)")
    return method.func


# ---- parameter checks -------------------------------------------------------------------
def check_on(kind: str, name: str, params: dict, instances=(), *, cli: bool = False, prefix: str = "") -> None:
    """Run method ``name``'s ``check_params`` hook (if it has one) with
    ``params`` on each of ``instances`` of family ``kind``; its ValueError
    becomes one line naming the parameters (``--param NAME=VALUE`` with
    ``cli``), the method and the instance.  Anything else a user's hook
    raises (``SystemExit`` too) is its failure:
    :class:`~epochbench.instances.core.MethodFailed`, one line (a
    ``ZeroDivisionError`` was a traceback).  Nothing is solved."""
    from epochbench.instances.registry import get
    method = get(kind, name)
    hook, origin = getattr(method_function(method.func), "check_params", None), method.origin
    if hook is None or not params:
        return
    for inst in instances:
        if inst.kind != kind:
            continue
        try:
            hook(inst, **params)
        except ValueError as exc:
            given = " ".join(f"{k}={v}" for k, v in params.items())
            where = f"--param {given}: " if cli else prefix
            text = str(exc).removeprefix(f"{inst.name}: ")        # the instance is named once
            raise ValueError(f"{where}{kind} method {name!r} on {inst.name}: {text}") from None
        except (Exception, SystemExit) as exc:   # a user's hook: its failure, as the method's own
            if origin == "builtin":              # (registry.solve): a traceback, or exit 2 for sys.exit
                raise
            from epochbench.instances.core import MethodFailed
            why = " ".join(str(exc).split())
            raise MethodFailed(f"{prefix}{kind} method {name!r} ({origin}) on {inst.name}: its check_params hook "
                               f"raised {type(exc).__name__}{': ' + why if why else ''}") from exc


def check_method(kind: str, name: str, params: dict, instances=(), *, prefix: str = "",
                 time_limit: bool = False) -> dict:
    """``params`` of method ``name`` of family ``kind`` given from Python
    (``eb.solve``, ``eb.score``), checked before anything runs: every name
    one the method accepts, every value of its kind
    (:func:`~epochbench.checks.check_params`) and accepted by the method's
    ``check_params`` hook on each of ``instances``, and every parameter
    without a default given (``time_limit``: the caller gives one, which
    a heuristic with a budget gets).  ValueError otherwise, one line naming
    the method and what it accepts."""
    from epochbench.instances.registry import get
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise ValueError(f"{prefix}{kind} method {name!r}: expected a dict of keyword arguments, got {params!r}")
    m = get(kind, name)
    check_params(m.func, params, f"{prefix}{kind} method {name!r}", cli=False)
    check_required(m.func, params, f"{prefix}{kind} method {name!r}", cli=False,
                   given=called_with(m, time_limit))
    check_on(kind, name, params, instances, prefix=prefix)
    return params


def called_with(m, time_limit: bool) -> tuple[str, ...]:
    """The keywords :func:`~epochbench.instances.registry.solve` passes
    ``m`` itself: an exact method's ``time_limit`` and ``threads``; a
    heuristic's own budget ``time_limit`` only when one is given
    (``time_limit``; ``score`` gives heuristics none)."""
    return ("time_limit", "threads") if m.exact else ("time_limit",) if time_limit else ()


#: the shape of ``score``'s ``params``, for its error messages
PARAMS_SHAPE = "{family: {method: {keyword: value}}}, e.g. {'packing': {'bl': {'window': 2}}}"


def score_params(params, instances, methods) -> dict:
    """``score``'s ``params`` (:data:`PARAMS_SHAPE`) checked against the
    ``instances`` and ``methods`` scored: every family one of an instance
    scored, every method one scored, every keyword and value one the
    method accepts (:func:`check_method`, on each instance of its family).
    ValueError naming the first that is not, before anything runs; returns
    ``params`` (``{}`` for None)."""
    from epochbench.instances.io import families
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ValueError(f"params: expected {PARAMS_SHAPE}, got a {type(params).__name__}")
    kinds = list(dict.fromkeys(inst.kind for inst in instances))
    for family, per in params.items():
        if family not in kinds:
            what = (f"no {family} instance is scored here" if family in families() else
                    f"{family!r} is not a family ({', '.join(families())})")
            raise ValueError(f"params: {what}; expected {PARAMS_SHAPE} for the families scored "
                             f"({', '.join(kinds) or 'none'})")
        if not isinstance(per, dict):
            raise ValueError(f"params[{family!r}]: expected {{method: {{keyword: value}}}}, got {per!r}")
        for name, given in per.items():
            if name not in methods:
                raise ValueError(f"params[{family!r}]: {name!r} is not a method scored here "
                                 f"({', '.join(methods)})")
            check_method(family, name, given, [i for i in instances if i.kind == family], prefix="params: ")
    return params


def method_params(kind: str, methods, params: dict, instances=()) -> dict:
    """Per method, the ``params`` it accepts; ValueError for a parameter no
    method of ``methods`` accepts, and for a value a method refuses on one
    of ``instances`` of family ``kind`` (its ``check_params`` hook,
    :func:`epochbench.methods.check_on`), before anything runs."""
    from epochbench.instances.registry import get
    if not params:
        return {}
    out, takes = {}, {}
    for name in methods:
        func = get(kind, name).func
        named, var = accepted_params(func)
        out[name] = {p: v for p, v in params.items() if var or p in named}
        takes[name] = accepted_text(func)
        check_values(func, out[name], f"{kind} method {name!r}")
    for p in params:
        if p in _OWN_OPTIONS:
            raise ValueError(_own_option(p, True, exact_only=True))
        if not any(p in got for got in out.values()):
            raise ValueError(f"--param {p}: no method of {', '.join(methods)} has a parameter {p!r}; accepted: "
                             + "; ".join(f"{m}: {a}" for m, a in takes.items()))
    for name, given in out.items():
        check_on(kind, name, given, instances, cli=True)
    return out
