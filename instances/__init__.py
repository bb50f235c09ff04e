"""Problem families, their file formats and generators (see ARCHITECTURE.md)."""
from .core import InfeasibleSolution, InstanceError, Result, gap
from .packing import (EpochsInstance, PackingInstance, Reservation, check_epochs, check_packing,
                      reservation_from_running)
from .io import check, load_instance, read_family, save_instance, write_family
# every family registers itself with io on import: a file of any family loads
from . import assignment, knapsack, mapping  # noqa: E402,F401  (after io: they register into it)

__all__ = ["InfeasibleSolution", "InstanceError", "Result", "gap", "EpochsInstance", "PackingInstance",
           "Reservation", "check_epochs", "check_packing", "reservation_from_running", "check",
           "load_instance", "read_family", "save_instance", "write_family"]
