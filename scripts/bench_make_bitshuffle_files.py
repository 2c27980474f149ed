#!/usr/bin/env python3
"""BITSHUFFLE files for the filter-kernel benchmark, written by python-blosc2 4.14.1.

Usage: bench_make_bitshuffle_files.py OUTDIR

  f8_bits_lz4.b2nd       2-D <f8 4000 x 8660 (277 MB, the f8_2d signal of bench_make_files.py),
                         LZ4, [BITSHUFFLE], python-blosc2's default chunks and blocks
  f8_bits_zstd.b2nd      the same with ZSTD
  i4_shuf_bits_lz4.b2nd  1-D <i4 6e7 (240 MB), LZ4, [SHUFFLE, BITSHUFFLE]
  i2_bits_lz4.b2nd       1-D <i2 6e7 (120 MB), LZ4, [BITSHUFFLE]

Read them with scripts/bench_simd_ab.sh (b2nd's kernels against c-blosc2's).
"""

import os
import sys

import blosc2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_make_files import smooth_2d  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    x = smooth_2d(4000, 8660, rng, noise=0.01)
    bits = dict(filters=[blosc2.Filter.BITSHUFFLE], filters_meta=[0], nthreads=2)
    for codec, name in [(blosc2.Codec.LZ4, "lz4"), (blosc2.Codec.ZSTD, "zstd")]:
        cp = blosc2.CParams(codec=codec, **bits)
        blosc2.asarray(x, urlpath=f"{out}/f8_bits_{name}.b2nd", mode="w", cparams=cp)
    n = 60_000_000
    i = np.arange(n, dtype=np.int32) // 7 + rng.integers(0, 16, n, dtype=np.int32)
    cp = blosc2.CParams(
        codec=blosc2.Codec.LZ4,
        filters=[blosc2.Filter.SHUFFLE, blosc2.Filter.BITSHUFFLE],
        filters_meta=[0, 0],
        nthreads=2,
    )
    blosc2.asarray(i, urlpath=f"{out}/i4_shuf_bits_lz4.b2nd", mode="w", cparams=cp)
    cp = blosc2.CParams(codec=blosc2.Codec.LZ4, **bits)
    blosc2.asarray(
        i.astype(np.int16), urlpath=f"{out}/i2_bits_lz4.b2nd", mode="w", cparams=cp
    )
    for f in ["f8_bits_lz4", "f8_bits_zstd", "i4_shuf_bits_lz4", "i2_bits_lz4"]:
        a = blosc2.open(f"{out}/{f}.b2nd")
        print(f, a.shape, a.chunks, a.blocks, round(a.schunk.cratio, 3))


if __name__ == "__main__":
    main()
