"""Check, with python-blosc2, the CTables b2nd wrote (tests/table_write.rs with
B2ND_TABLE_OUT=DIR): each opens as a CTable with the expected rows, columns, values and
nulls (the values are the test's own formulas, recomputed here).

Summary indexes: b2nd writes the SUMMARY index python-blosc2 4.4+ builds by default for each
numeric and bool column. Checked here: the catalog lists exactly the columns python indexes
in its own copy of the table (written here by python-blosc2 from the same values), each
descriptor is python's own for that column but for the geometry (b2nd's column chunks and
blocks), the stored records equal python's `_compute_segment_summaries` of b2nd's column
(null-aware), python's `where()` takes the index path on b2nd's table (counted; at least 3 of
8 predicates on the 400 000-row table; per predicate it may choose otherwise than on its own
copy, since it weighs segment sizes and lays its own columns out by capacity), and answers
the same rows as on its own table for every predicate tried.

Usage: python scripts/check_tables_written.py DIR
"""

import os
import sys

import blosc2
import numpy as np

import dataclasses

from table_summaries import compare_summaries


@dataclasses.dataclass
class Row:
    id: int = blosc2.field(blosc2.int64())
    score: float = blosc2.field(blosc2.float32(nullable=True, null_storage="mask"), default=None)
    small: int = blosc2.field(blosc2.uint8(), default=0)
    flag: bool = blosc2.field(blosc2.bool(), default=False)



def check_summaries(t, python_path, n, valid):
    ids = np.arange(n, dtype="i8")
    score = (np.arange(n, dtype="f4") / 4)
    small = (np.arange(n) % 251).astype("u1")
    flag = np.arange(n) % 2 == 0
    p = blosc2.CTable(Row, urlpath=python_path, mode="w")
    p.extend([(int(i), float(score[i]) if valid[i] else None, int(small[i]), bool(flag[i]))
              for i in range(n)])
    p.close()
    p = blosc2.open(python_path, mode="r")
    assert compare_summaries(t, p) == ["flag", "id", "score", "small"]
    used_count = 0
    preds = [("id", ">", n - 10), ("id", "<", 3), ("id", "==", n // 2), ("score", ">", n / 4 - 10),
             ("score", "<=", 0.5), ("small", ">=", 250), ("flag", "==", True), ("id", ">", 5 * n)]
    for col, op, val in preds:
        rows = {}
        for who, tab in (("b2nd", t), ("python", p)):
            c = tab[col]
            e = {">": c > val, "<": c < val, "==": c == val, ">=": c >= val, "<=": c <= val}[op]
            used = tab._try_index_where(e) is not None
            r = tab.where(e)
            rows[who] = (used, r["id"].to_numpy().tolist())
        assert rows["b2nd"][1] == rows["python"][1], (col, op, val)
        used_count += rows["b2nd"][0]
    # python takes the summary path for some predicates (1000 rows make one segment; the big
    # table several, where the selective predicates on id prune).
    assert used_count >= (1 if n == 1000 else 3), used_count
    print(f"{n} rows: {len(preds)} predicates, python's where() "
          f"took the index path on {used_count} of them on b2nd's table")


d = sys.argv[1]
passed = failed = 0
for name, n in [("t.b2z", 1000), ("t.b2d", 1000), ("big.b2d", 400_000)]:
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
        check_summaries(t, os.path.join(d, "python_" + name), n, valid)
        passed += 1
    except Exception as e:
        failed += 1
        print(f"FAIL {name}: {type(e).__name__}: {e}")
print(f"tables written: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
