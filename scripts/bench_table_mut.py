"""Benchmark table changes, b2nd's TableMut against python-blosc2 4.14.1's own on copies of
the same CTable (a `.b2d` python writes: id int64, score float64 nullable with a mask, flag
bool; NROWS rows): appending ROWS rows in batches of BATCH (python: `extend` per batch, then
`close`), deleting K live rows in one call (python: `delete`, then `close`), setting `score`
of K live rows (python: column assignment, then `close`). Both sides make their rows before
timing; the tables are read back with python and compared. b2nd runs twice: with its
default durability (every file a change writes synced) and with `Durability::Process` (no
syncs, as python-blosc2). Prints python / b2nd time.

usage: python scripts/bench_table_mut.py target/release/examples/bench_table_mut WORKDIR \
    [NROWS] [ROWS] [BATCH] [K]
"""
import json
import os
import shutil
import subprocess
import sys
import time

import blosc2 as b2
import numpy as np

assert b2.__version__ == "4.14.1", b2.__version__

BIN, WORK = sys.argv[1], sys.argv[2]
NROWS = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
ROWS = int(sys.argv[4]) if len(sys.argv) > 4 else 1_000_000
BATCH = int(sys.argv[5]) if len(sys.argv) > 5 else 100_000
K = int(sys.argv[6]) if len(sys.argv) > 6 else 10_000
os.makedirs(WORK, exist_ok=True)


def row_values(start, n):
    """The rows the b2nd side makes (examples/bench_table_mut.rs `rows`)."""
    i = np.arange(start, start + n, dtype=np.int64)
    score = [None if v % 7 == 0 else v / 2.0 for v in i.tolist()]
    return {"id": i, "score": score, "flag": i % 2 == 0}


def make(path):
    from dataclasses import dataclass

    @dataclass
    class Row:
        id: int = b2.field(b2.int64())
        score: float = b2.field(b2.float64(nullable=True, null_storage="mask"), default=None)
        flag: bool = b2.field(b2.bool(), default=False)

    shutil.rmtree(path, ignore_errors=True)
    t = b2.CTable(Row, urlpath=path, mode="w")
    for s in range(0, NROWS, 100_000):
        t.extend(row_values(s, min(100_000, NROWS - s)))
    t.close()


def rust(*args):
    out = subprocess.run([BIN, *map(str, args)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["seconds"]


def picked(n, k):
    step = max(1, n // max(1, k))
    return list(range(0, n, step))[:k]


def python_append(path):
    batches = [row_values(NROWS + s, min(BATCH, ROWS - s)) for s in range(0, ROWS, BATCH)]
    t0 = time.perf_counter()
    t = b2.open(path, mode="a")
    for b in batches:
        t.extend(b)
    t.close()
    return time.perf_counter() - t0


def python_delete(path):
    rows = picked(NROWS, K)
    t0 = time.perf_counter()
    t = b2.open(path, mode="a")
    t.delete(rows)
    t.close()
    return time.perf_counter() - t0


def python_update(path):
    rows = picked(NROWS, K)
    values = np.array([r + 0.25 for r in rows])
    t0 = time.perf_counter()
    t = b2.open(path, mode="a")
    t["score"][rows] = values
    t.close()
    return time.perf_counter() - t0


def same(p1, p2):
    a, b = b2.open(p1, mode="r"), b2.open(p2, mode="r")
    assert a.nrows == b.nrows, (a.nrows, b.nrows)
    for c in ("id", "flag"):
        assert np.array_equal(a[c][:], b[c][:]), c
    sa, sb = a["score"][:], b["score"][:]
    assert np.array_equal(np.ma.getmaskarray(sa), np.ma.getmaskarray(sb))
    assert np.array_equal(np.ma.filled(sa, 0), np.ma.filled(sb, 0))


base = os.path.join(WORK, "base.b2d")
make(base)
results = []
for case, py, args in [
    ("append", python_append, (ROWS, BATCH)),
    ("delete", python_delete, (K,)),
    ("update", python_update, (K,)),
]:
    p_py, p_rs = os.path.join(WORK, case + ".py.b2d"), os.path.join(WORK, case + ".rs.b2d")
    for p in (p_py, p_rs):
        shutil.rmtree(p, ignore_errors=True)
        shutil.copytree(base, p)
    p_rs_p = os.path.join(WORK, case + ".rs-process.b2d")
    shutil.rmtree(p_rs_p, ignore_errors=True)
    shutil.copytree(base, p_rs_p)
    t_py = py(p_py)
    t_rs = rust(case, p_rs, *args)
    t_rs_p = rust(case, p_rs_p, *args, "process")
    same(p_py, p_rs)
    same(p_py, p_rs_p)
    results.append((case, t_py, t_rs, t_rs_p))
    print(f"{case}: python {t_py:.3f} s, b2nd {t_rs:.3f} s (Durability::Process {t_rs_p:.3f} s), "
          f"python / b2nd {t_py / t_rs:.2f}x ({t_py / t_rs_p:.2f}x)", flush=True)
print(json.dumps({"nrows": NROWS, "rows": ROWS, "batch": BATCH, "k": K,
                  "results": results}))
