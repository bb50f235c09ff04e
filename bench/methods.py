"""Finding a user's function by name (``validate MODULE:FUNCTION``).

Methods themselves need no loading: :mod:`epochbench.instances.registry`
imports the built-in modules and the entry-point plug-ins (group
``epochbench.heuristics``: ``NAME`` or ``FAMILY:NAME`` = ``module:function``)
on the first lookup that needs them.
"""
from __future__ import annotations

import importlib


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
    try:
        func = getattr(mod, func_name)
    except AttributeError:
        raise ValueError(f"module {mod_name!r} has no attribute {func_name!r}") from None
    if not callable(func):
        raise ValueError(f"{spec}: {func_name!r} is a {type(func).__name__}, not a function")
    return func
