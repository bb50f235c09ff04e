"""How an error message names an argument: as its caller wrote it.

The same check serves the command line (``epochbench simulate --selector
cpsat``) and the Python API (``eb.simulate(..., selector="cpsat")``); its
message names the option the way the caller gave it.  Outside any API call
(the command line, and the modules' own functions called directly) it
names the command line's flag, ``--selector``; inside a call of the public
face (:mod:`epochbench.api`, which runs its functions under
:func:`python_names`) the keyword argument, ``selector=``.
"""
from __future__ import annotations

import contextlib
import contextvars

#: True inside a call of the Python API: messages name keyword arguments
_KEYWORDS = contextvars.ContextVar("epochbench_keywords", default=False)
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
