"""Randomized differential test of the CTables b2nd writes against python-blosc2's own.

`B2ND_RANDOM_TABLES=DIR B2ND_TABLE_SEED=S cargo test --test table_write random_tables_read_back`
writes random tables (numeric and bool columns, NaN runs, null runs, 1 to 300 000 rows, .b2d
and .b2z). For each, python-blosc2 4.14.1 writes its own copy from the values it reads out of
b2nd's (`CTable.extend`, closed so that it builds its default SUMMARY indexes), then:
the indexed columns are the same, each descriptor equals python's but for the geometry, the
stored records equal python's `_compute_segment_summaries` of b2nd's column (null-aware),
and for random predicates on every column `where()` returns the same rows on b2nd's table as
on its own. Whether python takes the summary-index path is counted for both: its cost model
weighs segment sizes, and python lays a table's columns out by its growing capacity (chunks of
2^20 rows), b2nd by the size written, so the choice may differ per predicate; the run fails if
python never uses b2nd's indexes while it uses its own.

Any error while building or checking a case fails the run (no case is skipped); the run
prints how many predicates it compared and fails under a floor.

Usage: python scripts/diff_tables.py DIR
"""

import dataclasses
import os
import random
import sys

import blosc2
import numpy as np
from table_summaries import compare_summaries

assert blosc2.__version__ == "4.14.1", blosc2.__version__
d = sys.argv[1]
rng = random.Random(int(os.environ.get("B2ND_TABLE_SEED", "0")))
KINDS = {"i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8",
         "u2": "uint16", "u4": "uint32", "u8": "uint64", "f4": "float32", "f8": "float64",
         "b1": "bool"}
tables = compared = used_b2nd = used_python = 0
failures = []

for name in sorted(os.listdir(d)):
    if not name.startswith("rt") or name.startswith("rt_py"):
        continue
    t = blosc2.open(os.path.join(d, name), mode="r")
    n = len(t)
    cols = t.col_names
    fields, data = [], {}
    for c in cols:
        arr = t[c].to_numpy()
        nulls = np.asarray(t[c].is_null())
        nullable = bool(t._schema.columns_by_name[c].spec.nullable) if hasattr(
            t._schema.columns_by_name[c].spec, "nullable") else False
        spec = getattr(blosc2, KINDS[arr.dtype.str[1:]])
        ann = {"f": float, "b": bool}.get(arr.dtype.kind, int)
        if nullable:
            fields.append((c, ann, blosc2.field(spec(nullable=True, null_storage="mask"),
                                                   default=None)))
            data[c] = np.ma.masked_array(arr, mask=nulls)
        else:
            fields.append((c, ann, blosc2.field(spec(), default=ann(0))))
            data[c] = arr
    Row = dataclasses.make_dataclass("Row", fields)
    ppath = os.path.join(d, "rt_py_" + name.split(".")[0] + ".b2d")
    blosc2.remove_urlpath(ppath)
    p = blosc2.CTable(Row, urlpath=ppath, mode="w")
    if any(isinstance(v, np.ma.MaskedArray) for v in data.values()):
        rows = [tuple(None if (isinstance(data[c], np.ma.MaskedArray) and data[c].mask[i])
                      else data[c].data[i].item() if isinstance(data[c], np.ma.MaskedArray)
                      else data[c][i].item() for c in cols) for i in range(n)]
        p.extend(rows)
    else:
        p.extend(data)
    p.close()
    p = blosc2.open(ppath, mode="r")
    tables += 1
    where = f"{name} (n={n}, columns {[(c, t[c].to_numpy().dtype.str) for c in cols]})"
    try:
        compare_summaries(t, p)
        for c in cols:
            vals = t[c].to_numpy()
            for _ in range(4):
                v = vals[rng.randrange(n)].item()
                if isinstance(v, float) and v != v:
                    v = 1e30  # above every value: a predicate segments can all be skipped for
                op = rng.choice([">", "<", "==", ">=", "<="])
                got = {}
                for who, tab in (("b2nd", t), ("python", p)):
                    col = tab[c]
                    e = {">": col > v, "<": col < v, "==": col == v, ">=": col >= v,
                         "<=": col <= v}[op]
                    used = tab._try_index_where(e) is not None
                    got[who] = (used, tab.where(e)["row"].to_numpy().tolist())
                compared += 1
                used_b2nd += got["b2nd"][0]
                used_python += got["python"][0]
                assert got["b2nd"][1] == got["python"][1], (c, op, v, len(got["b2nd"][1]),
                                                            len(got["python"][1]))
    except AssertionError as e:
        failures.append(f"{where}: {e}")

print(f"diff_tables: {tables} tables, {compared} predicates compared, same rows required; python "
      f"took the summary-index path on {used_b2nd} of them on b2nd's tables, {used_python} on its "
      f"own (its cost model weighs segment sizes, and python lays out its columns by capacity)")
if used_python and not used_b2nd:
    failures.append("python never used b2nd's summary indexes where it used its own")
for f in failures:
    print("FAIL", f[:1500])
floor = tables * 4
if tables == 0 or compared < floor:
    print(f"diff_tables: {compared} predicates compared, the floor is {floor}")
    sys.exit(1)
print(f"{tables - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
