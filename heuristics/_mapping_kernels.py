"""Compiled loops of the mapping heuristics (heuristics/mapping.py).

Min-Min in plain numpy (one (t, m) completion-time matrix per pick, as in
exact/mapping.py) takes about 48 ms on a Braun matrix (512 x 16);
:func:`batch_greedy` about 2.4 ms (best of 30, median over the 12 Braun
matrices, on a loaded 2-core machine; an O(t) scan per pick took 7-10 ms): a pick raises only one machine's
availability, so only the tasks whose best (Sufferage: or second-best)
machine it was need their row again, and a tournament tree gives the next
pick in O(log t).  The
simulated-annealing and tabu loops make one O(m) or O(1) move evaluation per
step, far below numpy's per-call overhead, so they are compiled too.  A GA
generation (200 x 512) took about 5 ms with numpy (gather + bincount) and
1.5 ms with :func:`ga_generation`, same random draws, same result.
Ties: lowest task index, then lowest machine index, everywhere.
"""
from __future__ import annotations

import math

import numpy as np

from epochbench.instances.lazy import njit

MINMIN, MAXMIN, SUFFERAGE = 0, 1, 2


@njit(cache=True)
def _row_best(etc, mat, i, out_j, out_c, out_c2, out_j2):
    """Best and second-best completion time of task i (lowest index on ties)."""
    m = etc.shape[1]
    bj, bc, sj, sc = -1, np.inf, -1, np.inf
    for j in range(m):
        c = mat[j] + etc[i, j]
        if c < bc:
            sj, sc = bj, bc
            bj, bc = j, c
        elif c < sc:
            sj, sc = j, c
    out_j[i], out_c[i], out_j2[i], out_c2[i] = bj, bc, sj, sc


@njit(cache=True)
def _better(key, a, b):
    """The leaf of larger key, ``a`` (the lower index) on ties; -1 = none."""
    if a < 0:
        return b
    if b < 0:
        return a
    return a if key[a] >= key[b] else b


@njit(cache=True)
def _fix(tree, key, p):
    """Repair the tournament tree above position ``p`` (a leaf slot)."""
    p //= 2
    while p >= 1:
        tree[p] = _better(key, tree[2 * p], tree[2 * p + 1])
        p //= 2


@njit(cache=True)
def _key(rule, bc, sc, i, m):
    if rule == MINMIN:
        return -bc[i]
    if rule == MAXMIN:
        return bc[i]
    return sc[i] - bc[i] if m > 1 else 0.0


@njit(cache=True)
def _bucket_add(mem, cnt, pos, i, j):
    mem[j, cnt[j]] = i
    pos[i] = cnt[j]
    cnt[j] += 1


@njit(cache=True)
def _bucket_remove(mem, cnt, pos, i, j):
    p = pos[i]
    last = mem[j, cnt[j] - 1]
    mem[j, p] = last
    pos[last] = p
    cnt[j] -= 1


@njit(cache=True)
def batch_greedy(etc, ready, rule):
    """Min-Min / Max-Min / Sufferage ([vadhiyar-notes] "Scheduling heuristics"):
    repeatedly pick, among the unmapped tasks, the one whose minimum
    completion time is smallest (Min-Min) or largest (Max-Min), or whose
    sufferage (second-best minus best completion time) is largest (lowest
    task index on ties), and map it to its best machine (lowest machine
    index on ties).  A pick raises one machine's availability, so only the
    tasks whose best (Sufferage: or second-best) machine it was, kept in
    per-machine buckets, get their row again; a tournament tree over the
    tasks' keys gives the next pick.  O(t m + R (m + log t)) for R row
    updates (R <= t^2; 10 t to 80 t on the Braun matrices)."""
    t, m = etc.shape
    mat = ready.copy()
    bj = np.empty(t, np.int64)
    bc = np.empty(t)
    sj = np.empty(t, np.int64)
    sc = np.empty(t)
    key = np.empty(t)
    size = 1
    while size < t:
        size *= 2
    tree = np.full(2 * size, -1, np.int64)
    mem1 = np.empty((m, t), np.int64)
    cnt1 = np.zeros(m, np.int64)
    pos1 = np.empty(t, np.int64)
    suff = rule == SUFFERAGE and m > 1
    mem2 = np.empty((m if suff else 0, t), np.int64)
    cnt2 = np.zeros(m, np.int64)
    pos2 = np.empty(t, np.int64)
    for i in range(t):
        _row_best(etc, mat, i, bj, bc, sc, sj)
        key[i] = _key(rule, bc, sc, i, m)
        tree[size + i] = i
        _bucket_add(mem1, cnt1, pos1, i, bj[i])
        if suff:
            _bucket_add(mem2, cnt2, pos2, i, sj[i])
    for p in range(size - 1, 0, -1):
        tree[p] = _better(key, tree[2 * p], tree[2 * p + 1])
    assign = np.full(t, -1, np.int64)
    todo = np.empty(2 * t, np.int64)
    for _ in range(t):
        pick = tree[1]
        j = bj[pick]
        assign[pick] = j
        tree[size + pick] = -1
        _fix(tree, key, size + pick)
        _bucket_remove(mem1, cnt1, pos1, pick, j)
        if suff:
            _bucket_remove(mem2, cnt2, pos2, pick, sj[pick])
        mat[j] += etc[pick, j]
        n = cnt1[j]
        todo[:n] = mem1[j, :n]
        if suff:
            todo[n:n + cnt2[j]] = mem2[j, :cnt2[j]]
            n += cnt2[j]
        for q in range(n):
            i = todo[q]
            _bucket_remove(mem1, cnt1, pos1, i, bj[i])
            if suff:
                _bucket_remove(mem2, cnt2, pos2, i, sj[i])
            _row_best(etc, mat, i, bj, bc, sc, sj)
            _bucket_add(mem1, cnt1, pos1, i, bj[i])
            if suff:
                _bucket_add(mem2, cnt2, pos2, i, sj[i])
            key[i] = _key(rule, bc, sc, i, m)
            _fix(tree, key, size + i)
    return assign


