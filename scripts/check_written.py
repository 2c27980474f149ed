"""Live interop: python-blosc2 4.14.1 opens every file the Rust writer produced and finds the
same values, dtype, chunks, blocks, codec, clevel, filters, attributes (by value), and a `b2nd`
metalayer byte-identical both to what the writer recorded and to what python-blosc2 itself
writes for the same data, shape, chunks and blocks.

usage: check_written.py DIR   (DIR holds written*.json from `B2ND_WRITE_OUT=DIR cargo test --test write`)
"""
import glob
import json
import os
import sys

import blosc2
import numpy as np
from blosc2 import blosc2_ext

CODECS = {0: "blosclz", 1: "lz4", 2: "lz4hc", 3: "snappy", 4: "zlib", 5: "zstd", 32: "ndlz",
          33: "zfp_acc", 34: "zfp_prec", 35: "zfp_rate"}


def check(d, f):
    path = os.path.join(d, f["path"])
    arr = blosc2.open(path, mode="r")
    problems = []
    sc = arr.schunk
    meta = blosc2_ext.meta__getitem__(sc, f["format"])
    if meta.hex() != f["meta_hex"]:
        problems.append(f"metalayer {meta.hex()} != recorded {f['meta_hex']}")
    raw = open(os.path.join(d, f["expected"]), "rb").read()
    if f["format"] == "b2nd":
        got = np.ascontiguousarray(arr[...])
        if got.tobytes() != raw:
            problems.append("values differ")
        want_dt = np.dtype(eval(f["dtype"]) if f["dtype"][0] in "[({" else f["dtype"])
        if want_dt.subdtype is None and got.dtype != want_dt:
            problems.append(f"dtype {got.dtype} != {want_dt}")
        if list(arr.chunks) != f["chunks"] or list(arr.blocks) != f["blocks"]:
            problems.append(f"geometry {arr.chunks} {arr.blocks} != {f['chunks']} {f['blocks']}")
        if list(arr.shape) != f["shape"]:
            problems.append(f"shape {arr.shape} != {f['shape']}")
        # What python-blosc2 writes for the same array and geometry.
        if want_dt.subdtype is None and all(s > 0 for s in f["shape"]):
            # python-blosc2 stores dtypes differently per API: `empty/zeros(dtype=)` writes
            # str(dtype) (what this crate writes), `asarray` may first normalise structured
            # dtypes (padding as named fields). Either of python's own bytes is accepted.
            x = np.frombuffer(raw, dtype=want_dt).reshape(f["shape"])
            geo = dict(chunks=tuple(f["chunks"]), blocks=tuple(f["blocks"]))
            refs = [blosc2.empty(tuple(f["shape"]), dtype=want_dt, **geo), blosc2.asarray(x, **geo)]
            ref_metas = [blosc2_ext.meta__getitem__(r.schunk, "b2nd") for r in refs]
            if meta not in ref_metas:
                problems.append(f"python-blosc2 would write {ref_metas[0].hex()}")
    if "source" in f:
        # python-blosc2 writes the values b2nd was given, with the same filters, metas and
        # geometry: the two files must read the same (the lossy NDMEAN filter included).
        want_dt = np.dtype(f["dtype"])
        src = np.fromfile(os.path.join(d, f["source"]), dtype=want_dt).reshape(f["shape"])
        filters = [x for x in f["filters"] if x]
        metas = [m for x, m in zip(f["filters"], f["filters_meta"]) if x]
        own = blosc2.asarray(src, chunks=tuple(f["chunks"]), blocks=tuple(f["blocks"]),
                             cparams=blosc2.CParams(filters=filters, filters_meta=metas,
                                                    nthreads=1))
        if own[...].tobytes() != raw:
            problems.append("python-blosc2's own encoding of the same values reads differently")
        SOURCES_COMPARED[0] += 1
    p = sc.cparams
    if CODECS.get(int(p.codec.value), "?") != f["codec"] or int(p.clevel) != f["clevel"]:
        problems.append(f"cparams {p.codec} {p.clevel}")
    if "codec_meta" in f and int(p.codec_meta) != f["codec_meta"]:
        problems.append(f"codec_meta {p.codec_meta} != {f['codec_meta']}")
    if [int(getattr(x, "value", x)) for x in p.filters] != f["filters"] or [int(x) for x in p.filters_meta] != f["filters_meta"]:
        problems.append(f"filters {list(p.filters)} {list(p.filters_meta)} != {f['filters']} {f['filters_meta']}")
    if sorted(sc.vlmeta.get_names()) != sorted(f["attrs"]):
        problems.append(f"attrs {sc.vlmeta.get_names()} != {sorted(f['attrs'])}")
    for name, want in f["attrs"].items():
        got = as_json(sc.vlmeta[name])
        # Compared as JSON text: True is not 1, 1.0 is not 1.
        if json.dumps(got, sort_keys=True) != json.dumps(want, sort_keys=True):
            problems.append(f"attr {name}: python-blosc2 decodes {got!r}, b2nd wrote {want!r}")
    ATTRS_COMPARED[0] += len(f["attrs"])
    return problems


ATTRS_COMPARED = [0]
SOURCES_COMPARED = [0]


def as_json(v):
    """python-blosc2's decoded attribute value in the JSON form tests/write.rs records."""
    if isinstance(v, (bytes, bytearray)):
        return {"bytes_hex": bytes(v).hex()}
    if isinstance(v, complex):
        return [v.real, v.imag]
    if isinstance(v, (set, frozenset)):
        return {"set": sorted((as_json(x) for x in v), key=json.dumps)}
    if isinstance(v, tuple):
        return {"tuple": [as_json(x) for x in v]}
    if isinstance(v, list):
        return [as_json(x) for x in v]
    if isinstance(v, dict):
        return {str(k): as_json(x) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        return {"ndarray": {"dtype": v.dtype.str, "shape": list(v.shape),
                            "data_hex": np.ascontiguousarray(v).tobytes().hex()}}
    if isinstance(v, np.generic):
        return as_json(v.item())
    return v


def main():
    d = sys.argv[1]
    passed = failed = 0
    files = sorted(glob.glob(os.path.join(d, "written*.json")))
    for mf in files:
        for f in json.load(open(mf))["files"]:
            try:
                problems = check(d, f)
            except Exception as e:  # noqa: BLE001 - report any failure per file
                problems = [f"{type(e).__name__}: {e}"]
            if problems:
                failed += 1
                print(f"FAIL {f['name']}: " + "; ".join(problems))
            else:
                passed += 1
    print(f"written: {passed} passed, {failed} failed; {ATTRS_COMPARED[0]} attribute values "
          f"compared, {SOURCES_COMPARED[0]} lossy arrays python-blosc2 re-encoded from the "
          f"same values")
    # tests/write.rs records 13 attributes of every kind and the NDMEAN array's values.
    sys.exit(1 if failed or not passed or ATTRS_COMPARED[0] < 13 or SOURCES_COMPARED[0] < 1
             else 0)


if __name__ == "__main__":
    main()
