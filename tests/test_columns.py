"""The numpy job table (instances/table.py) and modules loaded on first use
(instances/lazy.py): what the pandas-free simulation path stands on."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from epochbench.instances.lazy import lazy_module
from epochbench.instances.table import Columns, as_columns, narrowest_int


def table() -> Columns:
    return Columns({"id": np.array([3, 1, 2]), "t": np.array([0.5, np.nan, 2.0]), "ok": np.array([True, False, True])})


def test_columns_select_take_mask_assign_share_or_copy():
    t = table()
    assert len(t) == 3 and t.columns == ["id", "t", "ok"] and "t" in t and "x" not in t
    assert t["id"] is t.select(["id"])["id"]                        # select shares the arrays
    assert t.take([2, 0])["id"].tolist() == [2, 3]
    assert t.mask([True, True, True]) is t and t.mask([False, True, False])["id"].tolist() == [1]
    u = t.assign(w=np.arange(3))
    assert u.columns == ["id", "t", "ok", "w"] and t.columns == ["id", "t", "ok"]
    t.insert(1, "z", np.zeros(3))
    assert t.columns == ["id", "z", "t", "ok"]
    with pytest.raises(ValueError, match="has 2 rows"):
        t["bad"] = np.arange(2)
    with pytest.raises(ValueError, match="1-D"):
        t["bad"] = np.zeros((3, 2))


def test_frame_round_trip_and_csv_as_pandas_reads_it(tmp_path):
    t = table()
    df = t.to_frame()
    pd.testing.assert_frame_equal(as_columns(df).to_frame(), df)
    path = tmp_path / "t.csv"
    t.write_csv(str(path))
    assert path.read_text().splitlines()[0] == "id,t,ok"                 # a bare header, as pandas writes it
    back = pd.read_csv(path)
    assert back["id"].tolist() == [3, 1, 2] and np.isnan(back["t"][1]) and back["ok"].tolist() == [True, False, True]
    text = Columns({"name": np.array(["a,b", "c"], dtype=object), "n": np.array([1, 2])}).csv_bytes()
    assert pd.read_csv(pd.io.common.BytesIO(text))["name"].tolist() == ["a,b", "c"]   # text quoted where needed
    assert Columns({"a": np.array([], dtype=float)}).csv_bytes() == b"a\n"


@pytest.mark.parametrize("values, dtype", [([-1, 5], np.int8), ([0, 300], np.int16), ([-(2**20), 1], np.int32),
                                           ([0, 2**40], np.int64), ([], np.int8)])
def test_narrowest_int(values, dtype):
    out = narrowest_int(np.array(values, dtype=np.int64))
    assert out.dtype == dtype and out.tolist() == values


def test_lazy_module_imports_on_first_attribute():
    code = ("import sys\nfrom epochbench.instances.lazy import lazy_module\n"
            "m = lazy_module('wave')\nprint('wave' in sys.modules)\nm.open\nprint('wave' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
    assert lazy_module("json").dumps([1]) == "[1]"
