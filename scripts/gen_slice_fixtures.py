#!/usr/bin/env python3
"""Generate the slice test fixtures of the `b2nd` crate with python-blosc2.

Usage:  python gen_slice_fixtures.py OUTDIR

Writes a few small arrays into OUTDIR, `NAME.raw` (the C-order bytes python-blosc2 reads for
the whole array) and `OUTDIR/cases.json`: per array, about 30 selections (fixed edge cases,
then seeded random ones with small results) in the command-line syntax of
`b2nd to-npy --slice` (e.g. `10:20,::3,-1`) with what python-blosc2 returns for `arr[key]`:
the shape and the C-order bytes (hex), or the Python exception for selections that must be
refused (out-of-range integers, too many indices). Every answer is also checked against
NumPy indexing of the source data.

Everything is deterministic: fixed seeds, explicit chunks/blocks, nthreads=1 (see
gen_fixtures.py); running it again gives byte-identical files.

Requires python-blosc2 4.14.1 (see requirements.txt).
"""

import json
import random
import sys
from pathlib import Path

import numpy as np

import blosc2

EXPECTED_BLOSC2 = "4.14.1"
F = blosc2.Filter
C = blosc2.Codec
CASES_PER_ARRAY = 30
# Largest expected result of a random case, in bytes (keeps cases.json small).
MAX_CASE_BYTES = 512

OUT = Path(".")


def cp(**kw):
    kw.setdefault("nthreads", 1)
    return blosc2.CParams(**kw)


