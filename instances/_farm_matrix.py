"""The [capannini2007] Job-Machine matrix in one compiled pass (see
:func:`epochbench.instances.farm.preference_matrix`).

The numpy version sums seven (N, M) arrays, each a few whole-matrix
operations: about 7 ms per pass at N = 200, M = 150, more than half of a CS
scheduling pass (profile of a cs-i-p run, issue 8).  This kernel computes the
same entries row by row, adding the heuristics in the same order; it agrees
with the per-heuristic functions to rounding (tests/test_farm.py).
"""
from __future__ import annotations

import numpy as np

from .lazy import njit


@njit(cache=True)
def _f1(extime, t, deadline, lo, hi):
    """[capannini2007] figure 2 for one entry (same operations as ``farm.f1``)."""
    if extime > t and extime <= deadline:
        return (hi - lo) / (deadline - t) * (extime - t) + lo
    return lo


@njit(cache=True)
def fused_matrix(ok, now, left, deadline, age, input_size, location, running, lic, mbench, bw,
                 base, hi, lo, k, inp, wait, overhead, literal, out):
    """Fill ``out`` (N, M) with P.  ``left[i] = Estimated (1 - Progress)
    BM_m-bar`` (Nxtime = left / BM_m), ``age`` already times AA, ``lic`` the
    Licenses Delta per job.  O(N M); one division per entry and row sums
    kept in row buffers (divisions were most of the cost)."""
    n, m = ok.shape
    inv_mb = 1.0 / mbench
    sup = 0.0  # SupRemaining: max Nxtime over eligible pairs (Wait minimization)
    for i in range(n):
        for c in range(m):
            if ok[i, c]:
                sup = max(sup, left[i] * inv_mb[c])
    wscale = wait / sup if sup > 0 else 0.0
    fbar = np.empty(m)
    tr = np.empty(m)
    for i in range(n):
        has = not np.isnan(deadline[i])
        sf = sfb = tot = 0.0
        bwrow = bw[location[i]]
        for c in range(m):
            fbar[c] = 0.0
            if not ok[i, c]:
                continue
            tr[c] = input_size[i] / bwrow[c]  # 0 where the input sits (bandwidth inf)
            tot += tr[c]
            if has:
                nx = left[i] * inv_mb[c]
                ext = now + nx
                f = _f1(ext, deadline[i] - k * nx, deadline[i], lo, hi)
                sf += f
                if literal or ext <= deadline[i]:
                    fbar[c] = hi - f
                    sfb += fbar[c]
        dscale = sf / sfb if sfb > 0 else 0.0
        iscale = inp / tot if tot > 0 else 0.0
        row = base + lic[i]
        for c in range(m):
            if not ok[i, c]:
                out[i, c] = 0.0
                continue
            v = row + dscale * fbar[c] + inp - iscale * tr[c]
            v += wait - wscale * left[i] * inv_mb[c]
            if running[i] == c:
                v += overhead
            out[i, c] = v + age[i]
    return out
