#!/usr/bin/env python3
"""Generate the .b2nd test fixtures of the `b2nd` crate with python-blosc2.

Usage:  python gen_fixtures.py OUTDIR

Writes every fixture into OUTDIR, one `NAME.raw` per readable fixture (the exact C-order
bytes python-blosc2 returns for `blosc2.open(path)[...]`), `NAME.attrs.json` for fixtures with
vlmeta, and `OUTDIR/manifest.json` (schema in scripts/README.md).

Everything is deterministic: fixed seeds, explicit chunks/blocks everywhere (python-blosc2's
default geometry depends on the machine's cache sizes), nthreads=1.  The one place where
python-blosc2 would write wall-clock data (zip member timestamps of a .b2z store) is repacked
with a fixed timestamp.

Requires python-blosc2 4.14.1 (see requirements.txt).
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

import blosc2
from blosc2 import blosc2_ext

EXPECTED_BLOSC2 = "4.14.1"

F = blosc2.Filter
C = blosc2.Codec

CODEC_NAMES = {
    0: "blosclz", 1: "lz4", 2: "lz4hc", 3: "snappy", 4: "zlib", 5: "zstd",
    32: "ndlz", 33: "zfp_acc", 34: "zfp_prec", 35: "zfp_rate", 36: "openhtj2k",
    37: "grok", 38: "openzl", 39: "j2k", 40: "htj2k",
}
FILTER_NAMES = {
    1: "shuffle", 2: "bitshuffle", 3: "delta", 4: "trunc_prec",
    32: "ndcell", 33: "ndmean", 35: "bytedelta", 36: "int_trunc",
}
# What the linked c-blosc2 2.15 + the Rust side will decode.
SUPPORTED_CODECS = {0, 1, 2, 4, 5, 32, 33, 34, 35}
SUPPORTED_FILTERS = {1, 2, 3, 4, 32, 33, 35, 36}
SPECIAL_KINDS = {0: "data", 1: "zeros", 2: "nan", 3: "value", 4: "uninit"}

OUT: Path = Path(".")
FIXTURES: list = []


def cp(**kw):
    """CParams with a fixed thread count (output does not depend on it, but be explicit)."""
    kw.setdefault("nthreads", 1)
    return blosc2.CParams(**kw)


# ----------------------------------------------------------------------------------------
# metalayer bytes (FORMAT_NOTES section 5): fixed widths, big-endian
# ----------------------------------------------------------------------------------------

def _arr(marker_count, values, tag, fmt):
    return bytes([0x90 + marker_count]) + b"".join(tag + struct.pack(fmt, v) for v in values)


def b2nd_meta(shape, chunks, blocks, dtype, *, version=0, dtype_format=0, nd=None,
              elements=7, dtype_marker=0xDB, counts=None):
    """Build a `b2nd` metalayer exactly like c-blosc2 (b2nd_serialize_meta) does.

    `elements=6` gives the pre-release draft (no dtype_format).  `nd` overrides the ndim byte,
    `counts` overrides the three fixarray markers, `dtype_marker` the str32 marker (0xd9 writes
    a str8 length)."""
    nd = len(shape) if nd is None else nd
    counts = counts or (len(shape), len(chunks), len(blocks))
    dt = dtype.encode() if isinstance(dtype, str) else dtype
    out = bytes([0x90 + elements, version, nd])
    out += _arr(counts[0], shape, b"\xd3", ">q")
    out += _arr(counts[1], chunks, b"\xd2", ">i")
    out += _arr(counts[2], blocks, b"\xd2", ">i")
    if elements == 7:
        out += bytes([dtype_format])
    if dtype_marker == 0xD9:
        out += b"\xd9" + bytes([len(dt)]) + dt
    else:
        out += bytes([dtype_marker]) + struct.pack(">I", len(dt)) + dt
    return out


def caterva_meta(shape, chunks, blocks, *, version=0):
    out = bytes([0x95, version, len(shape)])
    out += _arr(len(shape), shape, b"\xd3", ">q")
    out += _arr(len(chunks), chunks, b"\xd2", ">i")
    out += _arr(len(blocks), blocks, b"\xd2", ">i")
    return out


def parse_nd_meta(raw, name):
    """Parse b2nd/caterva metalayer bytes by position (like c-blosc2 does)."""
    elements = raw[0] - 0x90
    version, nd = raw[1], raw[2]
    pos = 3
    res = {"elements": elements, "version": version, "ndim": nd}
    for key, tag, width, fmt in (("shape", 0xD3, 8, ">q"), ("chunks", 0xD2, 4, ">i"),
                                 ("blocks", 0xD2, 4, ">i")):
        assert raw[pos] == 0x90 + nd, (name, key, raw.hex())
        pos += 1
        vals = []
        for _ in range(nd):
            assert raw[pos] == tag, (name, key, raw.hex())
            vals.append(struct.unpack(fmt, raw[pos + 1:pos + 1 + width])[0])
            pos += 1 + width
        res[key] = vals
    if name == "b2nd":
        if elements == 7:
            res["dtype_format"] = raw[pos]
            pos += 1
        assert raw[pos] == 0xDB, raw.hex()
        (n,) = struct.unpack(">I", raw[pos + 1:pos + 5])
        res["dtype"] = raw[pos + 5:pos + 5 + n].decode()
        pos += 5 + n
    assert pos == len(raw), (name, raw.hex())
    return res


# ----------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------

def chunk_kinds(sc, path=None, offset=0):
    return kinds_of(chunk_bytes(sc, path, offset))


def chunk_bytes(sc, path=None, offset=0):
    """The stored bytes of every chunk.  python-blosc2 4.14.1 fails in get_chunk() on some
    chunks of a frame opened from disk (RuntimeError for dictionary chunks, a crash now and then
    for repeated-value chunks of items over 255 bytes): a contiguous frame file is read through
    an in-memory copy of its bytes instead."""
    if path is not None and (sc is None or sc.contiguous) and Path(path).is_file():
        try:
            mem = blosc2.schunk_from_cframe(Path(path).read_bytes()[offset:])
            return [mem.get_chunk(i) for i in range(mem.nchunks)]
        except RuntimeError:
            if sc is None:
                raise  # e.g. bytes after the frame (a member of a store)
    return [sc.get_chunk(i) for i in range(sc.nchunks)]


def kinds_of(chunks):
    kinds = []
    for c in chunks:
        special = (c[31] >> 4) & 7
        kind = SPECIAL_KINDS.get(special, f"special{special}")
        if kind == "data" and c[2] & 0x02:
            kind = "memcpy"
        elif kind == "data" and c[31] & 0x01:
            kind = "dict"
        kinds.append(kind)
    return kinds


def cparams_fields(sc):
    p = sc.cparams
    codec = p.codec.value if hasattr(p.codec, "value") else int(p.codec)
    filt = [f.value if hasattr(f, "value") else int(f) for f in p.filters]
    filt += [0] * (6 - len(filt))
    fmeta = list(p.filters_meta) + [0] * (6 - len(p.filters_meta))
    fmeta = [int(m) & 0xFF for m in fmeta]
    out = {
        "codec": CODEC_NAMES.get(codec, f"codec{codec}"),
        "codec_meta": int(p.codec_meta),
        "clevel": int(p.clevel),
        "use_dict": bool(p.use_dict),
        "filters": [FILTER_NAMES.get(f, f"filter{f}") for f in filt if f != 0],
        "filters_meta": fmeta,
    }
    unsupported = None
    # Dictionaries (use_dict) are decoded bit-exact by the linked c-blosc2 2.15 for LZ4 and
    # ZSTD (checked on the dict_* fixtures), so they are not a reason to refuse.
    if codec not in SUPPORTED_CODECS:
        unsupported = "unsupported_codec"
    elif any(f not in SUPPORTED_FILTERS for f in filt if f != 0):
        unsupported = "unsupported_filter"
    return out, unsupported


def vlmeta_info(sc):
    """(attrs for the manifest, sorted names, per-name precise description)."""
    vl = sc.vlmeta
    names = sorted(vl.get_names())
    attrs, precise = {}, {}
    for n in names:
        rawb = vl.get_vlmeta(n)
        value = vl[n]
        kind, jval, in_manifest = describe_value(value)
        precise[n] = {"kind": kind, "value": jval, "msgpack": rawb.hex()}
        if in_manifest:
            attrs[n] = jval
    return attrs, names, precise


def describe_value(v):
    """-> (kind, JSON value, goes into manifest "attrs")."""
    if v is None:
        return "nil", None, True
    if isinstance(v, bool):
        return "bool", v, True
    if isinstance(v, int):
        return "int", v, True
    if isinstance(v, float):
        return "float", v, True
    if isinstance(v, str):
        return "str", v, True
    if isinstance(v, (bytes, bytearray)):
        return "bin", bytes(v).hex(), False
    if isinstance(v, complex):
        return "complex", [v.real, v.imag], True
    if isinstance(v, tuple):
        return "tuple", [describe_value(x)[1] for x in v], True
    if isinstance(v, (set, frozenset)):
        return "set", sorted(describe_value(x)[1] for x in v), True
    if isinstance(v, list):
        return "array", [describe_value(x)[1] for x in v], True
    if isinstance(v, dict):
        return "map", {k: describe_value(x)[1] for k, x in v.items()}, True
    if isinstance(v, np.ndarray):
        return "ndarray", {"dtype": v.dtype.str, "shape": list(v.shape),
                           "data": v.tolist()}, True
    raise TypeError(f"cannot describe vlmeta value {v!r}")


def write_raw(name, data: bytes):
    (OUT / f"{name}.raw").write_bytes(data)
    return f"{name}.raw"


def readable(name, path, *, offset=0, source=None, expected=None, note=None,
             check_meta_roundtrip=True, unsupported=None):
    """Open `path` with python-blosc2, record it in the manifest, write NAME.raw.

    source: the numpy data that was written; when given and the fixture is lossless the read
    back bytes are checked against it.  expected: override the expected bytes."""
    arr = blosc2.open(path, mode="r", offset=offset)
    sc = arr.schunk
    metas = list(sc.meta.keys())
    fmt = "b2nd" if "b2nd" in metas else "caterva"
    raw = blosc2_ext.meta__getitem__(sc, fmt)
    m = parse_nd_meta(raw, fmt)
    if fmt == "b2nd" and check_meta_roundtrip and m["elements"] == 7:
        assert b2nd_meta(m["shape"], m["chunks"], m["blocks"], m["dtype"]) == raw, name
    cpf, unsupported_cp = cparams_fields(sc)
    unsupported = unsupported or unsupported_cp
    if expected is None:
        data = np.ascontiguousarray(arr[...]).tobytes()
        if source is not None:
            assert data == np.ascontiguousarray(source).tobytes(), f"{name}: read-back differs"
    else:
        data = expected
    typesize = int(sc.typesize)
    dtype = m.get("dtype", f"|S{typesize}")
    n_items = int(np.prod(m["shape"])) if m["shape"] else 1
    assert len(data) == n_items * typesize, (name, len(data), n_items, typesize)
    entry = {
        "name": name, "path": path, "offset": offset, "ok": True, "format": fmt,
        "metalayer_version": m["version"],
        "shape": m["shape"], "chunks": m["chunks"], "blocks": m["blocks"],
        "dtype": dtype, "typesize": typesize, "nchunks": int(sc.nchunks),
    }
    entry.update(cpf)
    entry["storage"] = "contiguous" if sc.contiguous else "sparse"
    entry["expected"] = write_raw(name, data)
    attrs, names, precise = vlmeta_info(sc)
    entry["attrs"] = attrs
    entry["attr_names"] = names
    if names:
        (OUT / f"{name}.attrs.json").write_text(json.dumps(precise, indent=1, sort_keys=True,
                                                           allow_nan=False) + "\n")
        entry["attrs_file"] = f"{name}.attrs.json"
    entry["supported"] = unsupported is None
    if unsupported:
        entry["error"] = unsupported
    entry["chunk_kinds"] = chunk_kinds(sc, path, offset)
    entry["metalayers"] = metas
    if note:
        entry["note"] = note
    if n_items <= 4096 and unsupported is None and expected is None:
        typed = typed_values(np.asarray(arr[...]))
        if typed:
            entry["typed"] = typed
    FIXTURES.append(entry)
    del arr
    return entry


def typed_values(x):
    """python-blosc2's values in the forms b2nd's typed reads give (C order, flattened):
    `strings` for U arrays (str), `byte_strings` for S arrays (hex, NumPy's trailing-NUL
    trimming), and `fields` of structured arrays (numbers, or strings/byte strings) whose
    fields are scalars; nothing else."""
    def scalar_values(v):
        k = v.dtype.kind
        if v.dtype.subdtype is not None or v.dtype.names is not None:
            return None
        if k == "U":
            return {"strings": [str(s) for s in v.ravel().tolist()]}
        if k == "S":
            return {"byte_strings": [bytes(s).hex() for s in v.ravel().tolist()]}
        if k in "iu":
            return {"ints": [int(i) for i in v.ravel().tolist()]}
        if k == "f" and v.dtype.itemsize in (4, 8):
            vals = v.ravel().astype("<f8")
            if np.isfinite(vals).all():
                return {"floats": vals.tolist()}
        return None
    if x.dtype.names is None:
        out = scalar_values(x)
        return out if out and ("strings" in out or "byte_strings" in out) else None
    fields = {}
    for name in x.dtype.names:
        v = scalar_values(x[name])
        if v is not None:
            fields[name] = v
    return {"fields": fields} if fields else None


def refused(name, path, error, why, *, offset=0, ask_python=False):
    assert error in ("not_nd_array", "no_data", "bad_metalayer", "geometry_mismatch",
                     "dtype_mismatch", "bad_dtype")
    e = {"name": name, "path": path, "offset": offset, "ok": False, "error": error, "why": why}
    if ask_python:
        e["python_blosc2"] = python_opinion(path)
    FIXTURES.append(e)


def asarray(name, x, chunks, blocks, cparams=None, *, check=True, note=None, unsupported=None,
            **kw):
    path = f"{name}.b2nd"
    kwargs = dict(urlpath=path, mode="w", chunks=chunks, blocks=blocks, **kw)
    if cparams is not None:
        kwargs["cparams"] = cparams
    a = blosc2.asarray(x, **kwargs)
    del a
    return readable(name, path, source=x if check else None, note=note, unsupported=unsupported)


# ----------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------

def rng_for(name):
    return np.random.default_rng(sum(name.encode()) * 7919 + len(name))


def random_fill(dtype, n, rng):
    dtype = np.dtype(dtype)
    if dtype.names is not None:
        out = np.zeros(n, dtype=dtype)
        for fname in dtype.names:
            sub = dtype.fields[fname][0]
            out[fname] = random_fill(sub, n, rng).reshape(out[fname].shape)
        return out
    if dtype.subdtype is not None:
        base, shp = dtype.subdtype
        return random_fill(base, n * int(np.prod(shp)), rng).reshape((n,) + shp)
    k = dtype.kind
    if k == "b":
        return rng.integers(0, 2, n).astype(bool)
    if k in "iu":
        # small values (compressible, so chunks are really compressed) plus both extremes
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -20), 21, n).astype(dtype.newbyteorder("="))
        x[:min(n, 2)] = [info.min, info.max][:min(n, 2)]
        return x.astype(dtype)
    if k == "f":
        x = (np.round(rng.standard_normal(n) * 8) / 4).astype(dtype)
        specials = [np.nan, np.inf, -np.inf, -0.0]
        x[:min(n, 4)] = specials[:min(n, 4)]
        if dtype.itemsize == 16:  # x86 long double: zero the 6 padding bytes (stack garbage)
            u = x.view(np.uint8).reshape(n, 16)
            u[:, 10:] = 0
        return x
    if k == "c":
        x = (np.round(rng.standard_normal(n) * 8) / 4
             + 1j * np.round(rng.standard_normal(n) * 8) / 4).astype(dtype)
        if n >= 2:
            x[0] = complex(np.nan, 1.0)
            x[1] = complex(2.0, np.inf)
        return x
    if k == "M":
        unit = np.datetime_data(dtype)[0]
        span = {"ns": 2 * 10**18, "D": 200000}.get(unit, 10**9)
        x = rng.integers(-span // 2, span // 2, n).astype(np.int64) // 1000 * 1000
        x[0] = np.iinfo(np.int64).min  # NaT
        return x.view(f"M8[{unit}]").astype(dtype)
    if k == "m":
        unit = np.datetime_data(dtype)[0]
        x = rng.integers(-10**4, 10**4, n).astype(np.int64)
        x[-1] = np.iinfo(np.int64).min  # NaT
        return x.view(f"m8[{unit}]").astype(dtype)
    if k == "S":
        pool = [b"", b"a", b"bc", b"def", b"ghij", b"klmno", b"x\x00y", b"\xff\x01"]
        return np.array([pool[i % len(pool)][:dtype.itemsize]
                         for i in rng.permutation(max(n, len(pool)))[:n]], dtype=dtype)
    if k == "U":
        pool = ["", "a", "bc", "déf", "µ", "日本語", "xyz", "🦀"]
        return np.array([pool[i % len(pool)][:dtype.itemsize // 4]
                         for i in rng.permutation(max(n, len(pool)))[:n]], dtype=dtype)
    if k == "V":
        return np.frombuffer(rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).tobytes(),
                             dtype=dtype)
    raise TypeError(dtype)


def compressible_i4(shape, name):
    rng = rng_for(name)
    n = int(np.prod(shape))
    x = (np.arange(n) // 4 % 13) * 1000 + rng.integers(0, 3, n)
    return x.astype("<i4").reshape(shape)


def smooth_f8(shape, name, dtype="<f8"):
    rng = rng_for(name)
    n = int(np.prod(shape))
    x = np.cumsum(rng.standard_normal(n)) * 0.5 + 100.0
    return x.astype(dtype).reshape(shape)


# ----------------------------------------------------------------------------------------
# fixture groups
# ----------------------------------------------------------------------------------------

def gen_reference():
    x = np.arange(35, dtype="<i4").reshape(7, 5)
    asarray("ref_7x5_i4", x, (4, 5), (3, 2), cp(),
            note="FORMAT_NOTES section 4 reference: chunk 1 decodes to 20 21 25 26 30 31 | ...")
    b = blosc2.open("ref_7x5_i4.b2nd", mode="r")
    c1 = np.frombuffer(b.schunk.decompress_chunk(1), "<i4")
    del b
    assert len(c1) == 36
    assert list(c1[:12]) == [20, 21, 25, 26, 30, 31, 22, 23, 27, 28, 32, 33], c1
    assert list(c1[12:18:2]) == [24, 29, 34], c1
    x = smooth_f8((10, 7), "f8_2d_ragged")
    x[3, 3] = np.nan
    x[9, 6] = np.inf
    asarray("f8_2d_ragged", x, (4, 3), (3, 2), cp())
    asarray("ones_dims_i2", (np.arange(7, dtype="<i2") - 3).reshape(1, 7, 1),
            (1, 4, 1), (1, 3, 1), cp())
    asarray("chunk_gt_shape_u2", np.arange(25, dtype="<u2").reshape(5, 5), (8, 8), (4, 3), cp(),
            note="chunkshape larger than shape: one chunk, mostly padding")
    asarray("one_block_per_chunk_i4", np.arange(24, dtype="<i4").reshape(4, 6), (2, 3), (2, 3),
            cp())
    asarray("empty_0x5_i4", np.zeros((0, 5), "<i4"), (2, 5), (1, 5), cp(),
            note="0-length dimension: nchunks 0, expected file is empty")
    asarray("empty_3x0x2_f4", np.zeros((3, 0, 2), "<f4"), (2, 1, 2), (1, 1, 2), cp())
    asarray("empty_zero_chunks_u1", np.zeros((0, 4), "u1"), (0, 4), (0, 4), cp(),
            note="chunk dimension 0 (allowed when shape is 0): chunksize 0, so python-blosc2 "
                 "writes a frame version 3 (general flags 0x53, variable-size chunks); no chunks")
    h = Path("empty_zero_chunks_u1.b2nd").read_bytes()
    assert h[25] & 0x0F == 3, hex(h[25])


def gen_dtypes():
    # ragged in both dims, blocks dividing neither chunk dim: extended chunk (16, 12)
    shape, chunks, blocks = (24, 10), (16, 8), (8, 6)
    n = int(np.prod(shape))
    plain = ["|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8",
             "<c8", "<c16", "<M8[ns]", "<M8[D]", "<m8[s]", "|S5", "<U3", ">i4", ">f8", ">u2"]
    if np.dtype(np.longdouble).itemsize == 16:
        plain.insert(plain.index("<c8"), "<f16")
    for dts in plain:
        dt = np.dtype(dts)
        name = "dtype_" + dts.translate(str.maketrans({"|": "", "<": "le_", ">": "be_",
                                                       "[": "_", "]": ""}))
        x = random_fill(dt, n, rng_for(name)).reshape(shape)
        asarray(name, x, chunks, blocks, cp())

    structured = {
        "dtype_struct_list": np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S3")]),
        "dtype_struct_nested": np.dtype([("a", "u1"), ("b", [("x", "<f4"), ("y", "u1")])]),
        "dtype_struct_subarray_field": np.dtype([("a", "<i4", (2,)), ("b", "u1")]),
        "dtype_struct_titles": np.dtype([(("T", "a"), "u1"), ("b", "<i2")]),
    }
    for name, dt in structured.items():
        x = random_fill(dt, n, rng_for(name)).reshape(shape)
        asarray(name, x, chunks, blocks, cp())

    # Through asarray python-blosc2 rebuilds the dtype from __array_interface__["descr"], which
    # turns padding into named 'V' fields (list form); through empty()/zeros() with the dtype
    # object it stores str(dtype), which is the dict form.  Produce both.
    padded = {
        "aligned": np.dtype([("a", "u1"), ("b", "<i8")], align=True),
        "offsets": np.dtype({"names": ["a", "b"], "formats": ["u1", "<i4"], "offsets": [0, 8],
                             "itemsize": 12}),
    }
    for tag, dt in padded.items():
        x = random_fill(dt, n, rng_for(tag)).reshape(shape)
        asarray(f"dtype_struct_{tag}_asarray", x, chunks, blocks, cp(),
                note="written with blosc2.asarray: padding became a named field in the dtype")
        name = f"dtype_struct_{tag}_dict"
        a = blosc2.zeros(shape, dtype=dt, urlpath=f"{name}.b2nd", mode="w", chunks=chunks,
                         blocks=blocks, cparams=cp())
        a[...] = x
        del a
        readable(name, f"{name}.b2nd", source=x, check_meta_roundtrip=True,
                 note="written with blosc2.zeros(dtype=...) + setitem: dict-form dtype string")

    # |V8: asarray stores "[('f0', 'V8')]", zeros(dtype='V8') stores "|V8"
    name = "dtype_V8_empty"
    x = random_fill("|V8", n, rng_for(name)).reshape(shape)
    asarray("dtype_V8_asarray", x, chunks, blocks, cp(),
            note="blosc2.asarray of a |V8 array stores the dtype as a one-field struct")
    a = blosc2.zeros(shape, dtype="V8", urlpath=f"{name}.b2nd", mode="w", chunks=chunks,
                     blocks=blocks, cparams=cp())
    a[...] = x
    del a
    readable(name, f"{name}.b2nd", source=x)

    # subarray dtype as the array dtype: stored shape (3,), dtype "('<i4', (2, 2))"; python
    # returns an array of shape (3, 2, 2).  setitem broadcasts wrongly, so use frombuffer.
    name = "dtype_subarray_i4_2x2"
    buf = np.arange(24, dtype="<i4") * 3 - 20
    a = blosc2.frombuffer(buf.tobytes(), (6,), dtype=np.dtype(("<i4", (2, 2))),
                          urlpath=f"{name}.b2nd", mode="w", chunks=(4,), blocks=(3,),
                          cparams=cp())
    del a
    readable(name, f"{name}.b2nd", source=buf,
             note="python-blosc2 returns shape (6, 2, 2) <i4 for it")

    # strings: <U with default cparams gets SHUFFLE filters_meta 4
    x = random_fill("<U3", 10, rng_for("u3")).reshape(10)
    asarray("dtype_U3_default_cparams", x, (4,), (3,), None,
            note="no cparams: python-blosc2 picks SHUFFLE with filters_meta 4")
    x = np.array(["x" * (i * 13 % 101) + "é" * (i % 3) for i in range(7)], dtype="<U100")
    asarray("dtype_U100_default_cparams", x, (4,), (2,), None,
            note="itemsize 400 > 255 (chunk header typesize byte is 1); SHUFFLE meta 4")
    x = np.array([b"y" * (i * 41 % 300) for i in range(7)], dtype="S300")
    asarray("dtype_S300_shuffle", x, (4,), (2,), cp())


def gen_dims():
    # 0-d
    asarray("nd0_f8", np.array(3.25, "<f8"), (), (), cp())
    asarray("nd0_i2", np.array(-7, "<i2"), (), (), cp())
    asarray("nd1_i2", (np.arange(10, dtype="<i2") * 11 - 40), (4,), (3,), cp())
    asarray("nd2_f4", smooth_f8((6, 4), "nd2", "<f4"), (4, 3), (2, 2), cp())
    dts = {3: "<i4", 4: "u1", 5: "<f8", 6: "<i2", 7: "<u4", 8: "<f4"}
    for nd in range(3, 9):
        shape = [3] + [2] * (nd - 1)
        chunks = [2] * nd
        blocks = [1] * (nd - 1) + [2]
        n = int(np.prod(shape))
        x = (np.arange(n) % 251).astype(dts[nd]).reshape(shape)
        asarray(f"nd{nd}_{np.dtype(dts[nd]).str[1:]}", x, tuple(chunks), tuple(blocks), cp())
    for nd in range(9, 17):
        shape = [1] * (nd - 3) + [3, 2, 3]
        chunks = [1] * (nd - 3) + [2, 2, 2]
        blocks = [1] * (nd - 3) + [1, 2, 2]
        if nd % 2 == 0:
            shape[0] = 2
            chunks[0] = 1
        n = int(np.prod(shape))
        dt = ["<i2", "u1", "<f4", "<i8"][nd % 4]
        x = (np.arange(n) * 3 % 97).astype(dt).reshape(shape)
        note = "ndim 16: metalayer array markers are 0xa0 (not valid msgpack)" if nd == 16 \
            else None
        e = asarray(f"nd{nd}_{np.dtype(dt).str[1:]}", x, tuple(chunks), tuple(blocks), cp(),
                    note=note)
        if nd == 16:
            raw = Path(e["path"]).read_bytes()
            assert b"\x97\x00\x10\xa0\xd3" in raw


def gen_block_tiles():
    # Chunks whose blocks split only a trailing dimension below whole leading ones: the decoded
    # chunk is not C order.  b2nd once read (and wrote) these as if it were; found by
    # scripts/diff_test.py (SEED=1 case 148).
    for name, shape, chunks, blocks in (
            ("tiles_2x8_i4", (4, 8), (2, 8), (2, 2)),
            ("tiles_5d_V228", (3, 3, 2, 1, 8), (1, 3, 2, 1, 8), (1, 3, 2, 1, 2))):
        dt = np.dtype("V228") if name.endswith("V228") else np.dtype("<i4")
        n = int(np.prod(shape))
        x = (np.arange(n * dt.itemsize) % 251).astype("u1").view(dt).reshape(shape)
        asarray(name, x, chunks, blocks, cp())


def gen_double_delta():
    # A DELTA in a pipeline of three filters or more. c-blosc2 3.3.5's decode of such chunks is
    # not a function of the chunk's bytes: it depends on the reader's thread count. Read by one
    # thread, the double DELTAs give the data written; by two or more, block 0 of every chunk
    # has one DELTA left undone (the thread of block 0 undoes only the first DELTA step: its
    # `dref_not_init` flag is already cleared at the second), and the other blocks XOR with
    # block 0 as it is at that moment (a race). python-blosc2 reads with as many threads as
    # cores, so what python reads depends on the machine; b2nd refuses the pipeline by name.
    # Found by scripts/diff_test.py: SEED=10 case 258, SEED=100 case 39, SEED=103 case 185,
    # SEED=405 case 178, SEED=414 case 133. Asserted here from python's reads of each file.
    x = np.arange(4096, dtype="<i4") ** 2
    for name, filters, ok in (
            ("delta_twice_after_shuffle_i4", [F.SHUFFLE, F.DELTA, F.DELTA], False),
            ("delta_twice_after_bitshuffle_i4", [F.BITSHUFFLE, F.DELTA, F.DELTA], False),
            ("delta_after_shuffle_ndcell_i4", [F.SHUFFLE, F.NDCELL, F.DELTA], False),
            ("delta_twice_then_shuffle_i4", [F.DELTA, F.DELTA, F.SHUFFLE], False),
            ("delta_then_bitshuffle_i4", [F.DELTA, F.BITSHUFFLE], True)):
        metas = [4 if f == F.NDCELL else 0 for f in filters]
        path = f"{name}.b2nd"
        blosc2.asarray(x, urlpath=path, mode="w", chunks=(2048,), blocks=(512,),
                       cparams=cp(filters=filters, filters_meta=metas))
        serial = blosc2.open(path, dparams={"nthreads": 1})[:]
        threaded = blosc2.open(path, dparams={"nthreads": 2})[:]
        if ok:
            assert np.array_equal(serial, x) and np.array_equal(threaded, x), name
            note = None
        else:
            # What the fixture is named for: python-blosc2 (2 threads) does not read back the
            # data written, and its two readers disagree or neither gives the data written.
            assert not np.array_equal(threaded, x), name
            assert not np.array_equal(serial, threaded) or not np.array_equal(serial, x), name
            same = "equals" if np.array_equal(serial, x) else "differs from"
            note = (f"python-blosc2 reads other values than were written with 2 threads "
                    f"({int(np.sum(threaded != x))} of {x.size} items); read by one thread, "
                    f"its read {same} the data written; b2nd refuses")
        e = readable(name, path, source=x if ok else None, note=note,
                     expected=None if ok else x.tobytes(),
                     unsupported=None if ok else "unsupported_filter")
        assert set(e["chunk_kinds"]) == {"data"}, (name, e["chunk_kinds"])


def gen_resized():
    # Resized after creation (found by scripts/diff_test.py, SEED=1 case 262): shrinking a
    # dimension to 0 leaves the frame header's compressed size at that of the dropped chunks,
    # with no chunk data and no chunk index in the file.
    x = (np.arange(2 * 5 * 6) % 7).astype("<U3").reshape(2, 5, 6)
    a = blosc2.asarray(x, urlpath="resized_to_zero_U3.b2nd", mode="w", chunks=(1, 5, 6),
                       blocks=(1, 2, 6), cparams=cp())
    a.resize((0, 8, 7))
    del a
    e = readable("resized_to_zero_U3", "resized_to_zero_U3.b2nd", source=np.zeros((0, 8, 7), "<U3"))
    assert e["nchunks"] == 0
    x = np.arange(30, dtype="<i2").reshape(5, 6)
    a = blosc2.asarray(x, urlpath="resized_grow_i2.b2nd", mode="w", chunks=(2, 4), blocks=(1, 3),
                       cparams=cp())
    a.resize((7, 9))
    del a
    y = np.zeros((7, 9), "<i2")
    y[:5, :6] = x
    readable("resized_grow_i2", "resized_grow_i2.b2nd", source=y)


def gen_codecs():
    shape, chunks, blocks = (20, 10), (8, 10), (8, 10)
    for codec in (C.BLOSCLZ, C.LZ4, C.LZ4HC, C.ZLIB, C.ZSTD):
        for clevel in (0, 1, 9):
            if codec == C.ZLIB and clevel == 0:
                continue  # memcpyed chunks would be decodable without zlib: ambiguous
            name = f"codec_{codec.name.lower()}_c{clevel}"
            x = compressible_i4(shape, name)
            e = asarray(name, x, chunks, blocks, cp(codec=codec, clevel=clevel))
            if clevel == 0:
                assert set(e["chunk_kinds"]) == {"memcpy"}, e
            else:
                assert set(e["chunk_kinds"]) == {"data"}, e
    x = compressible_i4((8, 8), "codec_lz4_f8")
    asarray("codec_lz4_bitshuffle_f8", x.astype("<f8") / 7, (8, 8), (4, 8),
            cp(codec=C.LZ4, clevel=5, filters=[F.BITSHUFFLE], filters_meta=[0]))


def gen_filters():
    sh, ch, bl = (20, 6), (8, 6), (4, 6)

    def f(name, x, filters, meta, lossless=True, codec=C.ZSTD, unsupported=None, **kw):
        e = asarray(name, x, ch if x.ndim == 2 else (8,), bl if x.ndim == 2 else (4,),
                    cp(codec=codec, clevel=5, filters=filters, filters_meta=meta, **kw),
                    check=lossless, unsupported=unsupported)
        assert "data" in e["chunk_kinds"], e
        return e

    i4 = compressible_i4(sh, "filters_i4")
    f8 = smooth_f8(sh, "filters_f8")
    f4 = smooth_f8(sh, "filters_f4", "<f4")
    i8 = compressible_i4(sh, "filters_i8").astype("<i8") * 100003
    f("filt_none_i4", i4, [], [])
    f("filt_shuffle_i4", i4, [F.SHUFFLE], [0])
    f("filt_bitshuffle_i4", i4, [F.BITSHUFFLE], [0])
    f("filt_bitshuffle_f8", f8, [F.BITSHUFFLE], [0])
    f("filt_delta_i4", i4, [F.DELTA], [0])
    f("filt_delta_shuffle_i4", i4, [F.DELTA, F.SHUFFLE], [0, 0])
    f("filt_shuffle_delta_i4", i4, [F.SHUFFLE, F.DELTA], [0, 0])
    f("filt_trunc_prec_f4", f4, [F.TRUNC_PREC, F.SHUFFLE], [10, 0], lossless=False)
    f("filt_trunc_prec_f8", f8, [F.TRUNC_PREC, F.BITSHUFFLE], [20, 0], lossless=False)
    f("filt_shuffle_bytedelta_f8", f8, [F.SHUFFLE, F.BYTEDELTA], [0, 8])
    f("filt_shuffle_bytedelta_i4", i4, [F.SHUFFLE, F.BYTEDELTA], [0, 4])
    f("filt_shuffle_bytedelta_f4_meta0", f4, [F.SHUFFLE, F.BYTEDELTA], [0, 0])
    f("filt_bytedelta_only_f4", f4, [F.BYTEDELTA], [4])
    f("filt_int_trunc_i4", i4 * 70001, [F.INT_TRUNC, F.SHUFFLE], [20, 0], lossless=False)
    f("filt_int_trunc_i8", i8, [F.INT_TRUNC], [40], lossless=False)
    f("filt_int_trunc_u2", (i4 % 60000).astype("<u2"), [F.INT_TRUNC], [10], lossless=False)
    f("filt_shuffle_meta2_i8", i8, [F.SHUFFLE], [2])
    f("filt_shuffle_meta4_f8", f8, [F.SHUFFLE], [4])
    f("filt_combo4_f8", f8, [F.TRUNC_PREC, F.DELTA, F.SHUFFLE, F.BYTEDELTA], [30, 0, 0, 8],
      lossless=False, unsupported="unsupported_filter")  # DELTA among 3 filters: refused
    f("filt_last_slot_shuffle_lz4_i4", i4, [0, 0, 0, 0, F.DELTA, F.SHUFFLE], [0] * 6,
      codec=C.LZ4)
    for mode in (blosc2.SplitMode.ALWAYS_SPLIT, blosc2.SplitMode.NEVER_SPLIT):
        tag = "always" if mode == blosc2.SplitMode.ALWAYS_SPLIT else "never"
        for e in (
                f(f"split_{tag}_zstd_i4", i4, [F.SHUFFLE], [0], splitmode=mode),
                f(f"split_{tag}_lz4_f8", f8, [F.SHUFFLE], [0], codec=C.LZ4, splitmode=mode),
                f(f"split_{tag}_blosclz_bytedelta_f8", f8, [F.SHUFFLE, F.BYTEDELTA], [0, 8],
                  codec=C.BLOSCLZ, splitmode=mode)):
            # The header's "not split" flag (byte 2, 0x10) of every data chunk is the mode's:
            # a split chunk stores `typesize` streams per block, an unsplit one a single one.
            flags = [c[2] for c, k in zip(chunk_bytes(None, e["path"]), e["chunk_kinds"])
                     if k == "data"]
            want = 0x10 if tag == "never" else 0
            assert flags and all(fl & 0x10 == want for fl in flags), (e["name"], flags)


ZFP_NOTE = "lossy (ZFP): expected is python-blosc2's read"


def zfp_fixture(name, x, chunks, blocks, codec, meta, filters=(), **kw):
    """A ZFP array; asserts that its chunks carry the codec and that some block really is a
    zfp stream (neither a memcpyed chunk nor a block stored as is)."""
    nf = list(filters) + [0] * (6 - len(filters))
    e = asarray(name, x, chunks, blocks,
                cp(codec=codec, codec_meta=meta & 0xFF, filters=nf, filters_meta=[0] * 6, **kw),
                check=False, note=ZFP_NOTE)
    coded = 0
    for c in chunk_bytes(None, f"{name}.b2nd"):
        assert c[22] == int(codec.value), (name, c[22])
        assert c[23] == meta & 0xFF, (name, c[23])
        if c[2] & 0x02 or (c[31] >> 4) & 7 or not c[2] & 0x10:
            continue  # memcpyed, special, or split into byte streams (stored as is)
        nbytes, blocksize = struct.unpack_from("<ii", c, 4)
        nblocks = -(-nbytes // blocksize)
        starts = struct.unpack_from(f"<{nblocks}i", c, 32)
        for st in starts:
            csize = struct.unpack_from("<i", c, st)[0]
            if 0 < csize < blocksize:
                coded += 1
    assert coded, f"{name}: no block is a zfp stream"
    return e


def gen_zfp():
    """ZFP (decoded in Rust, bit-exact with python-blosc2's reads): each mode, f4 and f8, 1 to
    4 dimensions, blocks whose sides are not multiples of 4 (partial zfp blocks), zero and
    tiny values, a shuffled and a non-float array (python-blosc2 codes their bytes as floats:
    the values are not the data, but they are what python-blosc2 reads)."""
    Z = (C.ZFP_ACC, C.ZFP_PREC, C.ZFP_RATE)
    zfp_fixture("zfp_acc_f8_2d", smooth_f8((20, 24), "zacc"), (10, 12), (5, 6), Z[0], -3)
    zfp_fixture("zfp_acc_f4_1d", smooth_f8((1000,), "zacc1", "<f4"), (300,), (100,), Z[0], 0)
    x3 = smooth_f8((9, 10, 11), "zprec", "<f4")
    x3[:4, :4, :4] = 0  # a zfp block of zeros
    zfp_fixture("zfp_prec_f4_3d", x3, (6, 7, 11), (5, 7, 9), Z[1], 12)
    zfp_fixture("zfp_prec_f8_4d", smooth_f8((8, 9, 6, 7), "zprec4"), (8, 9, 6, 7),
                (4, 5, 6, 7), Z[1], 30)
    zfp_fixture("zfp_rate_f8_4d", smooth_f8((8, 9, 6, 7), "zrate4"), (8, 9, 6, 7),
                (4, 5, 6, 7), Z[2], 40)
    zfp_fixture("zfp_rate_f4_2d", smooth_f8((33, 17), "zrate2", "<f4"), (16, 17), (8, 9),
                Z[2], 25)
    tiny = smooth_f8((12, 12), "ztiny") * 1e-310  # subnormal doubles
    tiny[4:8] *= 1e300
    zfp_fixture("zfp_prec_tiny_f8", tiny, (12, 12), (12, 12), Z[1], 50)
    zfp_fixture("zfp_acc_shuffle_f4", smooth_f8((32, 32), "zshuf", "<f4"), (16, 16), (8, 8),
                Z[0], -2, filters=[F.SHUFFLE], splitmode=blosc2.SplitMode.NEVER_SPLIT)
    zfp_fixture("zfp_prec_i8", (np.arange(256, dtype="<i8") * 12345).reshape(16, 16), (16, 16),
                (8, 8), Z[1], 20)
    # ZFP after a DELTA codes XORed bit patterns as floats: the far fixture's values read
    # back nowhere near the data written, which is what c-blosc2 decodes its chunks to. Split
    # into byte streams, the same array's blocks are stored as is or as runs of zeros (ZFP
    # codes no stream), so DELTA alone decides and it reads back exactly (diff_test SEED=2852203083 case 962,
    # once refused by b2nd).
    x = np.random.default_rng(0).standard_normal((2, 8, 9))
    zfp_fixture("zfp_rate_after_delta_far_f8", x * 1000, (4, 10, 10), (4, 4, 5), Z[2], 30,
                filters=[F.DELTA])
    err = np.abs(blosc2.open("zfp_rate_after_delta_far_f8.b2nd")[...] - x * 1000).max()
    assert err > 1e6, err
    name = "zfp_rate_after_delta_split_f8"
    asarray(name, x, (4, 10, 10), (4, 4, 5),
            cp(codec=Z[2], codec_meta=45, filters=[F.DELTA, 0, 0, 0, 0, 0], filters_meta=[0] * 6,
               splitmode=blosc2.SplitMode.ALWAYS_SPLIT))  # check=True: reads back exactly
    for c in chunk_bytes(None, f"{name}.b2nd"):
        assert c[22] == int(Z[2].value) and c[16] == int(F.DELTA.value), (name, c[16:24])
        assert not c[2] & 0x10, (name, "not split")
        nbytes, blocksize = struct.unpack_from("<ii", c, 4)
        for st in struct.unpack_from(f"<{-(-nbytes // blocksize)}i", c, 32):
            for k in range(8):  # 8 byte streams, each stored as is or a run of zeros
                size = struct.unpack_from("<i", c, st)[0]
                assert size in (0, blocksize // 8), (name, "a ZFP stream", size)
                st += 4 + size


def gen_ndmean_old():
    """NDMEAN under user filter id 165, as c-blosc2's 2021 plugin tests wrote their caterva
    example files (plugins/filters/ndmean/example_ndmean_*.caterva): the ndmean_f8 fixture with
    the filter id patched to 165 in the frame header and every chunk header. python-blosc2
    cannot read it (no filter 165 registered); the expected values are its read of ndmean_f8."""
    src = next(e for e in FIXTURES if e["name"] == "ndmean_f8")
    data = bytearray((OUT / src["path"]).read_bytes())
    head = bytes(data[:100])
    pipe = bytes([33, 0, 0, 0, 0, 0])
    assert head.count(pipe) == 1, "frame header filter pipeline not found once"
    data[head.index(pipe)] = 165
    patched = 0
    for c in chunk_bytes(None, str(OUT / src["path"])):
        at = bytes(data).find(bytes(c))
        assert at >= 0 and data[at + 16:at + 22].count(33) == 1, "chunk header"
        data[at + 16 + data[at + 16:at + 22].index(33)] = 165
        patched += 1
    assert patched == src["nchunks"], patched
    name = "ndmean_old165_f8"
    (OUT / f"{name}.b2nd").write_bytes(data)
    e = dict(src)
    e.update(name=name, path=f"{name}.b2nd",
             expected=write_raw(name, (OUT / src["expected"]).read_bytes()),
             filters=["ndmean (old user id 165)"],
             note="NDMEAN under the old user filter id 165 (c-blosc2's 2021 plugin test files); "
                  "expected: python-blosc2's read of the same chunks with id 33",
             python_blosc2=python_opinion(f"{name}.b2nd"))
    FIXTURES.append(e)


def gen_unsupported():
    # NDLZ (decoded in Rust): 4x4 and 8x8 cells, blocks the cells do not divide, data with
    # repeated rows and cells so that every kind of match occurs.
    x = (np.arange(32 * 32).reshape(32, 32) % 7).astype("u1")
    asarray("ndlz4_u1", x, (32, 32), (16, 16),
            cp(codec=C.NDLZ, codec_meta=4, clevel=5, filters=[0] * 6, filters_meta=[0] * 6))
    r = np.random.default_rng(11)
    y = np.tile(r.integers(0, 256, (1, 45)), (37, 1))
    y[::3] = r.integers(0, 256, (13, 45))
    y[10:20, 8:24] = np.tile(r.integers(0, 256, (4, 4)), (3, 4))[:10, :16]
    y = y.astype("u1")
    for cell in (4, 8):
        asarray(f"ndlz{cell}_rows_u1", y, (30, 40), (21, 27),
                cp(codec=C.NDLZ, codec_meta=cell, clevel=5, filters=[0] * 6,
                   filters_meta=[0] * 6))
    xf = smooth_f8((8, 8), "zfp")
    gen_zfp()
    # NDCELL / NDMEAN (decoded in Rust): cells dividing the blocks or not, 1 to 3 dims.
    xi = (np.arange(16 * 16).reshape(16, 16) % 7).astype("<i4")
    asarray("ndcell_i4", xi, (16, 16), (8, 8), cp(filters=[F.NDCELL], filters_meta=[4]))
    x3 = (np.arange(9 * 10 * 11) * 7 % 251).astype("<u2").reshape(9, 10, 11)
    asarray("ndcell_ragged_3d_u2", x3, (6, 7, 11), (5, 7, 9),
            cp(filters=[F.NDCELL, F.SHUFFLE], filters_meta=[3, 0]))
    asarray("ndcell_1d_f8", smooth_f8((100,), "ndc1"), (40,), (13,),
            cp(codec=C.LZ4, filters=[F.NDCELL], filters_meta=[5]))
    asarray("ndmean_f8", xf, (8, 8), (4, 4), cp(filters=[F.NDMEAN], filters_meta=[2]),
            check=False, note="lossy: cell means; expected is python-blosc2's read")
    asarray("ndmean_f4_3d", smooth_f8((6, 6, 6), "ndm3", "<f4"), (6, 6, 6), (3, 3, 3),
            cp(filters=[F.NDMEAN, F.SHUFFLE], filters_meta=[3, 0]), check=False,
            note="lossy: cell means; expected is python-blosc2's read")
    # Dictionaries: c-blosc2 trains one only for chunks of some size (16 KiB here); a fixture
    # named dict_* must hold dictionary chunks (blosc2 flags bit 0), checked below.
    xd = (np.arange(8192, dtype="<i4") % 1000).astype("<i4")
    for codec in (C.ZSTD, C.LZ4, C.LZ4HC):
        e = asarray(f"dict_{codec.name.lower()}_i4", xd, (4096,), (512,),
                    cp(codec=codec, clevel=5, use_dict=True))
        assert e["chunk_kinds"] == ["dict", "dict"], (e["name"], e["chunk_kinds"])
    e = asarray("dict_lz4_bitshuffle_split_f8", smooth_f8((4096,), "dict"), (2048,), (256,),
                cp(codec=C.LZ4, clevel=9, use_dict=True, filters=[F.BITSHUFFLE],
                   splitmode=blosc2.SplitMode.ALWAYS_SPLIT))
    assert "dict" in e["chunk_kinds"], e["chunk_kinds"]


def gen_special():
    # A |b1 array whose bytes are not all 0/1 (NumPy views of u1 data): typed bool reads must
    # refuse it; raw reads return the bytes.
    xb = (np.arange(40, dtype="u1") % 3).view(np.bool_).reshape(8, 5)
    asarray("bool_invalid_bytes_b1", xb, (4, 5), (2, 5), cp(codec=blosc2.Codec.LZ4, clevel=5),
            check=False, note="|b1 holding the byte 2: a typed bool read must fail")

    sh, ch, bl = (10, 6), (4, 6), (2, 3)

    def mk(name, fn, *args, **kw):
        a = fn(*args, urlpath=f"{name}.b2nd", mode="w", chunks=ch, blocks=bl, cparams=cp(), **kw)
        del a
        return f"{name}.b2nd"

    e = readable("special_zeros_f8", mk("special_zeros_f8", blosc2.zeros, sh, dtype="<f8"),
                 source=np.zeros(sh, "<f8"))
    assert set(e["chunk_kinds"]) == {"zeros"}
    e = readable("special_empty_f8", mk("special_empty_f8", blosc2.empty, sh, dtype="<f8"),
                 note="blosc2.empty writes zero-special chunks; python-blosc2 returns zeros")
    assert set(e["chunk_kinds"]) == {"zeros"} and not any(Path(e["expected"]).read_bytes())
    e = readable("special_full_f8", mk("special_full_f8", blosc2.full, sh, 7.5, dtype="<f8"),
                 source=np.full(sh, 7.5, "<f8"))
    e = readable("special_full_i2", mk("special_full_i2", blosc2.full, sh, -3, dtype="<i2"),
                 source=np.full(sh, -3, "<i2"))
    e = readable("special_ones_i4", mk("special_ones_i4", blosc2.ones, sh, dtype="<i4"),
                 source=np.ones(sh, "<i4"))
    e = readable("special_nans_f4", mk("special_nans_f4", blosc2.nans, sh, dtype="<f4"))
    assert set(e["chunk_kinds"]) == {"nan"}, e
    e = readable("special_nans_f8", mk("special_nans_f8", blosc2.nans, sh, dtype="<f8"))
    assert set(e["chunk_kinds"]) == {"nan"}, e
    # The same NaNs compressed from a NumPy array: python-blosc2 stores data chunks (it does
    # not detect NaN runs), so this one is named for what it holds.
    e = asarray("np_full_nan_data_f8", np.full(sh, np.nan, "<f8"), ch, bl, cp(), check=False)
    assert set(e["chunk_kinds"]) == {"data"}, e

    # Repeated-value chunks whose item is over 255 bytes: the header's typesize byte is 1 and
    # the payload is the whole item (cbytes = 32 + itemsize).  Fill values that do not repeat
    # one byte, so a reader that repeats the first byte is caught.
    wide = np.dtype([("a", "<i8"), ("s", "S250"), ("f", "<f8", (3,))])
    wide_fill = np.array((-7, b"ab" * 125, (1.5, np.nan, -2.0)), dtype=wide)
    for name, fn, args, dt, src in (
        ("special_full_U100", blosc2.full, (sh, "x" * 99 + "y"), "<U100",
         np.full(sh, "x" * 99 + "y", "<U100")),
        ("special_ones_U100", blosc2.ones, (sh,), "<U100", np.ones(sh, "<U100")),
        ("special_full_V300", blosc2.full, (sh, np.void(bytes(range(150)) * 2)), "V300", None),
        ("special_full_struct_wide", blosc2.full, (sh, wide_fill), wide,
         np.full(sh, wide_fill, wide)),
        ("special_full_U64", blosc2.full, (sh, "ab" * 32), "<U64", np.full(sh, "ab" * 32, "<U64")),
    ):
        if fn is blosc2.full and name.endswith("U64"):  # full_like of an existing array
            like = blosc2.zeros(sh, dtype=dt, chunks=ch, blocks=bl)
            a = blosc2.full_like(like, args[1], urlpath=f"{name}.b2nd", mode="w", chunks=ch,
                                 blocks=bl, cparams=cp())
            del a
            path = f"{name}.b2nd"
        else:
            path = mk(name, fn, *args, dtype=dt)
        e = readable(name, path, source=src)
        assert set(e["chunk_kinds"]) == {"value"}, (name, e["chunk_kinds"])
        itemsize = np.dtype(dt).itemsize
        for c in chunk_bytes(None, e["path"]):
            assert len(c) == 32 + itemsize and c[3] == (1 if itemsize > 255 else itemsize), name
            assert len(set(c[32:])) > 1, f"{name}: the item must not repeat one byte"

    # zero chunks mixed with data chunks
    name = "special_mixed_i4"
    a = blosc2.zeros((12, 6), dtype="<i4", urlpath=f"{name}.b2nd", mode="w", chunks=ch,
                     blocks=bl, cparams=cp())
    x = np.zeros((12, 6), "<i4")
    x[4:8] = np.arange(24, dtype="<i4").reshape(4, 6) + 1
    a[4:8] = x[4:8]
    del a
    e = readable(name, f"{name}.b2nd", source=x)
    assert e["chunk_kinds"][::2] == ["zeros", "zeros"] and e["chunk_kinds"][1] != "zeros", e

    # an uninitialised special chunk in the middle
    name = "special_uninit_i4"
    x = np.arange(1, 13, dtype="<i4")
    a = blosc2.asarray(x, urlpath=f"{name}.b2nd", mode="w", chunks=(4,), blocks=(2,),
                       cparams=cp())
    a.schunk.update_special(1, blosc2.SpecialValue.UNINIT)
    del a
    b = blosc2.open(f"{name}.b2nd", mode="r")
    per_chunk = b"".join(np.ascontiguousarray(b[i * 4:(i + 1) * 4]).tobytes() for i in range(3))
    del b
    exp = x.copy()
    exp[4:8] = 0
    assert per_chunk == exp.tobytes()
    e = readable(name, f"{name}.b2nd", expected=exp.tobytes(),
                 note="chunk 1 is an UNINIT special: expected zeros there (what python-blosc2 "
                      "returns for b[4:8]); python's b[...] instead leaves stale bytes of the "
                      "previous chunk in it")
    assert e["chunk_kinds"][1] == "uninit", e


def gen_sparse():
    x = smooth_f8((9, 7), "sparse_f8")
    a = blosc2.asarray(x, urlpath="sparse_f8_2d.b2nd", mode="w", chunks=(4, 4), blocks=(2, 3),
                       contiguous=False, cparams=cp())
    a.vlmeta["unit"] = "K"
    a.vlmeta["scale"] = 0.5
    del a
    readable("sparse_f8_2d", "sparse_f8_2d.b2nd", source=x)
    x = (np.arange(50) * 7 % 256).astype("u1")
    asarray("sparse_u1_1d", x, (16,), (5,), cp(codec=C.LZ4), contiguous=False)
    x = random_fill(np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S3")]), 9, rng_for("sps"))
    asarray("sparse_struct", x, (4,), (3,), cp(), contiguous=False)
    a = blosc2.zeros((6, 5), dtype="<i2", urlpath="sparse_zeros_i2.b2nd", mode="w",
                     chunks=(4, 5), blocks=(2, 5), contiguous=False, cparams=cp())
    a[0:2] = np.arange(10, dtype="<i2").reshape(2, 5) + 1
    del a
    readable("sparse_zeros_i2", "sparse_zeros_i2.b2nd")


def repack_zip_deterministic(path):
    """Rewrite a zip with a fixed timestamp (members, order, STORED kept)."""
    with zipfile.ZipFile(path) as zf:
        members = [(i.filename, zf.read(i.filename), i.compress_type) for i in zf.infolist()]
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as zf:
        for fname, data, ctype in members:
            assert ctype == zipfile.ZIP_STORED
            info = zipfile.ZipInfo(fname, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    os.replace(tmp, path)


def zip_member_offsets(path):
    out = {}
    with open(path, "rb") as f, zipfile.ZipFile(f) as zf:
        for info in zf.infolist():
            f.seek(info.header_offset)
            lh = f.read(30)
            assert lh[:4] == b"PK\x03\x04"
            n, m = struct.unpack("<HH", lh[26:30])
            out[info.filename] = info.header_offset + 30 + n + m
    return out


def gen_offsets():
    path = "store.b2z"
    if os.path.exists(path):
        os.remove(path)
    xa = compressible_i4((20,), "store_a")
    xb = smooth_f8((3, 5), "store_b")
    with blosc2.DictStore(path, mode="w") as ds:
        ds["/a"] = blosc2.asarray(xa, chunks=(8,), blocks=(4,), cparams=cp())
        ds["/grp/b"] = blosc2.asarray(xb, chunks=(2, 5), blocks=(1, 5), cparams=cp())
    repack_zip_deterministic(path)
    with blosc2.DictStore(path, mode="r") as ds:  # python-blosc2 still reads it
        assert np.array_equal(ds["/a"][...], xa) and np.array_equal(ds["/grp/b"][...], xb)
    offs = zip_member_offsets(path)
    readable("store_b2z_a", path, offset=offs["a.b2nd"], source=xa,
             note="member a.b2nd of a DictStore .b2z (uncompressed zip); timestamps repacked")
    readable("store_b2z_grp_b", path, offset=offs["grp/b.b2nd"], source=xb,
             note="member grp/b.b2nd of the same .b2z")

    tmp = "_tmp_embedded_src.b2nd"
    x = smooth_f8((6, 5), "embedded")
    a = blosc2.asarray(x, urlpath=tmp, mode="w", chunks=(4, 5), blocks=(2, 2), cparams=cp())
    a.vlmeta["where"] = "after 1000 junk bytes"
    del a
    frame = Path(tmp).read_bytes()
    os.remove(tmp)
    junk = np.random.default_rng(1000).integers(0, 256, 1000, dtype=np.uint8).tobytes()
    Path("embedded_at_1000.bin").write_bytes(junk + frame)
    readable("embedded_at_1000", "embedded_at_1000.bin", offset=1000, source=x,
             note="1000 junk bytes followed by a whole .b2nd CFrame")


def gen_attrs():
    x = np.arange(6, dtype="<i4")
    a = blosc2.asarray(x, urlpath="attrs_all.b2nd", mode="w", chunks=(4,), blocks=(2,),
                       cparams=cp())
    vals = {
        "unit": "m", "count": 42, "neg": -7, "u64max": 2**64 - 1,
        "scale": 0.25, "flag": True, "nothing": None, "list": [1, "two", 3.0],
        "dict": {"k": 1, "n": [1, 2], "s": "v"}, "tuple": (1, 2, "x"), "bytes": b"\x00\x01\xff",
        "complex": complex(1.5, -2.0), "set": {3, 1, 2},
        "ndarray": np.arange(4, dtype="<i2").reshape(2, 2), "unicode": "µm²",
        "empty_str": "",
    }
    # c-blosc2 3.3.5 fails to write the frame trailer beyond 16 vlmeta entries
    assert len(vals) == 16
    for k, v in vals.items():
        a.vlmeta[k] = v
    del a
    readable("attrs_all", "attrs_all.b2nd", source=x)


def _double_udf(inputs, output, offset):
    output[:] = inputs[0] * 2


def gen_not_data():
    xa = np.arange(10, dtype="<f8")
    xb = np.linspace(0, 1, 10, dtype="<f8")
    asarray("lazy_operand_a", xa, (4,), (2,), cp())
    asarray("lazy_operand_b", xb, (4,), (2,), cp())
    a = blosc2.open("lazy_operand_a.b2nd", mode="r")
    b = blosc2.open("lazy_operand_b.b2nd", mode="r")
    expr = a + b
    if os.path.exists("lazy_expr.b2nd"):
        os.remove("lazy_expr.b2nd")
    expr.save(urlpath="lazy_expr.b2nd")
    del expr, a, b
    refused("lazy_expr", "lazy_expr.b2nd", "no_data",
            "LazyExpr saved with expr.save(): b2nd + b2o metalayers, all chunks zero-specials")

    x = np.arange(12, dtype="<i2")
    asarray("proxy_source", x, (4,), (2,), cp())
    src = blosc2.open("proxy_source.b2nd", mode="r")
    p = blosc2.Proxy(src, urlpath="proxy_cache.b2nd", mode="w")
    del p, src
    refused("proxy_cache", "proxy_cache.b2nd", "no_data",
            "blosc2.Proxy cache, nothing fetched yet: b2nd + proxy-source metalayers, "
            "all chunks zero-specials")

    # The older lazy layout: a lazyudf of a plain Python function, saved.  It carries b2nd and
    # LazyArray metalayers and a _LazyArray vlmeta; its chunks are placeholders.
    a = blosc2.open("lazy_operand_a.b2nd", mode="r")
    lu = blosc2.lazyudf(_double_udf, (a,), dtype=np.float64, shape=a.shape)
    if os.path.exists("lazy_udf.b2nd"):
        os.remove("lazy_udf.b2nd")
    lu.save(urlpath="lazy_udf.b2nd")
    del lu, a
    sc = blosc2.schunk_from_cframe(Path("lazy_udf.b2nd").read_bytes())
    assert "LazyArray" in sc.meta and "_LazyArray" in sc.vlmeta, list(sc.meta.keys())
    del sc
    refused("lazy_udf", "lazy_udf.b2nd", "no_data",
            "lazyudf of a Python function saved with .save(): b2nd + LazyArray metalayers, "
            "_LazyArray vlmeta, placeholder chunks")

    sc = blosc2.SChunk(chunksize=40, data=np.arange(25, dtype="<i4"),
                       urlpath="plain_schunk.b2frame", mode="w", cparams=cp(typesize=4))
    del sc
    refused("plain_schunk", "plain_schunk.b2frame", "not_nd_array",
            "blosc2.SChunk frame without any metalayer")
    sc = blosc2.SChunk(chunksize=40, data=np.arange(25, dtype="<i4"),
                       urlpath="other_meta.b2frame", mode="w", cparams=cp(typesize=4),
                       meta={"foo": [1, 2, 3]})
    del sc
    refused("other_meta_schunk", "other_meta.b2frame", "not_nd_array",
            "SChunk frame with only an unrelated metalayer 'foo'")

# ----------------------------------------------------------------------------------------
# crafted metalayers
# ----------------------------------------------------------------------------------------

def _filler(n):
    """A Python object that python-blosc2 msgpack-packs into exactly n bytes."""
    if n <= 257:
        obj = b"\x00" * (n - 2)
    else:
        obj = [0] * (n - 3)  # array16 of positive fixints
    return obj


def craft(path, metas, chunks, *, chunksize, typesize, src_cparams):
    """SChunk whose metalayers are the given raw bytes (in order) and chunks are copied."""
    if os.path.isdir(path):
        shutil.rmtree(path)
    ph = {}
    for name, raw in metas:
        ph[name] = _filler(len(raw))
    sc = blosc2.SChunk(chunksize=chunksize, urlpath=path, mode="w",
                       cparams=cp(typesize=typesize, codec=src_cparams.codec,
                                  clevel=src_cparams.clevel, filters=src_cparams.filters,
                                  filters_meta=src_cparams.filters_meta),
                       meta=ph)
    for name, raw in metas:
        blosc2_ext.meta__setitem__(sc, name, raw)
        assert blosc2_ext.meta__getitem__(sc, name) == raw
    for c in chunks:
        sc.append_chunk(c)
    assert sc.nchunks == len(chunks)
    del sc


def source_chunks(x, chunks, blocks):
    tmp = "_tmp_src.b2nd"
    a = blosc2.asarray(x, urlpath=tmp, mode="w", chunks=chunks, blocks=blocks, cparams=cp())
    del a
    b = blosc2.open(tmp, mode="r")
    sc = b.schunk
    out = [sc.get_chunk(i) for i in range(sc.nchunks)]
    info = dict(chunksize=sc.chunksize, typesize=sc.typesize, cparams=sc.cparams)
    del sc, b
    os.remove(tmp)
    return out, info


def python_opinion(path):
    """What python-blosc2 does with a crafted file (run in a subprocess: it may crash)."""
    code = ("import blosc2,sys\n"
            "a=blosc2.open(sys.argv[1],mode='r')\n"
            "r=a[...]\n"
            "print('OK', type(a).__name__, getattr(a,'shape',None), getattr(a,'dtype',None))\n")
    p = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                       timeout=60)
    if p.returncode == 0:
        return p.stdout.strip()
    last = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
    return f"FAIL ({p.returncode}): {last[:150]}"


def gen_crafted():
    # base geometry = the FORMAT_NOTES reference
    x = np.arange(35, dtype="<i4").reshape(7, 5)
    shape, chunks, blocks = (7, 5), (4, 5), (3, 2)
    ch, info = source_chunks(x, chunks, blocks)
    assert info["chunksize"] == 6 * 6 * 4
    good = b2nd_meta(shape, chunks, blocks, "<i4")
    kw = dict(chunksize=info["chunksize"], typesize=4, src_cparams=info["cparams"])

    def entry_known(name, path, fmt, meta_shape, meta_chunks, meta_blocks, dtype, typesize,
                    nchunks, expected, note, extra=None, chunk_list=ch, metalayers=("b2nd",)):
        sc_cp, unsupported = cparams_fields_from(info["cparams"])
        e = {"name": name, "path": path, "offset": 0, "ok": True, "format": fmt,
             "metalayer_version": 0, "shape": list(meta_shape), "chunks": list(meta_chunks),
             "blocks": list(meta_blocks)}
        if extra:
            e.update(extra)
        e.update({"dtype": dtype, "typesize": typesize, "nchunks": nchunks})
        e.update(sc_cp)
        e.update({"storage": "contiguous", "expected": write_raw(name, expected),
                  "attrs": {}, "attr_names": [], "supported": True})
        e["chunk_kinds"] = kinds_of(chunk_list)
        e["metalayers"] = metalayers
        e["note"] = note
        e["python_blosc2"] = python_opinion(path)
        FIXTURES.append(e)

    # 6-element draft b2nd
    raw = b2nd_meta(shape, chunks, blocks, "<i4", elements=6)
    craft("legacy_b2nd_draft6.b2nd", [("b2nd", raw)], ch, **kw)
    entry_known("legacy_b2nd_draft6", "legacy_b2nd_draft6.b2nd", "b2nd", shape, chunks, blocks,
                "<i4", 4, 2, x.tobytes(),
                "6-element pre-release b2nd metalayer: 0x96 0 nd shape chunks blocks db dtype "
                "(no dtype_format)")

    # 6-element draft with the dtype as its spec shows it: NumPy repr names ("int32")
    raw = b2nd_meta(shape, chunks, blocks, "int32", elements=6)
    craft("legacy_b2nd_draft6_name.b2nd", [("b2nd", raw)], ch, **kw)
    entry_known("legacy_b2nd_draft6_name", "legacy_b2nd_draft6_name.b2nd", "b2nd", shape,
                chunks, blocks, "int32", 4, 2, x.tobytes(),
                "6-element draft b2nd whose dtype is the NumPy name 'int32' (as its spec shows)")
    # 5-element b2nd (caterva layout under the b2nd name, as in c-blosc2's plugin test data)
    craft("b2nd_5elem_crafted.b2nd", [("b2nd", caterva_meta(shape, chunks, blocks))], ch, **kw)
    entry_known("b2nd_5elem_crafted", "b2nd_5elem_crafted.b2nd", "b2nd", shape, chunks, blocks,
                "|S4", 4, 2, x.tobytes(),
                "5-element b2nd metalayer (0x95, no dtype): read as |S{typesize}, as python-blosc2 "
                "does")

    # both metalayers; caterva lies (written first)
    lie = caterva_meta((3, 3), (3, 3), (1, 1))
    craft("both_b2nd_caterva.b2nd", [("caterva", lie), ("b2nd", good)], ch, **kw)
    readable("both_b2nd_caterva", "both_b2nd_caterva.b2nd", source=x,
             note="caterva metalayer (first) says shape (3,3) chunks (3,3) blocks (1,1): b2nd "
                  "must win")

    # caterva-only, blockshape all zeros: chunks are plain C-order partitions
    xc = (np.arange(260) // 5 % 7 * 3 + np.arange(260) % 2).astype("<u2").reshape(13, 20)
    cch, cinfo = source_chunks(xc, (8, 12), (8, 12))
    craft("legacy_caterva_zero_blocks.b2nd",
          [("caterva", caterva_meta((13, 20), (8, 12), (0, 0)))], cch,
          chunksize=cinfo["chunksize"], typesize=2, src_cparams=cinfo["cparams"])
    entry_known("legacy_caterva_zero_blocks", "legacy_caterva_zero_blocks.b2nd", "caterva",
                (13, 20), (8, 12), (0, 0), "|S2", 2, 4, xc.tobytes(),
                "oldest caterva: blockshape stored as zeros, chunks are C-order partitions "
                "(effective blocks = chunks); data is <u2 read as |S2",
                extra={"effective_blocks": [8, 12]}, chunk_list=cch, metalayers=("caterva",))

    # caterva-only with real blocks, crafted here too (caterva 0.7.3 files are in the other
    # generator)
    craft("caterva_only_crafted.b2nd", [("caterva", caterva_meta(shape, chunks, blocks))], ch, **kw)
    entry_known("caterva_only_crafted", "caterva_only_crafted.b2nd", "caterva", shape, chunks,
                blocks, "|S4", 4, 2, x.tobytes(),
                "5-element caterva metalayer, blocks (3,2); python-blosc2 4.14.1 opens it as a "
                "plain SChunk", metalayers=("caterva",))

    # ---- refused ones
    bad = {
        "bad_meta_truncated": (good[:-2], "metalayer cut 2 bytes short inside the dtype string"),
        "bad_meta_truncated_shape": (good[:12], "metalayer cut inside the shape array"),
        "bad_meta_trailing_byte": (good + b"\x00", "one extra byte after the dtype string"),
        "bad_meta_nd_mismatch": (b2nd_meta(shape, chunks, blocks, "<i4", nd=3),
                                 "ndim byte says 3, arrays hold 2 entries"),
        "bad_meta_array_count_mismatch": (b2nd_meta(shape, chunks, blocks, "<i4",
                                                    counts=(2, 3, 2)),
                                          "chunkshape fixarray marker says 3 items (0x93), ndim 2"),
        "bad_meta_negative_shape": (b2nd_meta((-7, 5), chunks, blocks, "<i4"),
                                    "shape[0] = -7"),
        "bad_meta_zero_chunk": (b2nd_meta(shape, (0, 5), (0, 2), "<i4"),
                                "chunkshape[0] = 0 while shape[0] = 7"),
        "bad_meta_block_gt_chunk": (b2nd_meta(shape, chunks, (5, 2), "<i4"),
                                    "blockshape[0] = 5 > chunkshape[0] = 4"),
        "bad_meta_version1": (b2nd_meta(shape, chunks, blocks, "<i4", version=1),
                              "metalayer version 1 (only 0 is defined)"),
        "bad_meta_dtype_format1": (b2nd_meta(shape, chunks, blocks, "<i4", dtype_format=1),
                                   "dtype_format = 1 (only 0 = NumPy is defined)"),
        "bad_meta_dtype_marker": (b2nd_meta(shape, chunks, blocks, "<i4", dtype_marker=0xD9),
                                  "dtype stored as str8 (0xd9) instead of str32 (0xdb)"),
    }
    for name, (raw, why) in bad.items():
        craft(f"{name}.b2nd", [("b2nd", raw)], ch, **kw)
        refused(name, f"{name}.b2nd", "bad_metalayer", why, ask_python=True)

    # geometry mismatches
    craft("geom_nchunks.b2nd", [("b2nd", good)], ch + [ch[0]], **kw)
    refused("geom_nchunks", "geom_nchunks.b2nd", "geometry_mismatch",
            "metalayer implies 2 chunks, the frame holds 3", ask_python=True)
    craft("geom_nchunks_short.b2nd", [("b2nd", good)], ch[:1], **kw)
    refused("geom_nchunks_short", "geom_nchunks_short.b2nd", "geometry_mismatch",
            "metalayer implies 2 chunks, the frame holds 1", ask_python=True)
    craft("geom_chunksize.b2nd", [("b2nd", b2nd_meta(shape, chunks, (2, 5), "<i4"))], ch, **kw)
    refused("geom_chunksize", "geom_chunksize.b2nd", "geometry_mismatch",
            "blocks (2,5) make the extended chunk 4x5x4 = 80 bytes; frame chunksize is 144",
            ask_python=True)

    # dtype itemsize != frame typesize (chunksize still = extended chunk items * dtype itemsize)
    craft("dtype_mismatch.b2nd", [("b2nd", good)], ch, chunksize=info["chunksize"], typesize=8,
          src_cparams=info["cparams"])
    refused("dtype_mismatch", "dtype_mismatch.b2nd", "dtype_mismatch",
            "dtype <i4 (itemsize 4) but frame typesize 8; chunksize 144 = 36 items * 4",
            ask_python=True)

    craft("draft6_name_mismatch.b2nd",
          [("b2nd", b2nd_meta(shape, chunks, blocks, "float64", elements=6))], ch, **kw)
    refused("draft6_name_mismatch", "draft6_name_mismatch.b2nd", "dtype_mismatch",
            "6-element draft b2nd naming 'float64' (8 bytes) for a frame of 4-byte items",
            ask_python=True)

    craft("bad_dtype_string.b2nd", [("b2nd", b2nd_meta(shape, chunks, blocks, "<q9 nonsense"))],
          ch, **kw)
    refused("bad_dtype_string", "bad_dtype_string.b2nd", "bad_dtype",
            "dtype string '<q9 nonsense' does not parse", ask_python=True)

    x8 = np.arange(35, dtype="<i8").reshape(7, 5)
    ch8, info8 = source_chunks(x8, chunks, blocks)
    craft("bad_dtype_object.b2nd", [("b2nd", b2nd_meta(shape, chunks, blocks, "|O"))], ch8,
          chunksize=info8["chunksize"], typesize=8, src_cparams=info8["cparams"])
    refused("bad_dtype_object", "bad_dtype_object.b2nd", "bad_dtype",
            "dtype '|O' (object pointers); geometry and typesize 8 otherwise consistent",
            ask_python=True)


def cparams_fields_from(p):
    class _S:
        cparams = p
    return cparams_fields(_S)


def write_manifest(path, manifest):
    """One fixture per line: compact, and diffs stay readable."""
    lines = ["{"]
    for k, v in manifest.items():
        if k != "fixtures":
            lines.append(f" {json.dumps(k)}: {json.dumps(v)},")
    lines.append(' "fixtures": [')
    fx = manifest["fixtures"]
    for i, e in enumerate(fx):
        sep = "," if i + 1 < len(fx) else ""
        lines.append("  " + json.dumps(e, ensure_ascii=False, allow_nan=False) + sep)
    lines.append(" ]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == json.loads(json.dumps(manifest))
    Path(path).write_text(text, encoding="utf-8")


# ----------------------------------------------------------------------------------------

TENSORS = []


def tensor(name, x, *, chunksize=None, chunks=None, blocks_split_rows=False, blocksize=0):
    """A blosc2.save_tensor frame of `x` with what b2nd must read from it (tensors.json).

    chunks: the N-d chunk shape its flat chunks are (None: they are none, b2nd refuses it).
    blocks_split_rows: assert from the chunk header that its Blosc blocks are flat runs that
    do not end on row boundaries (so only decoding chunks whole is right)."""
    path = f"{name}.b2frame"
    blosc2.save_tensor(x, path, mode="w", chunksize=chunksize, cparams=cp(typesize=x.itemsize, blocksize=blocksize))
    sc = blosc2.open(path)
    kind, shape, dtype = sc.vlmeta["__pack_tensor__"]
    assert (kind, tuple(shape)) == ("numpy", x.shape), (name, kind, shape)
    assert "b2nd" not in sc.meta and "caterva" not in sc.meta, list(sc.meta.keys())
    back = blosc2.load_tensor(path)
    assert back.dtype == x.dtype and back.shape == x.shape and back.tobytes() == x.tobytes(), name
    n = int(np.prod(x.shape)) if x.shape else 1
    if chunks is not None and n:
        per_chunk = int(np.prod(chunks)) * x.itemsize
        assert sc.chunksize == per_chunk, (name, sc.chunksize, per_chunk)
        assert sc.nchunks * per_chunk == x.nbytes, (name, sc.nchunks)
    if chunks is None:
        assert sc.nchunks > 1 and x.nbytes % sc.chunksize != 0, (name, "meant to have a short last chunk")
    if blocks_split_rows:
        head = sc.get_chunk(0)
        nbytes, blocksize = struct.unpack_from("<ii", head, 4)
        row = x.nbytes // x.shape[0]
        assert nbytes > blocksize and blocksize % row != 0, (name, nbytes, blocksize, row)
    dt = back.dtype
    TENSORS.append({
        "name": name, "path": path, "kind": kind, "shape": list(x.shape),
        "vlmeta_dtype": dtype if isinstance(dtype, str) else [list(f) for f in dtype],
        "itemsize": dt.itemsize,
        "fields": [[f, dt.fields[f][1]] for f in (dt.names or ())],
        "chunks": chunks, "nchunks": int(sc.nchunks),
        "expected": write_raw(name, back.tobytes()),
    })
    del sc


def gen_tensors():
    """save_tensor / pack_tensor frames: plain SChunks of C-order items, (kind, shape, dtype)
    in vlmeta `__pack_tensor__`."""
    tensor("tensor_i4_2x3x4", np.arange(24, dtype="<i4").reshape(2, 3, 4), chunks=[2, 3, 4])
    tensor("tensor_f8_rows_split", np.linspace(0, 1, 40 * 37).reshape(40, 37), chunks=[40, 37],
           blocksize=1000, blocks_split_rows=True)
    padded = np.dtype({"names": ["a", "b"], "formats": ["i1", "<f8"], "offsets": [0, 4],
                       "itemsize": 16})
    x = np.zeros(4, dtype=padded)
    x["a"], x["b"] = [1, -2, 3, -4], [0.5, 1.5, -2.5, 1e300]
    tensor("tensor_struct_padded", x, chunks=[4])
    nested = np.dtype([("a", "<i4", (2,)), ("n", [("x", "u1"), ("y", "S3")])])
    y = np.zeros(2, dtype=nested)
    y["a"], y["n"]["x"], y["n"]["y"] = [[1, 2], [3, 4]], [7, 8], [b"ab", b"xyz"]
    tensor("tensor_struct_nested", y, chunks=[2])
    tensor("tensor_0d", np.array(2.5), chunks=[])
    tensor("tensor_empty", np.zeros((0, 3), dtype="<i2"), chunks=[0, 1])
    tensor("tensor_rows_in_chunks", np.arange(40, dtype="<u2").reshape(8, 5), chunksize=20,
           chunks=[2, 5])
    tensor("tensor_inner_chunks", np.arange(60, dtype="<u2").reshape(2, 6, 5), chunksize=30,
           chunks=[1, 3, 5])
    tensor("tensor_short_last_chunk", np.arange(35, dtype="<u2").reshape(7, 5), chunksize=20)


def main():
    global OUT
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if blosc2.__version__ != EXPECTED_BLOSC2:
        sys.exit(f"need python-blosc2 {EXPECTED_BLOSC2}, found {blosc2.__version__}")
    # Multi-threaded compression writes the blocks of a chunk in completion order, so chunk
    # bytes would vary from run to run: one thread everywhere, also where no cparams are given.
    blosc2.set_nthreads(1)
    OUT = Path(sys.argv[1]).resolve()
    OUT.mkdir(parents=True, exist_ok=True)
    os.chdir(OUT)  # every urlpath is relative to OUTDIR (lazy expressions / proxies record them)
    OUT = Path(".")
    gen_reference()
    gen_dtypes()
    gen_dims()
    gen_codecs()
    gen_block_tiles()
    gen_resized()
    gen_double_delta()
    gen_filters()
    gen_unsupported()
    gen_ndmean_old()
    gen_special()
    gen_sparse()
    gen_offsets()
    gen_attrs()
    gen_not_data()
    gen_crafted()
    gen_tensors()
    write_manifest("tensors.json", {"generator": f"python-blosc2 {blosc2.__version__}",
                                    "fixtures": TENSORS})
    names = [f["name"] for f in FIXTURES]
    assert len(names) == len(set(names)), "duplicate fixture names"
    manifest = {"generator": f"python-blosc2 {blosc2.__version__}",
                "c_blosc2": blosc2.blosclib_version.split()[0],
                "numpy": np.__version__,
                "fixtures": FIXTURES}
    write_manifest("manifest.json", manifest)
    print(f"{len(FIXTURES)} fixtures written to {Path.cwd()}")


if __name__ == "__main__":
    main()