def data_for(dtype, shape, seed):
    """Deterministic contents: distinct-ish values, so misplaced items show."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    dt = np.dtype(dtype)
    if dt.names:
        x = np.zeros(n, dtype=dt)
        x["a"] = rng.integers(-(2**31), 2**31 - 1, n)
        x["b"] = rng.normal(size=n)
        x["c"] = [bytes(rng.integers(97, 123, 3).astype("u1")) for _ in range(n)]
    elif dt.kind == "U":
        words = ["", "a", "xy", "abc", "\u00e9t\u00e9", "\u4e2d\u6587"]
        x = np.array([words[i] for i in rng.integers(0, len(words), n)], dtype=dt)
    elif dt.kind == "f":
        x = (np.arange(n) * 0.25 + rng.normal(size=n)).astype(dt)
    else:
        # Wrap around the type's range (int64 arithmetic, then truncation to the type).
        x = (np.arange(n, dtype=np.int64) * 7919 + rng.integers(0, 5, n)).astype(dt)
    return x.reshape(shape)


# name, shape, chunks, blocks, dtype, cparams, extra keyword arguments for asarray
ARRAYS = [
    # ragged last chunk; blocks divide neither the chunk nor the shape
    ("d1_i4", (1000,), (64,), (24,), "<i4", {}, {}),
    ("d2_f8_lz4", (37, 29), (10, 8), (4, 3), "<f8", {"codec": C.LZ4}, {}),
    ("d3_be_i2", (9, 11, 13), (4, 5, 6), (3, 2, 4), ">i2", {}, {}),
    ("d4_u1", (5, 6, 7, 8), (3, 4, 3, 5), (2, 3, 2, 2), "|u1", {}, {}),
    ("struct_2d", (23, 17), (8, 6), (3, 4), [("a", "<i4"), ("b", "<f8"), ("c", "S3")], {}, {}),
    ("scalar_0d", (), (), (), "<f4", {}, {}),
    ("empty_4x0x3", (4, 0, 3), (2, 1, 3), (1, 1, 2), "<i8", {}, {}),
    # DELTA after SHUFFLE: undone in Rust, the other blocks against block 0
    ("delta_rust_i8", (150, 7), (64, 7), (10, 7), "<i8",
     {"filters": [F.SHUFFLE, F.DELTA], "filters_meta": [0, 0]}, {}),
    # DELTA first: undone by c-blosc2
    ("delta_c_u4", (2000,), (500,), (64,), "<u4",
     {"filters": [F.DELTA, F.SHUFFLE], "filters_meta": [0, 0]}, {}),
    # python-blosc2's default cparams (None) for <U3: SHUFFLE with byte-group meta 4, undone
    # in Rust
    ("unicode_u3", (50, 9), (16, 4), (5, 3), "<U3", None, {}),
    ("bytedelta_f4", (60, 30), (25, 16), (7, 5), "<f4",
     {"filters": [F.SHUFFLE, F.BYTEDELTA], "filters_meta": [0, 4]}, {}),
    ("sparse_i4", (20, 21), (6, 8), (4, 3), "<i4", {"codec": C.BLOSCLZ}, {"contiguous": False}),
    # codecs decoded in Rust (ZLIB; LZ4 with a dictionary), filters undone in Rust after them.
    # (Not DELTA here: python-blosc2 4.14.1's whole read of a DELTA array with chunks that do
    # not span whole rows is itself wrong, whatever the codec.)
    ("zlib_bitshuffle_i4", (70, 90), (32, 64), (8, 16), "<i4",
     {"codec": C.ZLIB, "filters": [F.BITSHUFFLE], "filters_meta": [0]}, {}),
    # (No ragged last chunk: python-blosc2 4.14.1's own reads of dictionary arrays with ragged
    # edge chunks are wrong (LZ4) or fail (ZSTD); b2nd returns the data written there, which
    # scripts/diff_test.py checks.)
    ("lz4dict_f8", (8192,), (4096,), (512,), "<f8", {"codec": C.LZ4, "use_dict": True}, {}),
    # ZFP (lossy, decoded in Rust): python-blosc2's whole read is the truth; blocks with
    # partial zfp blocks (5 and 9 are not multiples of 4).
    ("zfp_rate_f8_3d", (30, 21, 17), (12, 10, 9), (6, 5, 9), "<f8",
     {"codec": C.ZFP_RATE, "codec_meta": 20, "filters": [0] * 6, "filters_meta": [0] * 6}, {}),
]
LOSSY_CODECS = {C.ZFP_ACC, C.ZFP_PREC, C.ZFP_RATE}


def make_arrays():
    made = []
    for seed, (name, shape, chunks, blocks, dtype, cpk, extra) in enumerate(ARRAYS):
        x = data_for(dtype, shape, 1000 + seed)
        path = f"{name}.b2nd"
        kw = dict(urlpath=str(OUT / path), mode="w", **extra)
        if cpk is not None:
            kw["cparams"] = cp(**cpk)
        if shape:
            kw.update(chunks=chunks, blocks=blocks)
        blosc2.asarray(x, **kw)
        if cpk is not None and cpk.get("codec") in LOSSY_CODECS:
            x = blosc2.open(str(OUT / path), mode="r")[...]  # lossy: the read is the truth
            assert not np.array_equal(x, data_for(dtype, shape, 1000 + seed)), name
        if cpk is not None and cpk.get("use_dict"):
            # Named for a dictionary: every chunk in the file carries one (flags bit 0x01).
            # (get_chunk() fails on dictionary chunks of a frame opened from disk: the frame
            # is loaded from the file's bytes.)
            sc = blosc2.schunk_from_cframe((OUT / path).read_bytes())
            flags = [sc.get_chunk(i)[31] for i in range(sc.nchunks)]
            assert flags and all(f & 0x01 for f in flags), (name, flags)
        made.append((name, path, x))
    # Zero-special chunks next to data chunks: zeros() then one region written.
    name, path = "zeros_partial_f8", "zeros_partial_f8.b2nd"
    a = blosc2.zeros((40, 40), dtype="<f8", urlpath=str(OUT / path), mode="w", chunks=(10, 10),
                     blocks=(5, 5), cparams=cp())
    v = data_for("<f8", (10, 9), 77)
    a[5:15, 22:31] = v
    x = np.zeros((40, 40), dtype="<f8")
    x[5:15, 22:31] = v
    del a
    made.append((name, path, x))
    return made


def random_spec(rng, shape):
    """A random selection in CLI syntax: integers, whole dimensions, ranges with bounds that
    may be missing, negative or out of range, steps from 1 to beyond the dimension."""
    nd = len(shape)
    nitems = rng.choice([nd, nd, nd, max(nd - 1, 0), rng.randint(0, nd)])
    items = []
    for d in range(nitems):
        n = shape[d]
        kind = rng.random()
        if kind < 0.25 and n > 0:
            items.append(str(rng.randint(-n, n - 1)))
        elif kind < 0.35:
            items.append(":")
        else:
            def bound():
                r = rng.random()
                if r < 0.2:
                    return ""
                if r < 0.35:
                    return str(rng.randint(-n - 3, -1))
                if r < 0.45:
                    return str(rng.randint(n, n + 5))
                return str(rng.randint(0, max(n - 1, 0)))
            start, stop = bound(), bound()
            r = rng.random()
            if r < 0.4:
                step = ""
            elif r < 0.85:
                step = str(rng.randint(2, 5))
            else:
                step = str(rng.randint(6, n + 10))
            items.append(f"{start}:{stop}" + (f":{step}" if step else ""))
    return ",".join(items)


def to_key(spec):
    """CLI syntax -> a Python indexing key."""
    if spec.strip() == "":
        return ()
    key = []
    for item in spec.split(","):
        if ":" in item:
            parts = [int(p) if p.strip() else None for p in item.split(":")]
            key.append(slice(*parts))
        else:
            key.append(int(item))
    return tuple(key)


def expected(arr, full, src, spec):
    """The case for `spec`: python-blosc2's `arr[key]`, checked against NumPy indexing of both
    the source data and python-blosc2's whole-array read `full`.

    python-blosc2 4.14.1 (c-blosc2 3.3.5) returns wrong values for some small selections of
    chunks with a DELTA filter that is not the first filter (its partial-chunk path skips
    block 0, which DELTA needs). There the whole-array read indexed with NumPy is the truth
    (it equals the source data); such cases are marked `"python_slice_wrong": true`."""
    key = to_key(spec)
    try:
        got = arr[key]
    except IndexError as e:
        try:
            src[key]
        except IndexError:
            return {"spec": spec, "error": "IndexError", "python": str(e)}
        raise AssertionError(f"python-blosc2 refused {spec!r}, NumPy did not")
    except RuntimeError as e:
        # python-blosc2 4.14.1 fails strided selections of LZ4/ZSTD dictionary chunks read
        # from disk ("Error while getting the sparse selection"): the whole read is the truth.
        got, python_error = None, str(e)
    else:
        python_error = None
    # A trailing Ellipsis keeps NumPy from turning a 0-d result into a native-order scalar.
    want = np.asarray(full[key + (Ellipsis,)])
    src_want = np.asarray(src[key + (Ellipsis,)])
    want_b = np.ascontiguousarray(want).tobytes()
    assert want.dtype == src_want.dtype and want.shape == src_want.shape, spec
    assert want_b == np.ascontiguousarray(src_want).tobytes(), f"{spec}: whole read != source"
    case = {"spec": spec, "shape": list(want.shape), "hex": want_b.hex()}
    if python_error is not None:
        case["python_error"] = python_error
        return case
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (spec, got.shape, want.shape)
    if np.ascontiguousarray(got).tobytes() != want_b:
        case["python_slice_wrong"] = True
    return case


def cases_for(name, path, src, seed):
    arr = blosc2.open(str(OUT / path), mode="r")
    full = arr[...]
    raw = f"{name}.raw"
    (OUT / raw).write_bytes(np.ascontiguousarray(full).tobytes())
    shape = tuple(arr.shape)
    nd = len(shape)
    itemsize = arr.dtype.itemsize
    rng = random.Random(seed)
    # Fixed cases: the first and last item, an empty range, ranges clamped at either end, a
    # huge step, out-of-range integers, too many indices, a dimension in the middle.
    specs = [",".join(["0"] * nd), ",".join(["-1"] * nd)]
    if nd:
        n0 = shape[0]
        specs += ["5:2", f"-{n0 + 7}:2", f"{max(n0 - 2, 0)}:{n0 + 7}", f"::{n0 + 100}",
                  str(n0), str(-n0 - 1), ",".join([":"] * (nd + 1))]
        if nd > 1:
            specs += [",".join(["-1"] * (nd - 1) + [":"]),
                      ",".join(["0"] + [":"] * (nd - 2) + [str(shape[-1] // 2)])]
    else:
        specs = ["", "0", ":"]
    specs = list(dict.fromkeys(specs))
    # Random cases, small results only (the whole array is NAME.raw).
    seen = set(specs)
    tries = 0
    while len(specs) < CASES_PER_ARRAY and nd and tries < 10000:
        tries += 1
        s = random_spec(rng, shape)
        if s in seen:
            continue
        seen.add(s)
        try:
            n = np.asarray(full[to_key(s) + (Ellipsis,)]).size
        except IndexError:
            n = 0
        if n * itemsize <= MAX_CASE_BYTES:
            specs.append(s)
    cases = [expected(arr, full, src, s) for s in specs]
    return {
        "name": name,
        "path": path,
        "raw": raw,
        "shape": list(shape),
        "chunks": list(arr.chunks),
        "blocks": list(arr.blocks),
        "dtype": str(arr.dtype) if arr.dtype.names else arr.dtype.str,
        "cases": cases,
    }


def main():
    global OUT
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if blosc2.__version__ != EXPECTED_BLOSC2:
        sys.exit(f"need python-blosc2 {EXPECTED_BLOSC2}, found {blosc2.__version__}")
    blosc2.set_nthreads(1)
    OUT = Path(sys.argv[1])
    OUT.mkdir(parents=True, exist_ok=True)
    arrays = []
    for seed, (name, path, src) in enumerate(make_arrays()):
        arrays.append(cases_for(name, path, src, 4242 + seed))
    doc = {"generator": f"python-blosc2 {blosc2.__version__}", "numpy": np.__version__,
           "arrays": arrays}
    # One case per line: compact, and diffs stay readable.
    lines = ["{"]
    for k in ("generator", "numpy"):
        lines.append(f" {json.dumps(k)}: {json.dumps(doc[k])},")
    lines.append(' "arrays": [')
    for i, a in enumerate(arrays):
        head = {k: v for k, v in a.items() if k != "cases"}
        lines.append("  " + json.dumps(head)[:-1] + ', "cases": [')
        for j, c in enumerate(a["cases"]):
            lines.append("   " + json.dumps(c) + ("," if j + 1 < len(a["cases"]) else ""))
        lines.append("  ]}" + ("," if i + 1 < len(arrays) else ""))
    lines.append(" ]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == doc
    (OUT / "cases.json").write_text(text, encoding="utf-8")
    n = sum(len(a["cases"]) for a in arrays)
    print(f"{len(arrays)} arrays, {n} cases written to {OUT}")


if __name__ == "__main__":
    main()
