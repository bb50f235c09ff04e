"""Checks of the values a user gives, on the command line or from Python:
the validators of numeric options (argparse ``type`` functions, one-line
messages), the solver limits, and a method's keyword parameters against
its signature (names, kinds of value, the options that set some of them).

This module imports nothing else of the package but the solver limits of
:mod:`epochbench.instances.core` (which :func:`~epochbench.instances.registry.solve`
checks too): :mod:`epochbench.methods` and the command-line modules build on
it, in that order.
"""
from __future__ import annotations

import argparse
import inspect
import math
import numbers
import os

from epochbench.instances.core import MAX_THREADS, check_threads  # noqa: F401 (MAX_THREADS: the library's name)


def method_function(func):
    """The function whose signature and ``check_params`` hook a registered
    method has: ``func`` itself, or the one it wraps (``__wrapped__``: the
    packing heuristic that an ``epochs`` method built by
    :func:`~epochbench.instances.packing.epochs_by` applies epoch after
    epoch; its wrapper takes ``**params``)."""
    inner = getattr(func, "__wrapped__", None)
    return method_function(inner) if callable(inner) else func


def check_limits(time_limit=None, threads=None) -> None:
    """ValueError unless ``time_limit`` (seconds) is a positive finite number
    and ``threads`` an integer in [1, :data:`MAX_THREADS`], as the command
    line's ``--time-limit`` and ``--threads`` require; None (not given) passes."""
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real)
                                   or not _finite_real(time_limit) or time_limit <= 0):
        from epochbench.instances.checks import short
        raise ValueError(f"time_limit: must be a positive finite number, got {short(time_limit, 40)}")
    if threads is not None:
        check_threads(threads)


