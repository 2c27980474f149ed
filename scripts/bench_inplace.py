"""Benchmark in-place changes, b2nd against python-blosc2 4.14.1, on the same files and
threads: appending ROWS slices of 1 MiB one at a time, and overwriting a 1 %
region of a 600 MB array. Each side starts from a copy of the same file; values written are
the same; both results are read back and compared.

usage: python scripts/bench_inplace.py target/release/examples/bench_inplace WORKDIR [ROWS] [THREADS]
"""
import json
import os
import shutil
import subprocess
import sys
import time

import blosc2
import numpy as np

BIN, WORK = sys.argv[1], sys.argv[2]
ROWS = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
THREADS = int(sys.argv[4]) if len(sys.argv) > 4 else 2
ITEMS = 131072  # one row of f8 = 1 MiB
os.makedirs(WORK, exist_ok=True)
blosc2.set_nthreads(THREADS)
results = []


def rust(*args):
    out = subprocess.run([BIN, *map(str, args)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def same(p1, p2):
    a, b = blosc2.open(p1, mode="r"), blosc2.open(p2, mode="r")
    assert a.shape == b.shape, (a.shape, b.shape)
    step = max(1, a.shape[0] // 50)
    for r in range(0, a.shape[0], step):
        assert np.array_equal(a[r], b[r]), r


def size(p):
    return os.path.getsize(p)


def append_case(chunk_rows):
    base = os.path.join(WORK, f"append_c{chunk_rows}.b2nd")
    blosc2.zeros((0, ITEMS), dtype="<f8", urlpath=base, mode="w", chunks=(chunk_rows, ITEMS),
                  blocks=(1, 32768))
    py, rs, rs_ns = base + ".py", base + ".rs", base + ".rs-nosync"
    shutil.copy(base, py)
    shutil.copy(base, rs)
    shutil.copy(base, rs_ns)
    a = blosc2.open(py, mode="a")
    i = np.arange(ITEMS, dtype=np.uint64)
    frac = np.arange(ITEMS) / ITEMS
    rows = [r + frac + ((i * np.uint64(2654435761) + np.uint64(r * 40503)) % np.uint64(1000)) / 1e6
            for r in range(ROWS)]
    t = time.perf_counter()
    for r in range(ROWS):
        a.resize((r + 1, ITEMS))
        a[r] = rows[r]
    py_s = time.perf_counter() - t
    del a
    got = rust("append", rs, ROWS, ITEMS, THREADS)
    # b2nd with Durability::Process: no syncs, as python-blosc2 (still crash-safe under kill).
    got_ns = rust("append", rs_ns, ROWS, ITEMS, THREADS, "process")
    same(py, rs)
    same(py, rs_ns)
    b = blosc2.open(rs, mode="r")
    assert np.array_equal(b[ROWS - 1], rows[ROWS - 1])
    del b
    comp = rust("compact", rs)
    results.append({"case": f"append {ROWS} x 1 MiB rows, chunks ({chunk_rows}, {ITEMS})",
                    "python_s": py_s, "b2nd_s": got["seconds"],
                    "python_bytes": size(py), "b2nd_bytes": got["bytes"],
                    "b2nd_compact_s": comp["seconds"], "b2nd_compacted_bytes": comp["bytes"],
                    "b2nd_nosync_s": got_ns["seconds"]})
    same(py, rs)
    for p in (base, py, rs, rs_ns):
        os.remove(p)


def overwrite_case():
    base = os.path.join(WORK, "big_f8.b2nd")
    shape = (7500, 10000)  # 600 MB of f8
    if not os.path.exists(base):
        x = np.add.outer(np.linspace(0, 1, shape[0]), np.sin(np.linspace(0, 50, shape[1])))
        blosc2.asarray(x, urlpath=base, mode="w", chunks=(250, 1000), blocks=(25, 1000))
    # A 1 % box: 750 x 1000 items, not aligned with the chunks.
    r0, r1, c0, c1 = 1010, 1760, 2020, 3020
    vals = -(np.arange((r1 - r0) * (c1 - c0)) % 1000).astype("<f8").reshape(r1 - r0, c1 - c0)
    py, rs = base + ".py", base + ".rs"
    shutil.copy(base, py)
    shutil.copy(base, rs)
    a = blosc2.open(py, mode="a")
    t = time.perf_counter()
    a[r0:r1, c0:c1] = vals
    py_s = time.perf_counter() - t
    del a
    got = rust("overwrite", rs, r0, r1, c0, c1, THREADS)
    b1, b2 = blosc2.open(py, mode="r"), blosc2.open(rs, mode="r")
    assert np.array_equal(b1[r0 - 5:r1 + 5, c0 - 5:c1 + 5], b2[r0 - 5:r1 + 5, c0 - 5:c1 + 5])
    results.append({"case": "overwrite a 1 % box [1010:1760, 2020:3020] of a 600 MB f8 array (7500 x 10000, chunks 250 x 1000)",
                    "python_s": py_s, "b2nd_s": got["seconds"],
                    "python_bytes": size(py), "b2nd_bytes": got["bytes"]})
    os.remove(py)
    os.remove(rs)


append_case(1)
append_case(4)
overwrite_case()
print(f"python-blosc2 {blosc2.__version__}, {THREADS} threads, {os.cpu_count()} cores")
print("| case | python-blosc2 s | b2nd s | speed ratio (python / b2nd) | file MB python / b2nd |")
print("|---|---|---|---|---|")
for r in results:
    extra = ""
    if "b2nd_compact_s" in r:
        extra = f" (b2nd after compact(): {r['b2nd_compacted_bytes'] / 1e6:.0f} MB in {r['b2nd_compact_s']:.2f} s)"
    if "b2nd_nosync_s" in r:
        extra += (f"; b2nd with Durability::Process (no syncs, as python): {r['b2nd_nosync_s']:.3f} s, "
                  f"{r['python_s'] / r['b2nd_nosync_s']:.2f}x")
    print(f"| {r['case']} | {r['python_s']:.3f} | {r['b2nd_s']:.3f} | {r['python_s'] / r['b2nd_s']:.2f}x | "
          f"{r['python_bytes'] / 1e6:.0f} / {r['b2nd_bytes'] / 1e6:.0f}{extra} |")
print(json.dumps(results))
