"""Generate the store fixtures (tests/data/stores): python-blosc2's DictStore, TreeStore and
EmbedStore in each form (.b2z, .b2d, .b2e), plus hostile variants, and for each store an
`<name>.json` of what python-blosc2 4.14.1 says it holds: sorted keys, each key's kind (the
python class of `store[key]`, lowercase), and for arrays shape, dtype and the C-order bytes
(hex). Where python-blosc2 cannot read a member it wrote (embedded arrays with items over 255
bytes), the expected bytes are those of the NumPy array written, and `python_error` says what
python-blosc2 raised.

Usage: python scripts/gen_store_fixtures.py tests/data/stores
"""

import json
import os
import shutil
import sys
import zipfile
from typing import NamedTuple

import blosc2
import numpy as np

assert blosc2.__version__ == "4.14.1", blosc2.__version__

OUT = sys.argv[1]
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
blosc2.set_nthreads(1)


def p(name):
    return os.path.join(OUT, name)


def kind_of(value):
    name = type(value).__name__.lower()
    return name


class WrittenItems(NamedTuple):
    """The items written to an ObjectArray or BatchArray member."""

    kind: str
    items: list


def describe(name, path, written):
    """Record what python-blosc2 reads from store `path`."""
    store = blosc2.open(path, mode="r")
    out = {"kind": type(store).__name__.lower(), "keys": sorted(store.keys()), "members": {}}
    for key in out["keys"]:
        m = {}
        try:
            value = store[key]
            m["kind"] = kind_of(value)
            if isinstance(value, blosc2.NDArray):
                arr = value[()]
                m["shape"] = list(value.shape)
                m["dtype"] = value.dtype.str
                m["hex"] = np.ascontiguousarray(arr).tobytes().hex()
                expected = written.get(key)
                if expected is not None:
                    assert np.array_equal(arr, expected), (name, key)
            elif isinstance(value, blosc2.ObjectArray):
                m["items"] = list(value)
            elif isinstance(value, blosc2.BatchArray):
                m["items"] = list(value.items)
            elif isinstance(value, blosc2.SChunk):
                m["hex"] = bytes(value[:]).hex()
                m["attrs"] = {k: v for k, v in value.vlmeta[:].items() if isinstance(v, (int, str))}
        except Exception as e:  # python-blosc2 cannot read what it wrote
            expected = written[key]
            m["python_error"] = f"{type(e).__name__}: {e}"
            if isinstance(expected, WrittenItems):
                m["kind"] = expected.kind
                m["items"] = expected.items
            else:
                m["kind"] = "ndarray"
                m["shape"] = list(expected.shape)
                m["dtype"] = expected.dtype.str
                m["hex"] = np.ascontiguousarray(expected).tobytes().hex()
        out["members"][key] = m
    if isinstance(store, blosc2.TreeStore):
        out["group_attrs"] = {}
        for g in ["/"] + [k for k in out["keys"] if out["members"][k]["kind"] == "treestore"]:
            sub = store if g == "/" else store[g]
            out["group_attrs"][g] = {k: v for k, v in sub.vlmeta[:].items()}
    with open(p(name + ".json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    return out


small = np.arange(10, dtype="<i4")
big = np.arange(2000, dtype="<f8").reshape(40, 50)
strings = np.array(["ab", "cde", ""], dtype="<U3")
# Items of 400 bytes: python-blosc2 4.14.1 writes them embedded but cannot read them back.
wide = np.array(["x" * 100, "y" * 7], dtype="<U100")
schunk_bytes = bytes(range(256)) * 3


def fill_dict(d):
    d["/small"] = small
    d["/dir1/big"] = big
    sc = blosc2.SChunk(chunksize=100, data=schunk_bytes)
    sc.vlmeta["note"] = "raw"
    d["/dir1/sc"] = sc
    d["/strings"] = strings
    d["/wide"] = wide
    d["/bigsc"] = blosc2.SChunk(chunksize=1000, data=bytes(5000))


written_dict = {"/small": small, "/dir1/big": big, "/strings": strings, "/wide": wide}

# DictStore: members over 1000 bytes external, the others embedded.
with blosc2.DictStore(p("dict_ext.b2z"), mode="w", threshold=1000) as d:
    fill_dict(d)
with blosc2.DictStore(p("dict_ext.b2d"), mode="w", threshold=1000) as d:
    fill_dict(d)
describe("dict_ext.b2z", p("dict_ext.b2z"), written_dict)
describe("dict_ext.b2d", p("dict_ext.b2d"), written_dict)

# Check the fixtures prove what they are named for: both tiers are used.
with zipfile.ZipFile(p("dict_ext.b2z")) as z:
    names = sorted(z.namelist())
    assert names == ["bigsc.b2f", "dir1/big.b2nd", "embed.b2e"], names
    assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())

# TreeStore: groups, group attributes, everything embedded (threshold=None) in one,
# everything external (threshold=0, the default) in the other; plus a table and
# variable-length containers (frame format 3).
written_tree = {"/a/b/x": np.arange(5, dtype="<u2"), "/a/y": np.ones((3, 3)), "/top": small}


def fill_tree(t):
    t["/a/b/x"] = written_tree["/a/b/x"]
    t["/a/y"] = written_tree["/a/y"]
    t["/top"] = small
    t.vlmeta["root_attr"] = 1
    t["/a"].vlmeta["ga"] = "hello"


with blosc2.TreeStore(p("tree_ext.b2z"), mode="w") as t:
    fill_tree(t)
with blosc2.TreeStore(p("tree_emb.b2z"), mode="w", threshold=None) as t:
    fill_tree(t)
with blosc2.TreeStore(p("tree_ext.b2d"), mode="w") as t:
    fill_tree(t)
describe("tree_ext.b2z", p("tree_ext.b2z"), written_tree)
describe("tree_emb.b2z", p("tree_emb.b2z"), written_tree)
describe("tree_ext.b2d", p("tree_ext.b2d"), written_tree)
with zipfile.ZipFile(p("tree_emb.b2z")) as z:
    assert z.namelist() == ["embed.b2e"], z.namelist()

with blosc2.TreeStore(p("tree_objects.b2z"), mode="w") as t:
    t["/arr"] = small
    oa = blosc2.ObjectArray()
    oa.extend([1, "two", [3]])
    t["/objs"] = oa
    ba = blosc2.BatchArray()
    ba.append([1, 2, 3])
    ba.append(["four", {"five": 5.5}, None, [6, [7]]])
    t["/batches"] = ba
    big = blosc2.BatchArray(items_per_block=50)
    big.extend([[f"item {i}" * (i % 7) for i in range(b * 300, b * 300 + 300)] for b in range(4)])
    t["/bigbatches"] = big
    oa2 = blosc2.ObjectArray()
    oa2.extend([{"k": i, "s": "x" * i} for i in range(200)])
    t["/manyobjs"] = oa2
    # Compressed with a dictionary (ZSTD, LZ4, LZ4HC) and with LZ4 without one. c-blosc2 3.3.5
    # trains a dictionary only for chunks big enough (a VL-block chunk of 8 blocks or more and
    # over 5 KiB, an object's chunk of some KiB): the sizes here are chosen so that it does,
    # and DICT_MEMBERS below checks the dictionary flag of every chunk in the file written.
    oa3 = blosc2.ObjectArray(cparams={"codec": blosc2.Codec.ZSTD, "use_dict": True})
    oa3.extend([{"name": f"row {i}", "text": "lorem ipsum dolor sit amet " * (200 + i % 5)} for i in range(12)])
    t["/dictobjs"] = oa3
    for codec, use_dict, key in [
        (blosc2.Codec.ZSTD, True, "/zstd_dict_batches"),
        (blosc2.Codec.LZ4, False, "/lz4_batches"),
        (blosc2.Codec.LZ4, True, "/lz4_dict_batches"),
        (blosc2.Codec.LZ4HC, True, "/lz4hc_dict_batches"),
    ]:
        b = blosc2.BatchArray(items_per_block=10, cparams={"codec": codec, "use_dict": use_dict})
        b.extend([[f"value {i} " * (1 + i % 9) for i in range(k * 200, k * 200 + 200)] for k in range(3)])
        t[key] = b

    import dataclasses

    @dataclasses.dataclass
    class Row:
        x: int = 0
        y: float = 0.0

    table = blosc2.CTable(Row)
    table.append(Row(x=1, y=2.5))
    table.append(Row(x=3, y=4.5))
    t["/tables/t1"] = table
describe("tree_objects.b2z", p("tree_objects.b2z"), {"/arr": small})


def chunk_flags(path, key):
    """The blosc2 flags byte (header byte 31) of every chunk of member `key`, from the frame's
    bytes inside the zip file (python-blosc2's get_chunk() fails on dictionary chunks of a
    frame opened from disk, so the member's frame is loaded from its bytes)."""
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.rsplit(".", 1)[0] == key.lstrip("/"))
        data = z.read(name)
    sc = blosc2.schunk_from_cframe(data)
    chunks = [sc.get_chunk(i) for i in range(sc.nchunks)]
    if name.endswith(".b2b"):  # batches: VL-block chunks (version 6, flags2 bit 0)
        assert all(c[0] == 6 and c[30] & 0x01 for c in chunks), (key, [c[:1] for c in chunks])
    return [c[31] for c in chunks]