def _finite_real(x) -> bool:
    """``math.isfinite(x)``, False for an integer too large for a float
    (``10**400`` raised OverflowError out of a check of bad input)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _number(text: str, kind: type, ok, what: str):
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"{what}, got {text}")
    return value


def _finite(x: float) -> bool:
    return x == x and abs(x) != float("inf")


def positive_float(text: str) -> float:
    """argparse ``type``: a finite number > 0 (seconds, rates)."""
    return _number(text, float, lambda x: _finite(x) and x > 0, "must be a positive finite number")


def nonnegative_float(text: str) -> float:
    """argparse ``type``: a finite number >= 0."""
    return _number(text, float, lambda x: _finite(x) and x >= 0, "must be a finite number >= 0")


def positive_int(text: str) -> int:
    """argparse ``type``: an integer >= 1."""
    return _number(text, int, lambda x: x >= 1, "must be an integer >= 1")


def thread_count(text: str) -> int:
    """argparse ``type``: solver threads, an integer from 1 to
    :data:`epochbench.methods.MAX_THREADS`."""
    return _number(text, int, lambda x: 1 <= x <= MAX_THREADS, f"must be an integer from 1 to {MAX_THREADS}")


#: the most instances ``validate --count`` draws (as ``generate --count``) and the most
#: repetitions ``experiment --seeds`` runs: past them a run built its task list for
#: minutes, silently, before the first line (1e11 took 800 MB in 20 s)
MAX_COUNT, MAX_SEEDS = 10**6, 10**4
#: the most local worker processes a sweep starts (``--workers``): 256, or four per
#: core on a larger machine; each loads the solvers, some 300 MB (--workers
#: 1000000000 tried to start them all)
MAX_WORKERS = max(256, 4 * (os.cpu_count() or 1))


def instance_count(text: str) -> int:
    """argparse ``type``: an integer from 1 to :data:`MAX_COUNT`."""
    return _number(text, int, lambda x: 1 <= x <= MAX_COUNT, f"must be an integer from 1 to {MAX_COUNT:,}")


def random_count(text: str) -> int:
    """argparse ``type``: random instances besides fixed ones (``validate
    --count``: 0 runs the edge cases alone), an integer from 0 to :data:`MAX_COUNT`."""
    return _number(text, int, lambda x: 0 <= x <= MAX_COUNT, f"must be an integer from 0 to {MAX_COUNT:,}")


def seed_count(text: str) -> int:
    """argparse ``type``: an integer from 1 to :data:`MAX_SEEDS`."""
    return _number(text, int, lambda x: 1 <= x <= MAX_SEEDS, f"must be an integer from 1 to {MAX_SEEDS:,}")


def worker_count(text: str) -> int:
    """argparse ``type``: local worker processes, an integer from 1 to :data:`MAX_WORKERS`."""
    return _number(text, int, lambda x: 1 <= x <= MAX_WORKERS, f"must be an integer from 1 to {MAX_WORKERS}")


def nonnegative_int(text: str) -> int:
    """argparse ``type``: an integer >= 0."""
    return _number(text, int, lambda x: x >= 0, "must be an integer >= 0")


def solver_seed(text: str) -> int:
    """argparse ``type``: a method's seed, an integer from 0 to 2**31 - 1 (CP-SAT's and HiGHS'
    seeds are 32-bit: 2**40 ended in a multi-line pybind error inside OR-Tools)."""
    return _number(text, int, lambda x: 0 <= x < 2**31, "must be an integer from 0 to 2**31 - 1")


def limit_int(text: str) -> int:
    """argparse ``type``: an integer >= 0, or -1 for no limit."""
    return _number(text, int, lambda x: x >= -1, "must be an integer >= 0, or -1 for no limit")


#: the most jobs of a generated farm stream (``--farm-jobs``): the farm's event
#: loop is O(events x machines), hours at this size; 1e8 was killed for memory
MAX_FARM_JOBS = 10**6
#: the longest mean inter-arrival time of a farm stream (``--interarrival``), in
#: seconds (31 years): 1e300 made arrival times overflow into NaN slowdowns
MAX_INTERARRIVAL = 1e9


def farm_job_count(text: str) -> int:
    """argparse ``type``: jobs of a generated farm stream, 1 to :data:`MAX_FARM_JOBS`."""
    return _number(text, int, lambda x: 1 <= x <= MAX_FARM_JOBS, f"must be an integer from 1 to {MAX_FARM_JOBS:,}")


def interarrival_seconds(text: str) -> float:
    """argparse ``type``: a mean inter-arrival time, > 0 and at most :data:`MAX_INTERARRIVAL` seconds."""
    return _number(text, float, lambda x: _finite(x) and 0 < x <= MAX_INTERARRIVAL,
                   f"must be a number of seconds > 0 and at most {MAX_INTERARRIVAL:g}")


#: option dest -> its argparse ``type`` in every command but ``generate``
#: (whose parameters check themselves, :func:`epochbench.instances.generators.Param.parse`);
#: applied by :func:`_strict_types`, so options that other modules add
#: (``epochbench.sim.gang``, ``epochbench.sim.farm``) are covered too
OPTION_TYPES = {
    "time_limit": positive_float, "threads": thread_count, "count": instance_count, "seeds": seed_count,
    "jobs": worker_count, "nodes": positive_int, "min_candidates": positive_int,
    "starvation_limit": nonnegative_float, "small_threshold": nonnegative_int, "seed": nonnegative_int,
    "farm_jobs": farm_job_count, "machines": positive_int, "licenses": positive_int,
    "interarrival": interarrival_seconds, "exact_time_limit": positive_float, "oracle_every": nonnegative_int,
    "mpl": positive_int, "slice": positive_float, "switch_overhead": nonnegative_float,
    "migration_cost": nonnegative_float, "migration_limit": limit_int,
}


#: an exact method's parameter's check where it differs from the command-line option of its name
METHOD_TYPES = {"seed": solver_seed}

#: the argparse types of :data:`OPTION_TYPES` that read an integer (the others read a float)
_INTEGER_TYPES = (positive_int, nonnegative_int, limit_int, thread_count, instance_count, seed_count,
                  worker_count, farm_job_count)


def python_options(options: dict, names=None) -> dict:
    """``options`` given from Python (``eb.simulate(..., seed=3)``) checked
    as the command line checks its text (:data:`OPTION_TYPES`, those in
    ``names`` when given; None means "the default" and passes): an integer
    option takes an integer (numpy's too), a number option a real number,
    never a bool or a string (``oracle_every="2"`` or ``True`` ran as 2 or
    1, ``licenses=1.5`` raised a raw TypeError), and then the same ranges.
    A one-line ``ValueError`` naming the option otherwise; returns the
    options with numpy numbers as Python ones."""
    out = dict(options)
    for name, value in options.items():
        conv = OPTION_TYPES.get(name)
        if conv is None or value is None or (names is not None and name not in names) or _python_also(name, value):
            continue
        integer = conv in _INTEGER_TYPES
        try:
            whole = isinstance(value, numbers.Integral) or float(value).is_integer()   # 2.0 is an integer here
        except (TypeError, ValueError, OverflowError):
            whole = False
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or (integer and not whole):
            raise ValueError(f"{name}: must be {'an integer' if integer else 'a number'}, got {value!r}")
        try:
            text = str(int(value)) if integer else repr(float(value))
        except OverflowError:
            raise ValueError(f"{name}: must be a finite number, got {value!r}") from None
        try:
            out[name] = conv(text)
        except argparse.ArgumentTypeError as exc:          # its words, the value as given
            raise ValueError(f"{name}: {str(exc).rsplit(', got ', 1)[0]}, got {value!r}") from None
    return out


def _python_also(name: str, value) -> bool:
    """Values an option takes from Python beyond its text: a numpy random
    generator or seed sequence for ``seed`` (the farm's stream), and any
    negative number or inf for ``migration_limit`` (no limit, as -1)."""
    if name == "seed" and not isinstance(value, numbers.Real):
        import numpy as np
        return isinstance(value, (np.random.Generator, np.random.SeedSequence))
    if name == "migration_limit" and isinstance(value, numbers.Real) and not isinstance(value, bool):
        return value < 0 or value == math.inf
    return False


#: keyword arguments set by their own options, never by --param
_OWN_OPTIONS = ("time_limit", "threads")

#: words of a parameter's annotation that mark a Python object no ``--param``
#: text can give (a :class:`Result` start, a dict of solver parameters)
_PYTHON_ONLY = ("Result", "dict")


def _signature(func) -> list:
    """The parameters of ``func`` after the instance; those of the packing
    heuristic an ``epochs`` method applies epoch after epoch
    (:func:`~epochbench.methods.method_function`)."""
    return list(inspect.signature(method_function(func)).parameters.values())[1:]


def python_only(param: inspect.Parameter) -> bool:
    """Whether ``param`` takes a Python object that no ``--param`` text can
    give (annotated with a :class:`Result` or a dict)."""
    return any(word in str(param.annotation) for word in _PYTHON_ONLY)


def accepted_params(func, *, own: bool = True) -> tuple[list[str], bool]:
    """The keyword parameters ``func`` takes after the instance (those set
    by their own options left out), and whether it takes ``**kwargs``.
    ``own``: only those the method itself uses, where its function is
    shared by several methods and says so (``accepts``: the exact mapping
    methods share one signature, and ``work_weight`` is milp-highs' and
    milp-cbc's alone), so that ``score`` passes a parameter to the methods
    that use it and a message lists what the method takes."""
    sig = _signature(func)
    named = [p.name for p in sig if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
             and p.name not in _OWN_OPTIONS]
    accepts = getattr(method_function(func), "accepts", None) if own else None
    if accepts is not None:
        named = [n for n in named if n in accepts]
    return named, any(p.kind is p.VAR_KEYWORD for p in sig)


def accepted_text(func, cli: bool = True) -> str:
    """What ``func`` accepts, for an error message: ``window, fullness``;
    on the command line those it takes from Python only are named apart."""
    named, _ = accepted_params(func)
    if not cli:
        return ", ".join(named) or "none"
    only = {p.name for p in _signature(func) if python_only(p)}
    text = ", ".join(n for n in named if n not in only) or "none"
    return text + (f" (from Python only: {', '.join(n for n in named if n in only)})" if only & set(named) else "")


def _own_option(name: str, cli: bool, exact_only: bool = False) -> str:
    """The error for a parameter that has an option (argument) of its own;
    ``exact_only``: that option reaches exact methods only (``score``,
    ``validate``), which the message says, rather than send a user whose
    heuristic has a time budget to an option that never reaches it."""
    if exact_only and name == "time_limit":
        return ("--param time_limit: --time-limit is the exact methods' limit here; heuristics run with "
                "their own default budget in score and validate ('epochbench solve --time-limit' gives "
                "one a budget)")
    if cli:
        return f"--param {name}: set it with --{name.replace('_', '-')}"
    return f"params: {name} is an argument of score itself ({name}=...), not a method parameter"


def check_params(func, params: dict, label: str, *, cli: bool = True, exact_only: bool = False) -> dict:
    """``params`` if ``func`` accepts every one (:func:`inspect.signature`)
    with a value of its kind (:func:`check_value`), else ValueError naming
    the first unknown one and those it accepts.  ``cli``: the values came
    from ``--param`` (messages name the option; a parameter that takes a
    Python object is refused), else from Python (``eb.solve``, ``eb.score``);
    ``exact_only``: the command's ``--time-limit`` reaches exact methods
    only (:func:`_own_option`)."""
    named, var = accepted_params(func, own=False)   # another backend's parameter: its hook says whose
    for name in params:
        if name in _OWN_OPTIONS:
            raise ValueError(_own_option(name, cli, exact_only))
        if name not in named and not var:
            raise ValueError(f"{'--param ' + name + ': ' if cli else ''}{label} has no parameter {name!r}; "
                             f"it accepts: {accepted_text(func, cli)}")
    check_values(func, params, label, cli=cli)
    return params


def check_required(func, params: dict, label: str, *, cli: bool = True, given=()) -> None:
    """ValueError (one line) for a parameter of ``func`` after the instance
    that has no default and is not in ``params`` (``--param``, or a keyword
    from Python when not ``cli``) nor in ``given`` (the keywords the caller
    passes itself: an exact method's ``time_limit`` and ``threads``): every
    call would fail with the same TypeError, naming neither the method nor
    the instance.  A signature Python cannot read is let through."""
    try:
        sig = _signature(func)
    except (TypeError, ValueError):
        return
    stuck = [p.name for p in sig if p.default is p.empty and p.kind is p.POSITIONAL_ONLY]
    if stuck:                     # func(instance, **keywords) never fills it
        raise ValueError(f"{label}: positional-only parameter {stuck[0]!r} has no default, and a method is "
                         "called func(instance, **keywords): give it a default or make it a keyword")
    missing = [p.name for p in sig if p.default is p.empty and p.name not in params and p.name not in given
               and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if missing:
        how = f"--param {missing[0]}=VALUE" if cli else f"the keyword {missing[0]}=..."
        raise ValueError(f"{label}: parameter {missing[0]!r} has no default; give it with {how}")


def check_values(func, params: dict, label: str, *, cli: bool = True) -> None:
    """:func:`check_value` for each of ``params`` that ``func`` names (those
    set by their own options left out); from the command line (``cli``) a
    whole number written as a float (``--param window=2.0``, ``1e3``) is
    stored back into ``params`` as an int where the parameter is an integer
    one (it reached the method as a float: ``range(window)`` failed)."""
    sig = {p.name: p for p in _signature(func)}
    solver = str(getattr(method_function(func), "__module__", "")).startswith("epochbench.exact.")
    for name, value in list(params.items()):
        if name in sig and name not in _OWN_OPTIONS:
            check_value(sig[name], value, label, cli=cli, solver=solver)
            if cli and _takes_int(sig[name]) and isinstance(value, float) and value.is_integer():
                params[name] = int(value)   # --param window=2.0 or 1e3: an integer, given as one


def _takes_int(param: inspect.Parameter) -> bool:
    """Whether ``param`` is an integer one (an int default, or annotated
    ``int``), whose whole-number values :func:`check_value` accepts."""
    default = param.default
    return (isinstance(default, int) and not isinstance(default, bool)) or param.annotation in (int, "int")


def _is_int(value) -> bool:
    import numbers
    return not isinstance(value, bool) and (isinstance(value, numbers.Integral) or (
        isinstance(value, numbers.Real) and float(value).is_integer()))


def _is_number(value) -> bool:
    import numbers
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_value(param: inspect.Parameter, value, label: str, *, cli: bool = True, solver: bool = False) -> None:
    """A parameter's value against the parameter it sets: a flag (default
    True or False) takes true / false, an integer parameter an integer, a
    float one a number, ``none`` only a parameter that takes None; a parameter named like a command-line option
    (:data:`OPTION_TYPES`, e.g. ``seed``) passes that option's check; one
    that takes a Python object (a :class:`Result`, a dict) is not settable
    from the command line (``cli``), only from Python, where a parameter
    without an annotation takes any object (the method checks it).  An
    exact method's (``solver``: epochbench's solvers) ``seed`` lies in
    0..2**31 - 1 (:data:`METHOD_TYPES`: CP-SAT's and HiGHS' are 32-bit);
    a heuristic's seeds numpy, which takes any integer >= 0."""
    name, default = param.name, param.default
    where = f"--param {name}={value}: {label}" if cli else f"{label}: {name}={value!r}"
    if value is None:                  # only where the parameter takes None (``nodes=None``: no hand-over)
        if default is None or "None" in str(param.annotation):
            return
        raise ValueError(f"--param {name}=none: {label} does not take none here" if cli
                         else f"{label}: {name}=None: it does not take None")
    if not cli and (python_only(param) or param.annotation is param.empty):
        return           # from Python, an object (an unannotated ``seed``: an int or a Generator)
    if python_only(param):
        raise ValueError(f"--param {name}: {label} takes it from Python only ({param.annotation}), "
                         "not from the command line")
    if isinstance(default, bool) and not isinstance(value, bool):
        raise ValueError(f"{where} expects {'true or false' if cli else 'True or False'}")
    if isinstance(default, int) and not isinstance(default, bool) and not _is_int(value):
        raise ValueError(f"{where} expects an integer")
    if isinstance(default, float) and not _is_number(value):
        raise ValueError(f"{where} expects a number")
    if name in OPTION_TYPES and _is_number(value):
        try:
            (METHOD_TYPES.get(name, OPTION_TYPES[name]) if solver else OPTION_TYPES[name])(str(value))
        except (ValueError, argparse.ArgumentTypeError) as exc:
            raise ValueError(f"{where}: {exc}") from None