@njit(cache=True)
def mct(etc, ready):
    """MCT: tasks in index order, each to the machine where it completes
    first.  O(t m)."""
    t, m = etc.shape
    mat = ready.copy()
    out = np.empty(t, np.int64)
    for i in range(t):
        best = 0
        bc = mat[0] + etc[i, 0]
        for j in range(1, m):
            c = mat[j] + etc[i, j]
            if c < bc:
                best, bc = j, c
        out[i] = best
        mat[best] = bc
    return out


@njit(cache=True)
def olb(etc, ready):
    """OLB: tasks in index order, each to the machine available first,
    whatever its ETC there.  O(t m)."""
    t, m = etc.shape
    mat = ready.copy()
    out = np.empty(t, np.int64)
    for i in range(t):
        best = 0
        for j in range(1, m):
            if mat[j] < mat[best]:
                best = j
        out[i] = best
        mat[best] += etc[i, best]
    return out


# ---- shared state of the local searches -------------------------------------------------
@njit(cache=True)
def loads_of(etc, assign, m):
    load = np.zeros(m)
    cnt = np.zeros(m, np.int64)
    for i in range(assign.shape[0]):
        load[assign[i]] += etc[i, assign[i]]
        cnt[assign[i]] += 1
    return load, cnt


@njit(cache=True)
def span_of(load, cnt, ready):
    """Makespan: largest ready + load over machines that hold a task."""
    best = 0.0
    for j in range(load.shape[0]):
        if cnt[j] > 0:
            f = load[j] + ready[j]
            if f > best:
                best = f
    return best


@njit(cache=True)
def anneal(etc, ready, cur, load, cnt, cur_span, best, best_span, temp, cooling, since, patience,
           r_task, r_off, r_z):
    """Simulated annealing steps ([vadhiyar-notes] "Simulated Annealing"), one per
    entry of the pre-drawn ``r_task`` / ``r_off`` / ``r_z``: move task
    ``r_task[k]`` to machine ``(current + r_off[k]) % m``; accept if the
    makespan drops, else if ``z = r_z[k] > y = 1 / (1 + exp((old - new) / T))``;
    then ``T *= cooling``.  ``since`` counts steps without a change of the
    current makespan; stops at ``patience``.  Updates ``cur``, ``load``,
    ``cnt``, ``best`` in place; returns (steps, cur_span, best_span, temp,
    since).  O(m) per step."""
    m = etc.shape[1]
    steps = 0
    for k in range(r_task.shape[0]):
        if since >= patience:
            break
        steps += 1
        i = r_task[k]
        a = cur[i]
        b = (a + r_off[k]) % m
        load[a] -= etc[i, a]
        cnt[a] -= 1
        load[b] += etc[i, b]
        cnt[b] += 1
        new = span_of(load, cnt, ready)
        if new < cur_span:
            accept = True
        else:
            d = cur_span - new  # <= 0
            if d == 0.0:
                y = 0.5
            elif temp <= 0.0:
                y = 1.0
            else:
                x = d / temp
                y = 1.0 / (1.0 + math.exp(x)) if x > -700.0 else 1.0
            accept = r_z[k] > y
        if accept:
            cur[i] = b
            since = 0 if new != cur_span else since + 1
            cur_span = new
            if new < best_span:
                best_span = new
                best[:] = cur
        else:
            load[b] -= etc[i, b]
            cnt[b] -= 1
            load[a] += etc[i, a]
            cnt[a] += 1
            since += 1
        temp *= cooling
    return steps, cur_span, best_span, temp, since


@njit(cache=True)
def _top3(fin):
    """Indices of the three largest entries (-1 where m < 3)."""
    k1 = k2 = k3 = -1
    for j in range(fin.shape[0]):
        f = fin[j]
        if k1 < 0 or f > fin[k1]:
            k3, k2, k1 = k2, k1, j
        elif k2 < 0 or f > fin[k2]:
            k3, k2 = k2, j
        elif k3 < 0 or f > fin[k3]:
            k3 = j
    return k1, k2, k3


