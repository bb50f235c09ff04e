"""Generator parameters of the wrong type or out of range: refused with one
line naming the parameter, never truncated, coerced or passed on to numpy
(a float capacity cut to an integer, a string taken as True, a numpy count
skipping the range check)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import epochbench as eb
from epochbench.instances.assignment import farm_assignment
from epochbench.instances.generators import _fraction, leinberger, los, los_example, resolved_params, vbp_family
from epochbench.instances.knapsack import load_mknapcb, random_mkp
from epochbench.instances.mapping import braun_family, braun_range


def refused(match, call, *args, **kw):
    """``call`` raises a one-line ValueError matching ``match``."""
    with pytest.raises(ValueError, match=match) as info:
        call(*args, **kw)
    assert "\n" not in str(info.value)


def vbp_root(tmp_path):
    """A VBP folder with one tiny ``class1_20_3_0.vbp`` file."""
    (tmp_path / "class1").mkdir()
    (tmp_path / "class1" / "class1_20_3_0.vbp").write_text("3\n10 10 10\n1\n1 2 3 2\n")
    return str(tmp_path)


def braun_root(tmp_path):
    """A Braun folder with two 2 x 2 ETC files."""
    for name in ("u_c_hihi.0", "u_i_lolo.0"):
        (tmp_path / name).write_text("2 2 0\n1\n2\n3\n4\n")
    return str(tmp_path)


# ---- 1. leinberger capacity list ---------------------------------------------------------
@pytest.mark.parametrize("capacity, bad", [
    ([1.5, 2.5, 3.5, 10], "1.5"), ([True, 5, 5, 5], "True"), pytest.param([2**70] * 4, str(2**70), id="list-2**70"),
    ([5, 0, 5, 5], "0"), ([5, -3, 5, 5], "-3"), ([5, 5, 5, 5.0], "5.0"), (["5", 5, 5, 5], "'5'"),
    ([5, None, 5, 5], "None"), (np.array([5.5, 5, 5, 5]), "5.5"), (1.7, "1.7"), (True, "True"),
    pytest.param(2**70, str(2**70), id="2**70"), ("abc", "'abc'")])
def test_leinberger_capacity_entries_refused(capacity, bad):
    """Lists reach the generator's own check; a scalar stops at resolved_params'
    (``capacity must be an integer, got 1.7``): either way one line naming it."""
    said = re.escape(bad)
    refused(rf"^capacity must be integers in \[1, 4\.6\d*e\+18\], got .*{said}", leinberger, capacity=capacity,
            count=1, n=3)
    refused(rf"^capacity must .*got .*{said}", eb.generate, "leinberger", capacity=capacity, count=1, n=3)


@pytest.mark.parametrize("capacity", [None, np.array(5), [5, 5]])
def test_leinberger_capacity_count_refused(capacity):
    refused(r"^capacity must be a positive integer or 4 positive integers, got ", leinberger, capacity=capacity,
            count=1, n=3)


def test_leinberger_capacity_valid_forms_kept():
    """Ints, numpy ints, tuples and arrays: the same instances as before."""
    base = leinberger(n=5, k=2, count=1, capacity=[7, 2**62])[0]
    assert base.capacity.tolist() == [7, 2**62] and base.meta["params"]["capacity"] == [7, 2**62]
    for same in ((7, 2**62), np.array([7, 2**62]), [np.int64(7), np.int64(2**62)]):
        inst = leinberger(n=5, k=2, count=1, capacity=same)[0]
        assert inst.to_dict().keys() == base.to_dict().keys()
        np.testing.assert_array_equal(inst.demand, base.demand)
        assert inst.meta == base.meta


# ---- 2. vbp classes / n / d ---------------------------------------------------------------
@pytest.mark.parametrize("kw, name", [(dict(classes=[1.5]), "classes"), (dict(classes=[True]), "classes"),
                                      (dict(classes=1.0), "classes"), (dict(classes=[1, 2.0]), "classes"),
                                      (dict(n=[20.5]), "n"), (dict(d=[np.float64(3)]), "d"),
                                      (dict(classes="1.5"), "classes"), (dict(classes=[None]), "classes")])
def test_vbp_non_integer_sets_refused(tmp_path, kw, name):
    root = vbp_root(tmp_path)
    refused(f"^{name} must be integers, got ", eb.generate, "vbp", root=root, **kw)
    refused(f"^{name} must be integers, got ", vbp_family, root=root, **kw)


@pytest.mark.parametrize("per_class", [[1], 1.5, True])
def test_vbp_per_class_must_be_an_integer(tmp_path, per_class):
    root = vbp_root(tmp_path)
    refused("^per_class must be", vbp_family, root=root, per_class=per_class)
    refused("^per_class must be", eb.generate, "vbp", root=root, per_class=per_class)


def test_vbp_integer_sets_still_read(tmp_path):
    root = vbp_root(tmp_path)
    for kw in (dict(classes=[1]), dict(classes="1"), dict(classes=np.int64(1)), dict(classes=["1"]),
               dict(n=(20,), d=np.array([3]), classes="1, 2"), dict(per_class=np.int64(1))):
        assert [i.name for i in eb.generate("vbp", root=root, **kw)] == ["class1_20_3_0"]


# ---- 3. bool parameters -----------------------------------------------------------------------
@pytest.mark.parametrize("value", ["no", "False", 0, 1, 1.0, [True], np.int64(1)])
def test_bool_parameters_refuse_non_bools(value):
    refused(r"^reservation must be True or False, got ", eb.generate, "los-example", reservation=value)
    refused(r"^reservation must be True or False, got ", los_example, reservation=value)
    refused(r"^preemptive must be True or False, got ", eb.generate, "assign-farm", preemptive=value,
            n=4, machines=4, count=1)
    refused(r"^preemptive must be True or False, got ", farm_assignment, preemptive=value, n=4, machines=4,
            count=1)
    refused(r"^repeats must be True or False, got ", eb.generate, "workload", repeats=value, jobs=10)


def test_every_bool_parameter_is_checked():
    """Each generator's bool parameters (GENERATOR_PARAMS) refuse a string."""
    from epochbench.instances.generators import GENERATOR_PARAMS, load_generators
    load_generators()
    bools = [(g, p) for g, spec in GENERATOR_PARAMS.items() for p, par in spec.items() if par.type is bool]
    assert len(bools) >= 3
    for g, p in bools:
        refused(f"^{p} must be True or False, got 'no'$", resolved_params, g, **{p: "no"})