# Members named for a dictionary must hold only dictionary chunks (flags bit 0x01): else the
# dictionary branches of b2nd's decoders (VL blocks for the batches) are never reached by data
# python wrote.
DICT_MEMBERS = ["/dictobjs", "/zstd_dict_batches", "/lz4_dict_batches", "/lz4hc_dict_batches"]
for key in DICT_MEMBERS + ["/lz4_batches"]:
    flags = chunk_flags(p("tree_objects.b2z"), key)
    want = 0x01 if key in DICT_MEMBERS else 0x00
    assert flags and all(f & 0x01 == want for f in flags), (key, [hex(f) for f in flags])

# EmbedStore.
e = blosc2.EmbedStore(p("embed.b2e"), mode="w")
e["/n1"] = np.arange(3, dtype="<i8")
e["/dir/n2"] = np.ones(2)
e["/wide"] = wide
del e
describe("embed.b2e", p("embed.b2e"), {"/n1": np.arange(3, dtype="<i8"), "/dir/n2": np.ones(2), "/wide": wide})

# An EmbedStore python-blosc2 cannot read a member of: its members are byte ranges of one
# SChunk whose blocks are as long as the first member, and python-blosc2 4.14.1's SChunk
# slice of exactly one block's length from inside a block, not reaching the end, returns
# other bytes (`/b`, of the length of `/a`, at an offset inside a block, `/m` after it).
items = ["abc", 1, None, {"k": [1.5, "é"]}, True]
e = blosc2.EmbedStore(p("embed_slice.b2e"), mode="w")
for key in ["/a", "/b"]:
    oa = blosc2.ObjectArray()
    oa.extend(items)
    e[key] = oa
    if key == "/a":
        e["/n"] = np.arange(3, dtype="<i8")
