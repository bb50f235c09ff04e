"""Pieces the command-line modules share: a parser whose errors are one
line, the numeric options' validators applied to every parser
(:mod:`epochbench.checks` defines them), ``--param NAME=VALUE`` parsing,
JSON of numpy values, a progress line."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from .checks import OPTION_TYPES


#: a number as float spells it, without its sign
_NUMBER = r"(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf(inity)?|nan)"
#: what a negative number looks like on the command line: float's spellings,
#: or a comma-separated list of numbers whose first is negative (``-2,10``)
NEGATIVE_NUMBER = re.compile(rf"^-{_NUMBER}(,[+-]?{_NUMBER})*$", re.IGNORECASE)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, whose lines do not break inside a flag
    (``--runtime-`` / ``factor``)."""

    def _fill_text(self, text, width, indent):
        import textwrap
        text = self._whitespace_matcher.sub(" ", text).strip()
        return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False)

    def _split_lines(self, text, width):
        import textwrap
        return textwrap.wrap(self._whitespace_matcher.sub(" ", text).strip(), width, break_on_hyphens=False)


class RawDescriptionHelpFormatter(HelpFormatter):
    """:class:`HelpFormatter` that keeps the description's and epilog's
    own line breaks (argparse's class of that name, with our option help)."""

    def _fill_text(self, text, width, indent):
        return "".join(indent + line for line in text.splitlines(keepends=True))


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr and exit
    status 2: ``epochbench solve: error: argument --time-limit: ...``
    (argparse's own prints the usage first).  Subparsers inherit it.

    A value that reads as a negative number in any spelling Python's
    ``float`` takes (``-1e3``, ``-inf``, ``-nan``), or a list of them
    (``--partitions -2,10``), is a value, not an option, so that
    ``--time-limit -inf`` is refused by the option's own check (argparse's
    pattern takes only ``-1`` and ``-1.5``: "expected one argument").  No option of this tool looks like a negative number."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def parse_known_args(self, args=None, namespace=None):
        self._given = set()            # the single-value options seen in this parse (:class:`_Once`)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        message = ' '.join(str(message).split())
        if message.startswith("unrecognized arguments:") and any(
                a == "--data" or a.startswith("--data=") for a in message.split(":", 1)[1].split()):
            message += " (--data is epochbench's own option, given before the command: epochbench --data DIR COMMAND ...)"
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Once(argparse._StoreAction):
    """A single-value option (``--method bb``, ``--methods ff bb``) that
    refuses to be given twice: argparse kept the last one silently
    (``--methods ff --methods bb`` scored bb alone, ``--nodes 8 --nodes 4``
    ran on 4).  Options meant to repeat (``--param``) append instead."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = parser.__dict__.setdefault("_given", set())
        if self.dest in given:
            parser.error(f"argument {'/'.join(self.option_strings)}: given twice; give it once")
        given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


def once(parser: argparse.ArgumentParser) -> None:
    """Make every single-value option of ``parser`` and its subcommands a
    :class:`_Once`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                once(subparser)
        elif type(action) is argparse._StoreAction and action.option_strings:
            action.__class__ = _Once


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
    gang count arrivals, the farm counts finished jobs).  When the
    simulator has not called it :data:`QUIET_S` seconds after it was made,
    a line says what the wait is (:data:`WAITING`): the compiled kernels
    loading, which a first run after installing compiles (the shared event
    loop of EASY and conservative backfilling: about a minute on one core of
    a 2-core machine), where the screen stayed blank."""

    #: seconds without a call after which :data:`WAITING` is shown
    QUIET_S = 3.0
    #: what a wait before the simulation's first call is (within 80 columns: a wrapped line is not written over)
    WAITING = "  loading the compiled kernels (a first run compiles them: a minute or two) ..."

    def __init__(self, total: int, enabled: bool, what: str = "arrived"):
        import contextlib
        import time
        self.total, self.enabled, self.clock, self.what = total, enabled, time.perf_counter, what
        self.t0 = self.clock()
        self.due = self.t0 + 2.0
        self.shown = self.called = False
        self.width = 0                              # of the line on the screen, written over by the next
        self.lock, self.timer = contextlib.nullcontext(), None
        if enabled:                                 # (threading not imported by a command that shows none)
            import threading
            self.lock = threading.Lock()
            self.timer = threading.Timer(self.QUIET_S, self._waiting)
            self.timer.daemon = True
            self.timer.start()

    def _waiting(self) -> None:
        with self.lock:
            if not self.called:
                self._show(self.WAITING)

    def _show(self, text: str) -> None:
        print("\r" + text.ljust(self.width), end="", file=sys.stderr, flush=True)
        self.width, self.shown = len(text), True

    def __call__(self, count: int, now: float, total: int | None = None) -> None:
        if not self.enabled:
            return
        self.called = True
        t = self.clock()
        if t < self.due:
            return
        self.due = t + 0.5
        total = self.total if total is None else total
        share = count / max(total, 1)
        eta = f", ETA {(t - self.t0) * (1 - share) / share:,.0f} s" if 0 < share < 1 else ""
        with self.lock:
            self._show(f"  {count:,}/{total:,} jobs {self.what} ({100 * share:.0f}%), simulated t = {now:,.0f} s, "
                       f"{t - self.t0:,.0f} s elapsed{eta}   ")

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            self.called = True
            if self.shown:
                print(file=sys.stderr)


_ROLE = __import__("re").compile(r":(?:func|mod|class|data|meth|attr|exc):`~?([^`]+)`")
_LITERAL = __import__("re").compile(r"``([^`]+)``")


def plain_text(doc: str | None, options=()) -> str:
    """A docstring as help text: reStructuredText roles and literals become
    plain words (``:func:`~a.b.c``` -> ``c``, double backquotes dropped); a
    literal that is one of ``options`` (parameter names) becomes its flag
    (``machines`` -> ``--machines``: "a farm of machines machines" read as
    a typo)."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if m.group(0).startswith((":func:`~", ":mod:`~",
                     ":class:`~", ":data:`~", ":meth:`~", ":attr:`~", ":exc:`~")) else m.group(1), doc or "")
    names = set(options)
    return _LITERAL.sub(lambda m: "--" + m.group(1).replace("_", "-") if m.group(1) in names else m.group(1), text)


def stdout_to_stderr(on: bool):
    """While ``on`` (a ``--json`` command runs user code: a method, a
    selector), what the code prints goes to stderr, so that stdout holds
    the JSON alone (a heuristic's print made ``solve --json`` unreadable)."""
    import contextlib
    import sys
    return contextlib.redirect_stdout(sys.stderr) if on else contextlib.nullcontext()
