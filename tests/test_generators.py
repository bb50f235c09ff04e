"""Generators of instances/generators.py: determinism, validity, round trips,
the seed worked examples (000 fig. 1, 002 LOS) and the VPSolver reader."""
from __future__ import annotations

import re

import numpy as np
import pytest

from epochbench.instances import InstanceError, check, load_instance, read_family, reservation_from_running, save_instance
from epochbench.instances.generators import (GENERATOR_PARAMS, GENERATORS, data_root, draw_sizes, feitelson_size_pmf,
                                  fig1, generate, k_requirements, leinberger, load_vbp, los, los_example,
                                  resolved_params,
                                  vbp_family, write_generated)

VBP = data_root() / "vbp"
needs_vbp = pytest.mark.skipif(not (VBP / "class1").is_dir(),
                               reason=f"VBP reference data missing at {VBP} (set EPOCHBENCH_DATA)")
NAME_OK = re.compile(r"^[A-Za-z0-9._-]+$")


def arrays(inst):
    """Every array of an instance, reservation included, for equality checks."""
    out = {k: getattr(inst, k) for k in ("capacity", "demand", "used", "estimate") if hasattr(inst, k)}
    res = getattr(inst, "reservation", None)
    if res is not None:
        out.update(shadow=np.array(res.shadow), extra=res.extra, past_shadow=res.past_shadow)
    return out


def assert_same(a, b):
    xa, xb = arrays(a), arrays(b)
    assert xa.keys() == xb.keys()
    for key in xa:
        if xa[key] is None:
            assert xb[key] is None, key
        else:
            np.testing.assert_array_equal(xa[key], xb[key], err_msg=key)
    assert a.meta == b.meta


# ---- size model --------------------------------------------------------------------
@pytest.mark.parametrize("processors", [1, 100, 128, 320])
def test_size_pmf_favours_small_and_powers_of_two(processors):
    pmf = feitelson_size_pmf(processors)
    s = np.arange(1, processors + 1)
    assert pmf.shape == (processors,) and np.all(pmf >= 0) and pmf.sum() == pytest.approx(1.0)
    assert pmf[0] >= min(0.3, pmf.max())              # serial jobs are the most common
    assert pmf[(s & (s - 1)) == 0].sum() >= 0.75       # mostly powers of two


def test_draw_sizes_respects_bounds():
    rng = np.random.default_rng(0)
    pmf = feitelson_size_pmf(64)
    assert draw_sizes(rng, pmf, 500).min() >= 1
    sizes = draw_sizes(rng, pmf, 200, low=10, high=20)
    assert sizes.min() >= 10 and sizes.max() <= 20 and sizes.dtype == np.int64
    with pytest.raises(ValueError):
        draw_sizes(rng, pmf, 1, low=65)


# ---- leinberger ------------------------------------------------------------------------
def test_leinberger_deterministic_by_seed():
    a, b = leinberger(n=32, k=4, count=3, seed=7), leinberger(n=32, k=4, count=3, seed=7)
    for x, y in zip(a, b):
        assert_same(x, y)
    c = leinberger(n=32, k=4, count=3, seed=8)
    assert not np.array_equal(a[0].demand, c[0].demand)
    assert not np.array_equal(a[0].demand, a[1].demand)


def test_leinberger_instance_independent_of_count():
    few, many = leinberger(n=16, count=2, seed=3), leinberger(n=16, count=5, seed=3)
    np.testing.assert_array_equal(few[1].demand, many[1].demand)
    np.testing.assert_array_equal(few[1].used, many[1].used)