e["/m"] = np.arange(3, dtype="<i8")
cframe_b = oa.to_cframe()
del e
e = blosc2.EmbedStore(p("embed_slice.b2e"), mode="r")
at, length = e._embed_map["/b"]["offset"], e._embed_map["/b"]["length"]
backing = e._store
decoded = b"".join(backing.decompress_chunk(i) for i in range(backing.nchunks))
blocksize = int.from_bytes(backing.get_chunk(0)[8:12], "little")
assert e._embed_map["/a"]["length"] == length == blocksize and at % blocksize, (at, length, blocksize)
assert decoded[at : at + length] == cframe_b  # the chunks hold what was written
assert bytes(backing[at : at + length]) != cframe_b  # python's slice of them does not
try:
    e["/b"]
    raise AssertionError("python-blosc2 reads /b of embed_slice.b2e")
except RuntimeError:
    pass
del e, backing
describe("embed_slice.b2e", p("embed_slice.b2e"), {"/b": WrittenItems("objectarray", items)})

# Hostile stores: each must be refused with an error, never read.
bad = os.path.join(OUT, "bad")
os.makedirs(bad)


def rezip(src, dst, rename=None, method=zipfile.ZIP_STORED, extra=None):
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", method) as zo:
        for info in zi.infolist():
            data = zi.read(info.filename)
            name = rename.get(info.filename, info.filename) if rename else info.filename
            zo.writestr(name, data)
        for name, data in extra or []:
            zo.writestr(name, data)


src = p("dict_ext.b2z")
rezip(src, os.path.join(bad, "compressed.b2z"), method=zipfile.ZIP_DEFLATED)
rezip(src, os.path.join(bad, "escaping.b2z"), rename={"dir1/big.b2nd": "../big.b2nd"})
rezip(src, os.path.join(bad, "absolute.b2z"), rename={"dir1/big.b2nd": "/big.b2nd"})
with zipfile.ZipFile(src) as zi:
    big_bytes = zi.read("dir1/big.b2nd")
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    rezip(src, os.path.join(bad, "duplicate.b2z"), extra=[("dir1/big.b2nd", big_bytes)])
# The same key embedded and external.
rezip(src, os.path.join(bad, "both_tiers.b2z"), extra=[("small.b2nd", big_bytes)])
raw = open(src, "rb").read()
open(os.path.join(bad, "truncated.b2z"), "wb").write(raw[: len(raw) - 30])

# Embed maps pointing outside the stream, or with a bad key.
for name, emap in [
    ("outside.b2e", {"/n1": {"offset": 0, "length": 10**6}}),
    ("badkey.b2e", {"n1": {"offset": 0, "length": 10}}),
    ("escapekey.b2e", {"/../n1": {"offset": 0, "length": 10}}),
]:
    path = os.path.join(bad, name)
    shutil.copy(p("embed.b2e"), path)
    sc = blosc2.blosc2_ext.open(path, mode="a", offset=0)
    sc.vlmeta["estore_metadata"] = {"embed_map": emap, "current_offset": 0}
    del sc

print("store fixtures written to", OUT)
