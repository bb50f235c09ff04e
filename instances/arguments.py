"""How an error message names an argument: as its caller wrote it.

The same check serves the command line (``epochbench simulate --selector
cpsat``) and the Python API (``eb.simulate(..., selector="cpsat")``); its
message names the option the way the caller gave it.  Outside any API call
(the command line, and the modules' own functions called directly) it
names the command line's flag, ``--selector``; inside a call of the public
face (:mod:`epochbench.api`, which runs its functions under
:func:`python_names`) the keyword argument, ``selector=``.  A message that
starts with the argument (``switch_overhead: a fraction ...``) names it
with :func:`named`: the flag only while the ``epochbench`` command runs
(:func:`command_line`), so that a module's own function called directly
keeps the keyword its caller wrote.
"""
from __future__ import annotations

import contextlib
import contextvars

#: True inside a call of the Python API: messages name keyword arguments
_KEYWORDS = contextvars.ContextVar("epochbench_keywords", default=False)
#: True while the ``epochbench`` command runs: :func:`named` names flags
_COMMAND_LINE = contextvars.ContextVar("epochbench_command_line", default=False)
_NOTHING = object()


def arg(name: str, value=_NOTHING) -> str:
    """Argument ``name`` (a Python keyword, e.g. ``kill_at_estimate``) as
    the caller wrote it, for an error message.

    Parameters
    ----------
    name : str
        The keyword argument's name.
    value : optional
        The value given, to show beside the name.

    Returns
    -------
    str
        ``--kill-at-estimate`` (``--nodes 8`` with a value) on the command
        line; ``kill_at_estimate=`` (``nodes=8``) inside a call of the
        Python API (:func:`python_names`).

    Examples
    --------
    >>> arg("selector"), arg("policy", "easy")
    ('--selector', '--policy easy')
    >>> with python_names():
    ...     arg("selector"), arg("policy", "easy")
    ('selector=', "policy='easy'")
    """
    if in_python():
        return f"{name}=" if value is _NOTHING else f"{name}={value!r}"
    flag = "--" + name.replace("_", "-")
    return flag if value is _NOTHING else f"{flag} {value}"


def named(name: str) -> str:
    """Argument ``name`` as the head of an error message, ``NAME: what``:
    the flag ``--switch-overhead`` while the command line runs
    (:func:`command_line`), else the bare keyword ``switch_overhead`` (a
    call of the Python API or of a module's own function; :func:`arg`'s
    ``switch_overhead=`` would read oddly before a colon).

    Examples
    --------
    >>> named("switch_overhead")
    'switch_overhead'
    >>> with command_line():
    ...     named("switch_overhead")
    '--switch-overhead'
    """
    return "--" + name.replace("_", "-") if on_command_line() else name


def on_command_line() -> bool:
    """Whether :func:`named` names flags now: the ``epochbench`` command
    runs (:func:`command_line`) and no call of the Python API inside it."""
    return _COMMAND_LINE.get() and not in_python()


@contextlib.contextmanager
def command_line():
    """Within this block, :func:`named` names the command line's flags: the
    ``epochbench`` command runs under it."""
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


def args(**given) -> str:
    """Several arguments with their values, as the caller would write them:
    ``--policy easy --selector bb`` on the command line, ``policy='easy',
    selector='bb'`` inside a call of the Python API (see :func:`arg`).

    Examples
    --------
    >>> args(policy="easy", selector="bb")
    '--policy easy --selector bb'
    """
    return (", " if in_python() else " ").join(arg(name, value) for name, value in given.items())


def in_python() -> bool:
    """Whether messages name keyword arguments now (inside a call of the
    Python API, :func:`python_names`) rather than command-line flags."""
    return _KEYWORDS.get()


@contextlib.contextmanager
def python_names():
    """Within this block, :func:`arg` names keyword arguments (``nodes=``)
    rather than the command line's flags: the Python API's functions run
    under it."""
    token = _KEYWORDS.set(True)
    try:
        yield
    finally:
        _KEYWORDS.reset(token)
