#!/usr/bin/env python3
"""Time python-blosc2 in-process on the files bench_make_files.py made.

Usage: bench_python.py OUTDIR [--threads N] [--reps N] [--slice-reps N] [--write-reps N]
                      [--json OUT.json] [--only NAME[,NAME..]] [--no-write]

For each file (best of --reps, after one untimed warm-up so the file is in the page cache):
  read   blosc2.open(path)[...]      open + whole-array read into a fresh NumPy array
  slice  arr[..., k:k+10]            10 items from the middle (the last dimension; the other
                                     indices at their middle), arr already open; best of
                                     --slice-reps
  write  blosc2.asarray(x, urlpath=..., mode="w", chunks, blocks, cparams, contiguous) with
         the file's own chunks, blocks and cparams (threads set to N); the output goes next
         to the input and is deleted after each repetition (not timed)
MiB/s are of the logical nbytes. Also records AnonHugePages of this process while a freshly
read array is alive (NumPy madvise()s large allocations for transparent huge pages).
Prints JSON (and writes it to --json).
"""

import argparse
import json
import os
import shutil
import sys
import time

import blosc2
import numpy as np

NAMES = ["f8_2d.b2nd", "i4_3d_lz4.b2nd", "f4_1d_bytedelta.b2nd", "u_strings.b2nd", "sparse_f8.b2nd"]
MIB = 1 << 20


def anon_huge_kib():
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rm(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def middle_slice(shape):
    """Index tuple of 10 items in the middle of the last dimension, as b2nd's example does."""
    idx = tuple(s // 2 for s in shape[:-1])
    n = shape[-1]
    k = max(0, n // 2 - 5)
    return idx + (slice(k, min(n, k + 10)),), [s // 2 for s in shape[:-1]] + [k]


def best(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
    return min(times), times


def bench_file(path, args):
    r = {}
    a = blosc2.open(path)
    nbytes = int(a.nbytes)
    r["nbytes"] = nbytes
    r["shape"] = list(a.shape)

    # Whole-array read (open included), fresh array each time.
    x = blosc2.open(path)[...]          # warm-up: page cache, thread pool
    r["huge_kib_after_read"] = anon_huge_kib()
    del x
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        x = blosc2.open(path)[...]
        t = time.perf_counter() - t0
        times.append(t)
        del x
    r["read_s"] = min(times)
    r["read_all_s"] = [round(t, 4) for t in times]
    r["read_mibs"] = nbytes / MIB / min(times)

    # Small slice.
    key, start = middle_slice(a.shape)
    r["slice_start"] = start
    a[key]
    ts, _ = best(lambda: a[key], args.slice_reps)
    r["slice_us"] = ts * 1e6

    # Whole-array write with the file's own parameters.
    if not args.no_write:
        x = a[...]
        cp = a.schunk.cparams
        cp.nthreads = args.threads
        out = path.rstrip("/") + ".pywrite"
        rm(out)
        times = []
        for _ in range(args.write_reps):
            t0 = time.perf_counter()
            w = blosc2.asarray(x, urlpath=out, mode="w", chunks=a.chunks, blocks=a.blocks,
                               cparams=cp, contiguous=a.schunk.contiguous)
            t = time.perf_counter() - t0
            times.append(t)
            r["write_cbytes"] = int(w.schunk.cbytes)
            del w
            rm(out)
        r["write_s"] = min(times)
        r["write_all_s"] = [round(t, 4) for t in times]
        r["write_mibs"] = nbytes / MIB / min(times)
        del x
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--slice-reps", type=int, default=200)
    ap.add_argument("--write-reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--only")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    blosc2.set_nthreads(args.threads)
    names = args.only.split(",") if args.only else NAMES
    res = {
        "tool": "python-blosc2",
        "python_blosc2": blosc2.__version__,
        "c_blosc2": blosc2.blosclib_version,
        "numpy": np.__version__,
        "threads": args.threads,
        "reps": args.reps,
        "files": {},
    }
    for name in names:
        path = os.path.join(args.outdir, name)
        if not os.path.exists(path):
            print(f"{name}: missing, skipped", file=sys.stderr)
            continue
        r = bench_file(path, args)
        res["files"][name] = r
        msg = f"{name}: read {r['read_mibs']:.0f} MiB/s, slice {r['slice_us']:.0f} us"
        if "write_mibs" in r:
            msg += f", write {r['write_mibs']:.0f} MiB/s"
        print(msg, file=sys.stderr)
    text = json.dumps(res, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
