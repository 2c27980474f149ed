"""Check, with python-blosc2, the CTables b2nd wrote (tests/table_write.rs with
B2ND_TABLE_OUT=DIR): each opens as a CTable with the expected rows, columns, values and
nulls (the values are the test's own formulas, recomputed here).

Usage: python scripts/check_tables_written.py DIR
"""

import os
import sys

import blosc2
import numpy as np

d = sys.argv[1]
n = 1000
passed = failed = 0
for name in ["t.b2z", "t.b2d"]:
    try:
        t = blosc2.open(os.path.join(d, name), mode="r")
        assert isinstance(t, blosc2.CTable), type(t)
        assert len(t) == n
        assert t.col_names == ["id", "score", "small", "flag", "name", "text", "when", "xy"], t.col_names
        assert np.array_equal(t["id"].to_numpy(), np.arange(n, dtype="i8"))
        valid = np.array([i % 7 != 3 for i in range(n)])
        assert np.array_equal(~t["score"].is_null(), valid)
        score = t["score"].to_numpy()
        assert np.array_equal(score[valid], (np.arange(n, dtype="f4") / 4)[valid])
        assert np.array_equal(t["small"].to_numpy(), (np.arange(n) % 251).astype("u1"))
        assert np.array_equal(t["flag"].to_numpy(), np.arange(n) % 2 == 0)
        names = [f"row {i} é" for i in range(n)]
        assert t["name"].to_numpy().tolist() == names
        text = t["text"][:]
        got = [None if np.ma.getmaskarray(text)[i] else str(text[i]) for i in range(n)]
        assert got == [None if i % 5 == 0 else names[i] for i in range(n)], got[:6]
        when = t["when"].to_numpy()
        assert when.dtype == np.dtype("<M8[ms]"), when.dtype
        assert np.array_equal(when.astype("i8"), 1_700_000_000_000 + np.arange(n))
        xy = t["xy"].to_numpy()
        assert xy.shape == (n, 2) and np.array_equal(xy.ravel(), np.arange(2 * n, dtype="f4"))
        passed += 1
    except Exception as e:
        failed += 1
        print(f"FAIL {name}: {type(e).__name__}: {e}")
print(f"tables written: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
