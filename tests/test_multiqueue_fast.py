"""multi-queue on the compiled loop (sim/multiqueue_fast.py): whole streams
against the generic engine, job for job and pass for pass, with and without
lending, two to four queues, counts and shares, jobs queued elsewhere, a KTH
prefix; the report's facts, the errors and an empty stream on both engines."""
import numpy as np
import pytest

from epochbench.instances.data import data_root
from epochbench.sim import multiqueue_fast, policies
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.variants import parse_partitions

from test_sim_engine import random_stream, same_schedule, stream

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
OPTIONS = [dict(queue_bounds=[20.0]),
           dict(queue_bounds=[20.0], partitions=[6, 10]),
           dict(queue_bounds=[20.0], partitions=[6, 10], lend=True),
           dict(queue_bounds=[10.0, 30.0], partitions=[4, 4, 8]),
           dict(queue_bounds=[10.0, 30.0], partitions=[4, 4, 8], lend=True),
           dict(queue_bounds=[5.0, 15.0, 30.0], lend=True),
           dict(queue_bounds=[25.0], partitions=[0.3, 0.7])]


def narrow_enough(df, cap, options):
    """Without lending no job may be wider than the largest partition."""
    if not options.get("lend"):
        sizes = parse_partitions(options.get("partitions"), cap, len(options["queue_bounds"]) + 1)
        df = df.assign(procs=df["procs"].clip(upper=int(sizes.max())))
    return df


def test_multi_queue_takes_the_compiled_loop():
    assert policies.FAST_CODES["multi-queue"] == multiqueue_fast.MQ_RULE
    df = random_stream(np.random.default_rng(0), 30)
    assert simulate(df, [16], "multi-queue", queue_bounds=[20.0], lend=True).engine == "fast"


@pytest.mark.parametrize("options", OPTIONS, ids=range(len(OPTIONS)))
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_whole_streams_equal_the_generic_engine(options, seed):
    """Busy streams with ties in submit time and early ends; odd seeds overrun."""
    df = narrow_enough(random_stream(np.random.default_rng(seed), 300, overrun=seed % 2 == 1), 16, options)
    res = same_schedule(df, [16], "multi-queue", **options)
    gen = simulate(df, [16], "multi-queue", engine="generic", **options)
    assert res.facts == gen.facts and res.jobs["start"].notna().all()


def test_the_report_says_the_partitions_and_the_jobs_queued_elsewhere_on_both_engines():
    df = stream([(1, 0, 3, 5, 5), (2, 0, 1, 5, 5), (3, 0, 1, 50, 50), (4, 1, 3, 5, 5)])
    for engine in ("fast", "generic"):
        res = simulate(df, [4], "multi-queue", engine=engine, queue_bounds=[10.0], partitions=[0.25, 0.75])
        assert res.engine == engine
        assert res.extras == {"partition_sizes": [1, 3], "queued_elsewhere": 2}


def test_the_tiny_warm_up_run_keeps_the_partitions_given():
    """The compiled loop is loaded by a run of the first two jobs; with the
    default (equal) partitions job 1 (12 of 16 processors) would be refused."""
    df = stream([(1, 0, 12, 5, 50), (2, 0, 2, 5, 5), (3, 1, 4, 5, 5)])
    res = same_schedule(df, [16], "multi-queue", queue_bounds=[10.0], partitions=[4, 12])
    assert res.jobs["start"].tolist() == [0, 0, 5]            # job 3 waits for job 2 in the short partition


@pytest.mark.parametrize("engine", ["fast", "generic"])
def test_errors_are_the_generic_engines(engine):
    with pytest.raises(ValueError, match=r"partitions split processors only; the stream has 2 resources \(procs and "
                                         r"the columns res_1\)$"):     # it named the column as a resource
        simulate(random_stream(np.random.default_rng(1), 20, k=2), [16, 16], "multi-queue", engine=engine)
    with pytest.raises(ValueError, match=r"largest partition 8 \(no lending\)"):
        simulate(stream([(1, 0, 12, 5, 5)]), [16], "multi-queue", engine=engine)


@pytest.mark.parametrize("engine", ["fast", "generic"])
def test_an_empty_stream_reports_its_partitions(engine):
    res = simulate(stream([(1, 0, 2, 5, 5)]).iloc[:0], [16], "multi-queue", engine=engine)
    assert res.n == 0 and res.passes == 0 and res.extras == {"partition_sizes": [8, 8], "queued_elsewhere": 0}


@pytest.mark.parametrize("options", [dict(lend=True), dict(queue_bounds=[600.0, 7200.0], partitions=[0.2, 0.3, 0.5],
                                                            lend=True),
                                     dict(partitions=[40, 60])])
def test_kth_prefix_equals_the_generic_engine(options):
    if not KTH.exists():
        pytest.skip(f"KTH SWF trace absent at {KTH} (set EPOCHBENCH_DATA)")
    from epochbench.instances.jobs import read_swf
    w = read_swf(KTH)
    jobs = w.jobs.head(4000)
    if not options.get("lend"):
        jobs = jobs.assign(procs=jobs["procs"].clip(upper=60))
    res = same_schedule(jobs, w.capacity, "multi-queue", **options)
    assert res.jobs["start"].notna().all()
