"""Randomized differential test: python-blosc2 writes arrays, b2nd reads them, both must agree.

usage: diff_test.py B2ND_BINARY WORKDIR [CASES]          (CASES defaults to 300)
       SEED=N diff_test.py ...                           replay a run (the seed is printed)
       SEED=N CASE=K diff_test.py ...                    replay one case of that run

Each case draws, from its own seed, a constructor (asarray, full, ones, zeros, empty, nans,
arange, linspace, full_like, fromiter, resize or append after creation), a dtype of 1 to 600
bytes (numbers in both byte orders, strings, bytes, void, structs with subarrays and nesting),
0 to 8 dimensions with random chunk and block shapes (ragged edges, blocks not dividing
chunks, chunks larger than the shape), a codec, clevel, filter chain with metas, split mode,
use_dict, and contiguous or sparse storage. python-blosc2 writes the file; b2nd reads it whole
and by random slices with `b2nd to-npy [--slice]`, and the result is compared byte for byte
(dtype included) with what python-blosc2's behaviour says the file holds, decided before b2nd
runs:

- python-blosc2's whole read with one decompression thread (c-blosc2 3.3.5's threaded decode
  of a DELTA after another filter races: docs/meaning-audit.md), when it equals the data
  written or the data written is unknown (lossy filters: TRUNC_PREC, INT_TRUNC, NDMEAN; the
  ZFP codecs, whose cases mostly get <f4/<f8 items, 1 to 4 dimensions and blocks of 4 or more,
  and are written in a child process: python-blosc2 4.14.1 now and then corrupts its heap
  writing ZFP);
- otherwise c-blosc2's own decode of the chunks (python-blosc2's decompress_chunk, put together
  here from the b2nd layout): the data written when the chunks hold it (python's reader is
  wrong: DELTA, dictionaries, uninitialised chunks), else what the chunks say (NOTE lines).

b2nd may refuse (exit 1, one line) only where python's behaviour justifies it: python-blosc2
cannot read the file, its chunks do not hold the data written, or c-blosc2's decode of them
differs between 1 and 2 threads; every other refusal, success with other bytes, or a crash is
a failure. An exception raised by python-blosc2 while writing is its refusal of the parameters
(counted by reason); one raised by this harness (its generator, numpy) fails the run. A run
fails under a floor of cases compared whole and by slices. Each
failure is copied to WORKDIR/failures/case-K/ (the file and case.json, enough to rebuild it);
commit it as a fixture (scripts/gen_fixtures.py) once understood. Exit status 1 on any failure.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import blosc2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_slice_fixtures import random_spec, to_key  # noqa: E402

EXPECTED_BLOSC2 = "4.14.1"
C, F = blosc2.Codec, blosc2.Filter
MAX_ITEMSIZE = 600
# Lossy codecs (decoded in Rust): python-blosc2's read is the reference.
ZFP_CODECS = {C.ZFP_ACC, C.ZFP_PREC, C.ZFP_RATE}
LOSSY_FILTERS = {F.TRUNC_PREC, F.INT_TRUNC, F.NDMEAN}


# ---------------------------------------------------------------------------------------------
# random parameters
# ---------------------------------------------------------------------------------------------

class PythonRefused(Exception):
    """python-blosc2 refused to write these parameters (not a b2nd matter)."""


class HarnessError(Exception):
    """The harness itself failed building a case (its generator, numpy): fails the run."""


def raised_by_blosc2(exc):
    """Whether python-blosc2 raised `exc` (the innermost frame is in its package or its
    Cython extension), as opposed to this harness or numpy called from it."""
    import traceback
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return False
    fn = tb[-1].filename
    return f"{os.sep}blosc2{os.sep}" in fn or Path(fn).name.startswith("blosc2_ext")


def python_refusal(what, e):
    """A PythonRefused when python-blosc2 raised `e`, else a HarnessError."""
    if raised_by_blosc2(e):
        return PythonRefused(f"{what}{type(e).__name__}: {str(e)[:80]}")
    return HarnessError(f"{what}{type(e).__name__}: {e}")


def num(v):
    """The number of an enum member (Codec, Filter, SplitMode) or an int."""
    return int(v.value) if hasattr(v, "value") else int(v)


def pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def rand_scalar_dtype(rng, allow_wide=True):
    r = rng.random()
    if r < 0.55:
        code = pick(rng, ["b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4",
                           "f8", "c8", "c16", "M8[ns]", "m8[s]", "M8[D]"])
        order = ">" if rng.random() < 0.2 else "<"
        return np.dtype(order + code)
    top = MAX_ITEMSIZE if allow_wide else 40
    kind = pick(rng, ["S", "U", "V"])
    if kind == "U":
        n = int(rng.integers(1, top // 4 + 1))
        return np.dtype(("<" if rng.random() < 0.8 else ">") + f"U{n}")
    return np.dtype(f"{kind}{int(rng.integers(1, top + 1))}")


def rand_struct(rng, depth=0):
    fields = []
    for i in range(int(rng.integers(1, 5))):
        r = rng.random()
        if r < 0.15 and depth < 2:
            dt = rand_struct(rng, depth + 1)
        else:
            dt = rand_scalar_dtype(rng, allow_wide=rng.random() < 0.3)
        if r > 0.8 and dt.itemsize <= 64:
            fields.append((f"f{i}", dt, tuple(int(x) for x in rng.integers(1, 4, rng.integers(1, 3)))))
        else:
            fields.append((f"f{i}", dt))
    dt = np.dtype(fields, align=bool(rng.random() < 0.3))
    return dt if dt.itemsize <= MAX_ITEMSIZE else np.dtype([("a", "<i4"), ("b", "S7")])


def rand_dtype(rng):
    return rand_struct(rng) if rng.random() < 0.2 else rand_scalar_dtype(rng)


def rand_geometry(rng, itemsize):
    nd = pick(rng, [0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8])
    budget = max(1, min(40000, (1 << 21) // itemsize))
    side = max(1, int(budget ** (1 / nd))) if nd else 1
    shape = [int(rng.integers(1, 2 * side + 1)) for _ in range(nd)]
    while nd and int(np.prod(shape)) > budget:
        shape[int(rng.integers(nd))] //= 2
        shape = [max(s, 1) for s in shape]
    if nd and rng.random() < 0.05:
        shape[int(rng.integers(nd))] = 0
    if rng.random() < 0.15:
        return tuple(shape), None, None  # python-blosc2 chooses
    chunks = [int(rng.integers(1, s + 3)) if s else int(rng.integers(1, 4)) for s in shape]
    blocks = [int(rng.integers(1, c + 1)) for c in chunks]
    return tuple(shape), tuple(chunks), tuple(blocks)


def rand_cparams(rng, dtype):
    codecs = [C.BLOSCLZ, C.LZ4, C.LZ4HC, C.ZLIB, C.ZSTD]
    weights = [0.18, 0.2, 0.14, 0.18, 0.3]
    if rng.random() < 0.06:
        codec = pick(rng, sorted(ZFP_CODECS, key=num))
    elif rng.random() < 0.05:
        codec = C.NDLZ  # python-blosc2 takes it for 2-D arrays of 1-byte items
    else:
        codec = codecs[int(rng.choice(len(codecs), p=weights))]
    filters, metas = [], []
    for _ in range(pick(rng, [0, 1, 1, 1, 2, 2, 3])):
        choices = [F.SHUFFLE, F.BITSHUFFLE, F.DELTA, F.BYTEDELTA, F.TRUNC_PREC, F.INT_TRUNC,
                   F.NDCELL, F.NDMEAN]
        f = choices[int(rng.choice(len(choices), p=[0.35, 0.15, 0.12, 0.12, 0.07, 0.07, 0.06,
                                                      0.06]))]
        if f == F.SHUFFLE:
            m = pick(rng, [0, 0, dtype.itemsize % 256, int(rng.integers(1, 17))])
        elif f == F.BYTEDELTA:
            m = pick(rng, [0, min(dtype.itemsize, 127)])
        elif f == F.TRUNC_PREC:
            m = int(rng.integers(1, 24))
        elif f == F.INT_TRUNC:
            m = int(rng.integers(1, 8))
        elif f in (F.NDCELL, F.NDMEAN):
            m = int(rng.integers(1, 5))
        else:
            m = 0
        filters.append(f)
        metas.append(m)
    # Keep every case verifiable. A lossy filter leaves python-blosc2's read as the only
    # reference, so it is not combined with what that read gets wrong (DELTA, dictionaries);
    # DELTA with two other reordering filters is not round-tripped by python-blosc2's writer
    # (the data written is then no reference either): one of those filters is dropped.
    use_dict = bool(rng.random() < 0.15)
    if any(f in LOSSY_FILTERS for f in filters):
        use_dict = False
        keep = [i for i, f in enumerate(filters) if f != F.DELTA]
        filters, metas = [filters[i] for i in keep], [metas[i] for i in keep]
    # python-blosc2's writer does not round-trip dictionary chunks under longer pipelines either
    # (e.g. [SHUFFLE, BYTEDELTA, BITSHUFFLE]): dictionaries get at most one filter.
    if use_dict:
        filters, metas = filters[:1], metas[:1]
    reorder = [i for i, f in enumerate(filters) if f in (F.SHUFFLE, F.BITSHUFFLE, F.BYTEDELTA)]
    if F.DELTA in filters and len(reorder) >= 2:
        filters, metas = [f for i, f in enumerate(filters) if i != reorder[-1]], \
            [m for i, m in enumerate(metas) if i != reorder[-1]]
    return dict(codec=codec, clevel=int(rng.integers(0, 10)), filters=filters,
                filters_meta=metas, use_dict=use_dict,
                splitmode=pick(rng, list(blosc2.SplitMode)), nthreads=int(rng.integers(1, 3)),
                codec_meta=zfp_meta(rng, codec) if codec in ZFP_CODECS else
                pick(rng, [4, 8]) if codec == C.NDLZ else 0)


def zfp_meta(rng, codec):
    """A ZFP codec meta: a tolerance exponent (signed, as its byte), a precision, or a rate
    of 1 to 100 % (python-blosc2 4.14.1 aborts with a double free writing rates over 100)."""
    if codec == C.ZFP_ACC:
        return int(rng.integers(-8, 4)) & 0xFF
    if codec == C.ZFP_PREC:
        return int(rng.integers(0, 64))
    return int(rng.integers(1, 101))


def zfp_geometry(rng):
    """What ZFP codes as intended: <f4 or <f8 items, 1 to 4 dims, block sides of 4 or more."""
    dtype = np.dtype(pick(rng, ["<f4", "<f8"]))
    nd = int(rng.integers(1, 5))
    blocks = [int(rng.integers(4, 10)) for _ in range(nd)]
    chunks = [b * int(rng.integers(1, 3)) + int(rng.integers(0, 3)) for b in blocks]
    shape = [max(1, c * int(rng.integers(1, 3)) - int(rng.integers(0, 3))) for c in chunks]
    return dtype, (tuple(shape), tuple(chunks), tuple(blocks))


def rand_data(rng, dtype, shape):
    n = int(np.prod(shape)) if shape else 1
    style = rng.random()
    raw = rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8)
    if style < 0.25:  # mostly zeros: zero runs and zero chunks
        raw[rng.random(raw.size) < 0.97] = 0
    elif style < 0.45:  # one repeated item
        raw = np.tile(raw[: dtype.itemsize], n) if n else raw
    x = raw.view(dtype) if n else np.zeros(0, dtype)
    x = sanitize(x, rng)
    return x.reshape(shape)


def sanitize(x, rng):
    """Make random bytes valid for the dtype (bool 0/1, valid code points, smooth numbers)."""
    dt = x.dtype
    if dt.fields:
        x = x.copy()
        for name in dt.names:
            x[name] = sanitize(x[name], rng)
        return x
    if dt.subdtype is not None:
        return x
    x = np.ascontiguousarray(x)  # a struct's field is a strided view: views need contiguity
    if dt.kind == "b":
        return (x.view(np.uint8) & 1).view(dt)
    if dt.kind == "U":
        v = x.view(np.uint32) % 0xD800  # below the surrogates
        return v.astype(dt.byteorder.replace("=", "<") + "u4").view(dt)
    if dt.kind == "f" and rng.random() < 0.6 and x.size:
        smooth = np.cumsum(rng.standard_normal(x.size)).reshape(x.shape)
        return smooth.astype(dt)
    if dt.kind in "iu" and rng.random() < 0.5 and x.size:
        return (np.arange(x.size) * int(rng.integers(1, 5))).reshape(x.shape).astype(dt)
    return x


def fill_value(rng, dtype):
    return rand_data(rng, dtype, (1,))[0]


# ---------------------------------------------------------------------------------------------
# one case
# ---------------------------------------------------------------------------------------------

def is_zfp_case(seed):
    """Whether case `seed` draws a ZFP codec (the draws make_case starts with)."""
    rng = np.random.default_rng(seed)
    dtype = rand_dtype(rng)
    rand_geometry(rng, dtype.itemsize)
    return rand_cparams(rng, dtype)["codec"] in ZFP_CODECS


def make_case_guarded(seed, path):
    """make_case, in a forked child for ZFP cases: python-blosc2 may abort writing them."""
    if not is_zfp_case(seed):
        return make_case(seed, path)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    global _ZFP_WORKER
    if _ZFP_WORKER is None:
        # spawned, not forked: a fork would deadlock on python-blosc2's threads
        ctx = multiprocessing.get_context("spawn")
        _ZFP_WORKER = ProcessPoolExecutor(1, mp_context=ctx)
    try:
        return _ZFP_WORKER.submit(make_case, seed, str(path)).result(timeout=600)
    except BrokenProcessPool:
        _ZFP_WORKER = None
        raise PythonRefused("python-blosc2 crashed writing ZFP (heap corruption)") from None


_ZFP_WORKER = None


def make_case(seed, path):
    """Write one array; return (description, the data written or None when lossy or
    unknown). Raises PythonRefused when python-blosc2 raised writing it, HarnessError when
    the harness failed."""
    rng = np.random.default_rng(seed)
    dtype = rand_dtype(rng)
    shape, chunks, blocks = rand_geometry(rng, dtype.itemsize)
    cparams = rand_cparams(rng, dtype)
    if cparams["codec"] in ZFP_CODECS:
        if rng.random() < 0.8:
            dtype, (shape, chunks, blocks) = zfp_geometry(rng)
        if rng.random() < 0.7:
            cparams["filters"], cparams["filters_meta"] = [], []  # ZFP on the values
    contiguous = bool(rng.random() < 0.75)
    numeric = dtype.kind in "iuf" and not dtype.fields
    ctors = ["asarray"] * 4 + ["full", "ones", "zeros", "empty", "full_like", "fromiter",
                               "resize"]
    if dtype.kind == "f":
        ctors += ["nans", "linspace"]
    if numeric:
        ctors += ["arange"]
    if len(shape) == 1:
        ctors += ["append"]
    ctor = pick(rng, ctors)
    if ctor in ("arange", "linspace", "resize", "append"):
        # python-blosc2 fills arange/linspace through a c-blosc2 prefilter and re-encodes edge
        # chunks on resize/append through its own (DELTA-faulty) reads: with DELTA its writer
        # then does not encode the values asked for (asarray of the same values reads exact).
        keep = [i for i, f in enumerate(cparams["filters"]) if f != F.DELTA]
        cparams["filters"] = [cparams["filters"][i] for i in keep]
        cparams["filters_meta"] = [cparams["filters_meta"][i] for i in keep]
    desc = {"seed": seed, "ctor": ctor, "dtype": dtype.descr if dtype.fields else dtype.str,
            "shape": shape, "chunks": chunks, "blocks": blocks, "contiguous": contiguous,
            "cparams": {k: ([num(f) for f in v] if isinstance(v, list) else
                            v if isinstance(v, bool) else num(v))
                        for k, v in cparams.items()}}
    kw = dict(urlpath=str(path), mode="w", contiguous=contiguous,
              cparams=blosc2.CParams(**cparams))
    if chunks is not None:
        kw.update(chunks=chunks, blocks=blocks)
    if not shape:
        kw.pop("chunks", None)
        kw.pop("blocks", None)
    try:
        truth = construct(rng, ctor, dtype, shape, kw, desc)
    except Exception as e:
        raise python_refusal("", e) from e
    lossy = any(f in LOSSY_FILTERS for f in cparams["filters"]) or \
        cparams["codec"] in ZFP_CODECS
    if truth is not None:
        truth = dense(truth.reshape(shape))
    if lossy and truth is not None:
        desc["lossy_written"] = truth  # not a reference, but tells values from garbage
        truth = None
    return desc, truth


class ReadFailed:
    """python-blosc2 raised reading a file it wrote."""

    def __init__(self, e):
        self.why = f"{type(e).__name__}: {str(e)[:80]}"


def python_read(path, nthreads=1):
    """python-blosc2's whole read with `nthreads` decompression threads (1 by default:
    c-blosc2 3.3.5's threaded decode of a DELTA after another filter races,
    docs/meaning-audit.md); ReadFailed when python-blosc2 raises; None when its dtype's size
    is not the stored typesize (its reads are garbage then; b2nd must refuse)."""
    try:
        arr = blosc2.open(str(path), mode="r", dparams={"nthreads": nthreads})
        if arr.dtype.itemsize != arr.schunk.typesize:
            return None
        return dense(arr[()] if not arr.shape else arr[...])
    except Exception as e:
        if not raised_by_blosc2(e):
            raise HarnessError(f"reading: {type(e).__name__}: {e}") from e
        return ReadFailed(e)


def stored_as_is(chunk):
    """Whether a chunk is stored as is (memcpyed, not special): its bytes after the 32-byte
    header are its data, as many as its header says it holds."""
    if len(chunk) < 32 or not chunk[2] & 0x02 or (chunk[31] >> 4) & 7:
        return False
    nbytes = int.from_bytes(chunk[4:8], "little")
    return int.from_bytes(chunk[12:16], "little") == len(chunk) == nbytes + 32


def chunk_decode(path, nthreads=1):
    """The array as c-blosc2 itself decodes its chunks (python-blosc2's decompress_chunk with
    `nthreads` threads), put together here from the b2nd layout (each chunk padded to whole
    blocks, its blocks in C order, each block in C order): what the file's chunks say,
    independent of python-blosc2's slicing code. Uninitialised chunks are zeros. ReadFailed
    when c-blosc2 refuses a chunk."""
    try:
        arr = blosc2.open(str(path), mode="r", dparams={"nthreads": nthreads})
        shape, dt, sc = tuple(arr.shape), arr.dtype, arr.schunk
        # Raw items: numpy copies structs field by field, which would drop padding bytes.
        raw = np.dtype((np.void, dt.itemsize))
        out = np.zeros(shape, raw)
        if 0 in shape:
            return out.view(dt)
        chunks, blocks = tuple(arr.chunks), tuple(arr.blocks)
        nd = len(shape)
        nblocks = [-(-c // b) for c, b in zip(chunks, blocks)]
        ext = [n * b for n, b in zip(nblocks, blocks)]
        grid = [-(-s // c) for s, c in zip(shape, chunks)]
        order = [i for d in range(nd) for i in (d, nd + d)]
        for idx, ci in enumerate(np.ndindex(*grid) if nd else [()]):
            try:
                stored = sc.get_chunk(idx)
            except RuntimeError:  # dictionary chunks of a frame on disk (never uninitialised)
                stored = b""
            header = stored[:32]
            if len(header) == 32 and (header[31] >> 4) & 7 == 4:
                continue  # uninitialised: zeros
            if stored_as_is(stored):
                # c-blosc2 3.3.5 looks for a dictionary in a stored-as-is chunk flagged with
                # one (python-blosc2 writes such LZ4 chunks) and refuses it when the first
                # data bytes are no valid size (SEED=439917847 case 336); the bytes after the
                # header are the data (docs/meaning-audit.md).
                data = bytes(stored[32:])
            else:
                data = sc.decompress_chunk(idx)
            buf = np.frombuffer(data, raw, count=int(np.prod(ext)))
            buf = buf.reshape(tuple(nblocks) + blocks).transpose(order).reshape(ext)
            region = tuple(slice(i * c, min(s, (i + 1) * c)) for i, c, s in zip(ci, chunks, shape))
            out[region] = buf[tuple(slice(0, r.stop - r.start) for r in region)]
        return dense(out.view(dt))
    except Exception as e:
        if not raised_by_blosc2(e):
            raise HarnessError(f"chunk decode: {type(e).__name__}: {e}") from e
        return ReadFailed(e)


def construct(rng, ctor, dtype, shape, kw, desc):
    """Write the array with python-blosc2; the data written, when known."""
    truth = None
    if ctor == "asarray":
        truth = rand_data(rng, dtype, shape)
        blosc2.asarray(truth, **kw)
    elif ctor == "full":
        v = fill_value(rng, dtype)
        truth = np.full(shape, v, dtype)
        blosc2.full(shape, v, dtype=dtype, **kw)
    elif ctor == "ones":
        truth = np.ones(shape, dtype) if not dtype.fields and dtype.kind not in "V" else None
        blosc2.ones(shape, dtype=dtype, **kw)
    elif ctor == "zeros":
        truth = np.zeros(shape, dtype)
        blosc2.zeros(shape, dtype=dtype, **kw)
    elif ctor == "empty":
        # Uninitialised chunks: b2nd reads zeros; python-blosc2 4.14.1 may return leftover
        # memory there (counted as "python wrong").
        truth = np.zeros(shape, dtype)
        blosc2.empty(shape, dtype=dtype, **kw)
    elif ctor == "nans":
        truth = np.full(shape, np.nan, dtype)
        blosc2.nans(shape, dtype=dtype, **kw)
    elif ctor == "arange":
        n = int(np.prod(shape)) if shape else 1
        start, step = int(rng.integers(-50, 50)), int(rng.integers(1, 4))
        blosc2.arange(start, start + n * step, step, dtype=dtype, shape=shape, **kw)
        truth = np.arange(start, start + n * step, step).astype(dtype)[:n].reshape(shape)
        if dtype.byteorder == ">":
            # python-blosc2 4.14.1 stores arange's values in native byte order under a
            # big-endian dtype (docs/meaning-audit.md): those bytes are what it wrote.
            truth = truth.astype(dtype.newbyteorder("<")).view(dtype)
    elif ctor == "linspace":
        n = int(np.prod(shape)) if shape else 1
        blosc2.linspace(-3.5, 7.25, n, dtype=dtype, shape=shape, **kw)
        # Computed by python-blosc2 in its own precision, so not known bit for bit: its read
        # is the reference when it is within rounding of the exact ramp (expectation()).
        desc["ramp"] = [-3.5, 7.25, n]
    elif ctor == "full_like":
        v = fill_value(rng, dtype)
        like = blosc2.zeros(shape, dtype=dtype)
        truth = np.full(shape, v, dtype)
        blosc2.full_like(like, v, **kw)
    elif ctor == "fromiter":
        values = rand_data(rng, dtype, shape).reshape(-1).tolist()
        blosc2.fromiter(iter(values), shape=shape, dtype=dtype, **kw)
        # Python objects in between: NaN payloads are whatever Python's floats make of them.
        truth = np.array(values, dtype=dtype).reshape(shape)
    elif ctor == "resize":
        start_shape = tuple(max(0, s + int(rng.integers(-3, 4))) for s in shape)
        x = rand_data(rng, dtype, start_shape)
        a = blosc2.asarray(x, **kw)
        a.resize(shape)
        desc["start_shape"] = start_shape
        del a
        # Kept items stay, new ones are zeros.
        truth = np.zeros(shape, dtype)
        common = tuple(slice(0, min(p, q)) for p, q in zip(shape, start_shape))
        truth[common] = x[common]
    elif ctor == "append":
        k = int(rng.integers(0, shape[0] + 1))
        x = rand_data(rng, dtype, (shape[0] - k,))
        y = rand_data(rng, dtype, (k,))
        a = blosc2.asarray(x, **kw)
        a.append(y)
        truth = np.concatenate([x, y])
        del a
    return truth


def b2nd_read(binary, path, out, spec=None, threads=1):
    cmd = [binary, "to-npy", "--force", str(path), str(out), "--threads", str(threads)]
    if spec is not None:
        cmd += ["--slice", spec]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None, p.returncode, p.stderr.strip()
    return np.load(out, allow_pickle=False), 0, ""


def dense(x):
    """A C-order copy holding the same bytes, 0-d kept 0-d (np.ascontiguousarray makes it
    1-d). Structs are copied as raw items: numpy copies them field by field, leaving padding
    bytes uninitialised."""
    x = np.asarray(x)
    if not x.dtype.fields:
        return np.array(x, order="C", copy=True)
    raw = x.view(np.dtype((np.void, x.dtype.itemsize)))
    return np.array(raw, order="C", copy=True).view(x.dtype)


def unpadded(x):
    """`x` with the padding bytes of structs (unspecified content) zeroed."""
    if not x.dtype.fields:
        return x
    y = np.zeros(x.shape, x.dtype)
    for name in x.dtype.names:
        y[name] = unpadded(x[name])
    return y


def data_bytes(x):
    # (No copy after unpadded(): numpy copies structs field by field, leaving padding bytes
    # uninitialised in the copy.)
    return unpadded(x).tobytes()


def layout(dt):
    """A dtype as `.npy` can hold it: the `aligned` flag of a struct is not part of a `.npy`
    header, its names, formats and offsets are."""
    if dt.fields:
        return (tuple((n, layout(dt.fields[n][0]), dt.fields[n][1]) for n in dt.names),
                dt.itemsize)
    if dt.subdtype is not None:
        return (layout(dt.subdtype[0]), dt.subdtype[1])
    return dt.str


def npy_describable(dt):
    try:
        np.lib.format.dtype_to_descr(dt)
        return True
    except ValueError:
        return False


def same(got, want):
    """Same shape, bytes (struct padding aside) and dtype layout. A struct with overlapping
    or out-of-order fields (numpy can build one from the offsets python-blosc2 stores) has
    no `.npy` form: b2nd then writes its items as raw `|V{itemsize}`, which must hold the
    same bytes, read as that struct (its padding aside: SEED=3097311623 case 639, whose
    chunks hold other padding bytes than the data written)."""
    if got.shape != want.shape:
        return False
    if not npy_describable(want.dtype):
        if got.dtype != np.dtype(f"V{want.dtype.itemsize}"):
            return False
        as_want = np.frombuffer(dense(got).tobytes(), want.dtype).reshape(want.shape)
        return data_bytes(as_want) == data_bytes(want)
    return layout(got.dtype) == layout(want.dtype) and data_bytes(got) == data_bytes(want)


def equal_arrays(a, b):
    return a.shape == b.shape and data_bytes(a) == data_bytes(b)


def as_recorded(path, truth):
    """The data written in the dtype python-blosc2 recorded for the array (a void `V544` is
    recorded as the struct `[('f0', 'V544')]`), when it opens the file and the item sizes
    agree; else the data written as it is."""
    try:
        dt = blosc2.open(str(path), mode="r").dtype
    except Exception:  # noqa: BLE001 - python cannot open it: compare with the data written
        return truth
    if truth is None or dt.itemsize != truth.dtype.itemsize or dt == truth.dtype:
        return truth
    return np.frombuffer(dense(truth).tobytes(), dt).reshape(truth.shape)


def expectation(path, truth, py, stats, desc):
    """What b2nd must return, decided from python-blosc2's behaviour before b2nd runs:
    (expected array or None, why a refusal would be justified or None)."""
    if isinstance(py, ReadFailed):
        # python-blosc2 cannot read what it wrote: b2nd may refuse too, or must return what
        # c-blosc2 decodes the chunks to (the data written when that fails).
        stats["python_read_failed"] += 1
        ref = chunk_decode(path)
        return (as_recorded(path, truth) if isinstance(ref, ReadFailed) else ref), \
            f"python cannot read it: {py.why}"
    if truth is not None and truth.dtype.itemsize != py.dtype.itemsize:
        # python-blosc2 stored another dtype than it was given (nested aligned structs lose
        # their padding): its read is all there is to compare with.
        stats["python_dtype_changed"] += 1
        truth = None
    if truth is None and "ramp" in desc:
        return ramp_expectation(path, py, stats, desc)
    if truth is None and py.size and desc["cparams"]["codec"] in {num(c) for c in ZFP_CODECS}:
        return lossy_expectation(path, py, stats, desc)
    if truth is None or equal_arrays(truth, py):
        return py, None
    # python-blosc2's read differs from the data written: c-blosc2's decode of the chunks
    # decides whether its reader is wrong (the chunks hold the data written) or its writer is
    # (the chunks hold something else, which is then what the file means).
    desc["python_wrong"] = True
    ref = chunk_decode(path)
    if isinstance(ref, ReadFailed):
        return py, f"c-blosc2 cannot decode its chunks: {ref.why}"
    truth_as_py = np.frombuffer(dense(truth).tobytes(), py.dtype).reshape(py.shape)
    if equal_arrays(ref, truth_as_py):
        stats["python_reader_wrong"] += 1
        return truth_as_py, None
    stats["python_writer_wrong"] += 1
    print(f"NOTE case {desc['seed'] % 100003}: c-blosc2's decode of the chunks is not the data "
          f"written: {json.dumps(desc, default=str)}", flush=True)
    return ref, "the chunks do not hold the data written"


def lossy_expectation(path, py, stats, desc):
    """The expectation for a ZFP array (its data written is not what it holds): python's
    read when c-blosc2 decodes the chunks to the same; otherwise c-blosc2's decode of the
    chunks when it does not depend on the thread count (python-blosc2's slicing reads some
    ZFP-after-DELTA arrays differently with 1 and 2 threads, neither being what its chunks
    decode to: SEED=465351153 case 604, docs/meaning-audit.md); a refusal is justified
    when c-blosc2's decode itself depends on the thread count or fails."""
    ref = chunk_decode(path)
    if isinstance(ref, ReadFailed):
        return py, f"c-blosc2 cannot decode its chunks: {ref.why}"
    if equal_arrays(ref, py):
        return py, None
    desc["python_wrong"] = True
    two = chunk_decode(path, 2)
    if isinstance(two, ReadFailed) or not equal_arrays(ref, two):
        return py, "c-blosc2's decode depends on its thread count"
    stats["python_zfp_wrong"] += 1
    print(f"NOTE case {desc['seed'] % 100003}: python-blosc2's read of a ZFP array is not what "
          f"c-blosc2 decodes its chunks to: {json.dumps(desc, default=str)}", flush=True)
    return ref, None