@pytest.mark.parametrize("k", [1, 2, 4, 8])
@pytest.mark.parametrize("dist", ["uniform", "exponential"])
def test_leinberger_shapes_and_limits(k, dist):
    insts = leinberger(n=24, k=k, dist=dist, count=4, seed=1)
    assert len(insts) == 4
    for inst in insts:
        assert inst.demand.shape == (24, k) and inst.demand.dtype == np.int64
        assert inst.capacity.tolist() == [1000] * k and inst.used.shape == (k,)
        assert inst.estimate.shape == (24,) and inst.estimate.dtype == float
        assert np.all(inst.estimate >= 1)
        assert np.all(inst.demand >= 1) and np.all(inst.demand <= inst.capacity)
        assert np.all(inst.used <= np.floor(inst.meta["load"] * inst.capacity))
        assert 0.3 <= inst.meta["load"] <= 0.8
        assert inst.meta["capped"] == 0 and inst.meta["capped_running"] == 0   # norm="max" never caps
        # the largest requirement of a job is its processor share of the machine
        share = np.asarray(inst.meta["size"]) / inst.meta["processors"]
        np.testing.assert_array_equal(inst.demand.max(axis=1), np.ceil(share * 1000).astype(int))
        for key in ("name", "family", "generator", "params", "seed"):
            assert key in inst.meta
        assert inst.meta["family"] == "packing" and inst.meta["generator"] == "leinberger"
    names = [i.name for i in insts]
    assert len(set(names)) == len(names) and all(NAME_OK.match(n) for n in names)
    assert names[3] == f"leinberger-K{k}-{dist}-n24-s0001-003"


def test_leinberger_mean_norm_caps_explicitly():
    insts = leinberger(n=64, k=8, dist="exponential", norm="mean", count=5, seed=2, load=0.5)
    assert sum(i.meta["capped"] for i in insts) > 0
    for inst in insts:
        assert np.all(inst.demand <= inst.capacity) and inst.meta["load"] == 0.5


def test_leinberger_params_and_validation():
    inst = leinberger(n=8, k=2, count=1, seed=0, capacity=[10, 500], load=0.4)[0]
    assert inst.capacity.tolist() == [10, 500] and np.all(inst.used <= [4, 200])
    assert inst.meta["params"]["capacity"] == [10, 500]
    assert leinberger(n=0, k=3, count=1)[0].demand.shape == (0, 3)
    for bad in (dict(k=0), dict(dist="normal"), dict(load=1.5), dict(capacity=[5, 5]), dict(seed=-1),
                dict(norm="median"), dict(n=-1)):
        with pytest.raises(ValueError):
            leinberger(count=1, **bad)


# ---- LOS ([vadhiyar-notes]) ----------------------------------------------------------------------
def test_los_deterministic_by_seed():
    a, b, c = los(n=16, count=4, seed=5), los(n=16, count=4, seed=5), los(n=16, count=4, seed=6)
    for x, y in zip(a, b):
        assert_same(x, y)
    assert any(not np.array_equal(x.demand, y.demand) for x, y in zip(a, c))


def test_los_reservation_consistent_with_running_jobs():
    insts = los(n=20, count=40, seed=11, machine=320, now=100.0)
    blocked = [i for i in insts if i.meta["head_blocked"]]
    assert 0 < len(blocked) < len(insts)                 # p_block = 0.5
    for inst in insts:
        run = inst.meta["running"]
        assert inst.k == 1 and inst.capacity.tolist() == [320] and inst.demand.shape == (20, 1)
        assert inst.used[0] == sum(run["size"]) <= 320
        assert len(run["size"]) == len(run["remaining"]) and min(run["remaining"], default=1) >= 1
        assert np.all(inst.demand >= 1) and np.all(inst.demand <= 320)
        assert np.all((60 <= inst.estimate) & (inst.estimate <= 86400))
        if not inst.meta["head_blocked"]:
            assert inst.reservation is None and inst.demand[0, 0] <= inst.free[0]
            continue
        assert inst.demand[0, 0] > inst.free[0]
        shadow, extra = reservation_from_running(inst.capacity, inst.used, inst.demand[0],
                                                 np.reshape(run["size"], (-1, 1)), run["remaining"],
                                                 inst.meta["now"])
        assert inst.reservation.shadow == shadow and shadow > 100.0
        np.testing.assert_array_equal(inst.reservation.extra, extra)
        np.testing.assert_array_equal(inst.reservation.past_shadow, 100.0 + inst.estimate > shadow)


def test_los_example_values():
    plain = los_example()
    assert plain.capacity.tolist() == [10] and plain.used.tolist() == [5]
    assert plain.demand[:, 0].tolist() == [7, 3, 1, 2, 2]
    assert plain.estimate.tolist() == [4, 5, 6, 4, 2] and plain.reservation is None
    res = los_example(reservation=True).reservation
    assert res.shadow == 28 and res.extra.tolist() == [3]
    assert res.past_shadow.tolist() == [True, True, True, True, False]
    assert plain.value([1, 3]) == pytest.approx(0.5) == plain.meta["optimum"]


