"""Pieces the command-line modules share: a parser whose errors are one
line, the validators of numeric options, ``--param NAME=VALUE`` parsing and
checking, JSON of numpy values, a progress line."""
from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr and exit
    status 2: ``epochbench solve: error: argument --time-limit: ...``
    (argparse's own prints the usage first).  Subparsers inherit it."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


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
    from .methods import MAX_THREADS
    return _number(text, int, lambda x: 1 <= x <= MAX_THREADS, f"must be an integer from 1 to {MAX_THREADS}")


def nonnegative_int(text: str) -> int:
    """argparse ``type``: an integer >= 0."""
    return _number(text, int, lambda x: x >= 0, "must be an integer >= 0")


def limit_int(text: str) -> int:
    """argparse ``type``: an integer >= 0, or -1 for no limit."""
    return _number(text, int, lambda x: x >= -1, "must be an integer >= 0, or -1 for no limit")


#: option dest -> its argparse ``type`` in every command but ``generate``
#: (whose parameters check themselves, :func:`epochbench.instances.generators.Param.parse`);
#: applied by :func:`_strict_types`, so options that other modules add
#: (``epochbench.sim.gang``, ``epochbench.sim.farm``) are covered too
OPTION_TYPES = {
    "time_limit": positive_float, "threads": thread_count, "count": positive_int, "seeds": positive_int,
    "jobs": positive_int, "nodes": positive_int, "min_candidates": positive_int,
    "starvation_limit": nonnegative_float, "small_threshold": nonnegative_int, "seed": nonnegative_int,
    "farm_jobs": positive_int, "machines": positive_int, "licenses": positive_int,
    "interarrival": positive_float, "exact_time_limit": positive_float, "oracle_every": nonnegative_int,
    "mpl": positive_int, "slice": positive_float, "switch_overhead": nonnegative_float,
    "migration_cost": nonnegative_float, "migration_limit": limit_int,
}


def path_text(text: str) -> Path:
    """argparse ``type`` of a file or folder: a path, not an empty string
    (``Path("")`` is the current folder: ``--out ''`` wrote there)."""
    if not str(text).strip():
        raise argparse.ArgumentTypeError("an empty path; name a file or folder")
    return Path(text)


def _nonempty(text: str) -> str:
    """argparse ``type`` of an ``--out`` kept as text: not empty (:func:`path_text`)."""
    path_text(text)
    return text


def _strict_types(parser: argparse.ArgumentParser, skip=("generate",), numbers: bool = True) -> None:
    """Give every plain ``int`` / ``float`` option named in :data:`OPTION_TYPES`
    its validator, in ``parser`` and its subcommands (not those in ``skip``),
    and every path option (``type=Path``, or an ``--out`` kept as text) a
    refusal of the empty path, in all of them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                _strict_types(subparser, skip, numbers and name not in skip)
        elif numbers and action.dest in OPTION_TYPES and action.type in (int, float):
            action.type = OPTION_TYPES[action.dest]
        elif action.type is Path:
            action.type = path_text
        elif action.type in (str, None) and "--out" in action.option_strings:
            action.type = _nonempty


#: keyword arguments set by their own options, never by --param
_OWN_OPTIONS = ("time_limit", "threads")

#: words of a parameter's annotation that mark a Python object no ``--param``
#: text can give (a :class:`Result` start, a dict of solver parameters)
_PYTHON_ONLY = ("Result", "dict")


def param_value(text: str):
    """A ``--param`` value: int, then float, then bool (true / false) or
    None (none), else the string itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def parse_params(items) -> dict:
    """``--param NAME=VALUE`` options (repeatable) as a dict; ValueError on a
    malformed or repeated one."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name.isidentifier():
            raise ValueError(f"--param {item!r}: expected NAME=VALUE")
        if name in out:
            raise ValueError(f"--param {name} given twice")
        out[name] = param_value(value)
    return out


def _signature(func) -> list:
    """The parameters of ``func`` after the instance; those of the packing
    heuristic an ``epochs`` method applies epoch after epoch
    (:func:`~epochbench.methods.method_function`)."""
    from .methods import method_function
    return list(inspect.signature(method_function(func)).parameters.values())[1:]


def python_only(param: inspect.Parameter) -> bool:
    """Whether ``param`` takes a Python object that no ``--param`` text can
    give (annotated with a :class:`Result` or a dict)."""
    return any(word in str(param.annotation) for word in _PYTHON_ONLY)


def accepted_params(func) -> tuple[list[str], bool]:
    """The keyword parameters ``func`` takes after the instance (those set
    by their own options left out), and whether it takes ``**kwargs``."""
    sig = _signature(func)
    named = [p.name for p in sig if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
             and p.name not in _OWN_OPTIONS]
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


def _own_option(name: str, cli: bool) -> str:
    """The error for a parameter that has an option (argument) of its own."""
    if cli:
        return f"--param {name}: set it with --{name.replace('_', '-')}"
    return f"params: {name} is an argument of score itself ({name}=...), not a method parameter"


def check_params(func, params: dict, label: str, *, cli: bool = True) -> dict:
    """``params`` if ``func`` accepts every one (:func:`inspect.signature`)
    with a value of its kind (:func:`check_value`), else ValueError naming
    the first unknown one and those it accepts.  ``cli``: the values came
    from ``--param`` (messages name the option; a parameter that takes a
    Python object is refused), else from Python (``eb.solve``, ``eb.score``)."""
    named, var = accepted_params(func)
    for name in params:
        if name in _OWN_OPTIONS:
            raise ValueError(_own_option(name, cli))
        if name not in named and not var:
            raise ValueError(f"{'--param ' + name + ': ' if cli else ''}{label} has no parameter {name!r}; "
                             f"it accepts: {accepted_text(func, cli)}")
    check_values(func, params, label, cli=cli)
    return params


def check_values(func, params: dict, label: str, *, cli: bool = True) -> None:
    """:func:`check_value` for each of ``params`` that ``func`` names (those
    set by their own options left out)."""
    sig = {p.name: p for p in _signature(func)}
    for name, value in params.items():
        if name in sig and name not in _OWN_OPTIONS:
            check_value(sig[name], value, label, cli=cli)


def _is_int(value) -> bool:
    import numbers
    return not isinstance(value, bool) and (isinstance(value, numbers.Integral) or (
        isinstance(value, numbers.Real) and float(value).is_integer()))


def _is_number(value) -> bool:
    import numbers
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_value(param: inspect.Parameter, value, label: str, *, cli: bool = True) -> None:
    """A parameter's value against the parameter it sets: a flag (default
    True or False) takes true / false, an integer parameter an integer, a
    float one a number, ``none`` only a parameter that takes None; a parameter named like a command-line option
    (:data:`OPTION_TYPES`, e.g. ``seed``) passes that option's check; one
    that takes a Python object (a :class:`Result`, a dict) is not settable
    from the command line (``cli``), only from Python, where a parameter
    without an annotation takes any object (the method checks it)."""
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
            OPTION_TYPES[name](str(value))
        except (ValueError, argparse.ArgumentTypeError) as exc:
            raise ValueError(f"{where}: {exc}") from None


def method_params(kind: str, methods, params: dict, instances=()) -> dict:
    """Per method, the ``params`` it accepts; ValueError for a parameter no
    method of ``methods`` accepts, and for a value a method refuses on one
    of ``instances`` of family ``kind`` (its ``check_params`` hook,
    :func:`epochbench.methods.check_on`), before anything runs."""
    from epochbench.instances.registry import get

    from .methods import check_on
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
            raise ValueError(_own_option(p, True))
        if not any(p in got for got in out.values()):
            raise ValueError(f"--param {p}: no method of {', '.join(methods)} has a parameter {p!r}; accepted: "
                             + "; ".join(f"{m}: {a}" for m, a in takes.items()))
    for name, given in out.items():
        check_on(kind, name, given, instances, cli=True)
    return out


def _json_default(obj):
    import numpy as np
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


class _Progress:
    """Progress line on stderr for long simulations (every machine): shown
    only on a terminal, after 2 s, refreshed at most twice a second however
    often the simulator calls it, with an ETA from the share done; off with
    ``--quiet``.  ``what``: what is counted (``arrived``: the pool and the
    gang count arrivals, the farm counts finished jobs)."""

    def __init__(self, total: int, enabled: bool, what: str = "arrived"):
        import time
        self.total, self.enabled, self.clock, self.what = total, enabled, time.perf_counter, what
        self.t0 = self.clock()
        self.due = self.t0 + 2.0
        self.shown = False

    def __call__(self, count: int, now: float, total: int | None = None) -> None:
        if not self.enabled:
            return
        t = self.clock()
        if t < self.due:
            return
        self.due = t + 0.5
        self.shown = True
        total = self.total if total is None else total
        share = count / max(total, 1)
        eta = f", ETA {(t - self.t0) * (1 - share) / share:,.0f} s" if 0 < share < 1 else ""
        print(f"\r  {count:,}/{total:,} jobs {self.what} ({100 * share:.0f}%), simulated t = {now:,.0f} s, "
              f"{t - self.t0:,.0f} s elapsed{eta}   ", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.shown:
            print(file=sys.stderr)


_ROLE = __import__("re").compile(r":(?:func|mod|class|data|meth|attr|exc):`~?([^`]+)`")
_LITERAL = __import__("re").compile(r"``([^`]+)``")


def plain_text(doc: str | None) -> str:
    """A docstring as help text: reStructuredText roles and literals become
    plain words (``:func:`~a.b.c``` -> ``c``, double backquotes dropped)."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if m.group(0).startswith((":func:`~", ":mod:`~",
                     ":class:`~", ":data:`~", ":meth:`~", ":attr:`~", ":exc:`~")) else m.group(1), doc or "")
    return _LITERAL.sub(r"\1", text)
