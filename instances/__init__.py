"""Problem families, their file formats and generators (see ARCHITECTURE.md).

Importing the package loads only :mod:`~epochbench.instances.core` (the
errors, :class:`Result`); the other names below load their module on first
use, so that a command which reads a job stream does not pay for the
families it never touches.
"""
from .core import InfeasibleSolution, InstanceError, Result, gap

#: public name -> the submodule that defines it
_LAZY = {**dict.fromkeys(("EpochsInstance", "PackingInstance", "Reservation", "check_epochs", "check_packing",
                          "reservation_from_running"), "packing"),
         **dict.fromkeys(("check", "load_instance", "read_family", "save_instance", "write_family"), "io")}

__all__ = ["InfeasibleSolution", "InstanceError", "Result", "gap", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        if _LAZY[name] == "io":
            module.families()                 # a file of any family loads
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
