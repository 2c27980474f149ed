"""Generate the derived-state fixtures (tests/data/derived): arrays python-blosc2 4.14.1
wrote and indexed (one index per kind python-blosc2 builds on an NDArray: summary, bucket,
partial, opsi, full), each with its sidecars, and for each the catalog python-blosc2 leaves
after one of its own writes (`a[k] = a[k]`): `<name>.stale.msgpack`, the raw vlmeta value
`blosc2_indexes`. b2nd's tests change the arrays and compare their catalog with python's.
Also the lock sidecar of an array python-blosc2 changed twice with `locking=True`
(`locked.b2nd.b2lock`, counter asserted below).

The generator asserts, from the files, what each fixture is named for: the index kind and
its freshness in the catalog, the sidecar files on disk, and python's stale catalog.

Usage: python scripts/gen_derived_fixtures.py tests/data/derived
"""

import json
import os
import shutil
import struct
import sys

import blosc2
import msgpack
import numpy as np

assert blosc2.__version__ == "4.14.1", blosc2.__version__

OUT = sys.argv[1]
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
blosc2.set_nthreads(1)
manifest = []
KINDS = ["summary", "bucket", "partial", "opsi", "full"]


def path(name):
    return os.path.join(OUT, name)


def raw_catalog(p):
    a = blosc2.open(p, mode="r")
    return a.schunk.vlmeta.get_vlmeta("blosc2_indexes")


for kind in KINDS:
    name = f"idx_{kind}_i8.b2nd"
    x = (np.arange(3000, dtype="<i8") * 7) % 1000
    a = blosc2.asarray(x, urlpath=path(name), mode="w", chunks=(1000,), blocks=(250,))
    a.create_index(kind=getattr(blosc2.IndexKind, kind.upper()))
    del a
    fresh = msgpack.unpackb(raw_catalog(path(name)), strict_map_key=False)
    descs = list(fresh["indexes"].values())
    assert [d["kind"] for d in descs] == [kind], descs
    assert [d["stale"] for d in descs] == [False]
    sidecars = sorted(f for f in os.listdir(OUT) if f.startswith(f"idx_{kind}_i8.__index__."))
    assert sidecars, f"{kind}: no sidecar files"
    # python's own write, on a copy: the catalog it leaves.
    # (a new name each time: python-blosc2 caches catalogs by path within a process)
    copy = path(f"tmp_copy_{kind}.b2nd")
    shutil.copy(path(name), copy)
    c = blosc2.open(copy, mode="a")
    c[5] = c[5]
    del c
    stale_raw = raw_catalog(copy)
    stale = msgpack.unpackb(stale_raw, strict_map_key=False)
    assert [d["stale"] for d in stale["indexes"].values()] == [True]
    os.remove(copy)
    with open(path(name + ".stale.msgpack"), "wb") as f:
        f.write(stale_raw)
    # The query python answers on the fresh index equals the data.
    a = blosc2.open(path(name), mode="r")
    assert np.array_equal(a[a == 7][:], x[x == 7])
    manifest.append({"path": name, "kind": kind, "sidecars": sidecars,
                     "stale": name + ".stale.msgpack"})

# Lock sidecar: python-blosc2 changes an array twice with locking on.
name = "locked.b2nd"
a = blosc2.asarray(np.arange(100, dtype="<i4"),
                   storage=blosc2.Storage(urlpath=path(name), mode="w", locking=True,
                                          contiguous=True), chunks=(40,), blocks=(10,))
seq0 = struct.unpack("<Q", open(path(name) + ".b2lock", "rb").read()[8:16])[0]
a[0:3] = -1
a[50] = -2
del a
lock = open(path(name) + ".b2lock", "rb").read()
assert len(lock) == 16, len(lock)
seq = struct.unpack("<Q", lock[8:16])[0]
assert seq == seq0 + 2, (seq0, seq)
manifest.append({"path": name, "lock_generation": seq})

with open(path("derived.json"), "w") as f:
    json.dump(manifest, f, indent=1)
print(f"{len(manifest)} fixtures in {OUT}")