def test_numpy_bool_accepted_as_bool():
    inst = eb.generate("los-example", reservation=np.bool_(True))[0]
    assert inst.meta["params"]["reservation"] is True and inst.reservation is not None
    assert eb.generate("los-example", reservation=np.bool_(False))[0].reservation is None


# ---- 4. numpy scalars and the range checks ----------------------------------------------------------
@pytest.mark.parametrize("name, kw, match", [
    ("leinberger", dict(count=np.int64(0)), r"^count must lie in \[1, 1e\+06\], got "),
    ("leinberger", dict(n=np.int64(10**11)), r"^n must lie in \[0, 1e\+07\], got "),
    ("leinberger", dict(load=np.float64(1.5)), r"^load must lie in \[0, 1\], got "),
    ("leinberger", dict(load=np.float32("nan")), r"^load must be a finite number, got "),
    ("leinberger", dict(n=np.float64(5.0)), r"^n must be an integer, got "),
    ("leinberger", dict(n=np.bool_(True)), r"^n must be a number, got "),
    ("leinberger", dict(n=10**400), r"^n must lie in \[0, 1e\+07\], got "),
    ("mkp", dict(k=np.uint8(0)), r"^k must lie in \[1, 10000\], got "),
    ("los", dict(now=np.float64(-1.0)), r"^now must lie in "),
    ("braun-range", dict(decimals=np.int32(99)), r"^decimals must lie in \[-1, 12\], got "),
    ("los", dict(now="5"), r"^now must be a number, got '5'$"),
    ("mkp", dict(tightness="0.5"), r"^tightness must be a number, got '0.5'$"),
    ("mkp", dict(tightness=[0.5]), r"^tightness must be a number, got \[0.5\]$"),
])
def test_numpy_scalars_and_strings_meet_the_range_checks(name, kw, match):
    refused(match, resolved_params, name, **kw)
    refused(match, eb.generate, name, **kw)


# ---- 5. braun names -------------------------------------------------------------------------------
def test_braun_names_list_or_tuple(tmp_path):
    root = braun_root(tmp_path)
    want = ["u_c_hihi.0", "u_i_lolo.0"]
    assert [i.name for i in eb.generate("braun", root=root, names=want)] == want
    assert [i.name for i in braun_family(root=root, names=tuple(want))] == want
    assert [i.name for i in eb.generate("braun", root=root, names="u_c_hihi.0,u_i_lolo.0")] == want


