#!/usr/bin/env python3
"""Create the benchmark suite of .b2nd files with python-blosc2 (4.14.1, see requirements.txt).

Usage: bench_make_files.py OUTDIR [--scale S]

Writes into OUTDIR (about 2 GB logical, fixed seeds, 2 compression threads):

  f8_2d.b2nd            noisy 2-D <f8, 8660 x 8660 (~600 MB), python-blosc2's DEFAULT cparams
                        and DEFAULT chunks/blocks (none given)
  i4_3d_lz4.b2nd        3-D <i4, 500^3 (~500 MB), LZ4, chunks (64,128,256) blocks (8,32,256):
                        chunks do not span the trailing dimensions and do not divide the shape
  f4_1d_bytedelta.b2nd  1-D <f4, 1e8 (~400 MB), zstd + [SHUFFLE, BYTEDELTA(meta 4)]
  u_strings.b2nd        1-D <U16, 3,276,800 items (~200 MB), default cparams (python-blosc2
                        picks SHUFFLE with filters_meta 4 for <U)
  sparse_f8.b2nd/       sparse frame (contiguous=False) <f8, 6000 x 6250 (~300 MB), default
                        cparams and geometry
  walk_f8_3d.b2nd       3-D <f8 random walks, 240 x 512 x 512 (~480 MiB), zstd 5 + SHUFFLE
  i8_2d_bitshuffle_lz4.b2nd  2-D <i8 counters, 4096 x 6144 (~192 MiB), LZ4 5 + BITSHUFFLE
  u2_3d_bytedelta.b2nd  3-D <u2 image stack, 72 x 1024 x 1024 (~144 MiB), zstd 3 +
                        [SHUFFLE, BYTEDELTA(meta 2)]
  f4_1d_blosclz.b2nd    1-D <f4 rounded walk, 5e7 (~191 MiB), BloscLZ 5 + SHUFFLE

and OUTDIR/manifest.json with the JSON summary that is also printed on stdout. --scale
shrinks every first dimension (e.g. 0.05 for a quick smoke run).
"""

import argparse
import json
import os
import shutil
import sys
import time

import blosc2
import numpy as np

NTHREADS = 2


def smooth_2d(n0, n1, rng, noise, decimals=None):
    """A smooth 2-D signal plus Gaussian noise (float64), built row block by row block."""
    i = np.arange(n0, dtype=np.float64)[:, None]
    j = np.arange(n1, dtype=np.float64)[None, :]
    x = np.sin(2 * np.pi * i / 1000.0) * np.cos(2 * np.pi * j / 700.0)
    x += 0.25 * np.sin(2 * np.pi * (i + j) / 5000.0)
    x += rng.normal(0.0, noise, size=(n0, n1))
    if decimals is not None:
        np.round(x, decimals, out=x)
    return x


def make_f8_2d(rng, scale):
    n0 = max(1, int(8660 * scale))
    x = smooth_2d(n0, 8660, rng, noise=0.01)
    return x, {}


def make_i4_3d(rng, scale):
    n0 = max(1, int(500 * scale))
    i = np.arange(n0, dtype=np.int32)[:, None, None]
    j = np.arange(500, dtype=np.int32)[None, :, None]
    k = np.arange(500, dtype=np.int32)[None, None, :]
    x = (i * 1000 + j * 37 + (k // 4) * 3).astype(np.int32)
    x += rng.integers(0, 16, size=x.shape, dtype=np.int32)
    kw = dict(
        chunks=(min(64, n0), 128, 256),
        blocks=(min(8, n0), 32, 256),
        cparams=blosc2.CParams(codec=blosc2.Codec.LZ4, nthreads=NTHREADS),
    )
    return x, kw


def make_f4_1d(rng, scale):
    n = max(1, int(100_000_000 * scale))
    # A random walk: neighbouring values are close, which is what BYTEDELTA is for.
    x = np.cumsum(rng.normal(0.0, 1.0, size=n).astype(np.float32), dtype=np.float32)
    cp = blosc2.CParams(
        codec=blosc2.Codec.ZSTD,
        filters=[blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA],
        filters_meta=[0, 4],
        nthreads=NTHREADS,
    )
    return x, dict(cparams=cp)


def make_u_strings(rng, scale):
    n = max(1, int(3_276_800 * scale))
    words = np.array(
        ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
         "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa"]
    )
    # A vocabulary of 50,000 distinct labels such as "kilo-01234", drawn with a skewed law.
    ids = np.arange(50_000)
    vocab = np.char.add(np.char.add(words[ids % len(words)], "-"),
                        np.char.zfill(ids.astype(str), 5)).astype("<U16")
    pick = np.minimum(rng.zipf(1.3, size=n) - 1, len(vocab) - 1)
    x = vocab[pick]
    assert x.dtype == np.dtype("<U16")
    return x, {}


def make_sparse_f8(rng, scale):
    n0 = max(1, int(6000 * scale))
    x = smooth_2d(n0, 6250, rng, noise=0.01, decimals=3)
    return x, dict(contiguous=False)


def make_walk_f8_3d(rng, scale):
    n0 = max(1, int(240 * scale))
    # A random walk along the last axis of every (i, j) row: smooth, with 8 noisy low bytes.
    x = np.cumsum(rng.normal(0.0, 1.0, size=(n0, 512, 512)), axis=2)
    cp = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, filters=[blosc2.Filter.SHUFFLE],
                        filters_meta=[0], nthreads=NTHREADS)
    return x, dict(cparams=cp)