def test_fig1():
    inst = fig1()
    assert inst.capacity.tolist() == [16, 32]
    assert inst.demand.tolist() == [[8, 4], [4, 2], [7, 16], [11, 20], [1, 12], [1, 10]]
    assert inst.meta["optimum"] == 2 and inst.lower_bound() == 2
    assert inst.value(check(inst, [(0, 2, 4), (1, 3, 5)])) == 2


# ---- JSON round trip ------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: leinberger(n=12, k=4, dist="exponential", count=2, seed=4),
    lambda: [i for i in los(n=10, count=8, seed=3) if i.reservation is not None][:1],
    lambda: [los_example(), los_example(reservation=True), fig1()],
], ids=["leinberger", "los", "examples"])
def test_json_round_trip(tmp_path, make):
    insts = make()
    assert insts
    for inst in insts:
        path = tmp_path / f"{inst.name}.json"
        save_instance(inst, path)
        back = load_instance(path)
        assert type(back) is type(inst)
        assert_same(inst, back)


# ---- VBP --------------------------------------------------------------------------------------
@needs_vbp
def test_load_vbp_with_known_values():
    inst = load_vbp(VBP / "class1" / "class1_20_3_0.vbp")
    assert inst.name == "class1_20_3_0" and inst.kind == "epochs"
    assert inst.capacity.tolist() == [1000, 1000, 1000] and inst.demand.shape == (20, 3)
    assert inst.demand[0].tolist() == [267, 375, 305]
    assert inst.meta["optimum"] == 6 and inst.meta["lower_bound"] == 6
    assert (inst.meta["class"], inst.meta["n_nominal"], inst.meta["d"], inst.meta["index"]) == (1, 20, 3, 0)
    unknown = load_vbp(VBP / "class4" / "class4_20_3_0.vbp")
    assert unknown.meta["optimum"] is None and unknown.meta["lower_bound"] == 3


@needs_vbp
def test_vbp_family_counts():
    every = vbp_family()
    assert len(every) == 360                             # 9 classes x n {20, 40} x d {3, 5} x 10
    assert len({i.name for i in every}) == 360
    assert {(i.meta["n_nominal"], i.k) for i in every} == {(20, 3), (20, 5), (40, 3), (40, 5)}
    some = vbp_family(n=20, d=5, classes="1,9")
    assert [i.name for i in some[:2]] == ["class1_20_5_0", "class1_20_5_1"] and len(some) == 20
    assert all(i.meta["optimum"] is None or i.meta["optimum"] >= i.lower_bound() for i in every)
    with pytest.raises(InstanceError, match="available"):
        vbp_family(n=60)


def test_vbp_multiplicity_and_summary(tmp_path):
    folder = tmp_path / "vbp" / "class3"
    folder.mkdir(parents=True)
    f = folder / "class3_3_2_7.vbp"  # n = 3 items (multiplicities expanded), d = 2: as its name says
    f.write_text("2\n10 10\n2\n3 4 2\n\n5 1 1\n")
    (tmp_path / "vbp" / "Panigrahy_summary_known.csv").write_text(
        "instance_name\tLB\tOPT\tbest_overall\nclass3_3_2_7\t2\t-1\t3\n")
    inst = load_vbp(f)
    assert inst.demand.tolist() == [[3, 4], [3, 4], [5, 1]]
    assert inst.meta["optimum"] is None and inst.meta["lower_bound"] == 2 and inst.meta["best_known"] == 3
    assert [i.name for i in vbp_family(root=tmp_path / "vbp")] == ["class3_3_2_7"]
    lone = tmp_path / "lone.vbp"
    lone.write_text("1\n5\n1\n5 1\n")
    assert load_vbp(lone).meta["optimum"] is None