def racy_delta(desc):
    """Why a DELTA pipeline has no single meaning, or None: a DELTA among three or more
    filters (TRUNC_PREC and INT_TRUNC, the identity when decoding, not counted), which
    c-blosc2 3.3.5 encodes and decodes differently with 1 and 2 threads (its threaded DELTA
    races: docs/meaning-audit.md). One file's decode may agree by chance (SEED=2852203083
    case 641: python wrote the data in one run and other bytes in another), so the pipeline,
    not one sample of the race, justifies b2nd's refusal (codec::filters::rust_can_undo)."""
    filters = [num(f) for f in desc["cparams"]["filters"]
               if f not in (0, num(F.TRUNC_PREC), num(F.INT_TRUNC))]
    if num(F.DELTA) in filters and len(filters) > 2:
        return "DELTA among three or more filters, which c-blosc2 3.3.5's threads race on"
    return None


def near_ramp(a, desc):
    """Whether `a` is np.linspace(*desc["ramp"]) to within the rounding of a's dtype (its
    spacing at the ramp's largest magnitude, times 4 for the steps of its computation)."""
    start, stop, n = desc["ramp"]
    exact = np.linspace(start, stop, n).reshape(a.shape)
    tol = 4 * float(np.spacing(np.array(max(abs(start), abs(stop)), a.dtype.newbyteorder("="))))
    return bool(np.all(np.abs(a.astype("f8") - exact) <= tol))


