"""The ``recorded`` packing method: the choice a policy made at a recorded
scheduling epoch (``epochbench simulate --record-epochs``), replayed so that
``epochbench score`` measures it like any heuristic (gap to the exact
optimum, feasibility check)."""
from __future__ import annotations

from epochbench.instances.checks import indices, short
from epochbench.instances.core import InfeasibleSolution, InstanceError
from epochbench.instances.registry import register


@register("packing", "recorded", kind="replay")
def recorded(inst) -> list[int]:
    """The policy's own choice at this epoch (``meta["choice"]``)."""
    if "choice" not in inst.meta:
        raise InstanceError(f"{inst.name}: no recorded choice (meta['choice']); only instances written "
                            "by 'epochbench simulate --record-epochs' have one")
    choice = inst.meta["choice"]
    where = f"{inst.name}: recorded choice (meta['choice'])"
    if not isinstance(choice, list):
        raise InstanceError(f"{where} must be a list of job indices, got {short(choice, 40)}")
    try:
        return list(indices(choice, inst.n, where))
    except InfeasibleSolution as exc:          # the file is wrong, not a method's answer
        raise InstanceError(str(exc)) from None