@pytest.mark.parametrize("text, where", [
    ("3\n10 10 10\n2\n1 2 3 1\n1 2 1\n", r"line 5 \(item 2 of 2\): expected 3 sizes and a multiplicity, got 3"),
    ("3\n10 10 10\n1\n1 -2 3 1\n", r"line 4 \(item 1 of 1\): negative size -2"),
    ("3\n10 10 10\n1\n1 x 3 1\n", r"line 4 \(item 1 of 1\): 'x' is not an integer"),
    ("3\n10 10 10\n3\n1 2 3 1\n", r"file ends after 1 of the 3 item lines announced at line 3"),
    ("3\n10 10\n1\n1 2 3 1\n", r"line 2 \(capacities\): expected 3 capacities, got 2"),
    ("3\n10 10 10\n1\n1 20 3 1\n", r"row 0 \[1, 20, 3\] exceeds the machine"),
    ("3\n10 10 10\n1\n1 2 3 1\n4 4 4 1\n", r"line 5: unexpected content"),
    ("", r"file ends before line 1"),
    ("2.5\n", r"line 1 \(d\): '2.5' is not an integer"),
], ids=["count", "negative", "token", "truncated", "k-mismatch", "too-big", "extra", "empty", "float"])
def test_malformed_vbp_names_file_and_line(tmp_path, text, where):
    path = tmp_path / "bad.vbp"
    path.write_text(text)
    with pytest.raises(InstanceError, match=where) as err:
        load_vbp(path)
    assert str(path) in str(err.value)


def test_missing_vbp_file(tmp_path):
    with pytest.raises(InstanceError, match="no such file"):
        load_vbp(tmp_path / "nope.vbp")
    with pytest.raises(InstanceError, match="no VBP data folder"):
        vbp_family(root=tmp_path / "nothing")


# ---- registry --------------------------------------------------------------------------------
def test_registry_and_params():
    assert {"leinberger", "los", "vbp", "fig1"} <= set(GENERATORS) == set(GENERATOR_PARAMS)
    spec = GENERATOR_PARAMS["leinberger"]
    assert spec["n"].default == 64 and spec["n"].type is int and spec["dist"].choices == ("uniform", "exponential")
    assert spec["load"].type is float and GENERATOR_PARAMS["fig1"] == {}
    assert all(p.help for params in GENERATOR_PARAMS.values() for p in params.values())
    assert resolved_params("los", n=5, load=None)["load"] is None
    insts = generate("leinberger", n=8, k=2, count=2, seed=1, load=None)
    assert_same(insts[1], leinberger(n=8, k=2, count=2, seed=1)[1])
    assert generate("fig1")[0].name == "leinberger-fig1"
    with pytest.raises(ValueError, match="known: .*fig1.*leinberger.*los"):
        generate("nope")
    with pytest.raises(ValueError, match="no parameter k"):
        generate("los", k=2)


def test_write_generated_folder(tmp_path):
    folder = write_generated("los", tmp_path / "fam", n=6, count=3, seed=2)
    back = read_family(folder)
    fresh = los(n=6, count=3, seed=2)
    assert [b.name for b in back] == [f.name for f in fresh]
    for b, f in zip(back, fresh):
        assert_same(b, f)


def test_generate_never_overwrites_a_family_or_a_stream(tmp_path, capsys):
    """A second generate into a folder that holds a family, or onto an
    existing stream file, is one clear line (status 2) and leaves the files
    as they were."""
    from epochbench.cli import main
    out = tmp_path / "fam"
    assert main(["generate", "leinberger", "--out", str(out), "--n", "8", "--k", "2", "--count", "2"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix == ".json"}
    capsys.readouterr()
    for argv in (["leinberger", "--n", "8", "--k", "2", "--count", "2", "--load", "0.8"], ["mkp", "--n", "6"]):
        assert main(["generate", argv[0], "--out", str(out), *argv[1:]]) == 2
        assert "already holds" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.suffix == ".json"} == before
    swf = tmp_path / "s.swf"
    assert main(["generate", "workload", "--out", str(swf), "--jobs", "10"]) == 0
    data = swf.read_bytes()
    assert main(["generate", "workload", "--out", str(swf), "--jobs", "20"]) == 2
    assert swf.read_bytes() == data and "already exists" in capsys.readouterr().err


@pytest.mark.parametrize("name, kw", [("mkp", dict(n=6, k=2)), ("farm-mkp", dict(n=6)),
                                      ("assign-random", dict(n=4, machines=4)),
                                      ("assign-farm", dict(n=4, machines=4))])
def test_instances_of_different_seeds_have_different_names(name, kw):
    """References are matched by name: two seeds' instances must not share one."""
    from epochbench.instances.generators import generate
    a = [i.name for i in generate(name, count=2, seed=1, **kw)]
    b = [i.name for i in generate(name, count=2, seed=2, **kw)]
    assert len(set(a)) == 2 and not set(a) & set(b) and all("-s0001-" in x for x in a)