def make_i8_2d_bitshuffle(rng, scale):
    n0 = max(1, int(4096 * scale))
    # Counters: large offsets per row, small increments (most high bits constant).
    inc = rng.integers(0, 64, size=(n0, 6144), dtype=np.int64)
    x = np.cumsum(inc, axis=1) + (np.arange(n0, dtype=np.int64) << 32)[:, None]
    cp = blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=5, filters=[blosc2.Filter.BITSHUFFLE],
                        filters_meta=[0], nthreads=NTHREADS)
    return x, dict(cparams=cp)


def make_u2_3d_bytedelta(rng, scale):
    n0 = max(1, int(72 * scale))
    # A stack of 16-bit images: a smooth field per plane plus sensor noise.
    j = np.arange(1024, dtype=np.float32)[:, None]
    k = np.arange(1024, dtype=np.float32)[None, :]
    x = np.empty((n0, 1024, 1024), dtype=np.uint16)
    for i in range(n0):
        f = 20000 + 8000 * np.sin((j + 3 * i) / 97.0) * np.cos((k - 2 * i) / 131.0)
        x[i] = (f + rng.normal(0, 40, size=f.shape)).astype(np.uint16)
    cp = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=3,
                        filters=[blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA],
                        filters_meta=[0, 2], nthreads=NTHREADS)
    return x, dict(cparams=cp)


def make_f4_1d_blosclz(rng, scale):
    n = max(1, int(50_000_000 * scale))
    x = np.cumsum(rng.normal(0.0, 0.01, size=n).astype(np.float32), dtype=np.float32)
    np.round(x, 2, out=x)
    cp = blosc2.CParams(codec=blosc2.Codec.BLOSCLZ, clevel=5, filters=[blosc2.Filter.SHUFFLE],
                        filters_meta=[0], nthreads=NTHREADS)
    return x, dict(cparams=cp)


SUITE = [
    ("f8_2d.b2nd", make_f8_2d, 1),
    ("i4_3d_lz4.b2nd", make_i4_3d, 2),
    ("f4_1d_bytedelta.b2nd", make_f4_1d, 3),
    ("u_strings.b2nd", make_u_strings, 4),
    ("sparse_f8.b2nd", make_sparse_f8, 5),
    # Kinds the files above do not have (writes with fast codecs).
    ("walk_f8_3d.b2nd", make_walk_f8_3d, 6),
    ("i8_2d_bitshuffle_lz4.b2nd", make_i8_2d_bitshuffle, 7),
    ("u2_3d_bytedelta.b2nd", make_u2_3d_bytedelta, 8),
    ("f4_1d_blosclz.b2nd", make_f4_1d_blosclz, 9),
]


def describe(path):
    a = blosc2.open(path)
    cp = a.schunk.cparams
    return {
        "shape": list(a.shape),
        "chunks": list(a.chunks),
        "blocks": list(a.blocks),
        "dtype": a.dtype.str,
        "nbytes": int(a.nbytes),
        "cbytes": int(a.schunk.cbytes),
        "ratio": round(a.nbytes / max(1, a.schunk.cbytes), 3),
        "nchunks": int(a.schunk.nchunks),
        "codec": cp.codec.name,
        "clevel": int(cp.clevel),
        "filters": [f.name for f in cp.filters],
        "filters_meta": list(cp.filters_meta),
        "contiguous": bool(a.schunk.contiguous),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", nargs="*", help="make only these files (others kept)")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    blosc2.set_nthreads(NTHREADS)
    summary = {
        "python_blosc2": blosc2.__version__,
        "c_blosc2": blosc2.blosclib_version,
        "numpy": np.__version__,
        "nthreads": NTHREADS,
        "scale": args.scale,
        "files": {},
    }
    old = {}
    mpath = os.path.join(args.outdir, "manifest.json")
    if args.only and os.path.exists(mpath):
        old = json.load(open(mpath))["files"]
    for name, make, seed in SUITE:
        path = os.path.join(args.outdir, name)
        if args.only and name not in args.only:
            if name in old:
                summary["files"][name] = old[name]
            continue
        t0 = time.perf_counter()
        x, kw = make(np.random.default_rng(seed), args.scale)
        # Files with python-blosc2's default cparams get none: passing CParams() would replace
        # the dtype-dependent defaults (filters_meta 4 for <U). Threads come from set_nthreads.
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
        blosc2.asarray(x, urlpath=path, mode="w", **kw)
        del x
        d = describe(path)
        d["seconds_to_make"] = round(time.perf_counter() - t0, 1)
        summary["files"][name] = d
        print(f"{name}: {d['shape']} {d['dtype']} chunks {d['chunks']} blocks {d['blocks']} "
              f"ratio {d['ratio']}", file=sys.stderr)
    files = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in summary["files"].items())
    head = json.dumps({k: v for k, v in summary.items() if k != "files"})[:-1]
    text = head + ', "files": {\n' + files + "\n}}"
    json.loads(text)
    with open(os.path.join(args.outdir, "manifest.json"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
