"""The ``recorded`` packing method: the choice a policy made at a recorded
scheduling epoch (``epochbench simulate --record-epochs``), replayed so that
``epochbench score`` measures it like any heuristic (gap to the exact
optimum, feasibility check)."""
from __future__ import annotations

from epochbench.instances.checks import recorded_choice
from epochbench.instances.registry import register


@register("packing", "recorded", kind="replay")
def recorded(inst) -> list[int]:
    """The policy's own choice at this epoch (``meta["choice"]``,
    :func:`~epochbench.instances.checks.recorded_choice`)."""
    return recorded_choice(inst)