def ramp_expectation(path, py, stats, desc):
    """The expectation for a linspace, whose values python-blosc2 computes itself: its read
    when that is the ramp; else c-blosc2's decode of the chunks, which tells whether its
    reader is wrong (the chunks hold the ramp) or its writer is."""
    if near_ramp(py, desc):
        return py, None
    desc["python_wrong"] = True
    ref = chunk_decode(path)
    if isinstance(ref, ReadFailed):
        return py, f"c-blosc2 cannot decode its chunks: {ref.why}"
    if near_ramp(ref, desc):
        stats["python_reader_wrong"] += 1
        return ref, None
    stats["python_writer_wrong"] += 1
    print(f"NOTE case {desc['seed'] % 100003}: c-blosc2's decode of the chunks is not the ramp "
          f"written: {json.dumps(desc, default=str)}", flush=True)
    return ref, "the chunks do not hold the data written"


def far_from(written, py):
    """A lossy read that is not the data written under any error bound: non-finite where
    the data is finite, or off somewhere by half the data's largest magnitude (ZFP keeps the
    largest values of a block to a few bits at least)."""
    if written is None or py is None or written.dtype.kind != "f" or \
            written.shape != py.shape or not written.size:
        return False
    w, p = written.astype("f8"), py.astype("f8")
    fin = np.isfinite(w)
    if not fin.any():
        return False
    scale = max(float(np.abs(w[fin]).max()), 1e-300)
    return bool((~np.isfinite(p[fin])).any() or (np.abs(p[fin] - w[fin]) > 0.5 * scale).any())


