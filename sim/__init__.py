"""Event-driven online simulation: one face, :func:`simulate`, over three
machine models (the space-shared pool, the gang-scheduling matrix, the farm
with licenses), policies in one registry (:mod:`epochbench.sim.registry`),
one result type (:class:`SimResult`) and one metrics summary
(:mod:`epochbench.sim.metrics`)."""
from .engine import SimResult
from .runner import report, simulate, write_run

__all__ = ["simulate", "SimResult", "report", "write_run"]
