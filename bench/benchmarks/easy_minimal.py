"""A minimal pure-Python EASY backfilling simulator: the yardstick of
``bench_startup.py`` for the whole ``epochbench simulate`` command.

Usage: ``python easy_minimal.py TRACE.swf[.gz]``; prints ``jobs mean_wait``.

The rules are epochbench's (``epochbench.sim.policies``, [rajaei-dadfar],
[zhang-comparative] section 3) on one resource, jobs killed at their
estimate, so that the benchmark can check that both give the same mean wait:
processors = SWF field 8 if > 0 else field 5; estimate = field 9 if > 0 else
the runtime, else 1 s; machine size from the header ``MaxProcs`` (else
``MaxNodes``, else the largest job); jobs with a negative submit time or
runtime, no processors or more than the machine are dropped.  Standard
library only, no numpy: what a user would write in an afternoon.
"""
import bisect
import gzip
import heapq
import sys


def read(path):
    """(capacity, jobs): jobs as [id, submit, estimate, duration, procs] in (submit, id) order."""
    opener = gzip.open if path.endswith(".gz") else open
    header, rows = {}, []
    with opener(path, "rt", encoding="latin-1") as f:
        for line in f:
            if line.startswith(";"):
                key, _, value = line[1:].partition(":")
                if value.strip():
                    header.setdefault(key.strip(), value.split()[0])
                continue
            v = line.split()
            if len(v) < 18:
                continue
            jid, submit, run = int(v[0]), float(v[1]), float(v[3])
            procs = int(v[7]) if int(v[7]) > 0 else int(v[4])
            est = float(v[8]) if float(v[8]) > 0 else run
            rows.append([jid, submit, est if est > 0 else 1.0, run, procs])
    cap = int(header.get("MaxProcs") or header.get("MaxNodes") or
              max((r[4] for r in rows if r[1] >= 0 and r[3] >= 0 and r[4] >= 1), default=1))
    jobs = [r for r in rows if r[1] >= 0 and r[3] >= 0 and 1 <= r[4] <= cap]
    for r in jobs:
        r[3] = min(r[3], r[2])
    jobs.sort(key=lambda r: (r[1], r[0]))
    return cap, jobs


def simulate(cap, jobs):
    """EASY: start queue-head jobs while they fit; the head's shadow time and
    extra processors from the running jobs in (expected end, id) order; a
    later job backfills if it fits now and ends by the shadow or fits in the
    extra.  Returns the start time of each job."""
    n, free, now, a = len(jobs), cap, 0.0, 0
    start = [0.0] * n
    ends, queue, running = [], [], []   # heap (end, job); queue; running as (start + estimate, id, job)
    while a < n or ends:
        now = min(ends[0][0] if ends else float("inf"), jobs[a][1] if a < n else float("inf"))
        while ends and ends[0][0] == now:
            _, j = heapq.heappop(ends)
            free += jobs[j][4]
            del running[bisect.bisect_left(running, (start[j] + jobs[j][2], jobs[j][0], j))]
        while a < n and jobs[a][1] == now:
            queue.append(a)
            a += 1

        def begin(j):
            nonlocal free
            start[j], free = now, free - jobs[j][4]
            heapq.heappush(ends, (now + jobs[j][3], j))
            bisect.insort(running, (now + jobs[j][2], jobs[j][0], j))

        while queue and jobs[queue[0]][4] <= free:
            begin(queue.pop(0))
        if not queue:
            continue
        head = jobs[queue[0]][4]
        acc, shadow = free, float("inf")
        for end, _, j in running:
            key = max(end, now)
            if acc >= head and key != shadow:
                break
            acc += jobs[j][4]
            if shadow == float("inf") and acc >= head:
                shadow = key
        extra, keep = acc - head, queue[:1]
        for j in queue[1:]:
            p = jobs[j][4]
            if p <= free and (now + jobs[j][2] <= shadow or p <= extra):
                if now + jobs[j][2] > shadow:
                    extra -= p
                begin(j)
            else:
                keep.append(j)
        queue[:] = keep
    return start


def main(path):
    cap, jobs = read(path)
    start = simulate(cap, jobs)
    wait = sum(s - j[1] for s, j in zip(start, jobs)) / max(len(jobs), 1)
    print(len(jobs), f"{wait:.6f}")


if __name__ == "__main__":
    main(sys.argv[1])
