#!/usr/bin/env python3
"""Generate real caterva 0.7.3 files (metalayer `caterva`, no dtype) for the `b2nd` crate tests.

Usage:  python gen_caterva_fixtures.py OUTDIR

Needs caterva==0.7.3 and numpy<2 (see requirements-caterva.txt); it runs in its own venv,
separate from gen_fixtures.py.  Writes `cat_*.b2nd` (a directory for the sparse one),
`NAME.raw` (what caterva itself reads back, C order) and `OUTDIR/manifest-caterva.json`,
same schema as manifest.json.  Deterministic: fixed data, explicit chunks/blocks, nthreads=1.

caterva 0.7.3 exposes no per-file cparams getter for filters_meta, so codec, clevel, filters
and filters_meta are read from the frame header bytes (c-blosc2 frame format):
  byte 27: codec (low nibble; 6 = user codec, then byte 77) | clevel << 4
  byte 70: number of filter slots (6), 71..76 filters, 77 user codec, 78 codec meta,
  79..84 filters_meta; typesize at 48..51, chunksize at 58..61 (big-endian int32).
"""

import json
import os
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

import caterva

EXPECTED_CATERVA = "0.7.3"

CODEC_NAMES = {0: "blosclz", 1: "lz4", 2: "lz4hc", 3: "snappy", 4: "zlib", 5: "zstd"}
FILTER_NAMES = {1: "shuffle", 2: "bitshuffle", 3: "delta", 4: "trunc_prec", 35: "bytedelta",
                36: "int_trunc"}
SUPPORTED_CODECS = {0, 1, 2, 4, 5}
SUPPORTED_FILTERS = {1, 2, 3, 4, 35, 36}

CV = caterva.Codec
CF = caterva.Filter

FIXTURES = []


def caterva_meta(shape, chunks, blocks, version=0):
    def arr(vals, tag, fmt):
        return bytes([0x90 + len(vals)]) + b"".join(tag + struct.pack(fmt, v) for v in vals)
    return (bytes([0x95, version, len(shape)]) + arr(shape, b"\xd3", ">q")
            + arr(chunks, b"\xd2", ">i") + arr(blocks, b"\xd2", ">i"))


def frame_header(path):
    p = Path(path)
    hp = p / "chunks.b2frame" if p.is_dir() else p
    h = hp.read_bytes()
    assert h[1:10] == b"\xa8b2frame\x00" and h[10] == 0xD2, path
    (hsize,) = struct.unpack(">i", h[11:15])
    return h[:hsize]


SPECIAL_KINDS = {0: "data", 1: "zeros", 2: "nan", 3: "value", 4: "uninit"}


def chunk_kind(h):
    special = (h[31] >> 4) & 7
    if special == 0:
        return "memcpy" if h[2] & 0x02 else "data"
    return SPECIAL_KINDS[special]


def stored_chunk_kinds(path, nchunks):
    """Each chunk's kind read from the frame's bytes (not through caterva): in a contiguous
    frame the chunks follow the header back to back, then the chunk index (8-byte offsets).
    An index that is one repeated offset with its top bit set (c-blosc2's special offsets)
    stands for `nchunks` special chunks of kind `top byte & 0x7f` with no bytes of their own.
    In a sparse frame each chunk is a file `%08X.chunk`."""
    p = Path(path)
    if p.is_dir():
        return [chunk_kind((p / f"{i:08X}.chunk").read_bytes()[:32]) for i in range(nchunks)]
    b = p.read_bytes()
    pos = len(frame_header(path))
    kinds = []
    while len(kinds) < nchunks:
        h = b[pos:pos + 32]
        (nbytes, cbytes) = struct.unpack("<i", h[4:8])[0], struct.unpack("<i", h[12:16])[0]
        if (not kinds and h[3] == 8 and nbytes == 8 * nchunks and chunk_kind(h) == "value"
                and b[pos + 39] & 0x80):
            return [SPECIAL_KINDS[b[pos + 39] & 0x7F]] * nchunks
        kinds.append(chunk_kind(h))
        pos += cbytes
    return kinds


