#!/usr/bin/env python3
"""python-blosc2's side of the peers benchmark: one measurement as a JSON line, with the same
command line, operations and checksum as bench/peers (see scripts/bench_peers.sh).

Usage: bench_peer_op.py python OP FILE --manifest M --threads T --reps N

OP: read (open + whole array, best of N), slice (10 items from the middle of the last
dimension, array open, best of N*40), box (the centred box of a quarter of every dimension,
best of N*10), write (blosc2.asarray with the file's chunks, blocks and cparams, threads T,
best of N, the output deleted after each repetition). `sum` is the wrapping sum of the
result's little-endian u64 words.
"""

import argparse
import json
import math
import os
import shutil
import time

import blosc2
import numpy as np


def checksum(b):
    pad = (-len(b)) % 8
    w = np.frombuffer(b + b"\0" * pad, dtype="<u8")
    return int(w.sum(dtype=np.uint64))


def best(reps, fn, before=None):
    """Best time of `reps` calls of `fn`, and its last result; `before` (untimed) ahead of
    each: writes remove the last output there (deleting a file is no part of a write)."""
    t, out = float("inf"), None
    for _ in range(max(1, reps)):
        if before is not None:
            before()
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def rm(p):
    if os.path.isdir(p):
        shutil.rmtree(p)
    elif os.path.exists(p):
        os.remove(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("impl")
    ap.add_argument("op")
    ap.add_argument("file")
    ap.add_argument("--manifest")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    blosc2.set_nthreads(a.threads)
    shape = tuple(blosc2.open(a.file).shape)
    # Logical bytes, as the other peers count them (the super-chunk's nbytes counts the
    # padding of edge chunks too: 7.4 % more for i4_3d_lz4's 500^3 in chunks of 64x128x256).
    arr0 = blosc2.open(a.file)
    nbytes = math.prod(shape) * arr0.dtype.itemsize
    try:
        if a.op == "read":
            s, x = best(a.reps, lambda: blosc2.open(a.file)[...])
        elif a.op in ("slice", "box"):
            arr = blosc2.open(a.file)
            if a.op == "slice":
                k = max(0, shape[-1] // 2 - 5)
                idx = tuple(slice(d // 2, d // 2 + 1) for d in shape[:-1]) + (
                    slice(k, min(shape[-1], k + 10)),)
            else:
                idx = tuple(slice((d - max(1, d // 4)) // 2, (d - max(1, d // 4)) // 2 + max(1, d // 4))
                            for d in shape)
            s, x = best(a.reps * 40 if a.op == "slice" else a.reps * 10, lambda: arr[idx])
        elif a.op == "write":
            src = blosc2.open(a.file)
            data = src[...]
            cp = src.schunk.cparams
            cp.nthreads = a.threads
            out = a.file + ".python.peerwrite"

            def write():
                blosc2.asarray(data, urlpath=out, mode="w", chunks=src.chunks, blocks=src.blocks,
                               cparams=cp, contiguous=src.schunk.contiguous)
            s, _ = best(a.reps, write, before=lambda: rm(out))
            # The last write is left for bench_peers.sh to check (scripts/bench_check_write.py).
            print(json.dumps({"ok": True, "seconds": s, "mibs": nbytes / (1 << 20) / s}))
            return
        else:
            raise SystemExit(f"unknown op {a.op}")
        b = np.ascontiguousarray(x).tobytes()
        r = {"ok": True, "seconds": s, "bytes": len(b), "sum": str(checksum(b))}
        if a.op == "read":
            r["mibs"] = nbytes / (1 << 20) / s
        print(json.dumps(r))
    except Exception as e:  # noqa: BLE001 (reported as the peer's failure)
        print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}))


if __name__ == "__main__":
    main()
