"""Compiled greedy pricing of the pattern model of vector bin packing (the
kernel of :func:`epochbench.exact.epochs_cg.greedy_patterns`).

One fill per (seed type, order): the seed type first, as many copies as fit
and exist, then the other types in the order, each taking as many copies as
still fit.  Loaded on first call (cached on disk), not at import.
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit


@njit(cache=True)
def fills(dem, cap, copies, y, orders, out):
    """Greedy fills of one bin from every seed type with ``y > 0`` and every
    order (rows of ``orders``: type indices, best first).

    Writes the count vector of fill ``f`` into ``out[f]`` and returns the
    array of the fills' values ``y @ out[f]``; ``out`` has at least
    ``orders.shape[0] * T`` rows of T entries.  O(S R T K) for S seeds and
    R orders over T types and K resources.
    """
    t_n, k_n = dem.shape
    r_n, o_n = orders.shape
    res = np.empty(k_n, dtype=np.int64)
    vals = np.zeros(out.shape[0])
    f = 0
    for r in range(r_n):
        for s in range(t_n):
            if y[s] <= 0.0 or copies[s] <= 0:
                continue
            for k in range(k_n):
                res[k] = cap[k]
            for t in range(t_n):
                out[f, t] = 0
            val = 0.0
            for step in range(o_n + 1):
                t = s if step == 0 else orders[r, step - 1]
                if step > 0 and t == s:
                    continue
                take = copies[t]
                for k in range(k_n):
                    if dem[t, k] > 0:
                        room = res[k] // dem[t, k]
                        if room < take:
                            take = room
                if take > 0:
                    out[f, t] = take
                    val += take * y[t]
                    for k in range(k_n):
                        res[k] -= take * dem[t, k]
            vals[f] = val
            f += 1
    return vals[:f]