def test_generate_help_gives_each_generator_a_whole_first_sentence():
    """The list cut descriptions at their first line ("each pair eligible
    with probability density,") and showed internal names (data_root())."""
    import inspect as _inspect

    from epochbench.cli_args import plain_text
    from epochbench.instances.catalog import first_sentence
    from epochbench.instances.generators import GENERATOR_PARAMS, load_generators
    for name, func in load_generators().items():
        line = first_sentence(plain_text(_inspect.getdoc(func)))
        assert line.endswith("."), (name, line)
        assert "data_root()" not in line and "module docstring" not in plain_text(_inspect.getdoc(func)), name
    assert "20 or 40" in GENERATOR_PARAMS["vbp"]["n"].help and "vbp" not in GENERATOR_PARAMS["mkp"]["n"].help
    assert first_sentence("Uniform in 1..1000, e.g. 5. Next.") == "Uniform in 1..1000, e.g. 5."
    assert first_sentence("Packs until the total. Then more.") == "Packs until the total."   # not "al."
    assert first_sentence("See Fig. 3 of it. Next.") == "See Fig. 3 of it."


def test_los_estimates_are_whole_seconds_within_their_range():
    """Rounded after the draw, est_min=0.1, est_max=0.4 gave estimates of 0
    and 100.4..100.6 gave 100 and 101."""
    import epochbench as eb
    for lo, hi in ((0.5, 3.7), (100.0, 101.0), (60, 86400)):
        for inst in eb.generate("los", n=8, count=20, est_min=lo, est_max=hi):
            est = np.asarray(inst.estimate)
            assert (est == np.round(est)).all() and est.min() >= max(lo, 1) and est.max() <= hi
    for lo, hi in ((0.1, 0.4), (100.4, 100.6)):
        with pytest.raises(ValueError, match="whole number of seconds"):
            eb.generate("los", n=8, count=2, est_min=lo, est_max=hi)


@pytest.mark.parametrize("reservation", [False, True])
def test_los_example_reference_is_what_los_selects_and_is_feasible(reservation):
    """The reservation variant named figure 1's [1, 3] (jobs 2 and 4), which
    breaks the reservation (both run past the shadow on 5 processors, 3
    extra); algorithm 2 selects jobs 2 and 5."""
    import epochbench as eb
    from epochbench.instances.packing import check_packing
    inst = los_example(reservation=reservation)
    (picked,) = inst.meta["reference"].values()
    check_packing(inst, picked)
    assert list(eb.solve(inst, "los").decision) == picked and inst.value(picked) == pytest.approx(0.5)


# -- rules a one-token change broke unseen (mutation review, round 5) --
def test_feitelson_pmf_moves_mass_to_the_nearest_power_of_two_in_log2():
    """P = 8, p_pow2 = 1: 3 and 5 go to 4, 6 and 7 to 8; weights s**-1.5 move whole."""
    h = np.arange(1, 9, dtype=float) ** -1.5
    want = np.zeros(8)
    for s, to in zip(range(1, 9), (1, 2, 4, 4, 4, 8, 8, 8)):
        want[to - 1] += h[s - 1]
    np.testing.assert_allclose(feitelson_size_pmf(8, p_pow2=1.0), want / want.sum(), rtol=1e-12)


def test_k_requirements_a_whole_machine_job_is_not_capped():
    demand, capped = k_requirements(np.random.default_rng(0), [100, 50], 100, [100, 100], "uniform", "max")
    assert demand.max(axis=1).tolist() == [100, 50] and capped.tolist() == [0, 0]


def test_k_requirements_a_whole_share_is_not_rounded_up():
    """7 / 100 * 100 is 7.000000000000001 in floats: a job of 7 processors on
    a machine of 100 asks for 7 units of its largest resource, not 8."""
    for seed in range(5):
        demand, capped = k_requirements(np.random.default_rng(seed), [7, 7, 7], 100, [100, 100], "uniform", "max")
        assert demand.max(axis=1).tolist() == [7, 7, 7] and capped.tolist() == [0, 0, 0]


