

def test_lublin03_reaches_its_load_where_a_rate_does():
    """The fixed point on the rate factor stopped on the load's jumps: load
    3.0 at seed 4 gave 2.671, 0.2 with 200 jobs 0.177; bisection finds the
    rate (within 1e-4), or the nearest side of a jump it cannot cross."""
    from epochbench.instances.workloads import offered_load, workload
    for load, seed, jobs in ((3.0, 4, 1000), (0.5, 5, 1000), (0.2, 4, 200)):
        s = workload(model="lublin03", jobs=jobs, seed=seed, load=load)
        assert abs(offered_load(s.jobs, s.capacity) / load - 1) < 1e-4, (load, seed, jobs)


def test_k_resources_never_ask_more_processors_than_the_size_for_float_error():
    """7 / 100 * 100 = 7.000000000000001 asked for 8 processors of a job of
    7 on a machine of 100 (63 jobs of 20,000)."""
    from epochbench.instances.workloads import workload
    s = workload(model="feitelson96", processors=100, k=2, capacity=300, jobs=5000, seed=9)
    assert (s.jobs["procs"] <= s.jobs["size"]).all()