def refusal_justified(path, why, written=None, py=None, desc=None):
    """A refusal by b2nd is right when python-blosc2 cannot read the file, when its chunks do
    not hold the data written (for a lossy codec: not within any bound of it), or when
    c-blosc2's decode depends on its thread count."""
    if why is not None:
        return why
    if desc is not None and racy_delta(desc):
        return racy_delta(desc)
    if not isinstance(py, ReadFailed) and far_from(written, py):
        return "a lossy codec's chunks do not hold the data written"
    one, two = chunk_decode(path, 1), chunk_decode(path, 2)
    if isinstance(one, ReadFailed) or isinstance(two, ReadFailed):
        return "c-blosc2 cannot decode its chunks"
    if not equal_arrays(one, two):
        return "c-blosc2's decode depends on its thread count"
    return None


def run_case(binary, work, seed, stats):
    path = work / "case.b2nd"
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    try:
        desc, truth = make_case_guarded(seed, path)
    except PythonRefused as e:  # python-blosc2 refused these parameters: not a b2nd matter
        stats["python_refused"] += 1
        why = str(e)
        stats["python_reasons"][why] = stats["python_reasons"].get(why, 0) + 1
        return None
    except HarnessError as e:
        return {"seed": seed}, f"harness error building the case: {e}"
    written = desc.pop("lossy_written", None)
    py = python_read(path)
    out = work / "out.npy"
    threads = 1 + seed % 2
    got, rc, err = b2nd_read(binary, path, out, threads=threads)
    one_line = rc == 1 and len(err.splitlines()) == 1
    if py is None:
        stats["python_inconsistent"] += 1
        if one_line:
            return None
        return desc, f"python-blosc2's dtype disagrees with the typesize: expected a refusal, " \
                     f"got rc={rc} {err!r}"
    want, justified = expectation(path, truth, py, stats, desc)
    if got is None:
        justified = refusal_justified(path, justified, written, py, desc)
        if justified is not None and one_line:
            stats["refused"] += 1
            stats["refusal_reasons"][justified] = stats["refusal_reasons"].get(justified, 0) + 1
            return None
        return desc, f"b2nd refused (rc={rc} {err!r}); python-blosc2 reads it consistently" \
            if justified is None else f"expected a one-line refusal, got rc={rc} {err!r}"
    if want is None:
        return desc, "b2nd read a file neither python-blosc2 nor c-blosc2 decodes, with no " \
                     "data written to compare with"
    if not same(got, want):
        return desc, f"whole read differs (dtype {got.dtype} vs {want.dtype}, shape {got.shape} "\
                     f"vs {want.shape})"
    stats["whole"] += 1
    if desc["cparams"]["codec"] in {num(c) for c in ZFP_CODECS}:
        stats["zfp"] += 1
    import random
    r = random.Random(seed)
    for _ in range(3 if want.ndim else 1):
        spec = random_spec(r, want.shape)
        key = to_key(spec)
        try:
            w = dense(want[key + (Ellipsis,)])
        except IndexError:
            continue
        got, rc, err = b2nd_read(binary, path, out, spec, threads)
        if got is None:
            return desc, f"slice {spec!r}: b2nd refused: {err}"
        if not same(got, w):
            return desc, f"slice {spec!r} differs"
        stats["slices"] += 1
    return None