@pytest.mark.parametrize("capacity", [10**6, 10**12, 10**15, 2**53 + 1, 2**62])
def test_k_requirements_the_largest_share_is_exact_at_any_capacity(capacity):
    """A job's largest draw (norm "max"; every draw at K = 1) asks exactly
    ceil(size * capacity / processors).  The float guard against rounding a
    whole amount up took 1e-12 of the product away: from 10**12 units on,
    that was a unit or more (a quarter of 2**62 units asked for 1,152,921
    too few), and at 10**9 units one draw in about 1,500 was a unit short.
    The other draws are the ceiling of their float product, never above the
    largest."""
    sizes = np.arange(1, 129)
    exact = [-(-(int(s) * capacity) // 128) for s in sizes]
    for k, dist in ((1, "uniform"), (2, "exponential"), (4, "uniform")):
        demand, capped = k_requirements(np.random.default_rng(k), sizes, 128, [capacity] * k, dist, "max")
        assert demand.max(axis=1).tolist() == exact and not capped.any()
    demand, _ = k_requirements(np.random.default_rng(0), sizes, 128, [capacity, 10**6], "uniform", "max")
    assert (demand >= 1).all() and (demand[:, 1] <= -(-sizes * 10**6 // 128)).all()
    (inst,) = leinberger(n=50, k=1, count=1, seed=1, capacity=capacity, processors=128)
    per = capacity // 128
    if capacity % 128 == 0:                                # a whole number of processors' worth each
        assert all(int(d) % per == 0 for d in np.asarray(inst.demand).ravel())


def test_leinberger_background_fills_up_to_the_target_inclusive():
    for inst in leinberger(n=2, k=1, count=10, seed=0, capacity=4, processors=4, load=0.5):
        assert inst.used.tolist() == [2]


def test_los_blocked_head_never_fits():
    """p_block = 1: the head is redrawn above the free capacity whenever some
    processor is busy (a redraw of exactly the free processors would fit)."""
    insts = los(n=4, count=60, seed=3, machine=4, load=0.5, p_block=1.0)
    assert any(i.free[0] < 4 for i in insts)
    for inst in insts:
        if inst.free[0] < 4:
            assert inst.meta["head_blocked"] and inst.demand[0, 0] > inst.free[0]


def test_los_blocks_a_head_only_where_some_size_above_free_has_mass():
    """p_pow2 = 1 on 6 processors: no size above 4 has mass, so a head on 4
    or more free processors stays as drawn (it raised 'no job size in
    5..6'); below that every head is blocked."""
    insts = los(n=4, count=20, seed=0, machine=6, p_pow2=1.0, p_block=1.0)
    free = np.array([i.free[0] for i in insts])
    assert (free >= 4).any() and (free < 4).any()
    for inst in insts:
        assert inst.meta["head_blocked"] == (inst.demand[0, 0] > inst.free[0]) == (inst.free[0] < 4)
    assert not any(i.meta["head_blocked"] for i in los(count=5, seed=0, p_pow2=1.0, load=0.1, p_block=1.0))


def test_los_estimates_are_rounded_not_cut():
    """Log-uniform on [1, 2] rounded: 2 with probability 1 - log2(1.5) = 0.415."""
    est = np.concatenate([i.estimate for i in los(n=100, count=4, seed=0, est_min=1, est_max=2)])
    assert set(est.tolist()) == {1.0, 2.0}
    assert 0.3 < np.mean(est == 2.0) < 0.55


def test_draw_sizes_refuses_a_range_without_mass():
    pmf = feitelson_size_pmf(8, p_pow2=1.0)            # all mass on 1, 2, 4, 8
    with pytest.raises(ValueError, match=r"no job size in 5\.\.7"):
        draw_sizes(np.random.default_rng(0), pmf, 3, low=5, high=7)


def test_vbp_negative_multiplicity_names_the_line(tmp_path):
    path = tmp_path / "neg.vbp"
    path.write_text("2\n10 10\n2\n1 2 1\n3 4 -1\n")
    with pytest.raises(InstanceError, match=r"line 5 \(item 2 of 2\): negative multiplicity -1"):
        load_vbp(path)


def test_vbp_per_class_keeps_the_files_below_it(tmp_path):
    folder = tmp_path / "class1"
    folder.mkdir()
    for i in range(3):
        (folder / f"class1_2_1_{i}.vbp").write_text("1\n10\n1\n3 2\n")
    assert [i.name for i in vbp_family(root=tmp_path, per_class=1)] == ["class1_2_1_0"]
    assert [i.name for i in vbp_family(root=tmp_path, per_class=2)] == ["class1_2_1_0", "class1_2_1_1"]