#: a pair budget of :func:`short_hops_part` that is never reached
NO_BUDGET = 2 ** 62


@njit(cache=True)
def finish_times(load, cnt, ready):
    """Each machine's finish time: its load after its ready time, 0 if it has no task."""
    m = load.shape[0]
    fin = np.zeros(m)
    for j in range(m):
        fin[j] = load[j] + ready[j] if cnt[j] > 0 else 0.0
    return fin


@njit(cache=True)
def short_hops(etc, ready, assign, load, cnt, limit):
    """Tabu search short hops ([vadhiyar-notes] "Tabu search"): scan the task pairs
    (i, j), i < j, in order; swap their machines when that lowers the
    makespan (a successful hop) and restart the scan at (0, 1), else go on.
    Ends after ``limit`` successful hops or a full scan without one.
    Swaps keep every machine's task count, so only the two machines'
    finish times change: a pair touching no machine of maximal finish time
    cannot help and costs two comparisons.  Updates ``assign`` and ``load``
    in place; returns (hops, makespan).  O(t^2) per scan."""
    fin = finish_times(load, cnt, ready)
    hops, span, _, _ = short_hops_part(etc, ready, assign, load, fin, 0, limit, NO_BUDGET)
    return hops, span


@njit(cache=True)
def short_hops_part(etc, ready, assign, load, fin, i, limit, budget):
    """:func:`short_hops` in parts: from row ``i`` of the scan, with the
    finish times ``fin`` (:func:`finish_times`, updated in place), until
    ``limit`` successful hops, a full scan without one, or, at the start of
    a row, ``budget`` task pairs looked at.  Returns (hops, makespan, the
    row to go on from, finished); parts run one after another make the
    same hops as one call (a time limit is looked at between them)."""
    t = etc.shape[0]
    k1, k2, k3 = _top3(fin)
    span = fin[k1]
    hops = 0
    pairs = 0
    while i < t - 1 and hops < limit:
        if pairs >= budget:
            return hops, span, i, False
        pairs += t - 1 - i
        a = assign[i]
        restart = False
        for j in range(i + 1, t):
            b = assign[j]
            if a == b or (a != k1 and b != k1):
                continue
            fa = fin[a] - etc[i, a] + etc[j, a]
            fb = fin[b] - etc[j, b] + etc[i, b]
            new = fa if fa > fb else fb
            if k1 != a and k1 != b:
                rest = fin[k1]
            elif k2 >= 0 and k2 != a and k2 != b:
                rest = fin[k2]
            elif k3 >= 0:
                rest = fin[k3]
            else:
                rest = 0.0
            if rest > new:
                new = rest
            if new < span:
                assign[i], assign[j] = b, a
                load[a] += etc[j, a] - etc[i, a]
                load[b] += etc[i, b] - etc[j, b]
                fin[a], fin[b] = fa, fb
                k1, k2, k3 = _top3(fin)
                span = fin[k1]
                hops += 1
                restart = True
                break
        i = 0 if restart else i + 1
    return hops, span, i, True


@njit(cache=True)
def min_distance(cand, tabu, n_tabu):
    """Smallest Hamming distance from ``cand`` to the first ``n_tabu`` rows."""
    t = cand.shape[0]
    best = t
    for r in range(n_tabu):
        d = 0
        for i in range(t):
            if cand[i] != tabu[r, i]:
                d += 1
        if d < best:
            best = d
    return best


@njit(cache=True)
def ga_generation(pop, span, elite, elite_span, pick, pair_a, pair_b, cut, mut, task, off, etc, ready, new,
                  new_span):
    """One GA generation after its random draws (heuristics/mapping.py:ga):
    ``new[0] = elite``, ``new[p] = pop[pick[p-1]]``; single-point crossover
    of the pairs (tails from ``cut`` swapped); mutation ``new[mut[q],
    task[q]] += off[q] (mod m)``; makespans of the changed chromosomes
    (the others keep their parent's).  O(P t)."""
    P, t = pop.shape
    m = etc.shape[1]
    changed = np.zeros(P, np.bool_)
    new[0, :] = elite
    new_span[0] = elite_span
    for p in range(1, P):
        new[p, :] = pop[pick[p - 1], :]
        new_span[p] = span[pick[p - 1]]
    for q in range(pair_a.shape[0]):
        a = pair_a[q]
        b = pair_b[q]
        for i in range(cut[q], t):
            x = new[a, i]
            new[a, i] = new[b, i]
            new[b, i] = x
        changed[a] = True
        changed[b] = True
    for q in range(mut.shape[0]):
        p = mut[q]
        new[p, task[q]] = (new[p, task[q]] + off[q]) % m
        changed[p] = True
    load = np.empty(m)
    cnt = np.empty(m, np.int64)
    for p in range(P):
        if not changed[p]:
            continue
        load[:] = 0.0
        cnt[:] = 0
        for i in range(t):
            j = new[p, i]
            load[j] += etc[i, j]
            cnt[j] += 1
        new_span[p] = span_of(load, cnt, ready)
