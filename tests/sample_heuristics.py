"""User heuristics for the ``validate`` tests: one broken on purpose."""
import numpy as np


def overcommit(inst):
    """Starts every job whatever its size: over-commits a resource."""
    return list(range(inst.n))


def smallest_first(inst):
    """A correct user heuristic: smallest total demand first, while it fits."""
    free = inst.free.copy()
    out = []
    for j in np.argsort(inst.demand.sum(axis=1), kind="stable"):
        ok = (inst.demand[j] <= free).all()
        if ok and inst.reservation is not None and inst.reservation.past_shadow[j]:
            ok = (inst.demand[j] + inst.demand[[i for i in out if inst.reservation.past_shadow[i]]].sum(axis=0)
                  <= inst.reservation.extra).all()
        if ok:
            out.append(int(j))
            free -= inst.demand[j]
    return out


def crashes(inst):
    raise RuntimeError("boom")
