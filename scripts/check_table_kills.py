"""python-blosc2 reads the tables a `kill -9` interrupted while b2nd's TableMut changed them
(tests/faults.rs with B2ND_FAULT_OUT=DIR) as b2nd reads them: each `NAME.b2d` beside
`NAME.json` (b2nd's live row count, column names, column `x`, every column's nulls, every
utf8 column's strings, and the values of its dictionary columns and columns of one msgpack
item per row) must give python-blosc2 the same row count (its `nrows` trusts the schema's
cached `n_rows` when present), the same columns, `x`, nulls, strings and values, whether the
kill left the old or the new table.

Usage: python scripts/check_table_kills.py DIR
"""

import json
import os
import sys

import blosc2 as b2
import numpy as np

assert b2.__version__ == "4.14.1", b2.__version__

out = sys.argv[1]
names = sorted(f[: -len(".json")] for f in os.listdir(out) if f.endswith(".json"))
assert names, f"no killed tables in {out}"
bad = []
for name in names:
    with open(os.path.join(out, name + ".json")) as f:
        want = json.load(f)
    t = b2.open(os.path.join(out, name + ".b2d"), mode="r")
    x = np.asarray(t["x"][:]).tolist() if "x" in t.col_names else None
    nulls = {c: [bool(v) for v in np.asarray(t[c].is_null())] for c in t.col_names}
    strings = {}
    for c in want.get("strings", {}):
        values = t[c][:]
        strings[c] = [None if n else str(v) for v, n in zip(np.asarray(values).tolist(), nulls[c])]
    values = {}
    for c in want.get("values", {}):
        cells = t[c][:]
        cells = cells.tolist() if isinstance(cells, np.ndarray) else list(cells)
        values[c] = [list(v) if isinstance(v, bytes) else v for v in cells]
    got = {"n_rows": t.nrows, "columns": list(t.col_names), "x": x, "nulls": nulls, "strings": strings,
           "values": values}
    for k in want:
        if got[k] != want[k]:
            bad.append(f"{name}: {k}: python {str(got[k])[:200]}, b2nd {str(want[k])[:200]}")
print(f"{len(names)} killed table changes: python-blosc2 reads {len(names) - len(bad)} as b2nd does")
if bad:
    print("\n".join(bad))
    sys.exit(1)
