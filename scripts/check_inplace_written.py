"""Live interop: python-blosc2 4.14.1 opens every array b2nd changed in place and finds the
values, shape, codec, clevel, filters and attributes b2nd recorded; also every outcome of the
kill test (values and shape only).

usage: check_inplace_written.py DIR [KILLDIR]
  DIR: from `B2ND_INPLACE_OUT=DIR cargo test --test inplace changed_arrays_for_python`
  KILLDIR: from `B2ND_KILL_OUT=KILLDIR cargo test --test inplace_crash kill_at_random_points`
"""
import glob
import json
import os
import sys

import blosc2
import numpy as np


def same(arr, npy_path):
    want = np.load(npy_path)
    got = np.ascontiguousarray(arr[...])
    if tuple(arr.shape) != want.shape:
        return f"shape {arr.shape} != {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != {want.dtype}"
    if got.tobytes() != want.tobytes():
        return "values differ"
    return None


def main():
    d = sys.argv[1]
    failures = 0
    entries = json.load(open(os.path.join(d, "inplace.json")))
    for f in entries:
        path = os.path.join(d, f["path"])
        problems = []
        try:
            arr = blosc2.open(path, mode="r")
            p = same(arr, os.path.join(d, f["expected"]))
            if p:
                problems.append(p)
            cp = arr.cparams
            if cp.codec.name.lower() != f["codec"]:
                problems.append(f"codec {cp.codec.name} != {f['codec']}")
            if cp.clevel != f["clevel"]:
                problems.append(f"clevel {cp.clevel} != {f['clevel']}")
            filters = [x.name.lower() for x in cp.filters if x.name != "NOFILTER"]
            if filters != [x for x in f["filters"] if x != "nofilter"]:
                problems.append(f"filters {filters} != {f['filters']}")
            attrs = {k: v for k, v in arr.schunk.vlmeta.getall().items()}
            if attrs != f["attrs"]:
                problems.append(f"attributes {attrs} != {f['attrs']}")
        except Exception as e:  # noqa: BLE001 - report every failure
            problems.append(f"{type(e).__name__}: {e}")
        if problems:
            failures += 1
            print(f"FAIL {f['path']}: {'; '.join(problems)}")
    n = len(entries)
    kills = 0
    if len(sys.argv) > 2:
        for npy in sorted(glob.glob(os.path.join(sys.argv[2], "kill_*.npy"))):
            path = npy[: -len(".npy")]
            kills += 1
            try:
                p = same(blosc2.open(path, mode="r"), npy)
            except Exception as e:  # noqa: BLE001
                p = f"{type(e).__name__}: {e}"
            if p:
                failures += 1
                print(f"FAIL {os.path.basename(path)}: {p}")
    print(f"in-place changes: {n} arrays, {kills} kill-test outcomes checked by python-blosc2 "
          f"{blosc2.__version__}: {failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