def header_fields(h):
    codec = h[27] & 0x0F
    if codec == 6:
        codec = h[77]
    clevel = h[27] >> 4
    assert h[69] == 0xD8 and h[70] == 6, h[60:90].hex()
    filters = list(h[71:77])
    fmeta = list(h[79:85])
    assert h[47] == 0xD2 and h[57] == 0xD2
    (typesize,) = struct.unpack(">i", h[48:52])
    (chunksize,) = struct.unpack(">i", h[58:62])
    out = {
        "codec": CODEC_NAMES.get(codec, f"codec{codec}"),
        "codec_meta": h[78],
        "clevel": clevel,
        "use_dict": False,
        "filters": [FILTER_NAMES.get(f, f"filter{f}") for f in filters if f != 0],
        "filters_meta": fmeta,
    }
    unsupported = None
    if codec not in SUPPORTED_CODECS:
        unsupported = "unsupported_codec"
    elif any(f not in SUPPORTED_FILTERS for f in filters if f != 0):
        unsupported = "unsupported_filter"
    return out, unsupported, typesize, chunksize


def cparams(codec, clevel, filters, meta=None):
    return dict(codec=codec, clevel=clevel, filters=filters,
                filtersmeta=meta if meta is not None else [0] * len(filters), nthreads=1)


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def record(name, path, source_bytes=None, note=None):
    a = caterva.open(path)
    data = np.asarray(a[...]).tobytes() if a.size else b""
    if source_bytes is not None:
        assert data == source_bytes, f"{name}: caterva read-back differs"
    shape, chunks, blocks = list(a.shape), list(a.chunks), list(a.blocks)
    h = frame_header(path)
    raw = caterva_meta(shape, chunks, blocks)
    assert h.count(raw) == 1, f"{name}: caterva metalayer bytes not found verbatim"
    assert b"b2nd" not in h
    fields, unsupported, typesize, chunksize = header_fields(h)
    assert typesize == a.itemsize
    ext = [-(-c // b) * b for c, b in zip(chunks, blocks)] if shape else []
    if a.nchunks:  # a frame without chunks stores chunksize -1
        assert chunksize == int(np.prod(ext, dtype=np.int64)) * typesize, (name, chunksize, ext)
    (Path(f"{name}.raw")).write_bytes(data)
    e = {"name": name, "path": path, "offset": 0, "ok": True, "format": "caterva",
         "metalayer_version": raw[1], "shape": shape, "chunks": chunks, "blocks": blocks,
         "dtype": f"|S{typesize}", "typesize": typesize, "nchunks": int(a.nchunks)}
    e.update(fields)
    e.update({"storage": "sparse" if Path(path).is_dir() else "contiguous",
              "expected": f"{name}.raw", "attrs": {}, "attr_names": [],
              "supported": unsupported is None})
    if unsupported:
        e["error"] = unsupported
    e["metalayers"] = ["caterva"]
    e["chunk_kinds"] = stored_chunk_kinds(path, int(a.nchunks))
    if note:
        e["note"] = note
    FIXTURES.append(e)
    del a


def from_numpy(name, x, chunks, blocks, cp, contiguous=True, note=None):
    path = f"{name}.b2nd"
    remove(path)
    a = caterva.asarray(np.ascontiguousarray(x), chunks=chunks, blocks=blocks, urlpath=path,
                        contiguous=contiguous, **cp)
    del a
    record(name, path, source_bytes=np.ascontiguousarray(x).tobytes(), note=note)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if caterva.__version__ != EXPECTED_CATERVA:
        sys.exit(f"need caterva {EXPECTED_CATERVA}, found {caterva.__version__}")
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(out)

    # 1-d, itemsize 1
    from_numpy("cat_1d_u1", (np.arange(400) // 7 % 5 * 40).astype("u1"), (160,), (50,),
               cparams(CV.LZ4, 5, [CF.SHUFFLE]))
    # 2-d ragged, blocks not dividing chunks: the FORMAT_NOTES reference geometry, itemsize 4
    from_numpy("cat_2d_ref_i4", np.arange(35, dtype="<i4").reshape(7, 5), (4, 5), (3, 2),
               cparams(CV.ZSTD, 5, [CF.SHUFFLE]),
               note="same geometry as ref_7x5_i4; caterva 0.7.3 uses the same extended-chunk "
                    "block layout")
    # 2-d ragged, itemsize 8
    rng = np.random.default_rng(7)
    f8 = (np.cumsum(rng.standard_normal(70)) + 10).reshape(10, 7)
    from_numpy("cat_2d_ragged_f8", f8, (4, 3), (3, 2), cparams(CV.BLOSCLZ, 9, [CF.BITSHUFFLE]))
    # 3-d, itemsize 2, two filters
    from_numpy("cat_3d_i2", (np.arange(480, dtype="<i2") // 3 * 5 - 100).reshape(10, 8, 6),
               (4, 6, 4), (2, 3, 4), cparams(CV.LZ4HC, 9, [CF.DELTA, CF.SHUFFLE]))
    # 3-d, itemsize 4, trunc_prec (lossy: expected is what caterva reads back)
    f4 = (np.linspace(-3, 3, 48).reshape(4, 3, 4)).astype("<f4")
    path = "cat_3d_trunc_f4.b2nd"
    remove(path)
    caterva.asarray(f4, chunks=(3, 2, 4), blocks=(2, 2, 2), urlpath=path, contiguous=True,
                    **cparams(CV.ZSTD, 5, [CF.TRUNC_PREC, CF.SHUFFLE], [12, 0]))
    record("cat_3d_trunc_f4", path)
    # itemsize 16, memcpy-like clevel 0
    from_numpy("cat_1d_itemsize16_c0", np.arange(24, dtype="<u8").view("V16"), (5,), (2,),
               cparams(CV.ZSTD, 0, [CF.SHUFFLE]))
    assert set(FIXTURES[-1]["chunk_kinds"]) == {"memcpy"}, FIXTURES[-1]["chunk_kinds"]
    # sparse (directory) frame
    from_numpy("cat_sparse_2d_u2", (np.arange(42, dtype="<u2") * 3).reshape(6, 7), (4, 4),
               (2, 3), cparams(CV.ZSTD, 1, [CF.SHUFFLE]), contiguous=False)
    # empty array
    from_numpy("cat_empty_0x3_u1", np.zeros((0, 3), "u1"), (2, 3), (1, 3),
               cparams(CV.ZSTD, 5, [CF.SHUFFLE]))
    # special chunks written by caterva's own constructors
    path = "cat_zeros_i4.b2nd"
    remove(path)
    caterva.zeros((5, 4), 4, chunks=(2, 4), blocks=(1, 2), urlpath=path, contiguous=True,
                  **cparams(CV.ZSTD, 5, [CF.SHUFFLE]))
    record("cat_zeros_i4", path, source_bytes=bytes(80), note="zero-special chunks")
    assert FIXTURES[-1]["chunk_kinds"] == ["zeros"] * 3, FIXTURES[-1]["chunk_kinds"]
    path = "cat_full_4bytes.b2nd"
    remove(path)
    caterva.full((5, 4), fill_value=b"\x01\x02\x03\x04", chunks=(2, 4), blocks=(1, 2),
                 urlpath=path, contiguous=True, **cparams(CV.ZSTD, 5, [CF.SHUFFLE]))
    record("cat_full_4bytes", path, source_bytes=b"\x01\x02\x03\x04" * 20,
           note="repeated-value special chunks")
    assert FIXTURES[-1]["chunk_kinds"] == ["value"] * 3, FIXTURES[-1]["chunk_kinds"]
    # unsupported codec
    from_numpy("cat_zlib_i4", np.arange(35, dtype="<i4").reshape(7, 5), (4, 5), (3, 2),
               cparams(CV.ZLIB, 5, [CF.SHUFFLE]))

    names = [f["name"] for f in FIXTURES]
    assert len(names) == len(set(names))
    lines = ["{", f' "generator": "caterva {caterva.__version__}",',
             f' "numpy": "{np.__version__}",', ' "fixtures": [']
    for i, e in enumerate(FIXTURES):
        lines.append("  " + json.dumps(e, allow_nan=False) + ("," if i + 1 < len(FIXTURES) else ""))
    lines += [" ]", "}"]
    text = "\n".join(lines) + "\n"
    json.loads(text)
    Path("manifest-caterva.json").write_text(text)
    print(f"{len(FIXTURES)} caterva fixtures written to {out}")


if __name__ == "__main__":
    main()
