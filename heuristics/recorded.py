"""The ``recorded`` packing method: the choice a policy made at a recorded
scheduling epoch (``epochbench simulate --record-epochs``), replayed so that
``epochbench score`` measures it like any heuristic (gap to the exact
optimum, feasibility check)."""
from __future__ import annotations

from epochbench.instances.core import InstanceError
from epochbench.instances.registry import register


@register("packing", "recorded", kind="replay")
def recorded(inst) -> list[int]:
    """The policy's own choice at this epoch (``meta["choice"]``)."""
    if "choice" not in inst.meta:
        raise InstanceError(f"{inst.name}: no recorded choice (meta['choice']); only instances written "
                            "by 'epochbench simulate --record-epochs' have one")
    return [int(i) for i in inst.meta["choice"]]