@pytest.mark.parametrize("names, match", [
    ("u_c_hihi.0,u_c_hihi.0", "^names lists 'u_c_hihi.0' twice$"),
    (["u_i_lolo.0", "u_c_hihi.0", "u_i_lolo.0"], "^names lists 'u_i_lolo.0' twice$"),
    ("u_c_hihi.0 u_c_hihi.0", "^names lists 'u_c_hihi.0' twice$"),
    (5, "^names must be a comma-separated string or a list of file names, got 5$"),
    ([1, 2], "^names must be a comma-separated string or a list of file names, got "),
    (["u_c_hihi.0", None], "^names must be a comma-separated string or a list of file names, got "),
    # read from outside the folder, while the instance recorded braun/<name> as its file
    ("../braun/u_c_hihi.0", r"^names: '\.\./braun/u_c_hihi\.0' is a path, not a file name of the Braun folder"),
    (["u_c_hihi.0", "/tmp/u_i_lolo.0"], r"^names: '/tmp/u_i_lolo\.0' is a path"),
])
def test_braun_names_refused(tmp_path, names, match):
    root = braun_root(tmp_path)
    refused(match, eb.generate, "braun", root=root, names=names)
    refused(match, braun_family, root=root, names=names)


# ---- 6. the other generators' parameters ------------------------------------------------------------
@pytest.mark.parametrize("kw, match", [
    (dict(tasks=4.5), "^tasks must be an integer >= 1, got 4.5$"), (dict(tasks=0), "^tasks must be an integer >= 1"),
    (dict(machines=[3]), "^machines must be an integer >= 1"), (dict(count=1.5), "^count must be an integer >= 0"),
    (dict(seed=2.5), "^seed must be an integer >= 0"), (dict(decimals=1.5), "^decimals must be an integer >= -1"),
    (dict(decimals=True), "^decimals must be an integer >= -1"),
    (dict(task_het=["hi"]), "^task_het must be one of"),
    (dict(consistency=np.array(["c"])), "^consistency must be one of"),
])
def test_braun_range_parameters_refused(kw, match):
    refused(match, braun_range, **{"tasks": 4, "machines": 3, **kw})


def test_braun_range_decimals_minus_one_still_unrounded():
    raw = braun_range(tasks=3, machines=2, decimals=-1)[0].etc
    assert not np.array_equal(raw, np.round(raw, 2))
    # the documented 'no rounding' was refused by the parameter bounds (generate, the command line)
    assert np.array_equal(eb.generate("braun-range", tasks=3, machines=2, count=1, decimals=-1)[0].etc, raw)


@pytest.mark.parametrize("value", ["0.5", True, [0.5], np.bool_(True), float("nan"),
                                   pytest.param(10**400, id="huge-int")])
def test_fractions_refuse_non_numbers(value):
    refused("^tightness must be a number in", random_mkp, tightness=value, n=3, count=1)
    refused("^need must be a number in", _fraction, "need", value)


def test_fractions_of_numpy_and_int_kept():
    assert _fraction("load", np.float32(0.5)) == 0.5 and _fraction("load", 1) == 1.0 and _fraction("x", None) is None


@pytest.mark.parametrize("kw, match", [(dict(now="5"), "^now must be a finite number"),
                                       (dict(est_min="60"), "^est_min must be a finite number"),
                                       (dict(est_max=float("inf")), "^est_max must be a finite number"),
                                       (dict(now=True), "^now must be a finite number")])
def test_los_times_must_be_numbers(kw, match):
    refused(match, los, n=3, count=1, **kw)


@pytest.mark.parametrize("first", [2.5, [1], True])
def test_mknapcb_first_must_be_an_integer(tmp_path, first):
    path = tmp_path / "mknapcb1.txt"
    path.write_text("1\n2 1 0\n1 2\n1 1\n1\n")
    assert len(load_mknapcb(path, first=1)) == 1
    refused("^first must be an integer >= 0", load_mknapcb, path, first=first)


def test_braun_names_array_refused_in_one_line(tmp_path):
    refused("^names must be a comma-separated string or a list of file names, got ", braun_family,
            root=braun_root(tmp_path), names=np.array(["u_c_hihi.0", "u_i_lolo.0"]))


@pytest.mark.parametrize("call, kw", [(braun_range, dict(machines=np.arange(200))),
                                      (los_example, dict(reservation=np.arange(200))),
                                      (random_mkp, dict(tightness=np.linspace(0, 1, 200))),
                                      (random_mkp, dict(correlation=np.array(["correlated"] * 200)))])
def test_array_arguments_give_one_line(call, kw):
    """An array where a scalar goes is named in one line (numpy's repr wraps)."""
    refused("must be", call, **kw)


