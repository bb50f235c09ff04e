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
    except ImportError as exc:
        raise ValueError(f"cannot import module {mod_name!r}: {exc}") from None
    try:
        return getattr(mod, func_name)
    except AttributeError:
        raise ValueError(f"module {mod_name!r} has no attribute {func_name!r}") from None
