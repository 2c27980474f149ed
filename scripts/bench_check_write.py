#!/usr/bin/env python3
"""Check one peer's write for scripts/bench_peers.sh: read back by python-blosc2, compared.

Usage: bench_check_write.py SOURCE.b2nd WRITTEN

Prints one JSON line: `same` (the written array's shape, dtype and C-order bytes equal the
source's, read by python-blosc2 4.14.1), `params` (chunks, blocks, codec, clevel and filters
equal the source's), `disk_bytes` (the written file's size, or the sum of a sparse frame's
files) and `error` when python-blosc2 cannot read it.
"""
import json
import os
import sys

import blosc2


def disk_bytes(p):
    if os.path.isdir(p):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs)
    return os.path.getsize(p)


def main():
    src_path, out_path = sys.argv[1], sys.argv[2]
    r = {"disk_bytes": disk_bytes(out_path)}
    try:
        src, out = blosc2.open(src_path), blosc2.open(out_path)
        a, b = src[...], out[...]
        r["same"] = bool(a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes())
        cs, co = src.schunk.cparams, out.schunk.cparams
        r["params"] = bool(
            tuple(src.chunks) == tuple(out.chunks) and tuple(src.blocks) == tuple(out.blocks)
            and cs.codec == co.codec and cs.clevel == co.clevel
            and [f for f in cs.filters if f != blosc2.Filter.NOFILTER]
            == [f for f in co.filters if f != blosc2.Filter.NOFILTER])
    except Exception as e:  # noqa: BLE001 (reported)
        r.update(same=False, error=f"{type(e).__name__}: {e}")
    print(json.dumps(r))


if __name__ == "__main__":
    main()