# A run compares at least this share of its cases whole, and at least this many slices per
# whole comparison (measured: SEED=7, 150 cases: 83 % whole, 2.8 slices per case).
FLOOR_WHOLE = 0.6
FLOOR_SLICES = 1.5


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    if blosc2.__version__ != EXPECTED_BLOSC2:
        sys.exit(f"need python-blosc2 {EXPECTED_BLOSC2}, found {blosc2.__version__}")
    binary, work = sys.argv[1], Path(sys.argv[2])
    ncases = int(sys.argv[3]) if len(sys.argv) == 4 else 300
    seed = int(os.environ.get("SEED", int.from_bytes(os.urandom(4), "little")))
    only = os.environ.get("CASE")
    print(f"diff_test: SEED={seed} ({ncases} cases; replay with SEED={seed})", flush=True)
    work.mkdir(parents=True, exist_ok=True)
    stats = {k: 0 for k in ("whole", "slices", "refused", "python_refused", "python_read_failed",
                            "python_inconsistent", "python_dtype_changed",
                            "python_reader_wrong", "python_writer_wrong", "python_zfp_wrong",
                            "zfp")}
    stats["python_reasons"] = {}
    stats["refusal_reasons"] = {}
    failures = []
    t0 = time.time()
    cases = [int(only)] if only is not None else range(ncases)
    for k in cases:
        r = run_case(binary, work, seed * 100003 + k, stats)
        if r is not None:
            desc, why = r
            desc["case"] = k
            failures.append(k)
            dest = work / "failures" / f"case-{k}"
            dest.mkdir(parents=True, exist_ok=True)
            src = work / "case.b2nd"
            if src.is_dir():
                shutil.copytree(src, dest / "case.b2nd", dirs_exist_ok=True)
            elif src.exists():
                shutil.copy(src, dest / "case.b2nd")
            (dest / "case.json").write_text(json.dumps({"why": why, **desc}, default=str,
                                                       indent=1))
            print(f"FAIL case {k}: {why}\n  {json.dumps(desc, default=str)}", flush=True)
    n = len(cases)
    print(f"diff_test: {n} cases in {time.time() - t0:.0f} s: compared whole {stats['whole']}, "
          f"by slices {stats['slices']} ({stats['zfp']} of the arrays ZFP); b2nd refused "
          f"{stats['refused']} (each justified by python's behaviour, below); python-blosc2 "
          f"refused to write {stats['python_refused']}, could not read {stats['python_read_failed']} "
          f"of its own files, read other values than written {stats['python_reader_wrong']} "
          f"times where the chunks hold the data written (b2nd equals the data written) and "
          f"{stats['python_writer_wrong']} where they do not (b2nd equals c-blosc2's decode), "
          f"wrote a dtype whose size is not the typesize {stats['python_inconsistent']} "
          f"(refused by b2nd), read ZFP arrays otherwise than c-blosc2 decodes their chunks "
          f"{stats['python_zfp_wrong']} times (b2nd equals the decode)")
    for why, count in sorted(stats["refusal_reasons"].items(), key=lambda kv: -kv[1]):
        print(f"  b2nd refused {count}x: {why}")
    for why, count in sorted(stats["python_reasons"].items(), key=lambda kv: -kv[1])[:8]:
        print(f"  python-blosc2 refused {count}x: {why}")
    if only is None and n >= 50:
        if stats["whole"] < FLOOR_WHOLE * n or stats["slices"] < FLOOR_SLICES * stats["whole"]:
            print(f"FAIL: under the floor: {stats['whole']} of {n} cases compared whole (floor "
                  f"{FLOOR_WHOLE:.0%}), {stats['slices']} slices (floor {FLOOR_SLICES} per "
                  f"whole comparison)")
            failures.append("floor")
    print(f"{n - len(failures)} passed, {len(failures)} failed")
    if failures:
        print(f"failures in {work / 'failures'}; replay one with SEED={seed} CASE=K")
        sys.exit(1)


if __name__ == "__main__":
    main()