@pytest.mark.parametrize("name", ["vbp", "orlib-assign", "orlib-mknap1", "orlib-mknapcb", "braun"])
@pytest.mark.parametrize("root", [3, 1.5, ["a"], True])
def test_a_data_folder_that_is_not_a_path_is_refused(name, root):
    refused(r"^root must be a folder path, got ", eb.generate, name, root=root)   # Python's own TypeError before


def test_a_data_folder_given_as_a_path_object_is_read(tmp_path):
    from pathlib import Path
    from epochbench.instances.data import data_root
    if not (data_root() / "vbp").is_dir():
        pytest.skip(f"the vbp data set is not in {data_root()} (set EPOCHBENCH_DATA)")
    as_text = eb.generate("vbp", root=str(data_root() / "vbp"), classes="1", per_class=1)
    as_path = eb.generate("vbp", root=Path(data_root() / "vbp"), classes="1", per_class=1)
    assert [i.name for i in as_text] == [i.name for i in as_path] and len(as_path) > 0


@pytest.mark.parametrize("name, kw", [("leinberger", dict(n=4, k=2, count=1)), ("mkp", dict(count=1)),
                                      ("workload", dict(jobs=5))])
def test_a_seed_given_as_none_is_refused_not_read_as_seed_0(name, kw):
    """``eb.generate(..., seed=None)`` silently gave the instances of seed 0."""
    refused(r"^seed: must be an integer >= 0, got None \(seeds are explicit: leave seed out for the default, 0\)$",
            eb.generate, name, seed=None, **kw)
    for bad, says in ((True, "seed must be a number, got True"), ("3", "seed must be an integer >= 0, got '3'"),
                      (1.5, "seed must be an integer, got 1.5")):
        refused(re.escape(says), eb.generate, name, seed=bad, **kw)
    default, zero = eb.generate(name, **kw), eb.generate(name, seed=np.int64(0), **kw)   # left out: the default
    names = (lambda g: [i.name for i in g]) if isinstance(default, list) else (lambda g: g.jobs.to_dict("list"))
    assert names(default) == names(zero)


def test_a_workload_from_numpy_scalars_has_the_same_json_meta():
    """A numpy seed stayed np.int64 in the workload's meta: ``json.dumps``
    refused it (the instance generators already made it an int)."""
    import json
    a = eb.generate("workload", model="feitelson96", jobs=np.int64(50), seed=np.int64(1), load=np.float64(0.7))
    b = eb.generate("workload", model="feitelson96", jobs=50, seed=1, load=0.7)
    assert json.dumps(a.meta) == json.dumps(b.meta) and type(a.meta["seed"]) is int


def test_a_misspelt_generator_or_choice_is_named_with_its_likely_spelling():
    """(API review) methods and policies had "did you mean"; generators and their choices did not."""
    with pytest.raises(ValueError, match=r"unknown generator 'leinbergr' \(did you mean 'leinberger'\?\); known: "):
        eb.generate("leinbergr")
    with pytest.raises(ValueError, match=r"model must be one of .*, got 'lublin3' \(did you mean 'lublin03'\?\)$"):
        eb.generate("workload", model="lublin3")
    with pytest.raises(ValueError, match=r"model must be one of .*, got 'zzz'$"):
        eb.generate("workload", model="zzz")


def test_a_workload_capacity_its_files_cannot_hold_is_refused_as_a_parameter(tmp_path, capsys):
    """A review: ``generate workload --capacity 2**62`` passed the parameter's
    bounds, and the writer then refused it with a numpy array repr; the
    bound is the job stream's, 2**53, for every way to the generator."""
    from epochbench import cli
    import epochbench as eb
    with pytest.raises(ValueError, match=r"capacity must lie in \[1, 9007199254740992\]"):
        eb.generate("workload", model="feitelson96", jobs=10, k=3, capacity=2**62)
    out = tmp_path / "w.csv"
    with pytest.raises(SystemExit) as stop:                      # argparse's own exit: a usage error
        cli.main(["generate", "workload", "--model", "feitelson96", "--jobs", "10", "--k", "3",
                  "--capacity", str(2**53 + 1), "--out", str(out)])
    assert stop.value.code == 2
    assert "must lie in [1, 9007199254740992]" in capsys.readouterr().err and not out.exists()
    assert cli.main(["generate", "workload", "--model", "feitelson96", "--jobs", "10", "--k", "3",
                     "--capacity", str(2**53), "--out", str(out)]) == 0
    assert leinberger(n=5, k=2, count=1, capacity=[7, 2**62])[0].capacity.tolist() == [7, 2**62]   # instances: 2**62
